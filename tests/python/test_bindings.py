"""`import sohusim`: the Simulator's run and serve against the command line's JSON, key by key;
statistics and configuration; the one-simulator-per-process rule; configuration errors as
ValueError; points, GEMMs and sweeps in their own processes; number series as numpy arrays,
or lists without numpy.

SystemC allows one simulator per process: the tests that need a fresh one (the comparisons
with the command line, the configuration errors) run it in a child python; the others share
this process's."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import sohusim

BIN = os.environ.get("SOHUSIM_BIN", "sohusim")
RUN = dict(model="gpt2", prompt=32, gen=2)
RUN_ARGS = ["--model", "gpt2", "--prompt", "32", "--gen", "2"]
SERVE = dict(model="tiny", dtype="bf16", max_batch=8, input_len="uniform:8:48", output_len="uniform:4:24",
             requests=16, rate=2000, slo_ttft=5, slo_tpot=1)
SERVE_ARGS = ["--model", "tiny", "--dtype", "bf16", "--max-batch", "8", "--input-len", "uniform:8:48", "--output-len",
              "uniform:4:24", "--requests", "16", "--rate", "2000", "--slo-ttft", "5", "--slo-tpot", "1"]

try:
    import numpy
except ImportError:
    numpy = None

_shared = None


def shared_simulator():
    """This process's Simulator (sohu-1), built on first use."""
    global _shared
    if _shared is None:
        _shared = sohusim.Simulator("sohu-1")
    return _shared


def cli(*args, timeout=300):
    r = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return r


def cli_json(*args):
    r = cli(*args, "--json")
    if r.returncode != 0:
        raise AssertionError(f"sohusim {' '.join(args)}: exit {r.returncode}\n{r.stderr}")
    return json.loads(r.stdout)


