// `sohusim config check|schema|presets`: validate configuration files and show
// what a configuration resolves to, with every default, unit and source.
#include <iomanip>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "schema_all.hpp"
#include "sohusim/config/config.hpp"

namespace sohusim::tools {

namespace {

struct CheckOptions {
  std::vector<std::string> files;
  std::vector<std::string> presets;
  std::vector<std::string> sets;
  bool json = false;
  bool quiet = false;
};

int run_check(const GlobalOptions& global, const CheckOptions& o) {
  config::ConfigLoader loader(full_schema(), preset_dirs(global));
  for (const auto& p : o.presets) loader.load_preset(p);
  for (const auto& f : o.files) loader.load_file(f);
  for (const auto& s : o.sets) loader.set(s);
  const config::Config cfg = loader.resolve();  // throws ConfigError with every diagnostic
  if (o.quiet) return kOk;
  if (o.json) {
    std::cout << cfg.to_json().dump(2) << '\n';
  } else {
    std::cout << cfg.to_yaml();
  }
  return kOk;
}

std::string type_name(const config::ParamSpec& p) {
  using T = config::ParamType;
  switch (p.type) {
    case T::Bool:
      return "bool";
    case T::Int:
      return "int";
    case T::UInt:
      return "uint";
    case T::Real:
      return "real";
    case T::String:
      return "string";
    case T::Enum:
      return "enum";
    case T::Quantity:
      return std::string(config::dimension_name(p.dimension));
    case T::StringList:
      return "list of strings";
    case T::IntList:
      return "list of ints";
    case T::SectionList:
      return "list of sections";
  }
  return "?";
}

int run_schema(bool markdown) {
  const config::Schema schema = full_schema();
  if (markdown) {
    std::cout << "| key | type | default | allowed | description |\n|---|---|---|---|---|\n";
  }
  for (const config::ParamSpec& p : schema.params()) {
    const std::string def = p.default_value ? p.format(*p.default_value) : (p.required ? "(required)" : "(unset)");
    if (markdown) {
      std::cout << "| `" << p.key << "` | " << type_name(p) << " | `" << def << "` | " << p.allowed() << " | "
                << p.description << " |\n";
    } else {
      std::cout << std::left << std::setw(34) << p.key << ' ' << std::setw(12) << type_name(p) << ' ' << std::setw(14)
                << def << ' ' << p.description;
      if (!p.allowed().empty()) std::cout << " [" << p.allowed() << ']';
      std::cout << '\n';
    }
  }
  return kOk;
}

}  // namespace

void add_config_command(CLI::App& root, const GlobalOptions& global, Action& action) {
  auto* cmd = root.add_subcommand("config", "validate and show configurations");
  cmd->require_subcommand(1);

  auto opts = std::make_shared<CheckOptions>();
  auto* check =
      cmd->add_subcommand("check",
                          "layer the given presets, files and --set overrides in that order, validate, and print the "
                          "resolved configuration (defaults, units, sources) or every error found");
  check->add_option("files", opts->files, "YAML config files, applied in order");
  check->add_option("--preset", opts->presets, "preset name from configs/ applied first (repeatable)");
  check->add_option("--set", opts->sets, "override key.path=value, applied last (repeatable)");
  check->add_flag("--json", opts->json, "print the resolved configuration as JSON");
  check->add_flag("-q,--quiet", opts->quiet, "print nothing when valid (exit code only)");
  check->callback([&action, &global, opts] { action = [&global, opts] { return run_check(global, *opts); }; });

  auto markdown = std::make_shared<bool>(false);
  auto* schema = cmd->add_subcommand("schema", "list every parameter with its type, default, range and description");
  schema->add_flag("--markdown", *markdown, "as a Markdown table (docs/configs.md embeds it)");
  schema->callback([&action, markdown] { action = [markdown] { return run_schema(*markdown); }; });

  auto* presets = cmd->add_subcommand("presets", "list the presets found in the preset folders");
  presets->callback([&action, &global] {
    action = [&global] {
      config::ConfigLoader loader(full_schema(), preset_dirs(global));
      for (const auto& p : loader.available_presets()) std::cout << p << '\n';
      return kOk;
    };
  });
}

}  // namespace sohusim::tools
