"""sohusim in Python: architecture studies scripted over the simulator.

    import sohusim
    sim = sohusim.Simulator("sohu-1", hbm="hbm3e-9600", set={"device.matrix.engines": 64})
    r = sim.run(model="llama-3-8b", batch=8, prompt=512, gen=32)   # the dict of `sohusim run --json`
    s = sim.serve(model="llama-3-8b", rate=8, requests=64)         # the dict of `sohusim serve --json`
    stats = sim.stats("dev0.me*.macs_useful")                      # name -> value
    point = sohusim.run_point(["run", "--system", "sohu-8", "--model", "llama-3-70b"])  # own process
    rows = sohusim.sweep("study.yaml", "out", jobs=2)              # `sohusim sweep`, rows of results.sqlite
    series = sohusim.as_arrays(s)["occupancy"]["kv_blocks"]        # numpy arrays when numpy is there

One Simulator per process (SystemC's kernel cannot be restarted): run, serve and stats go
through the process's Simulator; another configuration is another process (run_point, sweep,
gemm). docs/python.md is the manual.
"""
from . import _core, _locations
from ._arrays import as_arrays
from ._core import ConfigError, SimulationError
from ._locations import config_dirs
from ._points import PointError, binary, gemm, run_point, sweep

__version__ = _core.version()

__all__ = ["Simulator", "SimulationError", "ConfigError", "PointError", "run_point", "sweep", "gemm", "as_arrays",
           "binary", "config_dirs"]


class Simulator(_core.Simulator):
    __doc__ = _core.Simulator.__doc__

    def __init__(self, system="sohu-1", *, arch=None, hbm=None, configs=(), set=None, fidelity=None, mode=None,
                 config_dirs=None):
        super().__init__(system, arch=arch, hbm=hbm, configs=configs, set=set, fidelity=fidelity, mode=mode,
                         config_dirs=_locations.config_dirs() if config_dirs is None else config_dirs)
