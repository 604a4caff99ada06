"""`sohusim mem` as a user meets it: patterns and fidelities, the JSON result, the
request-trace format and its errors, exit codes (0 ok, 1 simulation error, 2 usage or
config error). Standard library only; the runs are small so the file stays quick."""
import json
import os
import subprocess
import tempfile
import unittest

BIN = os.environ.get("SOHUSIM_BIN", "sohusim")
SRC = os.environ.get("SOHUSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))

KEYS = ("bandwidth_gbps", "peak_gbps", "efficiency", "avg_read_latency_ns", "p99_read_latency_ns", "row_hit_rate",
        "requests", "wall_seconds", "requests_per_second")


def run(*args, cwd=None):
    p = subprocess.run([BIN, "mem", *args], capture_output=True, text=True, cwd=cwd, stdin=subprocess.DEVNULL,
                       timeout=120)
    return p.returncode, p.stdout, p.stderr


def run_json(*args):
    rc, out, err = run(*args, "--json")
    if rc != 0:
        raise AssertionError(f"exit {rc}: {err}")
    return json.loads(out)


class Patterns(unittest.TestCase):
    def test_stream_json_has_every_key_and_a_plausible_bandwidth(self):
        for fidelity in ("detailed", "fast"):
            j = run_json("--preset", "hbm3-6400", "--fidelity", fidelity, "--requests", "20000")
            for k in KEYS:
                self.assertIn(k, j, k)
            self.assertAlmostEqual(j["peak_gbps"], 819.2, places=3)
            self.assertEqual(j["requests"], 20000)
            self.assertGreater(j["efficiency"], 0.6, j)  # a stream of 64 B reads, many in flight
            self.assertLessEqual(j["efficiency"], 1.0)
            self.assertGreater(j["row_hit_rate"], 0.8)
            self.assertGreaterEqual(j["p99_read_latency_ns"], j["avg_read_latency_ns"] * 0.5)
            self.assertEqual(j["fidelity"], fidelity)

    def test_requests_in_flight_that_bound_the_bandwidth_are_named(self):
        # 4 x 128 requests of 32 B at about 55 ns carry about 300 GB/s (Little's law): the
        # result says so, with the number in flight that 90 % of peak needs; 4 x 1024 do not.
        for fidelity in ("detailed", "fast"):
            few = run_json("--preset", "hbm3-6400", "--fidelity", fidelity, "--size", "32", "--requests", "40000")
            self.assertEqual(few["bound"], "in_flight", few)
            self.assertGreater(few["in_flight_needed"], 4 * 128)
            self.assertLess(few["efficiency"], 0.6)
            rc, out, _ = run("--preset", "hbm3-6400", "--fidelity", fidelity, "--size", "32", "--requests", "40000")
            self.assertEqual(rc, 0)
            self.assertIn("bound by          requests in flight: 512 x 32 B", out)
            self.assertIn("in flight would reach 90% of peak", out)
            deep = run_json("--preset", "hbm3-6400", "--fidelity", fidelity, "--size", "32", "--outstanding", "1024",
                            "--requests", "100000")
            self.assertEqual(deep["bound"], "memory", deep)
            self.assertIsNone(deep["in_flight_needed"])
            self.assertGreater(deep["efficiency"], 0.85)

    def test_random_is_activation_bound(self):
        j = run_json("--pattern", "random", "--size", "32", "--requests", "20000", "--outstanding", "256")
        self.assertGreater(j["efficiency"], 0.15)
        self.assertLess(j["efficiency"], 0.40)
        self.assertLess(j["row_hit_rate"], 0.1)

    def test_strided_mix_and_stacks(self):
        j = run_json("--pattern", "strided:4KiB", "--requests", "4000")
        self.assertGreater(j["bandwidth_gbps"], 0)
        j = run_json("--pattern", "mix:70", "--stacks", "2", "--requests", "4000", "--refresh", "off")
        self.assertAlmostEqual(j["peak_gbps"], 2 * 819.2, places=3)
        self.assertEqual(j["stacks"], 2)

    def test_reads_sets_the_mix_of_any_pattern(self):
        j = run_json("--pattern", "stream", "--reads", "60", "--size", "4KiB", "--requests", "400", "--fidelity", "fast")
        self.assertAlmostEqual(j["read_fraction"], 0.6)
        self.assertEqual(j["pattern"], "stream")
        with tempfile.TemporaryDirectory() as d:
            stats = os.path.join(d, "s.json")
            run_json("--pattern", "strided:8KiB", "--reads", "0", "--requests", "300", "--stats", stats)
            with open(stats) as f:
                s = json.load(f)
            self.assertEqual(s["hbm.port.reads"]["value"], 0)
            self.assertEqual(s["hbm.port.writes"]["value"], 300)

    def test_single_pc_mapping_collapses_a_stream(self):
        base = run_json("--requests", "4000", "--fidelity", "fast")
        one = run_json("--requests", "4000", "--fidelity", "fast", "--mapping", "single-pc")
        self.assertLess(one["bandwidth_gbps"], base["bandwidth_gbps"] / 8)

    def test_text_output(self):
        rc, out, err = run("--requests", "2000")
        self.assertEqual(rc, 0, err)
        for word in ("bandwidth", "GB/s", "p99", "row-hit", "wall time"):
            self.assertIn(word, out)


class TraceFile(unittest.TestCase):
    def write(self, d, text):
        f = os.path.join(d, "req.trace")
        with open(f, "w") as fh:
            fh.write(text)
        return f

    def test_trace_with_units_hex_and_comments(self):
        with tempfile.TemporaryDirectory() as d:
            f = self.write(d, "# time address R/W size\n0 0x0 R 64\n10ns 0x1000 W 4096\n\n1 us 4096 r 32  # ok\n")
            j = run_json("--trace-file", f, "--initiators", "2")
            self.assertEqual(j["requests"], 3)
            self.assertGreaterEqual(j["simulated_seconds"], 1e-6)

    def test_malformed_lines_name_file_and_line(self):
        cases = {"0 0x0 X 64\n": "R or W", "0 0x0 R\n": "fields", "abc 0 R 64\n": "time", "0 zz R 64\n": "address",
                 "0 0 R 0\n": "size", "5 GHz 0 R 4\n": "time"}
        with tempfile.TemporaryDirectory() as d:
            for text, word in cases.items():
                f = self.write(d, "0 0 R 64\n" + text)
                rc, out, err = run("--trace-file", f)
                self.assertEqual(rc, 2, (text, err))
                self.assertIn("req.trace:2:", err, text)
                self.assertIn(word, err, text)

    def test_out_of_range_addresses_are_errors_not_crashes(self):
        with tempfile.TemporaryDirectory() as d:
            f = self.write(d, "0 0 R 64\n0 0xffffffffffff R 64\n")
            j = run_json("--trace-file", f)
            self.assertEqual(j["errors"], 1)
            self.assertEqual(j["requests"], 2)


class Errors(unittest.TestCase):
    def test_unknown_preset_lists_the_available_ones(self):
        rc, _, err = run("--preset", "hbm9")
        self.assertEqual(rc, 2)
        self.assertIn("hbm9", err)
        self.assertIn("hbm3-6400", err)
        self.assertIn("hbm3e-9600", err)

    def test_bad_pattern_size_and_choices(self):
        for args in (["--pattern", "zigzag"], ["--pattern", "strided:"], ["--pattern", "mix:150"], ["--size", "0"],
                     ["--reads", "101"], ["--reads", "half"], ["--pattern", "mix:50", "--reads", "50"],
                     ["--fidelity", "exact"], ["--refresh", "sometimes"], ["--trace-file", "/nonexistent/x"]):
            rc, _, err = run(*args)
            self.assertEqual(rc, 2, (args, err))
            self.assertTrue(err.strip(), args)

    def test_bad_set_names_the_key(self):
        rc, _, err = run("--set", "hbm.timing.tRC=10")
        self.assertEqual(rc, 2)
        self.assertIn("hbm.timing.tRC", err)
        rc, _, err = run("--mapping", "nosuch")
        self.assertEqual(rc, 2)
        self.assertIn("hbm.mapping.preset", err)

    def test_refresh_leaving_no_time_to_work_is_refused_not_run(self):
        # tREFI 587 used to hang the fast model and keep the detailed one from serving
        # anything until sim.stop_time; both are refused now, naming the key.
        for fidelity in ("fast", "detailed"):
            rc, _, err = run("--set", "hbm.timing.tREFI=587", "--fidelity", fidelity)
            self.assertEqual(rc, 2, err)
            self.assertIn("hbm.timing.tREFI", err)
            self.assertIn(">= 680", err)
        rc, _, err = run("--refresh", "perbank", "--set", "hbm.timing.tREFI=440")
        self.assertEqual(rc, 2, err)
        self.assertIn(">= 448", err)

    def test_stop_time_reached_is_a_simulation_error_with_outputs_written(self):
        with tempfile.TemporaryDirectory() as d:
            stats = os.path.join(d, "s.json")
            trace = os.path.join(d, "t.json")
            rc, out, err = run("--requests", "20000", "--set", "sim.stop_time=1 us", "--stats", stats, "--trace", trace,
                               "--json")
            self.assertEqual(rc, 1, err)
            self.assertFalse(json.loads(out)["ok"])
            self.assertIn("stop_time", err)
            self.assertTrue(os.path.getsize(stats) > 0)
            with open(trace) as fh:
                json.load(fh)  # complete, parseable


class Outputs(unittest.TestCase):
    def test_trace_has_per_stack_bandwidth_tracks_and_stats_have_rollups(self):
        with tempfile.TemporaryDirectory() as d:
            stats = os.path.join(d, "s.json")
            trace = os.path.join(d, "t.json")
            rc, _, err = run("--requests", "20000", "--stacks", "2", "--trace", trace, "--stats", stats)
            self.assertEqual(rc, 0, err)
            with open(trace) as fh:
                text = fh.read()
            self.assertIn("hbm s0 bandwidth", text)
            self.assertIn("hbm s1 bandwidth", text)
            with open(stats) as fh:
                s = json.load(fh)
            for k in ("hbm.s0.rd", "hbm.rd", "hbm.s1.ch0.pc0.rd", "hbm.row_hit_rate", "hbm.port.requests"):
                self.assertIn(k, s, k)


class Survey(unittest.TestCase):
    """scripts/mem_fast_vs_detailed.sh, the fast-against-detailed survey of
    docs/memory-frontend.md, on two of its cases, one of its bulk set and one over two
    tREFI values (the whole survey takes minutes): the per-case lines and the summary
    line, and clear errors without a binary, with an unknown set or a bad tREFI."""

    SCRIPT = os.path.join(SRC, "scripts", "mem_fast_vs_detailed.sh")

    def survey(self, binary=BIN, **env):
        """Runs the script with these environment variables; returns (exit code, output lines, stderr)."""
        p = subprocess.run(["bash", self.SCRIPT, binary], capture_output=True, text=True,
                           env=dict(os.environ, **env), stdin=subprocess.DEVNULL, timeout=300)
        return p.returncode, p.stdout.strip().splitlines(), p.stderr

    def test_two_cases_and_the_summary(self):
        rc, lines, err = self.survey(ROWS="^o1 (stream|mix:67) 32$")
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(lines), 3, lines)
        self.assertTrue(lines[0].startswith("o1 stream 32 "), lines[0])
        self.assertTrue(lines[1].startswith("o1 mix:67 32 "), lines[1])
        for line in lines[:2]:
            detailed, fast = float(line.split()[4]), float(line.split()[6])
            self.assertGreater(detailed, 0)
            self.assertLess(abs(fast / detailed - 1), 0.05, line)  # both within 5 % in the docs
        self.assertRegex(lines[2], r"^2 cases, 0 outside 10 % \(0 outside 5 %\), worst [-+][0-9.]+ %, "
                                  r"sum of \|differences\| [0-9]+ points$")

    def test_the_bulk_set_and_a_clear_error_for_an_unknown_one(self):
        rc, lines, err = self.survey(SET="bulk", ROWS="^b2 stream r0 8KiB$")
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(lines), 2, lines)
        self.assertTrue(lines[0].startswith("b2 stream r0 8KiB "), lines[0])
        detailed, fast = float(lines[0].split()[5]), float(lines[0].split()[7])
        self.assertLess(abs(fast / detailed - 1), 0.05, lines[0])  # +0.5 % in the docs
        self.assertTrue(lines[1].startswith("1 cases, 0 outside 10 % (0 outside 5 %)"), lines[1])
        rc, _, err = self.survey(SET="all")
        self.assertEqual(rc, 2)
        self.assertIn("SET must be survey or bulk, not 'all'", err)

    def test_a_sweep_of_trefi_and_a_clear_error_for_a_bad_value(self):
        rc, lines, err = self.survey(ROWS="^o1 stream 32$", EXTRA="--refresh perbank", TREFI="6200 6280")
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(lines), 2, lines)
        # name, the mean bandwidths and their difference, then the spread of the two points
        self.assertRegex(lines[0], r"^o1 stream 32 +detailed +[0-9.]+ +fast +[0-9.]+ +[-+][0-9.]+ % +"
                                   r"\[[-+][0-9.]+ \.\. [-+][0-9.]+\]$")
        detailed, fast = float(lines[0].split()[4]), float(lines[0].split()[6])
        self.assertLess(abs(fast / detailed - 1), 0.05, lines[0])  # -0.1 % when this was written
        self.assertTrue(lines[1].startswith("1 cases, 0 outside 10 % (0 outside 5 %)"), lines[1])
        rc, _, err = self.survey(TREFI="6200 62x0")
        self.assertEqual(rc, 2)
        self.assertIn("TREFI must list cycle counts, not '62x0'", err)

    def test_a_failed_run_stops_the_survey_with_its_own_message(self):
        rc, lines, err = self.survey(ROWS="^o1 stream 32$", EXTRA="--set hbm.controller.bus_arbiter=bogus")
        self.assertNotEqual(rc, 0)
        self.assertEqual(lines, [])
        self.assertIn('hbm.controller.bus_arbiter: unknown choice "bogus"', err)
        self.assertNotIn("Traceback", err)

    def test_missing_binary_is_a_clear_error(self):
        rc, _, err = self.survey("/nonexistent/sohusim")
        self.assertEqual(rc, 2)
        self.assertIn("no sohusim binary at '/nonexistent/sohusim'", err)


if __name__ == "__main__":
    unittest.main()