def child(code, env=None, timeout=300):
    """Runs `code` in a fresh python (its own SystemC kernel); returns the CompletedProcess."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})


def child_json(code):
    r = child(code)
    if r.returncode != 0:
        raise AssertionError(f"child python failed ({r.returncode}):\n{r.stderr}")
    return json.loads(r.stdout)


class SameAsCommandLine(unittest.TestCase):
    """A fresh process's Simulator gives the JSON `sohusim ... --json` prints, wall time aside."""

    def assert_same(self, ours, theirs, where=""):
        self.assertEqual(sorted(ours), sorted(theirs), where)
        for key in theirs:
            if key == "wall_seconds":
                continue
            self.assertEqual(ours[key], theirs[key], f"{where}{key}")

    def test_run_gives_the_json_of_sohusim_run(self):
        ours = child_json(f"""
            import json, sohusim
            sim = sohusim.Simulator("sohu-1")
            print(json.dumps(sim.run(**{RUN!r})))
        """)
        self.assert_same(ours, cli_json("run", *RUN_ARGS))
        self.assertTrue(ours["ok"])
        self.assertIsInstance(ours["decode_ms_per_layer"], list)

    def test_serve_gives_the_json_of_sohusim_serve(self):
        ours = child_json(f"""
            import json, sohusim
            sim = sohusim.Simulator("sohu-1")
            print(json.dumps(sim.serve(**{SERVE!r})))
        """)
        theirs = cli_json("serve", *SERVE_ARGS)
        self.assert_same(ours, theirs)
        self.assertEqual(ours["metrics"]["completed"], 16)
        self.assertEqual(ours["occupancy"]["columns"], ["t_s", "kv_blocks", "running", "waiting"])

    def test_machine_options_and_stats_are_those_of_the_command_line(self):
        # set, hbm and arch name the machine as --set, --hbm and --arch do; the statistics are
        # those of --stats.
        with tempfile.TemporaryDirectory() as d:
            stats = os.path.join(d, "stats.json")
            theirs = cli_json("run", "--model", "tiny", "--prompt", "8", "--gen", "2", "--hbm", "hbm3-6400", "--set",
                              "device.c2c.bandwidth=400 GB/s", "--set", "device.matrix.engines=16", "--stats", stats)
            with open(stats) as f:
                their_stats = json.load(f)
        ours = child_json("""
            import json, sohusim
            sim = sohusim.Simulator("sohu-1", hbm="hbm3-6400",
                                    set={"device.c2c.bandwidth": "400 GB/s", "device.matrix.engines": 16})
            print(json.dumps({"run": sim.run(model="tiny", prompt=8, gen=2), "stats": sim.stats(),
                              "configuration": sim.configuration()}))
        """)
        self.assert_same(ours["run"], theirs)
        self.assertEqual(ours["configuration"], theirs["configuration"])
        self.assertEqual(ours["configuration"]["sets"][-2:],
                         ["device.c2c.bandwidth=400 GB/s", "device.matrix.engines=16"])
        del their_stats["configuration"]
        self.assertEqual(sorted(ours["stats"]), sorted(their_stats))
        distributions = 0
        for name, s in their_stats.items():
            mine = ours["stats"][name]
            if s["kind"] == "counter":
                self.assertEqual(mine, s["value"], name)
            elif s["kind"] == "distribution":
                distributions += 1
                self.assertEqual(sorted(mine), ["count", "max", "mean", "min", "p50", "p90", "p99"], name)
                for k in mine:
                    self.assertEqual(mine[k], s[k], f"{name}.{k}")
        self.assertGreater(distributions, 0)

    def test_a_failed_run_raises_with_the_json_and_leaves_the_simulator_spent(self):
        args = ["run", *RUN_ARGS, "--set", "sim.stop_time=50 us", "--json"]
        r = cli(*args)
        self.assertEqual(r.returncode, 1, r.stderr)
        theirs = json.loads(r.stdout)
        out = child_json(f"""
            import json, sohusim
            sim = sohusim.Simulator(set={{"sim.stop_time": "50 us"}})
            try:
                sim.run(**{RUN!r})
            except sohusim.SimulationError as e:
                failed = {{"message": str(e), "result": e.result, "runtime_error": isinstance(e, RuntimeError)}}
            try:
                sim.run(model="tiny", prompt=8, gen=2)
            except RuntimeError as e:
                failed["again"] = str(e)
            print(json.dumps(failed))
        """)
        self.assertEqual(out["result"], theirs)
        self.assertFalse(out["result"]["ok"])
        self.assertEqual(out["message"], theirs["failure"])
        self.assertIn("sim.stop_time", out["message"])
        self.assertTrue(out["runtime_error"])
        self.assertIn("cannot run again", out["again"])

    def test_a_bad_configuration_is_a_value_error_with_the_diagnostics(self):
        r = cli("run", "--model", "tiny", "--set", "device.matrix.engines=0", "--set", "sim.sed=1")
        self.assertEqual(r.returncode, 2)
        out = child_json("""
            import json, sohusim
            try:
                sohusim.Simulator(set={"device.matrix.engines": 0, "sim.sed": 1})
            except ValueError as e:
                bad = {"type": type(e).__name__, "text": str(e), "config_error": isinstance(e, sohusim.ConfigError)}
            # Nothing was built: this process may still have its simulator.
            ok = sohusim.Simulator().run(model="tiny", prompt=8, gen=2)["ok"]
            print(json.dumps({**bad, "then": ok}))
        """)
        self.assertEqual(out["type"], "ConfigError")
        self.assertTrue(out["config_error"])
        self.assertEqual(out["text"], r.stderr.strip())
        self.assertIn("device.matrix.engines", out["text"])
        self.assertIn("did you mean `sim.seed`", out["text"])
        self.assertTrue(out["then"])


