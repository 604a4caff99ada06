// ConfigLoader: presets found in preset folders, files read with the bases they extend,
// --set assignments applied over the merged layers, and resolve(), which validates the
// result into a Config.
#include <algorithm>
#include <charconv>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <tuple>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "document.hpp"
#include "sohusim/config/config.hpp"
#include "sohusim/config/yaml_aliases.hpp"
#include "validation.hpp"

namespace sohusim::config {
namespace fs = std::filesystem;

using detail::diagnostic_at;
using detail::DocumentReader;
using detail::fail;
using detail::file_source;
using detail::join;
using detail::join_key;
using detail::Node;
using detail::overlay;
using detail::set_source;
using detail::Source;
using detail::split_dots;
using detail::starts_with;
using detail::validate;

namespace {

std::string display_path(const fs::path& path) {
  return path.lexically_normal().generic_string();
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// ---- sources -----------------------------------------------------------------------------

bool looks_like_path(std::string_view text) {
  return ends_with(text, ".yaml") || ends_with(text, ".yml") || starts_with(text, "./") || starts_with(text, "../") ||
         starts_with(text, "/");
}

std::vector<std::string> list_presets(const std::vector<fs::path>& dirs) {
  std::set<std::string> names;
  for (const fs::path& dir : dirs) {
    std::error_code error;
    if (!fs::is_directory(dir, error)) continue;
    for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, error), end;
         !error && it != end; it.increment(error)) {
      const fs::path& file = it->path();
      if (!it->is_regular_file(error) || (file.extension() != ".yaml" && file.extension() != ".yml")) continue;
      fs::path name = file.lexically_relative(dir);
      name.replace_extension();
      names.insert(name.generic_string());
    }
  }
  return {names.begin(), names.end()};
}

std::optional<fs::path> find_preset(const std::vector<fs::path>& dirs, std::string_view name) {
  const fs::path relative{std::string(name)};
  if (name.empty() || relative.is_absolute()) return std::nullopt;
  for (const fs::path& part : relative) {
    if (part == "..") return std::nullopt;
  }
  for (const fs::path& dir : dirs) {
    for (const char* extension : {".yaml", ".yml"}) {
      const fs::path candidate = dir / (std::string(name) + extension);
      std::error_code error;
      if (fs::is_regular_file(candidate, error)) return candidate;
    }
  }
  return std::nullopt;
}

std::string presets_text(const std::vector<fs::path>& dirs) {
  const std::vector<std::string> presets = list_presets(dirs);
  if (!presets.empty()) return join(presets, ", ");
  if (dirs.empty()) return "(no preset folder is configured)";
  std::vector<std::string> shown;
  for (const fs::path& dir : dirs) shown.push_back(display_path(dir));
  return "(no presets found in " + join(shown, ", ") + ")";
}

// Reads one file (or text) with the bases it extends, in order, into one tree.
class LayerReader {
 public:
  explicit LayerReader(const std::vector<fs::path>& preset_dirs) : preset_dirs_(preset_dirs) {}

  // `requested_at` is the `extends` entry that named this file, if any.
  void read_file(const fs::path& path, const std::optional<Source>& requested_at, Node& into) {
    const std::string shown = display_path(path);
    std::error_code error;
    const fs::path canonical = fs::weakly_canonical(path, error);
    const fs::path identity = error ? path.lexically_normal() : canonical;
    for (std::size_t i = 0; i < chain_.size(); ++i) {
      if (chain_[i].first != identity) continue;
      std::vector<std::string> cycle;
      for (std::size_t j = i; j < chain_.size(); ++j) cycle.push_back(chain_[j].second);
      cycle.push_back(shown);
      fail(diagnostic_at(requested_at.value_or(Source{}), "extends", "cycle of extends: " + join(cycle, " -> ")));
    }
    std::string problem;
    if (!fs::exists(path, error)) {
      problem = "no such file";
    } else if (!fs::is_regular_file(path, error)) {
      problem = "not a regular file";
    }
    std::ifstream in;
    if (problem.empty()) {
      in.open(path, std::ios::binary);
      if (!in) problem = "cannot be read";
    }
    if (!problem.empty()) {
      if (requested_at) fail(diagnostic_at(*requested_at, "extends", "cannot open `" + shown + "`: " + problem));
      ConfigDiagnostic diagnostic;
      diagnostic.file = shown;
      diagnostic.message = "cannot open the config file: " + problem;
      fail(std::move(diagnostic));
    }
    std::ostringstream text;
    text << in.rdbuf();
    chain_.emplace_back(identity, shown);
    read_text(text.str(), shown, path.parent_path(), into);
    chain_.pop_back();
  }

