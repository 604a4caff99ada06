"""`sohusim sweep --slurm` through a real single-node Slurm cluster (munged, slurmctld and
slurmd from Debian, started and stopped by scripts/slurm_local.sh): a job array runs the
points, `--merge` gathers them, and the merged results equal a local run's."""
import json
import os
import sqlite3
import subprocess
import tempfile
import textwrap
import unittest

BIN = os.environ.get("SOHUSIM_BIN", "sohusim")
SOURCE = os.environ.get("SOHUSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(SOURCE, "scripts", "slurm_local.sh")
STATE = f"/tmp/sohusim-slurm-test-{os.getpid()}"
PORT = "6917"  # not the default: a cluster of the user's own keeps running

STUDY = """\
name: slurm-study
command: run
fixed: {model: gpt2, prompt: 32, gen: 2}
axes:
  - {name: hbm, values: [hbm3e-8000, hbm3-6400]}
  - {name: batch, values: [1, 4, 8]}
"""

# What differs between two runs of the same point: how long it took on the wall clock.
VOLATILE = ("wall_seconds", "result.wall_seconds", "result")


def table(db):
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        return {r["key"]: {k: r[k] for k in r.keys() if k not in VOLATILE}
                for r in con.execute("SELECT * FROM points")}
    finally:
        con.close()


class SlurmSweep(unittest.TestCase):
    env = None

    @classmethod
    def setUpClass(cls):
        env = dict(os.environ, SOHUSIM_SLURM_PORT=PORT)
        r = subprocess.run(["bash", SCRIPT, "start", STATE], capture_output=True, text=True, env=env,
                           stdin=subprocess.DEVNULL, timeout=300)
        if r.returncode == 3:
            raise unittest.SkipTest("Slurm cannot run on this machine: " + r.stderr.strip().splitlines()[-1])
        if r.returncode != 0:
            raise RuntimeError(f"slurm_local.sh start failed ({r.returncode}): {r.stderr}")
        line = r.stdout.strip().splitlines()[-1]
        assert line.startswith("export SLURM_CONF="), line
        env["SLURM_CONF"] = line.split("=", 1)[1]
        cls.env = env

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["bash", SCRIPT, "stop", STATE], capture_output=True, text=True,
                       env=dict(os.environ, SOHUSIM_SLURM_PORT=PORT), stdin=subprocess.DEVNULL, timeout=120)
        subprocess.run(["rm", "-rf", STATE])

    def test_a_job_array_gives_the_local_results(self):
        with tempfile.TemporaryDirectory() as d:
            spec = os.path.join(d, "study.yaml")
            with open(spec, "w") as f:
                f.write(textwrap.dedent(STUDY))
            local, remote = os.path.join(d, "local"), os.path.join(d, "slurm")
            r = subprocess.run([BIN, "sweep", spec, "-o", local, "-j", "2"], capture_output=True, text=True,
                               stdin=subprocess.DEVNULL, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = subprocess.run([BIN, "sweep", spec, "-o", remote, "--slurm", "--chunk", "2", "--wait"],
                               capture_output=True, text=True, env=self.env, stdin=subprocess.DEVNULL, timeout=300)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("6 points in 3 array tasks", r.stderr)
            self.assertIn("merged 6 points, 6 ok", r.stderr)
            with open(os.path.join(remote, "slurm", "job.sh")) as f:
                job = f.read()
            self.assertIn("#SBATCH --array=0-2", job)
            self.assertEqual(len(os.listdir(os.path.join(remote, "slurm", "results"))), 3)
            self.assertEqual(table(os.path.join(remote, "results.sqlite")), table(os.path.join(local, "results.sqlite")))
            # --merge again is idempotent, and a resubmission has nothing left to run.
            r = subprocess.run([BIN, "sweep", "--merge", remote], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("merged 6 points", r.stdout)
            r = subprocess.run([BIN, "sweep", spec, "-o", remote, "--slurm"], capture_output=True, text=True,
                               env=self.env, stdin=subprocess.DEVNULL, timeout=60)
            self.assertIn("all 6 points already", r.stderr)

    def test_a_failing_submission_says_why(self):
        with tempfile.TemporaryDirectory() as d:
            spec = os.path.join(d, "study.yaml")
            with open(spec, "w") as f:
                f.write(textwrap.dedent(STUDY))
            r = subprocess.run([BIN, "sweep", spec, "-o", os.path.join(d, "out"), "--slurm", "--partition", "nope"],
                               capture_output=True, text=True, env=self.env, stdin=subprocess.DEVNULL, timeout=60)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("sbatch failed", r.stderr)
            self.assertIn("nope", r.stderr)


if __name__ == "__main__":
    unittest.main()
