"""The installed Python package works from its prefix alone: run by check_embed.cmake with
PYTHONPATH at the path `cmake --install` printed, as `check_python_package.py PREFIX`."""
import os
import sys

prefix = os.path.realpath(sys.argv[1])
import sohusim  # noqa: E402

where = os.path.realpath(os.path.dirname(sohusim.__file__))
assert where.startswith(prefix + os.sep), f"sohusim imported from {where}, not from {prefix}"
assert os.path.realpath(sohusim.binary()) == os.path.join(prefix, "bin", "sohusim"), sohusim.binary()
assert [os.path.realpath(d) for d in sohusim.config_dirs()] == [os.path.join(prefix, "share", "sohusim", "configs")], \
    sohusim.config_dirs()
r = sohusim.Simulator("sohu-1").run(model="tiny", prompt=8, gen=2)
assert r["ok"] and r["configuration"]["system_file"].startswith(prefix), r["configuration"]
p = sohusim.run_point(["run", "--model", "tiny", "--prompt", "8", "--gen", "2"])
assert p["tpot_ms"] == r["tpot_ms"], (p["tpot_ms"], r["tpot_ms"])
print(f"python package: ok ({where})")
