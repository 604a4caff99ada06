#pragma once
// Internal to the config system: the check of a merged tree of layers against a Schema
// (unknown keys with suggestions, types, units, ranges, required keys, defaults, the
// schema's cross-checks), building the Config that holds the values.

#include <memory>
#include <vector>

#include "document.hpp"
#include "sohusim/config/config.hpp"

namespace sohusim::config::detail {

// Validates `root`, the whole configuration, against `schema`. Every problem found is
// appended to `diagnostics`; the Config returned holds the values that were sound.
Config validate(std::shared_ptr<const Schema> schema, const Node& root, std::vector<ConfigDiagnostic>& diagnostics);

}  // namespace sohusim::config::detail
