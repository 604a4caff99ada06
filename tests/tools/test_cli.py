"""The `sohusim` command line as a user meets it: exit codes (0 ok, 1 simulation
error, 2 usage or config error), messages that name what was wrong and where,
JSON output, and the stats and trace files it writes. Standard library only."""
import json
import os
import subprocess
import tempfile
import unittest

BIN = os.environ.get("SOHUSIM_BIN", "sohusim")
SRC = os.environ.get("SOHUSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def read_text(path):
    with open(path) as fh:
        return fh.read()


def read_json(path):
    return json.loads(read_text(path))


def run(*args, cwd=None):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, cwd=cwd, stdin=subprocess.DEVNULL, timeout=120)
    return p.returncode, p.stdout, p.stderr


class Version(unittest.TestCase):
    def test_version(self):
        rc, out, err = run("version")
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"^sohusim \d+\.\d+\.\d+\n")
        self.assertIn("SystemC 2.3", out)
        self.assertNotIn("Copyright", out + err, "SystemC banner must not pollute the output")


class Usage(unittest.TestCase):
    def test_no_subcommand_is_usage_error(self):
        rc, _, err = run()
        self.assertEqual(rc, 2)

    def test_zero_negative_and_nan_flags_are_refused_naming_the_flag(self):
        # each once silently replaced by a default or accepted as is (values above a range are
        # the configuration's to refuse, naming its key: the commands' own tests)
        cases = [("pcie", "--ber", "nan"), ("pcie", "--ber", "-1"), ("pcie", "--gen", "0"), ("pcie", "--lanes", "0"),
                 ("gemm", "--engines", "0"), ("mem", "--stacks", "0"),
                 ("report", "--gap", "nan"), ("report", "--bound-threshold", "nan"), ("serve", "--slo-ttft", "nan"),
                 ("serve", "--rate", "inf"), ("serve", "--think", "-1")]
        for cmd, flag, value in cases:
            with self.subTest(cmd=cmd, flag=flag, value=value):
                extra = ("x.json",) if cmd == "report" else ()
                rc, _, err = run(cmd, *extra, flag, value)
                self.assertEqual(rc, 2, err)
                self.assertIn(flag, err)

    def test_two_outputs_to_one_file_are_refused(self):
        with tempfile.TemporaryDirectory() as d:
            cases = [("run", "--model", "tiny", "--prompt", "8", "--gen", "2", "--trace", "o.json", "--stats", "./o.json"),
                     ("demo", "--trace", "o.json", "--stats", "o.json"),
                     ("serve", "--model", "tiny", "--csv", "r.csv", "--report", os.path.join(d, "r.csv"))]
            for args in cases:
                with self.subTest(args=args):
                    rc, _, err = run(*args, cwd=d)
                    self.assertEqual(rc, 2, err)
                    self.assertIn("both write", err)
                    self.assertFalse(os.path.exists(os.path.join(d, "o.json")))

    def test_unknown_subcommand(self):
        rc, _, err = run("frobnicate")
        self.assertEqual(rc, 2)
        self.assertIn("frobnicate", err)

    def test_help_everywhere(self):
        for args in (["--help"], ["config", "--help"], ["config", "check", "--help"], ["demo", "--help"],
                     ["version", "--help"]):
            rc, out, _ = run(*args)
            self.assertEqual(rc, 0, args)
            self.assertIn("Usage", out, args)


class ConfigCheck(unittest.TestCase):
    def test_default_config_is_valid_and_printed_with_units_and_sources(self):
        rc, out, err = run("config", "check", os.path.join(SRC, "configs", "default.yaml"))
        self.assertEqual(rc, 0, err)
        self.assertIn("sim:", out)
        self.assertIn("GHz", out)
        self.assertIn("default.yaml", out, "each key should say where its value came from")

    def test_json_output(self):
        rc, out, err = run("config", "check", "--json", "--set", "sim.seed=7")
        self.assertEqual(rc, 0, err)
        j = json.loads(out)
        self.assertIsInstance(j, dict)
        self.assertIn("7", json.dumps(j))

    def test_bad_config_reports_every_error_with_file_line_key_and_range(self):
        bad = os.path.join(SRC, "configs", "examples", "bad-config.yaml")
        rc, out, err = run("config", "check", bad)
        self.assertEqual(rc, 2)
        self.assertEqual(out, "", "nothing on stdout when the config is invalid")
        self.assertIn("bad-config.yaml:", err)
        self.assertGreaterEqual(err.count("bad-config.yaml:"), 3, err)
        self.assertRegex(err, r"bad-config\.yaml:\d+:\d+: ")

    def test_wrong_unit_names_key_and_expected_dimension(self):
        with tempfile.TemporaryDirectory() as d:
            f = os.path.join(d, "c.yaml")
            with open(f, "w") as fh:
                fh.write("sim:\n  clocks:\n    host: 5 ns\n")
            rc, _, err = run("config", "check", f)
            self.assertEqual(rc, 2)
            self.assertIn("c.yaml:3:", err)
            self.assertIn("sim.clocks.host", err)
            self.assertIn("frequency", err)

    def test_unknown_key_suggests(self):
        rc, _, err = run("config", "check", "--set", "sim.sed=3")
        self.assertEqual(rc, 2)
        self.assertIn("sim.sed", err)
        self.assertIn("sim.seed", err)

    def test_missing_file(self):
        rc, _, err = run("config", "check", "/nonexistent/x.yaml")
        self.assertEqual(rc, 2)
        self.assertIn("/nonexistent/x.yaml", err)

    def test_schema_lists_every_parameter(self):
        rc, out, err = run("config", "schema")
        self.assertEqual(rc, 0, err)
        for key in ("sim.seed", "sim.stop_time", "trace.file", "stats.sample_interval", "demo.memory.bandwidth"):
            self.assertIn(key, out)


