// sohusim/config/config.hpp — loading, layering and reading a configuration.
//
// A configuration is assembled from layers, each overriding the ones before it:
//
//   ConfigLoader loader(merged_schema, {"configs"});
//   loader.load_preset("default");            // configs/default.yaml
//   loader.load_file("my-run.yaml");          // may start with `extends: hbm/hbm3-6400`
//   loader.set("sim.clocks.engine=2 GHz");    // command-line overrides
//   const Config config = loader.resolve();   // validated; throws ConfigError
//   config.get_quantity("sim.clocks.engine")  // 2e9 (Hz)
//
// Layering rules:
// * Presets and files apply in the order they are loaded; maps merge key by key, anything
//   else (a value, a list, a list of sections) is replaced as a whole.
// * A file may name bases with `extends: <preset or path>` (or a list of them) at its top
//   level. Bases apply first, in list order, then the file itself. A value ending in
//   .yaml/.yml or starting with ./ ../ or / is a path relative to the file's folder;
//   anything else is a preset name. Cycles are errors.
// * set() overrides apply after every file, whatever the call order, because the command
//   line is the user's last word. The value is YAML: a scalar ("2 GHz"), a flow list
//   ("[hbm, pcie]") or a flow map. A key may index into a list of sections
//   ("hosts.1.cores=8").
// * Keys may be written nested or dotted: `sim: {seed: 3}` and `sim.seed: 3` are the same.
//
// Problems with a source itself (missing file, unknown preset, malformed YAML, extends
// cycle, set() without "=") throw ConfigError from the call that names the source.
// Problems with values (unknown keys, wrong types, ranges, units, enum choices, missing
// required keys, failed checks) are all collected by resolve() and thrown together.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sohusim/config/config_error.hpp"
#include "sohusim/config/config_schema.hpp"

namespace sohusim::config {

/// A resolved, validated configuration. Immutable and cheap to copy (copies share the
/// data). Every declared parameter with a default has a value; keys are dotted paths.
///
/// The getters throw std::out_of_range for a key without a value (undeclared, or declared
/// optional and never set) and std::logic_error when asked for the wrong type: both are
/// programming errors, since resolve() already checked what users wrote.
class Config {
 public:
  /// An empty configuration (no schema, no values).
  Config();

  /// Whether `key` holds a value (set by a layer, or by its default).
  bool has(std::string_view key) const;

  bool get_bool(std::string_view key) const;
  /// Int, or UInt when the value fits.
  std::int64_t get_int(std::string_view key) const;
  /// UInt, or a non-negative Int.
  std::uint64_t get_uint(std::string_view key) const;
  /// Real or Quantity (SI); integers are converted.
  double get_double(std::string_view key) const;
  /// A quantity in its SI base unit (s, Hz, B, B/s, bit/s, T/s, W, J; ratios as fractions).
  double get_quantity(std::string_view key) const;
  /// String or Enum.
  const std::string& get_string(std::string_view key) const;
  const std::vector<std::string>& get_strings(std::string_view key) const;
  const std::vector<std::int64_t>& get_ints(std::string_view key) const;

  /// The names directly below `prefix` that hold values, sorted: for an open map
  /// ("sim.clocks") its entry names; for "" the top-level sections.
  std::vector<std::string> keys_under(std::string_view prefix) const;

  /// The elements of a list of sections, one Config each, keyed relative to the element.
  const std::vector<Config>& section_list(std::string_view key) const;

  /// Where a key's value came from: "file:line:column", "--set", or "default".
  std::string source_of(std::string_view key) const;

  /// A diagnostic about `key` located where its value came from; what a schema check
  /// appends to report an inconsistency at the right file and line.
  ConfigDiagnostic diagnose(std::string_view key, std::string message, std::string allowed = {}) const;

  /// This view's place in the whole configuration: "" for the root, "hosts[1]" for an
  /// element of a list of sections. Diagnostics prefix keys with it.
  const std::string& path() const;

  /// The resolved configuration as YAML that loads back to the same values: nested
  /// sections in declaration order, quantities with readable units, and a trailing
  /// comment per key with its description and [source].
  std::string to_yaml() const;

  /// The values as nested JSON objects; quantities as numbers in SI base units, lists of
  /// sections as arrays of objects. Keys are sorted.
  nlohmann::json to_json() const;

  const Schema& schema() const;

  struct Impl;  // defined in src/config_impl.hpp

 private:
  friend struct ConfigAccess;  // the loader's way to build one; defined in src/config_impl.hpp
  explicit Config(std::shared_ptr<const Impl> impl);

  std::shared_ptr<const Impl> impl_;
};

class ConfigLoader {
 public:
  /// `preset_dirs` are searched in order for load_preset() and `extends`; the first folder
  /// holding a preset wins, so a user folder listed first shadows the installed presets.
  explicit ConfigLoader(Schema schema, std::vector<std::filesystem::path> preset_dirs = {});
  ~ConfigLoader();
  ConfigLoader(ConfigLoader&&) noexcept;
  ConfigLoader& operator=(ConfigLoader&&) noexcept;
  ConfigLoader(const ConfigLoader&) = delete;
  ConfigLoader& operator=(const ConfigLoader&) = delete;

  ConfigLoader& add_preset_dir(std::filesystem::path dir);

  /// Layers `<dir>/<name>.yaml` from the first preset folder that has it; `name` may hold
  /// subfolders ("hbm/hbm3-6400").
  ConfigLoader& load_preset(std::string_view name);

  /// Layers a YAML file (and, first, the bases it extends).
  ConfigLoader& load_file(const std::filesystem::path& path);

  /// Layers YAML text; `name` stands for the file in diagnostics and relative `extends`
  /// paths resolve from the working directory.
  ConfigLoader& load_string(std::string_view yaml, std::string_view name = "<string>");

  /// Records a command-line override "key.path=value"; see the layering rules above.
  ConfigLoader& set(std::string_view assignment);

  /// Every preset name found in the preset folders, sorted.
  std::vector<std::string> available_presets() const;

  /// Validates all layers against the schema and runs its checks. Throws ConfigError
  /// carrying every problem found.
  Config resolve() const;

  const Schema& schema() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sohusim::config
