"""Bit-identical reruns: the same command twice gives the same statistics, trace, profile,
report and JSON, byte for byte, except the fields that measure the wall clock, named here:

- JSON results and profiles: `wall_seconds` (run, serve, gemm), and the profile's summary copy
  of it;
- the HTML report: the summary table's `wall_seconds` row (it shows the profile's summary).

Everything else (simulated times, counters, trace events and their order) must not move."""
import json
import os
import re
import subprocess
import tempfile
import unittest

BIN = os.environ.get("SOHUSIM_BIN", "sohusim")
WALL = ("wall_seconds",)


def strip_wall(obj):
    if isinstance(obj, dict):
        return {k: strip_wall(v) for k, v in obj.items() if k not in WALL}
    if isinstance(obj, list):
        return [strip_wall(v) for v in obj]
    return obj


def read(path):
    with open(path, "rb") as f:
        return f.read()


class Determinism(unittest.TestCase):
    def twice(self, args, outputs):
        """Runs `sohusim args` in two folders; returns {output: (first bytes, second bytes)} and both stdouts."""
        got = {}
        stdouts = []
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            for d in (a, b):
                r = subprocess.run([BIN, *args], cwd=d, capture_output=True, text=True, timeout=600,
                                   stdin=subprocess.DEVNULL)
                self.assertEqual(r.returncode, 0, r.stderr)
                stdouts.append(r.stdout)
            for name in outputs:
                got[name] = (read(os.path.join(a, name)), read(os.path.join(b, name)))
        return got, stdouts

    def test_run_gives_identical_stats_trace_profile_and_report(self):
        files, out = self.twice(["run", "--model", "gpt2", "--prompt", "32", "--gen", "4", "--batch", "4",
                                 "--stats", "s.json", "--trace", "t.pftrace", "--profile", "p.json",
                                 "--report", "r.html", "--json"],
                                ["s.json", "t.pftrace", "p.json", "r.html"])
        self.assertEqual(files["s.json"][0], files["s.json"][1], "statistics differ")
        self.assertEqual(files["t.pftrace"][0], files["t.pftrace"][1], "Perfetto traces differ")
        p0, p1 = (strip_wall(json.loads(x)) for x in files["p.json"])
        self.assertEqual(p0, p1, "profiles differ beyond wall_seconds")
        wall_row = re.compile(rb"<tr><td class=\"t\">wall_seconds</td><td class=\"t\">[^<]*</td></tr>")
        r0, r1 = (wall_row.sub(b"", x) for x in files["r.html"])
        self.assertEqual(r0, r1, "reports differ beyond the wall_seconds row")
        self.assertEqual(strip_wall(json.loads(out[0])), strip_wall(json.loads(out[1])))

    def test_serve_gives_identical_results_and_trace(self):
        files, out = self.twice(["serve", "--model", "tiny", "--dtype", "bf16", "--requests", "30", "--rate", "500",
                                 "--input-len", "uniform:8:48", "--output-len", "uniform:4:24", "--csv", "req.csv",
                                 "--trace", "t.json", "--stats", "s.csv", "--json"],
                                ["req.csv", "t.json", "s.csv"])
        for name, (x, y) in files.items():
            self.assertEqual(x, y, name + " differs")
        self.assertEqual(strip_wall(json.loads(out[0])), strip_wall(json.loads(out[1])))


if __name__ == "__main__":
    unittest.main()
