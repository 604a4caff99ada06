// The Validator: one map of keys (the whole configuration, or one element of a list of
// sections) checked against its schema, with every problem reported where it was written.
#include "validation.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "config_impl.hpp"

namespace sohusim::config::detail {

namespace {

std::string describe(const Node& node) {
  if (node.kind == Node::Kind::Scalar) return "the value \"" + node.scalar + "\"";
  return std::string(kind_name(node.kind));
}

// Checks one map of keys (the whole configuration, or one element of a list of sections)
// against its schema and builds the Config holding its values.
class Validator {
 public:
  Validator(std::shared_ptr<const Schema> schema, std::string path, std::vector<ConfigDiagnostic>& diagnostics)
      : impl_(std::make_shared<Config::Impl>()), diagnostics_(diagnostics) {
    impl_->schema = std::move(schema);
    impl_->path = std::move(path);
  }

  // `missing_at` is where a missing required key is reported: the element of a list of
  // sections that lacks it, or nowhere for the top level.
  Config run(const Node& root, const Source& missing_at) {
    const std::size_t before = diagnostics_.size();
    if (root.kind == Node::Kind::Map) {
      walk(root, "");
    } else if (root.kind != Node::Kind::Null) {
      diagnostics_.push_back(
          diagnostic_at(root.value_source, impl_->path, "expected a section (a map of keys), got " + describe(root)));
    }
    fill_defaults(missing_at);
    Config config = ConfigAccess::make(impl_);
    // Checks read values freely, so they run only on a configuration whose keys are sound.
    if (diagnostics_.size() == before) {
      for (const ConfigCheck& check : impl_->schema->checks()) check(config, diagnostics_);
    }
    return config;
  }

 private:
  const Schema& schema() const { return *impl_->schema; }
  std::string shown(const std::string& key) const { return impl_->display_key(key); }

  void report(const Source& source, const std::string& key, std::string message, std::string allowed = {}) {
    diagnostics_.push_back(diagnostic_at(source, shown(key), std::move(message), std::move(allowed)));
  }

  void walk(const Node& map, const std::string& path) {
    sections_seen_.insert(path);
    for (const auto& [name, child] : map.children) {
      const std::string key = join_key(path, name);
      if (!valid_name(name)) {
        report(child.key_source, key, "invalid key name \"" + name + "\"; names are letters, digits, '_' and '-'");
        continue;
      }
      if (const ParamSpec* spec = schema().find(key)) {
        written_.insert(key);
        if (spec->type == ParamType::SectionList) {
          take_sections(child, *spec, key);
        } else {
          take_value(child, *spec, key);
        }
      } else if (schema().is_section(key)) {
        if (child.kind == Node::Kind::Map) {
          walk(child, key);
        } else if (child.kind == Node::Kind::Null) {
          sections_seen_.insert(key);
        } else {
          report(child.value_source, key, "this is a section, not a value; got " + describe(child), section_keys(key));
        }
      } else {
        unknown(key, child, path);
      }
    }
  }

  void take_value(const Node& node, const ParamSpec& spec, const std::string& key) {
    Config::Impl::Entry entry;
    entry.spec = &spec;
    entry.source = node.value_source;
    const bool is_list = spec.type == ParamType::StringList || spec.type == ParamType::IntList;
    switch (node.kind) {
      case Node::Kind::Scalar: {
        ParamSpec::Parsed parsed = spec.parse(node.scalar);
        if (!parsed.value) return report(node.value_source, key, parsed.error, parsed.allowed);
        entry.value = std::move(*parsed.value);
        break;
      }
      case Node::Kind::Sequence: {
        if (!is_list)
          return report(node.value_source, key, "expected " + spec.expected() + ", got a list", spec.allowed());
        std::vector<std::string> strings;
        std::vector<std::int64_t> ints;
        bool ok = true;
        for (std::size_t i = 0; i < node.items.size(); ++i) {
          const Node& item = node.items[i];
          const std::string item_key = key + "[" + std::to_string(i) + "]";
          if (item.kind != Node::Kind::Scalar) {
            report(item.value_source, item_key, "expected a list element, got " + describe(item));
            ok = false;
            continue;
          }
          ParamSpec::Parsed parsed = spec.parse(item.scalar);
          if (!parsed.value) {
            report(item.value_source, item_key, parsed.error, parsed.allowed);
            ok = false;
          } else if (spec.type == ParamType::StringList) {
            strings.push_back(std::get<std::vector<std::string>>(*parsed.value).front());
          } else {
            ints.push_back(std::get<std::vector<std::int64_t>>(*parsed.value).front());
          }
        }
        if (!ok) return;
        if (spec.type == ParamType::StringList) {
          entry.value = std::move(strings);
        } else {
          entry.value = std::move(ints);
        }
        break;
      }
      case Node::Kind::Map:
        return report(node.value_source, key, "expected " + spec.expected() + ", got a map", spec.allowed());
      case Node::Kind::Null:
        // `file:` with nothing after it reads as "empty", the way people write it.
        if (spec.type == ParamType::String) {
          entry.value = std::string();
        } else if (spec.type == ParamType::StringList) {
          entry.value = std::vector<std::string>();
        } else if (spec.type == ParamType::IntList) {
          entry.value = std::vector<std::int64_t>();
        } else {
          return report(node.value_source, key, "no value given; expected " + spec.expected(), spec.allowed());
        }
        break;
    }
    impl_->entries[key] = std::move(entry);
  }