class InProcess(unittest.TestCase):
    """This process's one Simulator: runs one after the other, stats, configuration."""

    def test_a_second_simulator_is_refused_and_names_run_point(self):
        shared_simulator()
        with self.assertRaises(RuntimeError) as e:
            sohusim.Simulator("sohu-8")
        self.assertIn("one per process", str(e.exception))
        self.assertIn("sohusim.run_point", str(e.exception))

    def test_runs_follow_each_other_and_count_their_own_activity(self):
        # Time goes on from run to run; each run's figures are its own request's (the first
        # run on a new simulator also brings the device up, which the others do not).
        sim = shared_simulator()
        first = sim.run(**RUN)
        t = sim.simulated_seconds
        second = sim.run(**RUN)
        third = sim.run(**RUN)
        self.assertGreater(sim.simulated_seconds, t)
        self.assertAlmostEqual(sim.simulated_seconds - t, second["simulated_seconds"] + third["simulated_seconds"],
                               delta=1e-12)
        for key in ("hbm_bytes", "commands"):
            self.assertEqual(second[key], first[key], key)
            self.assertEqual(third[key], first[key], key)
        for key in ("ttft_ms", "tpot_ms"):
            self.assertAlmostEqual(second[key], first[key], delta=0.01 * first[key], msg=key)
        for key in ("energy_joules", "compute_utilization", "simulated_seconds"):
            self.assertAlmostEqual(third[key], second[key], delta=0.01 * second[key], msg=key)
        self.assertEqual(second["configuration"], sim.configuration())
        self.assertEqual(len(sim.configuration()["hash"]), 16)

    def test_stats_are_numbers_and_summaries(self):
        sim = shared_simulator()
        sim.run(model="tiny", prompt=8, gen=2)
        st = sim.stats()
        macs = sim.stats("dev0.me*.macs_useful")
        self.assertTrue(macs)
        self.assertTrue(all(isinstance(v, int) for v in macs.values()))
        self.assertEqual({k: st[k] for k in macs}, macs)
        self.assertGreater(sum(macs.values()), 0)
        dist = st["dev0.cp.submit_to_start"]
        self.assertEqual(sorted(dist), ["count", "max", "mean", "min", "p50", "p90", "p99"])
        self.assertGreater(dist["count"], 0)
        self.assertLessEqual(dist["min"], dist["p50"])
        self.assertLessEqual(dist["p50"], dist["max"])

    def test_bad_options_are_value_errors(self):
        sim = shared_simulator()
        with self.assertRaisesRegex(ValueError, "no-such-model"):
            sim.run(model="no-such-model")
        with self.assertRaisesRegex(ValueError, "max_position_embeddings"):
            sim.run(model="tiny", prompt=100000, gen=2)
        with self.assertRaisesRegex(ValueError, "dtype `fp4`"):
            sim.run(model="tiny", dtype="fp4")
        with self.assertRaisesRegex(ValueError, "scheduler: `lifo`"):
            sim.serve(model="tiny", scheduler="lifo")
        with self.assertRaisesRegex(ValueError, "--rate"):
            sim.serve(model="tiny", rate=float("nan"))

    def test_serve_in_process_and_its_series(self):
        sim = shared_simulator()
        s = sim.serve(**SERVE)
        self.assertTrue(s["ok"])
        rows = s["occupancy"]["rows"]
        self.assertGreater(len(rows), 0)
        self.assertIsInstance(rows, list)  # the result stays JSON-like
        a = sohusim.as_arrays(s)
        self.assertEqual(sorted(a["occupancy"]), ["kv_blocks", "running", "t_s", "waiting"])
        self.assertEqual(list(a["occupancy"]["kv_blocks"]), [r[1] for r in rows])
        if numpy is not None:
            self.assertIsInstance(a["occupancy"]["t_s"], numpy.ndarray)
        self.assertEqual(a["metrics"], s["metrics"])


@unittest.skipIf(numpy is None, "python3-numpy is not installed")
class NumpyArrays(unittest.TestCase):
    def test_number_series_become_arrays_and_the_rest_stays(self):
        r = {"decode_ms_per_layer": [1.0, 2.0], "tokens": [[1, 2], [3, 4]], "ok": True, "model": "gpt2",
             "prefill_layer0_ops": [{"op": "qkv", "ms": 0.1}], "decode_ms_per_kind": {"gemm": 1.5},
             "occupancy": {"columns": ["t_s", "kv_blocks"], "rows": [[0.5, 3], [1.0, 4]]}}
        a = sohusim.as_arrays(r)
        self.assertIsInstance(a["decode_ms_per_layer"], numpy.ndarray)
        self.assertEqual(a["tokens"].shape, (2, 2))
        self.assertEqual(a["occupancy"]["kv_blocks"].tolist(), [3, 4])
        self.assertEqual(a["prefill_layer0_ops"], r["prefill_layer0_ops"])
        self.assertEqual(a["decode_ms_per_kind"], {"gemm": 1.5})
        self.assertIsInstance(r["decode_ms_per_layer"], list)  # the input is left as it was


