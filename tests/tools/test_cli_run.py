"""`sohusim run`: a transformer request end to end (defaults, JSON, functional mode, bad input)."""
import json
import os
import re
import subprocess
import tempfile
import unittest

BIN = os.environ.get("SOHUSIM_BIN", "sohusim")


def run(*args, timeout=600):
    return subprocess.run([BIN, "run", *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


class RunCli(unittest.TestCase):
    def json_of(self, *args):
        r = run(*args, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def usage_error(self, *args, expect=()):
        r = run(*args)
        self.assertEqual(r.returncode, 2, f"stdout: {r.stdout}\nstderr: {r.stderr}")
        for e in expect:
            self.assertIn(e, r.stderr)
        return r.stderr

    def test_default_runs_in_seconds_and_prints_a_summary(self):
        r = run(timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        for key in ("TTFT", "TPOT", "tokens/s", "(input + output)", "(output only)", "HBM used", "energy"):
            self.assertIn(key, r.stdout)

    def test_json_has_the_promised_fields_and_consistent_rates(self):
        j = self.json_of("--model", "tiny", "--batch", "2", "--prompt", "16", "--gen", "4")
        for key in ("ttft_ms", "tpot_ms", "tokens_per_second", "output_tokens_per_second", "simulated_seconds",
                    "wall_seconds", "devices", "hbm_used_bytes", "compute_utilization", "hbm_bandwidth_utilization",
                    "energy_joules", "average_watts", "output_tokens_per_joule"):
            self.assertIn(key, j)
        e2e = j["e2e_ms"] / 1e3
        self.assertAlmostEqual(j["tokens_per_second"], 2 * (16 + 4) / e2e, delta=1e-6 * j["tokens_per_second"])
        self.assertAlmostEqual(j["output_tokens_per_second"], 2 * 4 / e2e, delta=1e-6 * j["output_tokens_per_second"])
        self.assertGreater(j["ttft_ms"], 0)
        self.assertGreater(j["tpot_ms"], 0)
        self.assertLess(j["ttft_ms"], j["e2e_ms"])
        self.assertEqual(j["devices"], 1)
        self.assertGreater(j["hbm_used_bytes"], 0)

    def test_functional_tokens_agree_on_one_and_two_devices(self):
        args = ("--model", "tiny", "--mode", "functional", "--dtype", "fp32", "--batch", "2", "--prompt", "8", "--gen",
                "4")
        one = self.json_of(*args)
        two = self.json_of(*args, "--system", "test-2")
        self.assertEqual(len(one["tokens"]), 2)
        self.assertEqual(len(one["tokens"][0]), 4)
        self.assertEqual(one["tokens"], two["tokens"])
        self.assertEqual(two["devices"], 2)

    def test_two_hosts_run_as_pipeline_stages(self):
        # sohu-2x8: two 8-device servers on a network, one pipeline stage each. The stages'
        # network tags once followed each host's own collective count and never matched: both
        # hosts waited for ever.
        j = self.json_of("--system", "sohu-2x8", "--prompt", "8", "--gen", "3")
        self.assertEqual(j["hosts"], 2)
        self.assertEqual(j["pipeline_stages"], 2)
        self.assertEqual(j["devices"], 16)
        self.assertGreater(j["ttft_ms"], 0)
        self.assertGreater(j["tpot_ms"], 0)
        # The two-host clock test system (one device per host), tiny model.
        sysfile = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "platform", "clock-sync-2h.yaml")
        j = self.json_of("--model", "tiny", "--system", sysfile, "--prompt", "8", "--gen", "3")
        self.assertEqual(j["pipeline_stages"], 2)
        # --capture on both hosts: host 0 pings host 1 at every burst; host 1's device is drawn
        # on host 0's clock (host 1's is 2.5 s ahead and 50 ppm faster).
        with tempfile.TemporaryDirectory() as d:
            t = os.path.join(d, "c.pftrace")
            j = self.json_of("--model", "tiny", "--system", sysfile, "--prompt", "8", "--gen", "3", "--capture",
                             "--trace", t)
            c = j["capture"]
            self.assertEqual(c["devices"], 2)
            self.assertLessEqual(c["max_abs_error_ns"], 1100)
            # the drift is fitted over the few ms the tiny run lasts: 50 ppm true, noisy here
            self.assertAlmostEqual(c["host_clocks"]["host1"]["drift_ppm"], 50, delta=25)
            self.assertAlmostEqual(c["host_clocks"]["host1"]["offset_ns"], 2.5e9, delta=1e6)
            with open(t, "rb") as f:
                data = f.read()
            self.assertIn(b"dev1 captured (host0 clock)", data)
            self.assertNotIn(b"dev1 captured (host1 clock)", data)

    def test_stats_and_trace_files_are_written(self):
        with tempfile.TemporaryDirectory() as d:
            stats, trace = os.path.join(d, "s.json"), os.path.join(d, "t.json")
            r = run("--model", "tiny", "--prompt", "16", "--stats", stats, "--trace", trace, "--gen", "2")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(stats) as f:
                s = json.load(f)
            self.assertGreater(s["dev0.cp.commands_completed"]["value"], 0)
            self.assertGreater(s["host0.runtime.api_calls"]["value"], 0)
            with open(trace) as f:
                t = json.load(f)
            self.assertTrue(t["traceEvents"])
            # The command says what it wrote, with sizes.
            self.assertIn("sohusim run: wrote %s (" % trace, r.stderr)
            self.assertRegex(r.stderr, r"%s \([0-9.]+ [kM]?B, --stats\)" % re.escape(stats))

    def test_hbm_used_is_itemised_and_adds_up(self):
        r = run("--model", "gpt2", "--prompt", "64", "--gen", "2", "--batch", "8", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        parts = j["weight_bytes_per_device"] + j["kv_cache_bytes_per_device"] + j["activation_bytes_per_device"]
        self.assertGreater(j["activation_bytes_per_device"], 0)
        self.assertLessEqual(parts, j["hbm_used_bytes"])
        r = run("--model", "gpt2", "--prompt", "64", "--gen", "2", "--batch", "8")
        m = re.search(r"HBM used +([0-9.]+) GiB per device: weights ([0-9.]+), KV cache ([0-9.]+), "
                      r"activations ([0-9.]+), other ([0-9.]+)", r.stdout)
        self.assertIsNotNone(m, r.stdout)
        total, *rest = (float(x) for x in m.groups())
        self.assertAlmostEqual(total, sum(rest), delta=0.002)  # rounding of the printed parts

    def test_decode_only_reports_what_it_measured(self):
        r = run("--model", "gpt2", "--prompt", "64", "--gen", "3", "--batch", "2", "--decode-only", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        self.assertTrue(j["decode_only"])
        self.assertIsNone(j["ttft_ms"])  # no prefill: nothing to time
        self.assertEqual(j["tokens_per_second"], j["output_tokens_per_second"])
        self.assertIn("decode-only", j["tokens_per_second_counts"])
        r = run("--model", "gpt2", "--prompt", "64", "--gen", "3", "--batch", "2", "--decode-only")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("  TTFT ", r.stdout)
        self.assertIn("decode-only  steady-state decode steps over a KV cache that starts with 64 positions",
                      r.stdout)
        self.assertIn("(output only: decode-only)", r.stdout)
        self.assertNotIn("input + output", r.stdout)

    def test_unknown_model_lists_the_known_ones(self):
        self.usage_error("--model", "llama-9", expect=("llama-9", "llama-3-70b"))

    def test_bad_config_json_names_the_key(self):
        cases = [
            ({"model_type": "bert", "hidden_size": 64}, ("model_type", "bert")),
            ({"model_type": "llama", "hidden_size": 65, "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 256, "max_position_embeddings": 128},
             ("65", "4")),
            ({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 3, "intermediate_size": 128, "vocab_size": 256, "max_position_embeddings": 128},
             ("num_key_value_heads", "3")),
            ({"model_type": "llama", "num_hidden_layers": 2}, ("hidden_size",)),
        ]
        for cfg, expect in cases:
            with self.subTest(cfg=cfg), tempfile.TemporaryDirectory() as d:
                p = os.path.join(d, "config.json")
                with open(p, "w") as f:
                    json.dump(cfg, f)
                self.usage_error("--model", p, expect=expect)

    def test_tensor_parallel_degree_must_divide_the_heads(self):
        self.usage_error("--model", "tiny", "--system", "sohu-8", expect=("8",))

    def test_a_model_that_does_not_fit_says_by_how_much(self):
        self.usage_error("--model", "gpt-3-175b", "--dtype", "fp16", "--prompt", "16", "--gen", "2",
                         expect=("does not fit", "GiB"))

    def test_a_failed_run_still_prints_json_saying_so(self):
        # cut by sim.stop_time before the request finishes
        r = run("--model", "tiny", "--prompt", "16", "--gen", "4", "--set", "sim.stop_time=2 us", "--json")
        self.assertEqual(r.returncode, 1, r.stderr)
        j = json.loads(r.stdout)
        self.assertIs(j["ok"], False)
        self.assertIn("did not finish", j["failure"])
        self.assertIn("sim.stop_time (2 us) was reached", j["failure"])  # not "nothing is left to happen"
        self.assertIs(self.json_of("--model", "tiny", "--prompt", "16", "--gen", "2")["ok"], True)

    def test_absurd_model_sizes_are_refused_before_any_graph_is_built(self):
        # a billion layers: within the schema's range, 2e8 GiB of weights; refused at once
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(os.environ.get("SOHUSIM_SOURCE_DIR", "../.."), "configs", "models", "llama-3-8b.json")
            with open(src) as f:
                cfg = json.load(f)
            cfg["num_hidden_layers"] = 1000000000
            p = os.path.join(d, "huge.json")
            with open(p, "w") as f:
                json.dump(cfg, f)
            r = run("--model", p, timeout=20)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("does not fit: its matrix weights alone need", r.stderr)
            self.assertIn("1000000000 layers", r.stderr)

    def test_a_system_that_wires_missing_devices_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "sys.yaml")
            with open(p, "w") as f:
                f.write("hosts: [{devices: 2}]\nc2c: [[0, 3]]\n")
            self.usage_error("--system", p, expect=("c2c[0]", "does not exist"))

    def test_positions_beyond_the_model_are_refused(self):
        self.usage_error("--model", "tiny", "--prompt", "120", "--gen", "20", expect=("max_position_embeddings",))

    def test_functional_fp8_is_refused(self):
        self.usage_error("--model", "tiny", "--mode", "functional", "--dtype", "fp8", expect=("functional",))


if __name__ == "__main__":
    unittest.main()