  void take_sections(const Node& node, const ParamSpec& spec, const std::string& key) {
    Config::Impl::Entry entry;
    entry.spec = &spec;
    entry.source = node.value_source;
    if (node.kind == Node::Kind::Sequence) {
      for (std::size_t i = 0; i < node.items.size(); ++i) {
        const Node& item = node.items[i];
        const std::string element_path = shown(key) + "[" + std::to_string(i) + "]";
        if (item.kind != Node::Kind::Map && item.kind != Node::Kind::Null) {
          diagnostics_.push_back(diagnostic_at(item.value_source, element_path,
                                               "expected a section (a map of keys), got " + describe(item)));
          continue;
        }
        Validator element(spec.element_schema, element_path, diagnostics_);
        entry.sections.push_back(element.run(item, item.value_source));
      }
    } else if (node.kind != Node::Kind::Null) {
      return report(node.value_source, key, "expected " + spec.expected() + ", got " + describe(node));
    }
    impl_->entries[key] = std::move(entry);
  }

  std::string section_keys(const std::string& section) const {
    std::vector<std::string> names = schema().child_names(section);
    names.erase(std::remove(names.begin(), names.end(), std::string(Schema::kAnyName)), names.end());
    if (names.empty()) return "";
    const std::string where = section.empty() ? impl_->path : shown(section);
    return (where.empty() ? std::string("top-level keys: ") : "keys of `" + where + "`: ") + join(names, ", ");
  }

  void unknown(const std::string& key, const Node& node, const std::string& parent) {
    std::string message = "unknown key";
    if (const auto suggestion = closest_match(key, candidate_keys(key))) {
      message += "; did you mean `" + shown(*suggestion) + "`?";
    }
    report(node.key_source, key, std::move(message), section_keys(parent));
  }

  // Every declared key and section path, with "*" segments filled in from `key` so that
  // a typo inside an open map entry finds its sibling keys.
  std::vector<std::string> candidate_keys(const std::string& key) const {
    const std::vector<std::string> segments = split_dots(key);
    std::set<std::string> candidates;
    for (const ParamSpec& spec : schema().params()) {
      const std::vector<std::string> pattern = split_dots(spec.key);
      std::string path;
      for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == Schema::kAnyName) {
          if (i >= segments.size()) break;
          path = join_key(path, segments[i]);
        } else {
          path = join_key(path, pattern[i]);
        }
        if (path != key) candidates.insert(path);
      }
    }
    return {candidates.begin(), candidates.end()};
  }

  void fill_defaults(const Source& missing_at) {
    for (const ParamSpec& spec : schema().params()) {
      const std::vector<std::string> pattern = split_dots(spec.key);
      const auto last_any = std::find(pattern.rbegin(), pattern.rend(), std::string(Schema::kAnyName));
      if (last_any == pattern.rend()) {
        fill_default(spec, spec.key, missing_at);
        continue;
      }
      // "*" last: an open map entry exists only when written. "*" inside: the parameter
      // exists under every section of the map that a file wrote.
      const auto depth = static_cast<std::size_t>(pattern.rend() - last_any);
      if (depth == pattern.size()) continue;
      std::string rest;
      for (std::size_t i = depth; i < pattern.size(); ++i) rest = join_key(rest, pattern[i]);
      for (const std::string& section : sections_seen_) {
        const std::vector<std::string> segments = split_dots(section);
        if (section.empty() || segments.size() != depth) continue;
        bool match = true;
        for (std::size_t i = 0; i < depth; ++i)
          match = match && (pattern[i] == Schema::kAnyName || pattern[i] == segments[i]);
        if (match) fill_default(spec, join_key(section, rest), missing_at);
      }
    }
  }

  void fill_default(const ParamSpec& spec, const std::string& key, const Source& missing_at) {
    if (written_.count(key) != 0 || impl_->entries.count(key) != 0) return;
    if (spec.required) {
      std::string allowed = spec.expected();
      if (!spec.allowed().empty() && spec.type != ParamType::Enum) allowed += " in " + spec.allowed();
      diagnostics_.push_back(diagnostic_at(missing_at, shown(key), "required key is missing", allowed));
      return;
    }
    Config::Impl::Entry entry;
    entry.spec = &spec;
    if (spec.type == ParamType::SectionList) {
      impl_->entries[key] = std::move(entry);
    } else if (spec.default_value) {
      entry.value = *spec.default_value;
      impl_->entries[key] = std::move(entry);
    }
  }

  std::shared_ptr<Config::Impl> impl_;
  std::vector<ConfigDiagnostic>& diagnostics_;
  std::set<std::string> written_;        // keys some layer wrote, valid or not
  std::set<std::string> sections_seen_;  // section paths some layer wrote
};

}  // namespace

Config validate(std::shared_ptr<const Schema> schema, const Node& root, std::vector<ConfigDiagnostic>& diagnostics) {
  return Validator(std::move(schema), "", diagnostics).run(root, Source{});
}

}  // namespace sohusim::config::detail
