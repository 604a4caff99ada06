"""`sohusim pcie`: the link front end (JSON fields, figures, bad input, capture)."""
import json
import os
import subprocess
import tempfile
import unittest

BIN = os.environ.get("SOHUSIM_BIN", "sohusim")


def run(*args):
    return subprocess.run([BIN, "pcie", *args], capture_output=True, text=True, timeout=300)


class PcieCli(unittest.TestCase):
    def json_of(self, *args):
        r = run(*args, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_json_has_the_promised_fields(self):
        j = self.json_of("--gen", "4", "--lanes", "16", "--mps", "256", "--bytes", "8MiB")
        for key in ("throughput_gbps", "raw_gbps", "efficiency", "tlps", "dllps", "avg_latency_ns", "wall_seconds"):
            self.assertIn(key, j)
        self.assertAlmostEqual(j["throughput_gbps"], 26.37, delta=26.37 * 0.01)
        self.assertAlmostEqual(j["efficiency"], j["throughput_gbps"] / j["raw_gbps"], places=6)

    def test_mmio_read_round_trip_is_about_1_5_us(self):
        j = self.json_of("--pattern", "mmio-read", "--bytes", "400", "--size", "4")
        self.assertGreater(j["avg_latency_ns"], 1300)
        self.assertLess(j["avg_latency_ns"], 1700)

    def test_reads_with_rcb_64_land_lower(self):
        j = self.json_of("--gen", "3", "--pattern", "read", "--no-merge", "--bytes", "8MiB", "--outstanding", "16")
        self.assertGreater(j["throughput_gbps"], 10.6 * 0.99)
        self.assertLess(j["throughput_gbps"], 10.9 * 1.01)

    def test_bit_errors_replay(self):
        j = self.json_of("--gen", "3", "--bytes", "4MiB", "--ber", "1e-6", "--no-bulk")
        self.assertGreater(j["replays"], 0)
        self.assertEqual(j["errors"], 0)

    def test_h100_device_to_host_configuration(self):
        # docs/validation.md: H100 (PCIe Gen5 x16) device-to-host, measured 52.8 GB/s.
        j = self.json_of("--gen", "5", "--lanes", "16", "--mps", "256", "--pattern", "write", "--bytes", "64MiB")
        self.assertAlmostEqual(j["throughput_gbps"], 52.8, delta=52.8 * 0.01)

    def test_a100_configuration(self):
        # docs/validation.md: A100 (PCIe Gen4 x16) host-to-device, about 25 GB/s measured.
        j = self.json_of("--gen", "4", "--lanes", "16", "--mps", "256", "--mrrs", "512", "--rcb", "128",
                         "--no-merge", "--pattern", "read", "--outstanding", "16", "--bytes", "32MiB")
        self.assertAlmostEqual(j["throughput_gbps"], 25.0, delta=25.0 * 0.03)

    def test_bad_input_names_the_field(self):
        for args, needle in ((["--gen", "7"], "generation"), (["--lanes", "12"], "x12"), (["--mps", "384"], "MPS 384"),
                             (["--rcb", "256"], "pcie.link.rcb"), (["--rcb", "96"], "RCB 96"), (["--tags", "9"], "9"), (["--pattern", "zigzag"], "zigzag"),
                             (["--size", "0"], "--size"), (["--capture", "/x", "--capture-types", "Foo"], "Foo"),
                             (["--capture", "/x", "--capture-range", "9:1"], "--capture-range"),
                             (["--set", "pcie.link.lanes=12"], "pcie.link.lanes")):
            r = run(*args)
            self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
            self.assertIn(needle, r.stderr, args)

    def test_capture_lists_tlps_like_an_analyzer(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cap.txt")
            r = run("--pattern", "read", "--bytes", "2KiB", "--size", "1KiB", "--outstanding", "1",
                    "--capture", path, "--capture-types", "MRd,CplD")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path) as f:
                lines = f.read().splitlines()
            self.assertTrue(lines[0].startswith("time_ns"))
            kinds = [line.split()[2] for line in lines[1:]]
            self.assertEqual(kinds.count("MRd"), 4)  # 2 KiB in MRRS-512 requests
            self.assertGreater(kinds.count("CplD"), 4)
            self.assertNotIn("MWr", kinds)


if __name__ == "__main__":
    unittest.main()
