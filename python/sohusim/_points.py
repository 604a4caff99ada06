"""Points in their own processes: run_point, sweep and gemm run the `sohusim` program."""
import json
import os
import shutil
import sqlite3
import subprocess

from . import _locations


class PointError(RuntimeError):
    """A point whose process failed: `.returncode`, `.stderr` (its tail), `.args_run` (the
    command line) and `.result` (its JSON when it printed one, e.g. a failed run's)."""

    def __init__(self, message, args_run, returncode=None, stderr="", result=None):
        super().__init__(message)
        self.args_run = args_run
        self.returncode = returncode
        self.stderr = stderr
        self.result = result


def binary():
    """The `sohusim` program the points run: $SOHUSIM_BIN, else the one built or installed
    beside this package, else `sohusim` on PATH."""
    env = os.environ.get("SOHUSIM_BIN")
    if env:
        return env
    here = _locations.binary()
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    found = shutil.which("sohusim")
    if found:
        return found
    raise FileNotFoundError(f"sohusim: no `sohusim` program at {here} nor on PATH; set SOHUSIM_BIN")


def _tail(text, lines=20):
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _run(args, timeout):
    cmd = [binary(), *args]
    try:
        return cmd, subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        raise PointError(f"sohusim {' '.join(args)}: timed out after {timeout} s\n{_tail(err)}", cmd,
                         stderr=_tail(err)) from None


def run_point(args, timeout=None):
    """Runs `sohusim ARGS --json` as its own process (--json is added when missing) and
    returns its JSON as a dict. `args` starts with the subcommand: ["run", "--model", "gpt2"].
    A point that fails, or runs past `timeout` seconds, raises PointError with its stderr tail."""
    args = [str(a) for a in args]
    if "--json" not in args:
        args.append("--json")
    cmd, p = _run(args, timeout)
    result = None
    try:
        result = json.loads(p.stdout) if p.stdout.strip() else None
    except ValueError:
        pass
    if p.returncode != 0 or not isinstance(result, dict):
        why = f"exit code {p.returncode}" if p.returncode != 0 else "no JSON on stdout"
        raise PointError(f"sohusim {' '.join(args)}: {why}\n{_tail(p.stderr)}", cmd, p.returncode, _tail(p.stderr),
                         result)
    return result


def _set_args(values):
    out = []
    for k, v in (values or {}).items():
        if isinstance(v, bool):
            v = "true" if v else "false"
        out += ["--set", f"{k}={v}"]
    return out


def gemm(m, k, n, arch="sohu", hbm=None, dtype="bf16", set=None, timeout=None):
    """One GEMM command through a device (`sohusim gemm`), in its own process: gemm builds a
    SystemC system of its own, which cannot share a process with a Simulator. Returns the
    dict `sohusim gemm --json` prints."""
    args = ["gemm", "--m", m, "--k", k, "--n", n, "--arch", arch, "--dtype", dtype]
    if hbm is not None:
        args += ["--hbm", hbm]
    return run_point(args + _set_args(set), timeout=timeout)


def sweep(spec, out, jobs=1, retry=False, timeout=None):
    """Runs `sohusim sweep SPEC -o OUT -j JOBS` and returns the rows of OUT/results.sqlite
    (table points, in point order) as dicts. `spec` is a spec file, or a dict written as
    OUT/spec.yaml (JSON text, which YAML reads). Points already in OUT are not run again
    (--retry: the failed ones are). A spec that does not check raises PointError; failed
    points do not: their rows say so (status, error)."""
    if isinstance(spec, dict):
        os.makedirs(out, exist_ok=True)
        path = os.path.join(out, "spec.yaml")
        with open(path, "w") as f:
            json.dump(spec, f, indent=2)
        spec = path
    args = ["sweep", os.fspath(spec), "-o", os.fspath(out), "-j", str(jobs)] + (["--retry"] if retry else [])
    cmd, p = _run(args, timeout)
    db = os.path.join(out, "results.sqlite")
    if p.returncode not in (0, 1) or not os.path.exists(db):
        raise PointError(f"sohusim {' '.join(args)}: exit code {p.returncode}\n{_tail(p.stderr)}", cmd, p.returncode,
                         _tail(p.stderr))
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute("SELECT * FROM points ORDER BY idx")]
    finally:
        con.close()
