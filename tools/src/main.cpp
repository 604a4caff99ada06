// sohusim: the command-line front end. Subcommands live one per file (cmd_*.cpp).
#include <cstdlib>
#include <iostream>

#include <systemc>  // declares sc_main (extern "C")

#include "cli.hpp"
#include "sohusim/config/config_error.hpp"

// SystemC's library has a main() of its own that prints a copyright banner on
// stdout before calling sc_main(); our stdout carries results (JSON, tables), so
// this main() silences the banner and then enters the kernel the official way.
int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}

namespace sohusim::tools {

void add_commands(CLI::App& app, GlobalOptions& global, Action& action) {
  app.require_subcommand(1);
  app.fallthrough();
  app.add_option("--configs", global.config_dirs, "extra folder of presets, searched first (repeatable)");
  add_version_command(app, action);
  add_config_command(app, global, action);
  add_demo_command(app, global, action);
  add_mem_command(app, global, action);
  add_pcie_command(app, global, action);
  add_gemm_command(app, global, action);
  add_run_command(app, global, action);
  add_serve_command(app, global, action);
  add_report_command(app, global, action);
  add_sweep_command(app, global, action);
}

}  // namespace sohusim::tools

int sc_main(int argc, char* argv[]) {
  using namespace sohusim::tools;
  CLI::App app{"sohusim: cycle-approximate simulator of a Sohu-class transformer accelerator"};
  GlobalOptions global;
  Action action;
  add_commands(app, global, action);
  // CLI11 would only say "a subcommand is required"; name the word it did not know.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const auto* sub : app.get_subcommands({})) known = known || sub->get_name() == argv[1];
    if (!known) {
      std::cerr << "sohusim: unknown subcommand '" << argv[1] << "' (known:";
      for (const auto* sub : app.get_subcommands({})) std::cerr << ' ' << sub->get_name();
      std::cerr << "); see sohusim --help\n";
      return kUsageError;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kUsageError;
  }
  try {
    return action ? action() : kUsageError;
  } catch (const sohusim::config::ConfigError& e) {
    std::cerr << e.what() << '\n';
    return kUsageError;
  } catch (const UsageError& e) {
    std::cerr << "sohusim: " << e.what() << '\n';
    return kUsageError;
  } catch (const std::exception& e) {
    std::cerr << "sohusim: error: " << e.what() << '\n';
    return kSimulationError;
  }
}
