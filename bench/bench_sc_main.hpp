#pragma once
// The sc_main of a benchmark program that links SystemC: libsystemc.so's main() calls
// sc_main, benchmark_main provides main(); whichever the linker keeps, the benchmarks run.
// Include it in one file of the program.
#include <benchmark/benchmark.h>

extern "C" [[gnu::used]] inline int sc_main(int argc, char* argv[]) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