  void read_text(const std::string& text, const std::string& shown, const fs::path& folder, Node& into) {
    std::vector<YAML::Node> documents;
    try {
      if (const std::optional<TextPosition> alias = first_yaml_alias(text)) {
        ConfigDiagnostic diagnostic;
        diagnostic.file = shown;
        diagnostic.line = alias->line;
        diagnostic.column = alias->column;
        diagnostic.message = "YAML aliases (*name) are not allowed in a config file; write the value out";
        fail(std::move(diagnostic));
      }
      documents = YAML::LoadAll(text);
    } catch (const YAML::Exception& error) {
      ConfigDiagnostic diagnostic;
      diagnostic.file = shown;
      diagnostic.line = error.mark.line >= 0 ? error.mark.line + 1 : 0;
      diagnostic.column = error.mark.column >= 0 ? error.mark.column + 1 : 0;
      diagnostic.message = "malformed YAML: " + error.msg;
      fail(std::move(diagnostic));
    }
    if (documents.size() > 1) {
      ConfigDiagnostic diagnostic;
      diagnostic.file = shown;
      diagnostic.message = "holds " + std::to_string(documents.size()) + " YAML documents; a config file holds one";
      fail(std::move(diagnostic));
    }
    if (documents.empty() || documents.front().IsNull()) return;
    const YAML::Node& root = documents.front();
    if (!root.IsMap()) {
      fail(diagnostic_at(file_source(shown, root.Mark()), "",
                         "the top level of a config file must be a map of keys, not a list or a value"));
    }
    for (const auto& entry : root) {
      if (entry.first.IsScalar() && entry.first.Scalar() == "extends") read_bases(entry.second, shown, folder, into);
    }
    std::vector<ConfigDiagnostic> diagnostics;
    Node document = DocumentReader(shown, diagnostics).read(root, Source{}, "");
    if (!diagnostics.empty()) throw ConfigError(std::move(diagnostics));
    document.children.erase("extends");
    overlay(into, std::move(document));
  }

 private:
  void read_bases(const YAML::Node& value, const std::string& shown, const fs::path& folder, Node& into) {
    std::vector<YAML::Node> bases;
    if (value.IsScalar()) {
      bases.push_back(value);
    } else if (value.IsSequence()) {
      for (const YAML::Node& item : value) bases.push_back(item);
    }
    if (bases.empty() || !std::all_of(bases.begin(), bases.end(), [](const YAML::Node& b) { return b.IsScalar(); })) {
      fail(diagnostic_at(file_source(shown, value.Mark()), "extends",
                         "expected a preset name, a path, or a list of them"));
    }
    for (const YAML::Node& base : bases) {
      const std::string name = base.Scalar();
      const Source at = file_source(shown, base.Mark());
      if (looks_like_path(name)) {
        const fs::path relative{name};
        read_file(relative.is_absolute() ? relative : folder / relative, at, into);
      } else if (const std::optional<fs::path> preset = find_preset(preset_dirs_, name)) {
        read_file(*preset, at, into);
      } else {
        fail(diagnostic_at(at, "extends", "unknown preset `" + name + "`", presets_text(preset_dirs_)));
      }
    }
  }

  const std::vector<fs::path>& preset_dirs_;
  std::vector<std::pair<fs::path, std::string>> chain_;  // files being read, outermost first
};

// Applies one --set override to the merged tree, descending into lists by index.
void apply_set(Node& root, const std::string& key, const Node& value, std::vector<ConfigDiagnostic>& diagnostics) {
  const std::vector<std::string> segments = split_dots(key);
  Node* node = &root;
  std::string walked;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const std::string& segment = segments[i];
    const bool last = i + 1 == segments.size();
    if (node->kind == Node::Kind::Sequence) {
      std::size_t index = 0;
      const auto [end, error] = std::from_chars(segment.data(), segment.data() + segment.size(), index);
      if (error != std::errc() || end != segment.data() + segment.size()) {
        diagnostics.push_back(diagnostic_at(
            set_source(), key, "`" + walked + "` is a list; name an element by its index, as in `" + walked + ".0`"));
        return;
      }
      if (index >= node->items.size()) {
        diagnostics.push_back(diagnostic_at(set_source(), key,
                                            "index " + segment + " is out of range: `" + walked + "` has " +
                                                std::to_string(node->items.size()) + " element(s)"));
        return;
      }
      node = &node->items[index];
      walked = join_key(walked, segment);
      if (last) overlay(*node, value);
      continue;
    }
    if (node->kind != Node::Kind::Map) {
      // Setting a key below a value replaces the value by a section; validation judges it.
      node->kind = Node::Kind::Map;
      node->scalar.clear();
      node->items.clear();
      node->value_source = set_source();
    }
    const auto [it, inserted] = node->children.try_emplace(segment);
    Node& child = it->second;
    if (inserted) {
      child.value_source = set_source();
      child.key_source = set_source();
    }
    if (last) {
      if (inserted) {
        child = value;
        child.key_source = set_source();
      } else {
        overlay(child, value);
      }
    }
    node = &child;
    walked = join_key(walked, segment);
  }
}

