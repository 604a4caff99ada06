#pragma once
// Shared plumbing of the `sohusim` command line: exit codes, how a subcommand
// registers itself, where presets are looked up, and how errors are printed.
//
// Exit codes: 0 ok, 1 the simulation failed, 2 usage or config error.

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sohusim/driver/command.hpp"
#include "sohusim/platform/simulator.hpp"

namespace sohusim::tools {

enum ExitCode : int { kOk = 0, kSimulationError = 1, kUsageError = 2 };

// A usage/config problem found by a subcommand itself (exit code 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct GlobalOptions {
  std::vector<std::string> config_dirs;  // --configs DIR (repeatable), searched first
};

// Each subcommand file defines one of these; it adds its CLI11 subcommand to the
// root and sets `action` to what runs when that subcommand was chosen.
using Action = std::function<int()>;
void add_version_command(CLI::App& root, Action& action);
void add_config_command(CLI::App& root, const GlobalOptions& global, Action& action);
void add_demo_command(CLI::App& root, const GlobalOptions& global, Action& action);
void add_mem_command(CLI::App& root, const GlobalOptions& global, Action& action);
void add_pcie_command(CLI::App& root, const GlobalOptions& global, Action& action);
void add_gemm_command(CLI::App& root, const GlobalOptions& global, Action& action);
void add_run_command(CLI::App& root, const GlobalOptions& global, Action& action);
void add_serve_command(CLI::App& root, const GlobalOptions& global, Action& action);
void add_report_command(CLI::App& root, const GlobalOptions& global, Action& action);
void add_sweep_command(CLI::App& root, const GlobalOptions& global, Action& action);
// The whole command line: --configs and every subcommand (main.cpp; sweep parses its points with it).
void add_commands(CLI::App& app, GlobalOptions& global, Action& action);

// Preset folders, in search order: --configs dirs, $SOHUSIM_CONFIGS, the source
// tree's configs/ (for a binary run from its build tree), the installed ones.
std::vector<std::filesystem::path> preset_dirs(const GlobalOptions& global);
std::vector<std::string> preset_dir_strings(const GlobalOptions& global);

// --arch, --hbm, --config: the layers a run names besides its system and --set
// (platform::ConfigChoice, run_configuration.hpp).
void add_layer_options(CLI::App* cmd, platform::ConfigChoice& choice);

// The simulator of a subcommand: a configuration error stays a ConfigError (exit 2 with its
// diagnostics), any other bad option std::invalid_argument becomes a UsageError.
std::unique_ptr<platform::Simulator> make_simulator(const platform::SimulatorOptions& options);

// Output files must differ: two outputs to one path leave one of them, or a mix of both, in
// it. UsageError naming both flags when two of the (flag, path) pairs name the same file
// (empty paths are not written and are skipped).
void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);

// Says on stderr what a command wrote: "sohusim run: wrote run.html (245 kB, --report), ...",
// each (flag, path) whose file exists, with its size; nothing when none was asked for.
void print_written(const std::string& command, const std::vector<std::pair<std::string, std::string>>& outputs);

// A number in [lo, hi], finite: CLI::Range lets NaN through (every comparison with it is false).
CLI::Validator finite_range(double lo, double hi);

// --dtype: fp8 (= fp8_e4m3), fp8_e5m2, bf16, fp16, fp32; UsageError otherwise.
driver::DType parse_dtype(const std::string& s);

}  // namespace sohusim::tools
