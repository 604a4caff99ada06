// `sohusim version`: what this binary is and what it was built with.
#include <iostream>

#include <systemc>

#include "cli.hpp"

namespace sohusim::tools {

void add_version_command(CLI::App& root, Action& action) {
  auto* cmd = root.add_subcommand("version", "print the sohusim version and the libraries it was built with");
  cmd->callback([&action] {
    action = [] {
      std::cout << "sohusim " << SOHUSIM_VERSION << "\n"
                << "SystemC " << sc_core::sc_release() << "\n"
                << "C++ " << __cplusplus << ", " << __VERSION__ << "\n";
      return kOk;
    };
  });
}

}  // namespace sohusim::tools
