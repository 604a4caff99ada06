"""`sohusim gemm`: one GEMM command through the device (fold formulas, A100 validation, bad input)."""
import json
import math
import os
import subprocess
import tempfile
import unittest

BIN = os.environ.get("SOHUSIM_BIN", "sohusim")


def run(*args):
    return subprocess.run([BIN, "gemm", *args], capture_output=True, text=True, timeout=600)


def ceil(a, b):
    return -(-a // b)


def scalesim(df, r, c, m, k, n):
    """SCALE-Sim v2's compute cycles (docs/sources.md), written out independently."""
    if df == "ws":
        return ceil(k, r) * ceil(n, c) * (2 * r + c + m - 2) - 1
    if df == "os":
        return ceil(m, r) * ceil(n, c) * (r + c + k - 2) - 1
    return ceil(k, r) * ceil(m, c) * (2 * r + c + n - 2) - 1


class GemmCli(unittest.TestCase):
    def json_of(self, *args):
        r = run(*args, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout.strip().splitlines()[-1])

    def test_json_has_the_promised_fields(self):
        j = self.json_of("--m", "256", "--k", "512", "--n", "384")
        for key in ("compute_cycles", "total_cycles", "seconds", "tflops", "utilization", "hbm_bytes", "wall_seconds"):
            self.assertIn(key, j)
        self.assertGreater(j["seconds"], 0)
        self.assertAlmostEqual(j["tflops"], 2 * 256 * 512 * 384 / j["seconds"] / 1e12, places=6)
        self.assertLessEqual(j["utilization"], 1.0)
        # A, B read and C written at least once.
        self.assertGreaterEqual(j["hbm_bytes"], 2 * (256 * 512 + 512 * 384 + 256 * 384))

    def test_scalesim_fold_model_reproduces_the_formulas_exactly(self):
        shapes = [(1, 1, 1), (5, 7, 3), (1, 4096, 4096), (64, 4096, 4096), (100, 70, 300), (128, 128, 128),
                  (129, 257, 65), (512, 96, 1000)]
        for r, c in ((32, 32), (128, 128)):
            for df in ("ws", "os", "is"):
                for m, k, n in shapes:
                    with self.subTest(array=f"{r}x{c}", dataflow=df, m=m, k=k, n=n):
                        j = self.json_of("--m", str(m), "--k", str(k), "--n", str(n), "--engines", "1", "--array",
                                         f"{r}x{c}", "--dataflow", df, "--fold-model", "scalesim")
                        expected = scalesim(df, r, c, m, k, n)
                        self.assertEqual(j["compute_cycles"], expected)
                        # When the sequencer ran it as one tile (operands resident in SRAM), the
                        # engine's measured active cycles are the formula too.
                        if j["tiles"] == 1:
                            self.assertEqual(j["engine_active_cycles_sum"], expected)

    def test_overlap_is_never_slower_than_scalesim(self):
        for df in ("ws", "os", "is"):
            a = self.json_of("--m", "512", "--k", "1024", "--n", "768", "--engines", "1", "--dataflow", df,
                             "--fold-model", "scalesim")
            b = self.json_of("--m", "512", "--k", "1024", "--n", "768", "--engines", "1", "--dataflow", df,
                             "--fold-model", "overlap")
            self.assertLessEqual(b["compute_cycles"], a["compute_cycles"])

    def test_a100_like_matches_measured_a100_times(self):
        # LLMCompass' measured A100 FP16 GEMM M x 12288 x 12288 (docs/sources.md).
        measured = {64: 0.190e-3, 256: 0.3185e-3, 1024: 1.199e-3, 4096: 4.4576e-3, 8192: 8.6216e-3, 16384: 17.03e-3}
        errors = []
        for m, t in measured.items():
            j = self.json_of("--arch", "a100-like", "--m", str(m), "--k", "12288", "--n", "12288", "--dtype", "fp16")
            errors.append(abs(j["seconds"] - t) / t)
            print(f"a100-like M={m}: {j['seconds'] * 1e3:.4f} ms vs {t * 1e3:.4f} ms measured")
        mape = sum(errors) / len(errors)
        print(f"MAPE {mape * 100:.1f} %")
        self.assertLess(mape, 0.15)

    def test_bad_input_is_a_usage_error(self):
        for args, needle in ((["--m", "0", "--k", "8", "--n", "8"], "--m"),
                             (["--m", "8", "--k", "8", "--n", "8", "--dtype", "int4"], "--dtype"),
                             (["--m", "8", "--k", "8", "--n", "8", "--array", "12by4"], "--array"),
                             (["--m", "8", "--k", "8", "--n", "8", "--arch", "nonesuch"], "--arch"),
                             (["--m", "300000", "--k", "300000", "--n", "300000"], "do not fit"),
                             (["--m", "4294967295", "--k", "4294967295", "--n", "4294967295"], "do not fit"),
                             (["--m", "8", "--k", "8", "--n", "8", "--engines", "5000"], "device.matrix.engines")):
            with self.subTest(args=args):
                r = run(*args)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(needle, r.stderr)

    def test_trace_and_stats_files(self):
        with tempfile.TemporaryDirectory() as d:
            trace = os.path.join(d, "t.json")
            stats = os.path.join(d, "s.json")
            j = self.json_of("--m", "512", "--k", "512", "--n", "512", "--trace", trace, "--stats", stats)
            with open(trace) as f:
                events = json.load(f)
            names = {e.get("name") for e in (events["traceEvents"] if isinstance(events, dict) else events)}
            self.assertIn("gemm tile", names)
            with open(stats) as f:
                s = json.load(f)
            self.assertIn("dev0.me0.active_cycles", json.dumps(s))
            self.assertGreater(j["seconds"], 0)


if __name__ == "__main__":
    unittest.main()
