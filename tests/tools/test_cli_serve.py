"""`sohusim serve`: a request stream served on a simulated system (summary, JSON, CSV, every
scenario and scheduler, request traces, bad input)."""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

BIN = os.environ.get("SOHUSIM_BIN", "sohusim")
TINY = ("--model", "tiny", "--dtype", "bf16", "--max-batch", "8", "--input-len", "uniform:8:48",
        "--output-len", "uniform:4:24")


def serve(*args, timeout=300):
    return subprocess.run([BIN, "serve", *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


class ServeCli(unittest.TestCase):
    def json_of(self, *args):
        r = serve(*TINY, *args, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def usage_error(self, *args, expect=()):
        r = serve(*args)
        self.assertEqual(r.returncode, 2, f"stdout: {r.stdout}\nstderr: {r.stderr}")
        for e in expect:
            self.assertIn(e, r.stderr)
        return r.stderr

    def test_summary_names_what_serving_people_read(self):
        r = serve(*TINY, "--requests", "20", "--rate", "2000", "--slo-ttft", "5", "--slo-tpot", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        for key in ("TTFT", "TPOT", "between tok.", "queueing", "throughput", "SLO", "goodput", "KV cache",
                    "mJ per output token", "steps"):
            self.assertIn(key, r.stdout)

    def test_every_scenario_and_scheduler_completes_its_requests(self):
        for scenario in ("offline", "poisson", "gamma", "closed"):
            for scheduler in ("static", "continuous", "chunked"):
                with self.subTest(scenario=scenario, scheduler=scheduler):
                    extra = ("--clients", "4", "--think", "0.0005") if scenario == "closed" else ("--cv", "2")
                    j = self.json_of("--scenario", scenario, "--scheduler", scheduler, "--requests", "16", "--rate",
                                     "3000", "--max-tokens", "128", *extra)
                    m = j["metrics"]
                    self.assertEqual(m["completed"], 16)
                    self.assertEqual(m["rejected"], 0)
                    self.assertGreater(j["ttft_ms"]["p50"], 0)
                    self.assertLessEqual(j["ttft_ms"]["p50"], j["ttft_ms"]["p99"])
                    self.assertEqual(j["steps"], j["steps_simulated"] + j["steps_reused"])
                    self.assertGreater(j["energy_per_output_token_joules"], 0)
                    self.assertLessEqual(j["kv_peak_occupancy"], 1.0)

    def test_a_written_stream_replays_as_a_trace_with_the_same_results(self):
        with tempfile.TemporaryDirectory() as d:
            trace = os.path.join(d, "requests.csv")
            per_request = os.path.join(d, "per_request.csv")
            a = self.json_of("--requests", "24", "--rate", "1500", "--write-requests", trace, "--csv", per_request)
            b = self.json_of("--scenario", "trace", "--trace-file", trace)
            self.assertEqual(a["metrics"], b["metrics"])
            with open(per_request) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual(len(rows), 24)
            self.assertEqual({r["status"] for r in rows}, {"completed"})
            self.assertIn("ttft_s", rows[0])

    def test_the_trace_shows_steps_occupancy_and_each_request(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "serve.json")
            j = self.json_of("--requests", "10", "--rate", "2000", "--trace", path)
            with open(path) as f:
                events = json.load(f)["traceEvents"]
        steps = [e for e in events if e.get("name") == "step" and e.get("ph") == "X"]
        self.assertEqual(len(steps), j["steps"])
        self.assertGreater(sum(s["args"]["prefill_tokens"] for s in steps), 0)
        # each request's phases are async slices (begin/end pairs) on the "requests" track
        prefills = [e for e in events if e.get("name") == "prefill" and e.get("ph") == "b"]
        self.assertEqual(sorted(e["args"]["request"] for e in prefills), list(range(10)))
        kv = [e for e in events if e.get("ph") == "C" and e.get("name", "").startswith("KV blocks used")]
        self.assertEqual(len(kv), j["steps"])
        self.assertTrue(any(e.get("args", {}).get("name") == "serving" for e in events if e.get("ph") == "M"))

    def test_the_profile_and_report_carry_the_serving_run(self):
        here = os.path.dirname(os.path.abspath(__file__))
        with tempfile.TemporaryDirectory() as d:
            profile, report, again = (os.path.join(d, n) for n in ("p.json", "r.html", "again.html"))
            j = self.json_of("--requests", "20", "--rate", "3000", "--slo-ttft", "1", "--slo-tpot", "0.05",
                             "--profile", profile, "--report", report)
            with open(profile) as f:
                serving = json.load(f)["serving"]
            self.assertEqual(len(serving["requests"]), 20)
            self.assertEqual(len(serving["samples"]), j["steps"])
            self.assertEqual(serving["samples"][-1]["output_tokens"],
                             sum(r["tokens"] for r in serving["requests"]))
            self.assertEqual(serving["slo_ttft_s"], 0.001)
            with open(report) as f:
                html = f.read()
            for key in ('id="serving-section"', 'id="serving-cdf"', 'id="serving-time"', "SLO"):
                self.assertIn(key, html)
            # `sohusim report` reads the profile back; the report renders in Chromium
            r = subprocess.run([BIN, "report", profile, "-o", again], capture_output=True, text=True, timeout=120,
                               stdin=subprocess.DEVNULL)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = subprocess.run([sys.executable, os.path.join(here, "render_report.py"), again, "-", "--ids",
                                "serving-cdf,serving-time"], capture_output=True, text=True, timeout=300)
            if r.returncode != 77:
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_kv_pressure_preempts_and_recovers(self):
        for swap in ((), ("--swap",)):
            j = self.json_of("--requests", "32", "--rate", "5000", "--kv-blocks", "1", "--input-len", "uniform:32:64",
                             "--output-len", "uniform:24:48", *swap)
            self.assertEqual(j["metrics"]["completed"], 32)
            self.assertGreater(j["metrics"]["preemptions"], 0)
            self.assertEqual(j["kv_peak_occupancy"], 1.0)

    def test_gpu_class_systems_have_the_parts_memory_and_serve(self):
        small = ("--model", "llama-3-8b", "--requests", "4", "--rate", "1000", "--input-len", "64", "--output-len", "4")
        one = self.json_of("--system", "h100-1", *small)
        eight = self.json_of("--system", "h100x8", *small)
        self.assertEqual(one["tp"], 1)
        self.assertEqual(eight["tp"], 8)
        for j in (one, eight):
            self.assertEqual(j["metrics"]["completed"], 4)
        # weights, activations and the KV pool fill 90 % of the 80 GiB (of 64 GiB, 4 stacks of 16, it could not)
        used = one["weight_bytes_per_device"] + one["kv_cache_bytes_per_device"]
        self.assertGreater(used, 0.8 * 80 * 2**30)
        self.assertLessEqual(used, 0.9 * 80 * 2**30)

    def test_too_long_requests_are_rejected_and_counted(self):
        # tiny holds 128 positions: 100 + 50 does not fit
        j = self.json_of("--requests", "6", "--rate", "1000", "--input-len", "100", "--output-len", "50")
        self.assertEqual(j["metrics"]["rejected"], 6)
        self.assertEqual(j["metrics"]["completed"], 0)

    def test_bad_input_is_a_usage_error_naming_it(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.csv")
            with open(bad, "w") as f:
                f.write("arrival_s,input_tokens,output_tokens\n0.0,10,5\n0.1,ten,5\n")
            self.usage_error(*TINY, "--scenario", "trace", "--trace-file", bad, expect=(f"{bad}:3", "input_tokens"))
        self.usage_error(*TINY, "--scenario", "trace", expect=("--trace-file",))
        self.usage_error(*TINY, "--scenario", "weekly", expect=("weekly",))
        self.usage_error(*TINY, "--input-len", "lognormal:100", expect=("--input-len",))
        self.usage_error(*TINY, "--scheduler", "fifo", expect=("fifo",))
        self.usage_error(*TINY, "--rate", "0", expect=("rate",))
        self.usage_error(*TINY, "--memory-utilization", "1.5", expect=("memory_utilization",))
        self.usage_error("--model", "llama-3-70b", "--system", "sohu-1", "--dtype", "bf16",
                         expect=("llama-3-70b", "GiB"))
        self.usage_error("--system", "sohu-2x8", expect=("2 hosts",))
        self.usage_error(*TINY, "--max-batch", "8", "--memory-utilization", "0.0000001", expect=("KV positions",))
        self.usage_error(*TINY, "--report", "/nonexistent/r.html", expect=("--report", "/nonexistent/r.html"))


if __name__ == "__main__":
    unittest.main()