class WithoutNumpy(unittest.TestCase):
    def test_lists_when_numpy_cannot_be_imported(self):
        # A child python in which `import numpy` fails, as on a machine without python3-numpy.
        out = child_json("""
            import json, sys
            sys.modules["numpy"] = None
            import sohusim
            r = {"decode_ms_per_layer": [1.0, 2.0], "tokens": [[1, 2], [3, 4]],
                 "occupancy": {"columns": ["t_s", "kv_blocks"], "rows": [[0.5, 3], [1.0, 4]]}}
            a = sohusim.as_arrays(r)
            print(json.dumps({"types": [type(a["decode_ms_per_layer"]).__name__, type(a["tokens"]).__name__,
                                        type(a["occupancy"]["kv_blocks"]).__name__], "a": a}))
        """)
        self.assertEqual(out["types"], ["list", "list", "list"])
        self.assertEqual(out["a"]["occupancy"], {"t_s": [0.5, 1.0], "kv_blocks": [3, 4]})
        self.assertEqual(out["a"]["tokens"], [[1, 2], [3, 4]])


class Points(unittest.TestCase):
    """run_point, gemm and sweep: each point its own `sohusim` process."""

    def test_the_program_is_found(self):
        self.assertTrue(os.path.samefile(sohusim.binary(), BIN))
        env = {k: v for k, v in os.environ.items() if k != "SOHUSIM_BIN"}
        r = subprocess.run([sys.executable, "-c", "import sohusim; print(sohusim.binary())"], capture_output=True,
                           text=True, env=env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.samefile(r.stdout.strip(), BIN), r.stdout)  # the one built beside the module

    def test_run_point_returns_the_json_and_raises_with_the_stderr_tail(self):
        j = sohusim.run_point(["run", *RUN_ARGS])
        theirs = cli_json("run", *RUN_ARGS)
        self.assertEqual({k: v for k, v in j.items() if k != "wall_seconds"},
                         {k: v for k, v in theirs.items() if k != "wall_seconds"})
        with self.assertRaises(sohusim.PointError) as e:
            sohusim.run_point(["run", "--model", "no-such-model"])
        self.assertEqual(e.exception.returncode, 2)
        self.assertIn("no-such-model", str(e.exception))
        self.assertIn("no-such-model", e.exception.stderr)
        with self.assertRaises(sohusim.PointError) as e:
            sohusim.run_point(["run", "--model", "llama-3-70b", "--system", "sohu-8"], timeout=0.3)
        self.assertIn("timed out", str(e.exception))

    def test_gemm_runs_as_its_own_process(self):
        j = sohusim.gemm(256, 512, 128, dtype="fp8", set={"device.matrix.engines": 4})
        theirs = cli_json("gemm", "--m", "256", "--k", "512", "--n", "128", "--arch", "sohu", "--dtype", "fp8",
                          "--set", "device.matrix.engines=4")
        self.assertEqual({k: v for k, v in j.items() if k != "wall_seconds"},
                         {k: v for k, v in theirs.items() if k != "wall_seconds"})
        self.assertEqual(j["engines"], 4)

    def test_a_two_point_sweep_returns_its_rows(self):
        spec = {"name": "py-sweep", "command": "run", "fixed": {"model": "tiny", "prompt": 8, "gen": 2},
                "axes": [{"name": "batch", "values": [1, 2]}]}
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            rows = sohusim.sweep(spec, out, jobs=2)
            self.assertEqual([r["status"] for r in rows], ["ok", "ok"])
            self.assertEqual([r["batch"] for r in rows], [1, 2])
            self.assertEqual([json.loads(r["result"])["batch"] for r in rows], [1, 2])
            self.assertGreater(rows[1]["tokens_per_second"], rows[0]["tokens_per_second"])
            # A spec file, and a second call: nothing is rerun, the rows are the same.
            again = sohusim.sweep(os.path.join(out, "spec.yaml"), out)
            self.assertEqual([r["key"] for r in again], [r["key"] for r in rows])
            with self.assertRaises(sohusim.PointError) as e:
                sohusim.sweep({"name": "bad", "command": "run", "axes": [{"name": "batch", "values": [0]}]},
                              os.path.join(d, "bad"))
            self.assertEqual(e.exception.returncode, 2)


if __name__ == "__main__":
    unittest.main()
