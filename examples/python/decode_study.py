"""A small architecture study in Python (docs/python.md): Llama-3-8B's decode step on one
Sohu-class chip, over batch sizes on one machine (in this process) and over HBM generations
(one process per machine, as SystemC allows one simulator per process).

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/decode_study.py
"""
import sohusim

REQUEST = dict(model="llama-3-8b", prompt=1024, gen=4, decode_only=True)

# One machine, several requests: this process's Simulator, time going on from run to run.
sim = sohusim.Simulator("sohu-1")
print("batch  TPOT ms  output tok/s  HBM bw util")
for batch in (1, 16, 64):
    r = sim.run(batch=batch, **REQUEST)
    print(f"{batch:5d}  {r['tpot_ms']:7.3f}  {r['output_tokens_per_second']:12.0f}  "
          f"{r['hbm_bandwidth_utilization']:11.1%}")

# Several machines: each point is its own `sohusim` process.
print("HBM preset   TPOT ms  configuration hash")
for hbm in ("hbm3-6400", "hbm3e-8000", "hbm3e-9600"):
    r = sohusim.run_point(["run", "--model", "llama-3-8b", "--hbm", hbm, "--batch", "16", "--prompt", "1024",
                           "--gen", "4", "--decode-only"])
    print(f"{hbm:11s}  {r['tpot_ms']:7.3f}  {r['configuration']['hash']}")

# Per-layer times as a numpy array (a list without numpy).
layers = sohusim.as_arrays(r)["decode_ms_per_layer"]
print(f"decode step: {len(layers)} layers, {sum(layers):.3f} ms in the layers")
