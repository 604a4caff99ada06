#!/usr/bin/env python3
"""The speed guard: runs the key figures' benchmarks (about a minute on 2 cores), divides
each by the reference workload's time measured in the same run, prints each beside the
committed baseline (bench/baseline.json) and exits 1 when one is more than --limit times its
baseline (default 1.5). A slower machine moves the reference as much as the figures, so it
does not fail the check; a slower sohusim does. A figure past the limit is measured twice
more and its best ratio kept, so that a burst of load from a neighbour does not fail it.

  scripts/perf_check.sh [--build build/release] [--limit 1.5] [--update] [--only NAME]

--update writes the measured figures as the new baseline: do it only in a commit that says
why the figures moved.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASELINE = os.path.join(ROOT, "bench", "baseline.json")

# name: (program, filter, what the figure is). Each figure is a benchmark's real time per
# iteration, or per item for throughput benchmarks, divided by the reference workload's time
# (lower is better): a ratio, without a unit.
FIGURES = [
    ("gemm_8192_bf16", "bench_gemm", "^BM_Gemm/8192$", "8192^3 BF16 GEMM on sohu, tile by tile (per GEMM)"),
    ("llama70b_decode_step", "bench_run", "^BM_Llama70bDecodeStepSohu8Warm/",
     "Llama-3-70B decode step on sohu-8, batch 64, context 2048, warm (per step)"),
    ("llama70b_prefill_b4", "bench_run", "^BM_Llama70bPrefillSohu8/",
     "Llama-3-70B prefill on sohu-8, 4 x 2048 tokens (per prefill)"),
    ("hbm_detailed_stream", "bench_mem_fast", "^BM_Single/fast:0/random:0$",
     "HBM detailed model, 32 B stream reads (per request)"),
    ("hbm_fast_stream", "bench_mem_fast", "^BM_Single/fast:1/random:0$",
     "HBM fast model, 32 B stream reads (per request)"),
    ("hbm_fast_bulk_1MiB", "bench_mem_fast", "^BM_Bulk/fast:1/KiB:1024/stacks:6$",
     "HBM fast model, 1 MiB transfers on 6 stacks (per transfer)"),
    ("pcie_tlp_writes", "bench_pcie", "^BM_TlpLevelWrites", "PCIe posted writes of 4 MiB, TLP by TLP (per transfer)"),
    ("trace_perfetto", "bench_trace", "^BM_Perfetto_StartOrder/", "Perfetto trace writer (per slice)"),
]
REFERENCE = ("bench_reference", "^BM_Reference$")


def run(build, program, pattern, min_time):
    exe = os.path.join(build, "bench", program)
    if not os.access(exe, os.X_OK):
        sys.exit("perf_check: no benchmark program %s (build the release preset with benchmarks first)" % exe)
    with tempfile.NamedTemporaryFile(suffix=".json") as result:
        # The results go to a file: SystemC prints its banner on standard output.
        cmd = [exe, "--benchmark_filter=" + pattern, "--benchmark_out=" + result.name, "--benchmark_out_format=json"]
        if min_time:
            cmd.append("--benchmark_min_time=%g" % min_time)
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, stdin=subprocess.DEVNULL)
        if out.returncode != 0:
            sys.exit("perf_check: %s failed:\n%s" % (" ".join(cmd), out.stderr[-2000:]))
        try:
            with open(result.name) as f:
                rows = [b for b in json.load(f)["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
        except (ValueError, KeyError):
            sys.exit("perf_check: %s wrote no results:\n%s" % (" ".join(cmd), out.stderr[-2000:]))
    if not rows:
        sys.exit("perf_check: %s ran no benchmark" % " ".join(cmd))
    b = rows[0]
    if b.get("error_occurred"):
        sys.exit("perf_check: %s: %s" % (b["name"], b.get("error_message")))
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]
    seconds = b["real_time"] * scale
    if "items_per_second" in b:  # a throughput benchmark: time per item
        return 1.0 / b["items_per_second"]
    if "bytes_per_second" in b and program == "bench_mem_fast":  # time per 1 MiB transfer
        return (1 << 20) / b["bytes_per_second"]
    return seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--limit", type=float, default=1.5)
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--only", help="run only the figures whose name contains this")
    a = ap.parse_args()
    # The reference is measured before, between and after the figures; its median divides them.
    refs = [run(a.build, *REFERENCE, 0.5)]
    measured = {}
    for name, program, pattern, _ in FIGURES:
        if a.only and a.only not in name:
            continue
        min_time = None if program in ("bench_run", "bench_gemm") else 0.3
        measured[name] = run(a.build, program, pattern, min_time)
        if len(refs) == 1 and len(measured) * 2 >= len(FIGURES):
            refs.append(run(a.build, *REFERENCE, 0.5))
    refs.append(run(a.build, *REFERENCE, 0.5))
    reference = sorted(refs)[len(refs) // 2]
    measured = {k: v / reference for k, v in measured.items()}
    base = {}
    if os.path.exists(BASELINE):
        with open(BASELINE) as f:
            base = json.load(f)["figures"]
    # A figure past the limit is measured twice more, each time beside a fresh reference, and
    # its best ratio kept: a neighbour's load only ever makes a run slower, so one quiet run
    # of three clears noise, while a slower sohusim stays slower in all three.
    retried = set()
    if not a.update:
        for name, program, pattern, _ in FIGURES:
            b = base.get(name)
            if name not in measured or not b or measured[name] / b <= a.limit:
                continue
            min_time = None if program in ("bench_run", "bench_gemm") else 0.3
            for _ in range(2):
                ref = run(a.build, *REFERENCE, 0.5)
                measured[name] = min(measured[name], run(a.build, program, pattern, min_time) / ref)
            retried.add(name)
    print("perf_check: figures / reference workload (median of %s ms), against bench/baseline.json"
          % ", ".join("%.1f" % (r * 1e3) for r in refs))
    print("  %-22s %12s %12s %7s  %s" % ("figure", "measured", "baseline", "ratio", "what"))
    failed = []
    for name, _, _, what in FIGURES:
        if name not in measured:
            continue
        b = base.get(name)
        ratio = measured[name] / b if b else float("nan")
        flag = "  SLOWER" if b and ratio > a.limit else ""
        if flag:
            failed.append(name)
        if name in retried:
            flag += "  (best of 3)"
        print("  %-22s %12.5g %12s %7s  %s%s" % (name, measured[name], "%.5g" % b if b else "-",
                                                 "%.2f" % ratio if b else "-", what, flag))
    if "hbm_fast_stream" in measured and "hbm_detailed_stream" in measured:
        print("  fast / detailed HBM speed on 32 B streams: %.1fx"
              % (measured["hbm_detailed_stream"] / measured["hbm_fast_stream"]))
    if a.update:
        figures = dict(base)
        figures.update(measured)
        with open(BASELINE, "w") as f:
            json.dump({"about": "scripts/perf_check.sh: each figure divided by the reference workload's time "
                                "(bench_reference) in the same run; update only in a commit that says why",
                       "figures": {k: float("%.5g" % v) for k, v in sorted(figures.items())}}, f, indent=2)
            f.write("\n")
        print("perf_check: baseline written to bench/baseline.json")
        return 0
    if failed:
        print("perf_check: %d figure(s) more than %.1fx their baseline: %s" % (len(failed), a.limit, ", ".join(failed)))
        return 1
    print("perf_check: every figure within %.1fx of its baseline" % a.limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