class Demo(unittest.TestCase):
    def test_demo_json(self):
        rc, out, err = run("demo", "--json", "--set", "demo.requests=200")
        self.assertEqual(rc, 0, err)
        j = json.loads(out)
        self.assertEqual(j["requests"], 800)
        self.assertTrue(j["ok"])
        self.assertGreater(j["bandwidth_gbps"], 0)
        self.assertLessEqual(j["bandwidth_gbps"], j["peak_gbps"])

    def test_demo_is_deterministic(self):
        a = run("demo", "--json", "--set", "demo.pattern=random", "--set", "demo.requests=300")
        b = run("demo", "--json", "--set", "demo.pattern=random", "--set", "demo.requests=300")
        ja, jb = json.loads(a[1]), json.loads(b[1])
        for k in ("simulated_seconds", "requests", "bytes", "bandwidth_gbps"):
            self.assertEqual(ja[k], jb[k], k)

    def test_demo_writes_stats_and_both_trace_formats(self):
        with tempfile.TemporaryDirectory() as d:
            stats = os.path.join(d, "stats.json")
            tj = os.path.join(d, "t.json")
            tp = os.path.join(d, "t.pftrace")
            rc, _, err = run("demo", "--set", "demo.requests=100", "--set", "stats.sample_interval=1 us",
                             "--stats", stats, "--trace", tj)
            self.assertEqual(rc, 0, err)
            s = read_json(stats)
            self.assertEqual(s["demo.gen0.requests"]["value"], 100)
            self.assertEqual(s["demo.gen0.requests"]["unit"], "1")
            t = read_json(tj)
            names = {e.get("name") for e in t["traceEvents"]}
            self.assertIn("read", names)
            self.assertTrue(any(e.get("ph") == "C" for e in t["traceEvents"]), "sampled bandwidth counters")
            rc, _, err = run("demo", "--set", "demo.requests=100", "--trace", tp)
            self.assertEqual(rc, 0, err)
            self.assertGreater(os.path.getsize(tp), 100)

    def test_trace_categories_filter_what_is_recorded(self):
        with tempfile.TemporaryDirectory() as d:
            tj = os.path.join(d, "t.json")
            rc, _, err = run("demo", "--set", "demo.requests=50", "--set", "stats.sample_interval=1 us",
                             "--set", "trace.categories=[stats]", "--trace", tj)
            self.assertEqual(rc, 0, err)
            ev = read_json(tj)["traceEvents"]
            self.assertFalse(any(e.get("name") in ("read", "write") for e in ev), "generator slices filtered out")
            self.assertTrue(any(e.get("ph") == "C" for e in ev), "stats counters kept")

    def test_demo_csv_stats(self):
        with tempfile.TemporaryDirectory() as d:
            stats = os.path.join(d, "stats.csv")
            rc, _, err = run("demo", "--set", "demo.requests=10", "--stats", stats)
            self.assertEqual(rc, 0, err)
            text = read_text(stats)
            self.assertTrue(text.startswith("name,kind,unit,value,description\n"))
            self.assertIn("demo.gen0.requests,counter,1,10,", text)

    def test_demo_config_error_is_exit_2(self):
        rc, out, err = run("demo", "--set", "demo.memory.count=0")
        self.assertEqual(rc, 2)
        self.assertIn("demo.memory.count", err)
        self.assertIn("1 .. 16", err)

    def test_demo_hitting_stop_time_is_a_simulation_error_with_stats_kept(self):
        with tempfile.TemporaryDirectory() as d:
            stats = os.path.join(d, "s.json")
            trace = os.path.join(d, "t.json")
            rc, out, err = run("demo", "--set", "sim.stop_time=2 us", "--stats", stats, "--trace", trace)
            self.assertEqual(rc, 1)
            self.assertIn("stop_time", err)
            s = read_json(stats)
            self.assertGreater(s["demo.gen0.requests"]["value"], 0)
            read_json(trace)  # still a valid file

    def test_unwritable_trace_path_is_a_clear_error(self):
        rc, _, err = run("demo", "--trace", "/nonexistent/dir/t.pftrace")
        self.assertNotEqual(rc, 0)
        self.assertIn("/nonexistent/dir/t.pftrace", err)


if __name__ == "__main__":
    unittest.main()
