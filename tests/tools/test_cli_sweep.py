"""`sohusim sweep` and the configuration every result records: a study's points run as
processes into SQLite, resumed without rerunning a finished point, failures and time-outs
recorded, bad specs refused before anything runs; `--arch/--hbm/--config` on run and gemm."""
import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

BIN = os.environ.get("SOHUSIM_BIN", "sohusim")


def sohusim(*args, timeout=300, cwd=None):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, cwd=cwd)


def rows(db, sql="SELECT * FROM points ORDER BY idx"):
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute(sql)]
    finally:
        con.close()


TINY_STUDY = """\
name: tiny-study
command: run
fixed:
  model: gpt2
  prompt: 32
  gen: 2
axes:
  - {name: hbm, values: [hbm3e-8000, hbm3-6400]}
  - {name: batch, values: [1, 4]}
"""


class Sweep(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def spec(self, text, name="study.yaml"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    def test_points_run_into_sqlite_with_parameters_metrics_and_configuration(self):
        out = os.path.join(self.dir, "out")
        r = sohusim("sweep", self.spec(TINY_STUDY), "-o", out, "-j", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("4 ok, 0 failed", r.stderr)
        got = rows(os.path.join(out, "results.sqlite"))
        self.assertEqual([g["status"] for g in got], ["ok"] * 4)
        self.assertEqual([(g["hbm"], g["batch"]) for g in got],
                         [("hbm3e-8000", 1), ("hbm3e-8000", 4), ("hbm3-6400", 1), ("hbm3-6400", 4)])
        for g in got:
            self.assertEqual(g["configuration.hbm"], g["hbm"])
            self.assertEqual(g["configuration.system"], "sohu-1")
            self.assertEqual(len(g["configuration.hash"]), 16)
            self.assertGreater(g["tpot_ms"], 0)
            self.assertEqual(json.loads(g["result"])["tpot_ms"], g["tpot_ms"])
            self.assertIn("--hbm " + g["hbm"], g["args"])
        # A slower HBM generation gives a slower decode step; two hashes per HBM preset.
        self.assertGreater(got[2]["tpot_ms"], got[0]["tpot_ms"])
        self.assertEqual(len({g["configuration.hash"] for g in got}), 2)
        # The study's spec is kept with its results.
        meta = dict((r["key"], r["value"]) for r in rows(os.path.join(out, "results.sqlite"),
                                                         "SELECT key, value FROM sweep"))
        self.assertEqual(meta["name"], "tiny-study")
        self.assertIn("hbm3-6400", meta["spec"])

    def test_a_finished_point_is_never_run_again(self):
        out = os.path.join(self.dir, "out")
        spec = self.spec(TINY_STUDY)
        self.assertEqual(sohusim("sweep", spec, "-o", out, "-j", "2").returncode, 0)
        first = rows(os.path.join(out, "results.sqlite"))
        r = sohusim("sweep", spec, "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("all 4 points already", r.stderr)
        # One more value: only its two points run; the others keep their rows (same wall times).
        bigger = self.spec(TINY_STUDY.replace("[1, 4]", "[1, 4, 8]"), "bigger.yaml")
        r = sohusim("sweep", bigger, "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("6 points (4 already done)", r.stderr)
        after = {g["key"]: g for g in rows(os.path.join(out, "results.sqlite"))}
        self.assertEqual(len(after), 6)
        for g in first:
            self.assertEqual(after[g["key"]]["wall_seconds"], g["wall_seconds"])

    def test_csv_export(self):
        out = os.path.join(self.dir, "out")
        self.assertEqual(sohusim("sweep", self.spec(TINY_STUDY), "-o", out, "-j", "2").returncode, 0)
        r = sohusim("sweep", "--csv", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        table = list(csv.DictReader(io.StringIO(r.stdout)))
        self.assertEqual(len(table), 4)
        self.assertEqual(table[1]["batch"], "4")
        self.assertNotIn("result", table[0])
        path = os.path.join(self.dir, "study.csv")
        r = sohusim("sweep", "--csv", out, "-o", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("wrote " + path, r.stderr)
        with open(path) as f:
            self.assertEqual(f.read(), sohusim("sweep", "--csv", out).stdout)

    def test_the_study_report_renders_with_charts_fronts_and_points(self):
        out = os.path.join(self.dir, "out")
        self.assertEqual(sohusim("sweep", self.spec(TINY_STUDY), "-o", out, "-j", "2").returncode, 0)
        page = os.path.join(self.dir, "study.html")
        r = sohusim("sweep", "--report", out, "-o", page, "--pareto", "output_tokens_per_second,average_watts",
                    "--pareto", "tpot_ms:min,output_tokens_per_joule")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("wrote " + page, r.stderr)
        with open(page) as f:
            html = f.read()
        self.assertIn("<h1>Study: tiny-study</h1>", html)
        self.assertIn('id="pareto-1"', html)
        for i in range(4):
            self.assertIn('<tr id="p%d">' % i, html)
        here = os.path.dirname(os.path.abspath(__file__))
        r = subprocess.run([sys.executable, os.path.join(here, "render_report.py"), page, "-", "--ids",
                            "line-0,heat-0,pareto-0,pareto-1"], capture_output=True, text=True, timeout=300)
        if r.returncode == 77:
            self.skipTest(r.stdout.strip())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # Bad requests name what was wrong.
        r = sohusim("sweep", "--report", out, "-o", page, "--metric", "tokens")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no column `tokens`", r.stderr)
        r = sohusim("sweep", "--report", out, "-o", page, "--pareto", "tpot_ms")
        self.assertEqual(r.returncode, 2)
        self.assertIn("is not X,Y", r.stderr)
        r = sohusim("sweep", "--report", os.path.join(self.dir, "nothing"), "-o", page)
        self.assertEqual(r.returncode, 2)
        self.assertIn("does not exist", r.stderr)

    def test_a_failing_point_is_recorded_and_the_sweep_goes_on(self):
        out = os.path.join(self.dir, "out")
        spec = self.spec("""\
            command: run
            fixed: {model: gpt2, prompt: 32, gen: 2}
            axes:
              - {name: tp, values: [1, 4]}
            """)
        r = sohusim("sweep", spec, "-o", out)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("point 1 (tp=4) failed: sohusim: --tp 4: a host has 1 devices", r.stderr)
        got = rows(os.path.join(out, "results.sqlite"))
        self.assertEqual([g["status"] for g in got], ["ok", "failed"])
        self.assertEqual(got[1]["exit_code"], 2)
        self.assertIn("--tp 4: a host has 1 devices", got[1]["error"])
        # Not rerun by default; --retry runs it again.
        self.assertIn("all 2 points already", sohusim("sweep", spec, "-o", out).stderr)
        r = sohusim("sweep", spec, "-o", out, "--retry")
        self.assertIn("2 points (1 already done)", r.stderr)

    def test_a_point_past_its_timeout_is_killed_and_recorded(self):
        out = os.path.join(self.dir, "out")
        spec = self.spec("""\
            command: run
            timeout: 300 ms
            fixed: {model: llama-3-70b, system: sohu-8, batch: 64, prompt: 2048, gen: 2}
            """)
        t0 = time.monotonic()
        r = sohusim("sweep", spec, "-o", out)
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual(r.returncode, 1, r.stderr)
        got = rows(os.path.join(out, "results.sqlite"))
        self.assertEqual(got[0]["status"], "timeout")
        self.assertIn("timeout of 0.3 s", got[0]["error"])

    def test_an_interrupted_sweep_keeps_every_finished_point_and_goes_on(self):
        out = os.path.join(self.dir, "out")
        spec = self.spec("""\
            command: run
            fixed: {model: llama-3-70b, system: sohu-8, batch: 64, prompt: 2048}
            axes:
              - {name: gen, values: [1, 2]}
              - {name: decode-only, values: [true, false]}
            """)
        p = subprocess.Popen([BIN, "sweep", spec, "-o", out], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        db = os.path.join(out, "results.sqlite")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the first (decode-only) point finishes in about a second
            if os.path.exists(db) and rows(db):
                break
            time.sleep(0.1)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 130, err)
        self.assertIn("run the same command again to go on", err)
        done = rows(db)
        self.assertGreaterEqual(len(done), 1)
        self.assertTrue(all(d["status"] == "ok" for d in done))
        # No point process is left running.
        ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        self.assertNotIn(out, ps)
        r = sohusim("sweep", spec, "-o", out, "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stdout.splitlines()), 4)

    def test_a_bad_spec_fails_before_any_point_runs_naming_line_and_key(self):
        out = os.path.join(self.dir, "out")
        spec = self.spec("""\
            command: run
            fixed: {model: gpt2}
            axes:
              - {name: device.matrix.engines, values: [32, 0]}
              - {name: dtype, values: [bf16, int4]}
              - {name: device.c2c.bandwidth, values: [100 GB/s, 3 parsecs]}
            """)
        r = sohusim("sweep", spec, "-o", out)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(spec + ":4:48: device.matrix.engines: value \"0\" is below the minimum", r.stderr)
        self.assertIn(spec + ":5:34: dtype: --dtype: int4 not in", r.stderr)
        self.assertIn(spec + ":6:53: device.c2c.bandwidth:", r.stderr)
        self.assertFalse(os.path.exists(out))
        r = sohusim("sweep", self.spec("command: run\naxis: []\n", "typo.yaml"), "-o", out)
        self.assertEqual(r.returncode, 2)
        self.assertIn("typo.yaml:2:1: axis: unknown key", r.stderr)


class RunConfigurationRecord(unittest.TestCase):
    def test_run_records_and_layers_arch_hbm_config_and_set(self):
        with tempfile.TemporaryDirectory() as d:
            layer = os.path.join(d, "engines.yaml")
            with open(layer, "w") as f:
                f.write("device:\n  matrix:\n    engines: 16\n")
            stats = os.path.join(d, "stats.json")
            r = sohusim("run", "--model", "gpt2", "--prompt", "32", "--gen", "2", "--hbm", "hbm3e-9600",
                        "--config", layer, "--set", "device.c2c.bandwidth=400 GB/s", "--stats", stats, "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            c = json.loads(r.stdout)["configuration"]
            self.assertEqual((c["system"], c["arch"], c["hbm"], c["hbm_stacks"]), ("sohu-1", "sohu", "hbm3e-9600", 6))
            self.assertEqual(c["configs"], [layer])
            self.assertEqual(c["sets"], ["sim.stop_time=100 s", "device.c2c.bandwidth=400 GB/s"])
            for k in ("version", "commit", "hash"):
                self.assertTrue(c[k], k)
            with open(stats) as f:
                self.assertEqual(json.load(f)["configuration"], c)
            r = sohusim("run", "--model", "gpt2", "--prompt", "32", "--gen", "2", "--arch", "h100-like", "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            c2 = json.loads(r.stdout)["configuration"]
            self.assertEqual((c2["arch"], c2["hbm"]), ("h100-like", "hbm3-6400"))
            self.assertNotEqual(c2["hash"], c["hash"])

    def test_unknown_presets_are_named(self):
        r = sohusim("run", "--hbm", "hbm9")
        self.assertEqual(r.returncode, 2)
        self.assertIn("HBM preset `hbm9` is neither a file nor a preset (presets: hbm2-2000", r.stderr)
        r = sohusim("run", "--arch", "tpu")
        self.assertEqual(r.returncode, 2)
        self.assertIn("arch `tpu` is neither a file nor a preset", r.stderr)

    def test_stats_to_a_full_disk_fails_the_command(self):
        if not os.path.exists("/dev/full"):
            self.skipTest("no /dev/full on this machine")
        r = sohusim("run", "--model", "gpt2", "--prompt", "32", "--gen", "2", "--stats", "/dev/full")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("--stats: writing stats file '/dev/full' failed", r.stderr)
        self.assertIn("TPOT", r.stdout)  # the run's own results are still printed

    def test_gemm_records_its_configuration(self):
        r = sohusim("gemm", "--m", "256", "--k", "256", "--n", "256", "--hbm", "hbm3e-9600", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        c = json.loads(r.stdout)["configuration"]
        self.assertEqual((c["arch"], c["hbm"]), ("sohu", "hbm3e-9600"))
        r = sohusim("gemm", "--m", "256", "--k", "256", "--n", "256", "--hbm", "hbm9")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--hbm: `hbm9` is not an HBM preset", r.stderr)


if __name__ == "__main__":
    unittest.main()