std::string trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return std::string(text);
}

}  // namespace

// ---- ConfigLoader ------------------------------------------------------------------------

struct ConfigLoader::State {
  std::shared_ptr<const Schema> schema;
  std::vector<fs::path> preset_dirs;
  Node files;  // every loaded file and preset, merged in load order

  struct Assignment {
    std::string key;
    Node value;
  };
  std::vector<Assignment> sets;
};

ConfigLoader::ConfigLoader(Schema schema, std::vector<fs::path> preset_dirs) : state_(std::make_unique<State>()) {
  state_->schema = std::make_shared<const Schema>(std::move(schema));
  state_->preset_dirs = std::move(preset_dirs);
  state_->files.kind = Node::Kind::Map;
}

ConfigLoader::~ConfigLoader() = default;
ConfigLoader::ConfigLoader(ConfigLoader&&) noexcept = default;
ConfigLoader& ConfigLoader::operator=(ConfigLoader&&) noexcept = default;

ConfigLoader& ConfigLoader::add_preset_dir(fs::path dir) {
  state_->preset_dirs.push_back(std::move(dir));
  return *this;
}

ConfigLoader& ConfigLoader::load_preset(std::string_view name) {
  const std::optional<fs::path> path = find_preset(state_->preset_dirs, name);
  if (!path) {
    ConfigDiagnostic diagnostic;
    diagnostic.message = "unknown preset `" + std::string(name) + "`";
    diagnostic.allowed = presets_text(state_->preset_dirs);
    fail(std::move(diagnostic));
  }
  return load_file(*path);
}

ConfigLoader& ConfigLoader::load_file(const fs::path& path) {
  // Read into a copy so that a file that fails halfway leaves the loader as it was.
  Node files = state_->files;
  LayerReader(state_->preset_dirs).read_file(path, std::nullopt, files);
  state_->files = std::move(files);
  return *this;
}

ConfigLoader& ConfigLoader::load_string(std::string_view yaml, std::string_view name) {
  Node files = state_->files;
  LayerReader(state_->preset_dirs).read_text(std::string(yaml), std::string(name), fs::path(), files);
  state_->files = std::move(files);
  return *this;
}

ConfigLoader& ConfigLoader::set(std::string_view assignment) {
  const std::size_t equals = assignment.find('=');
  const std::string key = trim(assignment.substr(0, equals));
  if (equals == std::string_view::npos || key.empty()) {
    ConfigDiagnostic diagnostic;
    diagnostic.file = "--set";
    diagnostic.message = "expected key=value, got \"" + std::string(assignment) + "\"";
    diagnostic.allowed = "key.path=value, e.g. sim.clocks.engine=2 GHz";
    fail(std::move(diagnostic));
  }
  const std::string text(assignment.substr(equals + 1));
  YAML::Node yaml;
  try {
    if (first_yaml_alias(text)) {
      fail(diagnostic_at(set_source(), key, "YAML aliases (*name) are not allowed in a value; write the value out"));
    }
    yaml = YAML::Load(text);
  } catch (const YAML::Exception& error) {
    fail(diagnostic_at(set_source(), key, "malformed value \"" + text + "\": " + error.msg));
  }
  std::vector<ConfigDiagnostic> diagnostics;
  Node value = DocumentReader("", diagnostics).read(yaml, set_source(), key);
  if (!diagnostics.empty()) throw ConfigError(std::move(diagnostics));
  state_->sets.push_back({key, std::move(value)});
  return *this;
}

std::vector<std::string> ConfigLoader::available_presets() const {
  return list_presets(state_->preset_dirs);
}

Config ConfigLoader::resolve() const {
  Node tree = state_->files;
  std::vector<ConfigDiagnostic> diagnostics;
  for (const State::Assignment& assignment : state_->sets)
    apply_set(tree, assignment.key, assignment.value, diagnostics);
  Config config = validate(state_->schema, tree, diagnostics);
  if (!diagnostics.empty()) {
    // Compiler order: by file, then position; problems with no place in a file last.
    std::stable_sort(diagnostics.begin(), diagnostics.end(), [](const ConfigDiagnostic& a, const ConfigDiagnostic& b) {
      return std::make_tuple(a.file.empty(), a.file, a.line, a.column) <
             std::make_tuple(b.file.empty(), b.file, b.line, b.column);
    });
    throw ConfigError(std::move(diagnostics));
  }
  return config;
}

const Schema& ConfigLoader::schema() const noexcept {
  return *state_->schema;
}

}  // namespace sohusim::config
