#include "sohusim/config/yaml_aliases.hpp"

#include <sstream>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

namespace sohusim::config {

namespace {

// The parser's events without building a tree; stops at the first alias.
class AliasFinder : public YAML::EventHandler {
 public:
  struct Found {
    YAML::Mark mark;
  };
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { throw Found{mark}; }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

std::optional<TextPosition> first_yaml_alias(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  AliasFinder finder;
  try {
    while (parser.HandleNextDocument(finder)) {
    }
  } catch (const AliasFinder::Found& f) {
    return TextPosition{f.mark.line + 1, f.mark.column + 1};
  }
  return std::nullopt;
}

}  // namespace sohusim::config
