// Embedding sohusim in another C++ tool: build a simulated system from a system file, run a
// host program on it that uses the runtime API directly (device memory, a stream, a GEMM
// launch) and then a whole transformer request, read statistics back and write a trace.
// Built against the installed package by the test suite (tests/install/check_embed.cmake).
//
//   embed_example [CONFIG_DIR]   CONFIG_DIR: where systems/, arch/ and models/ are
//                                (default: $SOHUSIM_CONFIGS, then the built-in search)
#include <cstdlib>
#include <iostream>
#include <string>

#include <sohusim/driver/command.hpp>
#include <sohusim/driver/runtime.hpp>
#include <sohusim/platform/simulator.hpp>
#include <sohusim/platform/system.hpp>
#include <sohusim/workloads/model_config.hpp>
#include <sohusim/workloads/scenario.hpp>
#include <systemc>  // declares sc_main (extern "C")

// SystemC's library provides a main() that prints a banner and calls sc_main();
// defining main() here keeps stdout clean and enters the kernel the same way.
int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char* argv[]) {
  using namespace sohusim;
  try {
    platform::SimulatorOptions opt;
    opt.system = "sohu-1";
    if (argc > 1) opt.config_dirs = {argv[1]};
    opt.trace_file = "embed_trace.pftrace";
    platform::Simulator sim(opt);
    const std::vector<std::string> dirs =
        argc > 1 ? std::vector<std::string>{argv[1]} : platform::default_config_dirs();
    const workloads::ModelConfig model = workloads::load_model("tiny", dirs);

    double gemm_us = 0;
    workloads::ScenarioResult request;
    sim.run([&](platform::HostContext& host) {
      // 1. The runtime API: a 1024 x 1024 x 1024 BF16 GEMM on device memory.
      driver::Runtime& rt = host.runtime();
      const driver::Stream s = rt.create_stream(0);
      const std::uint64_t bytes = 1024 * 1024 * 2;
      driver::GemmDesc g;
      g.a = rt.malloc(0, bytes);
      g.b = rt.malloc(0, bytes);
      g.c = rt.malloc(0, bytes);
      g.m = g.k = g.n = 1024;
      const std::uint64_t t0 = host.now_ns();
      rt.launch(s, driver::Program{"one gemm", {driver::gemm(g)}});
      rt.synchronize(s);
      gemm_us = static_cast<double>(host.now_ns() - t0) / 1e3;
      for (std::uint64_t p : {g.a, g.b, g.c}) rt.free(0, p);

      // 2. A whole request of a (tiny) transformer through the same runtime.
      workloads::ScenarioOptions so;
      so.batch = 2;
      so.prompt = 16;
      so.gen = 4;
      so.dtype = driver::DType::Bf16;
      request = workloads::run_scenario(rt, model, so, {0});
    });

    // 3. Statistics from the registry.
    const double commands = sim.stats().value("dev0.cp.commands_completed");
    std::cout << "gemm " << gemm_us << " us, request TTFT " << request.ttft_seconds * 1e3 << " ms, TPOT "
              << request.tpot_seconds * 1e3 << " ms, " << request.output_tokens_per_second
              << " output tokens/s, device commands " << commands << ", simulated " << sim.simulated_seconds() * 1e3
              << " ms\n";
    sim.close_trace();
    const bool ok = gemm_us > 0 && request.ttft_seconds > 0 && request.tpot_seconds > 0 && commands > 10;
    std::cout << (ok ? "embed: ok" : "embed: FAILED") << '\n';
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "embed: " << e.what() << '\n';
    return 1;
  }
}
