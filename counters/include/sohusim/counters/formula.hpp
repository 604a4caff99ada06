#pragma once
// Formula: a derived statistic computed from others when read, never stored —
// utilization, bandwidth, hit rate. Two ways to write one:
//
//  * an expression over stat names, parsed once:
//      "dev0.me*.active_cycles / (count(dev0.me*.active_cycles) * dev0.cycles)"
//    grammar: + - * / unary minus, parentheses, numbers, stat names, and the
//    functions sum(), min(), max(), avg(), count() over a name or a glob. A bare
//    glob (with * ? or [..]) is its sum; write multiplication with spaces ("a * b")
//    since "a*b" reads as a glob. A name resolves to that stat's value()
//    (a distribution's mean). x/0 and references to names that match nothing give
//    NaN, which dumps print as null — an undefined rate is not a zero rate.
//  * a C++ callable, for what an expression cannot say.
//
// Names are resolved against the registry at each evaluation whose registry
// generation changed since the last, so formulas may be declared before the
// stats they read.

#include <functional>
#include <memory>
#include <string>

#include "sohusim/counters/stat.hpp"

namespace sohusim::counters {

class Registry;

class Formula final : public Stat {
 public:
  // Throws std::invalid_argument naming the formula and the column of a syntax error.
  Formula(std::string name, std::string unit, std::string description, const Registry& registry,
          std::string expression);
  Formula(std::string name, std::string unit, std::string description, std::function<double()> fn);
  ~Formula() override;

  const std::string& expression() const { return expression_; }

  StatKind kind() const override { return StatKind::Formula; }
  double value() const override;
  void reset() override {}
  void to_json(nlohmann::json& out) const override;

  struct Node;  // parsed expression tree (formula.cpp)

 private:
  std::string expression_;
  std::function<double()> fn_;
  const Registry* registry_ = nullptr;
  std::unique_ptr<Node> root_;
  mutable bool evaluating_ = false;  // guards against a formula that reads itself
};

}  // namespace sohusim::counters
