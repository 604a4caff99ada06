"""Bad input, one table: each case is a command line, the exit code it must end with (2: the
user's input, 1: the run could not produce what was asked) and a part of the message that
names what was wrong. Nothing here may exit 0, crash (exit codes above 2, signals) or hang."""
import os
import subprocess
import unittest

BIN = os.environ.get("SOHUSIM_BIN", "sohusim")
FULL = "/dev/full"  # every write fails with ENOSPC

CASES = [
    # A sampling period inside the range but below anything that changes: refused, not run forever.
    (["demo", "--set", "stats.sample_interval=1 ps"], 2, "stats.sample_interval: a period below 1 ns"),
    # A GEMM cut by sim.stop_time is not a result of 0 s (nor of 2^64 ps).
    (["gemm", "--m", "1024", "--k", "1024", "--n", "1024", "--set", "sim.stop_time=5us"], 1,
     "the GEMM did not complete: stopped at sim.stop_time"),
    (["gemm", "--m", "8192", "--k", "8192", "--n", "8192", "--array", "16x16", "--engines", "1"], 1,
     "the GEMM did not complete"),
    # Outputs to a full disk fail the command; the message names the output.
    (["mem", "--preset", "hbm3-6400", "--requests", "1000", "--stats", FULL], 1, "--stats / stats.file: writing"),
    (["demo", "--stats", FULL], 1, "--stats / stats.file: writing"),
    (["pcie", "--gen", "4", "--lanes", "8", "--stats", FULL], 1, "--stats / stats.file: writing"),
    (["pcie", "--gen", "4", "--lanes", "8", "--capture", FULL], 1, "--capture: writing"),
    (["gemm", "--m", "64", "--k", "64", "--n", "64", "--stats", FULL], 1, "--stats / stats.file: writing"),
    (["run", "--model", "tiny", "--dtype", "bf16", "--prompt", "8", "--gen", "2", "--stats", FULL], 1,
     "--stats: writing stats file"),
    (["serve", "--model", "tiny", "--dtype", "bf16", "--requests", "4", "--input-len", "uniform:8:16",
      "--output-len", "uniform:2:4", "--stats", FULL], 1, "--stats: writing stats file"),
    # An output path that cannot be created is the user's to fix, whichever output it is.
    (["run", "--trace", "/proc/no/such.pftrace"], 2, "--trace: cannot write"),
    (["serve", "--trace", "/proc/no/such.json"], 2, "--trace: cannot write"),
    (["run", "--stats", "/proc/no/such.json"], 2, "--stats: cannot write"),
    # The layers a run names must exist.
    (["run", "--hbm", "hbm9"], 2, "HBM preset `hbm9`"),
    (["run", "--arch", "tpu"], 2, "arch `tpu`"),
    (["run", "--config", "/no/such.yaml"], 2, "/no/such.yaml"),
    (["run", "--dtype", "int4"], 2, "--dtype: int4 not in"),
    # Values that wrapped around or were silently ignored.
    (["mem", "--preset", "hbm3-6400", "--pattern", "strided:-1", "--requests", "100"], 2,
     "`-1` is not a stride of 1 B .. 1 PB"),
    (["gemm", "--m", "64", "--k", "64", "--n", "64", "--array", "-1x4"], 2, "`-1x4` is not RxC"),
    (["mem", "--preset", "hbm3-6400", "--trace-file", "/dev/null", "--pattern", "random"], 2,
     "--pattern excludes --trace-file"),
    (["pcie", "--gen", "4", "--lanes", "4", "--capture-types", "MRd"], 2, "--capture-types requires --capture"),
    (["sweep", "--merge", "/no/such/sweep"], 2, "--merge: /no/such/sweep/slurm/results: no Slurm results"),
]


class BadInput(unittest.TestCase):
    def test_each_bad_input_names_what_was_wrong(self):
        if not os.path.exists(FULL):
            self.skipTest("no /dev/full on this machine")
        for args, code, message in CASES:
            with self.subTest(args=" ".join(args)):
                r = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300,
                                   stdin=subprocess.DEVNULL)
                self.assertEqual(r.returncode, code, f"stdout: {r.stdout[-500:]}\nstderr: {r.stderr[-800:]}")
                self.assertIn(message, r.stderr)


# System files with a mistake: (file text, exit code, message part).
SYSTEM_FILES = [
    ("name: x\ndescription: [a, b]\nhosts:\n  - {name: host0, devices: 1}\n", 2,
     "sys.yaml:2: description: expected a single value"),
    ("name: {a: 1}\nhosts:\n  - {name: host0, devices: 1}\n", 2, "sys.yaml:1: name: expected a single value"),
    ("name: x\nhosts:\n  - {name: host0, devices: 2}\nc2c: [[0, 1], [1, 0]]\n", 2,
     "sys.yaml:4: c2c[1]: [1, 0] is listed twice"),
    ("name: x\nhosts:\n  - {name: host0, devices: 2}\nc2c: none\n", 2,
     "has no chip-to-chip link between devices 0 and 1 of host `host0`"),
    ("name: x\nset: [sim.stop_time=1 parsec]\nhosts:\n  - {name: host0, devices: 1}\n", 2,
     "sys.yaml: sim.stop_time: (its `set:` list) expected a time"),
]


class BadSystemFiles(unittest.TestCase):
    def test_each_mistake_is_named_with_its_file_line_and_key(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "sys.yaml")
            for text, code, message in SYSTEM_FILES:
                with self.subTest(text=text):
                    with open(path, "w") as f:
                        f.write(text)
                    r = subprocess.run([BIN, "run", "--model", "gpt2", "--system", path], capture_output=True,
                                       text=True, timeout=300, stdin=subprocess.DEVNULL)
                    self.assertEqual(r.returncode, code, r.stderr[-800:])
                    self.assertIn(message, r.stderr)


if __name__ == "__main__":
    unittest.main()
