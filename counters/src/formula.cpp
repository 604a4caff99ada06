#include "sohusim/counters/formula.hpp"

#include <cctype>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "sohusim/counters/glob.hpp"
#include "sohusim/counters/registry.hpp"

namespace sohusim::counters {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

// Parsed expression tree. Name and aggregate nodes cache what they resolved to,
// keyed by the registry generation, so evaluation is a walk over pointers.
struct Formula::Node {
  enum class Op { Number, Name, Sum, Min, Max, Avg, Count, Neg, Add, Sub, Mul, Div };
  Op op = Op::Number;
  double number = 0.0;
  std::string pattern;
  std::unique_ptr<Node> lhs, rhs;
  mutable std::uint64_t resolved_generation = std::numeric_limits<std::uint64_t>::max();
  mutable std::vector<const Stat*> stats;

  double eval(const Registry& reg, const Formula& self) const {
    switch (op) {
      case Op::Number:
        return number;
      case Op::Neg:
        return -lhs->eval(reg, self);
      case Op::Add:
        return lhs->eval(reg, self) + rhs->eval(reg, self);
      case Op::Sub:
        return lhs->eval(reg, self) - rhs->eval(reg, self);
      case Op::Mul:
        return lhs->eval(reg, self) * rhs->eval(reg, self);
      case Op::Div: {
        const double d = rhs->eval(reg, self);
        return d == 0.0 ? kNaN : lhs->eval(reg, self) / d;
      }
      default:
        break;
    }
    resolve(reg, self);
    if (op == Op::Count) return static_cast<double>(stats.size());
    if (stats.empty()) return kNaN;
    double acc = op == Op::Min   ? std::numeric_limits<double>::infinity()
                 : op == Op::Max ? -std::numeric_limits<double>::infinity()
                                 : 0.0;
    for (const Stat* s : stats) {
      const double v = s->value();
      if (op == Op::Min)
        acc = std::min(acc, v);
      else if (op == Op::Max)
        acc = std::max(acc, v);
      else
        acc += v;
    }
    return op == Op::Avg ? acc / static_cast<double>(stats.size()) : acc;
  }

  void resolve(const Registry& reg, const Formula& self) const {
    if (resolved_generation == reg.generation()) return;
    stats.clear();
    if (op == Op::Name && !is_glob(pattern)) {
      if (const Stat* s = reg.find(pattern)) stats.push_back(s);
    } else {
      stats = reg.glob(pattern);
    }
    for (const Stat* s : stats) {
      if (s == &self) {
        throw std::logic_error("formula '" + self.name() + "' refers to itself through '" + pattern + "'");
      }
    }
    resolved_generation = reg.generation();
  }
};

namespace {

// Recursive-descent parser for: expr := term (('+'|'-') term)*
//   term := unary (('*'|'/') unary)* ; unary := '-' unary | primary
//   primary := number | name | func '(' name ')' | '(' expr ')'
class Parser {
 public:
  Parser(const std::string& formula_name, const std::string& text) : name_(formula_name), s_(text) {}

  std::unique_ptr<Formula::Node> parse() {
    auto n = expr();
    skip();
    if (i_ != s_.size()) fail("unexpected '" + std::string(1, s_[i_]) + "'");
    return n;
  }

 private:
  using Node = Formula::Node;
  using Op = Node::Op;

  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("formula '" + name_ + "': " + what + " at column " + std::to_string(i_ + 1) + " of \"" +
                                s_ + "\"");
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  static std::unique_ptr<Node> binary(Op op, std::unique_ptr<Node> l, std::unique_ptr<Node> r) {
    auto n = std::make_unique<Node>();
    n->op = op;
    n->lhs = std::move(l);
    n->rhs = std::move(r);
    return n;
  }
  std::unique_ptr<Node> expr() {
    auto l = term();
    for (;;) {
      skip();
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) {
        const Op op = s_[i_++] == '+' ? Op::Add : Op::Sub;
        l = binary(op, std::move(l), term());
      } else {
        return l;
      }
    }
  }
  std::unique_ptr<Node> term() {
    auto l = unary();
    for (;;) {
      skip();
      if (i_ < s_.size() && (s_[i_] == '*' || s_[i_] == '/')) {
        // A '*' directly followed by a name character belongs to a glob, which
        // primary() has consumed already; here it is always multiplication.
        const Op op = s_[i_++] == '*' ? Op::Mul : Op::Div;
        l = binary(op, std::move(l), unary());
      } else {
        return l;
      }
    }
  }
  std::unique_ptr<Node> unary() {
    skip();
    if (i_ < s_.size() && s_[i_] == '-') {
      ++i_;
      auto n = std::make_unique<Node>();
      n->op = Op::Neg;
      n->lhs = unary();
      return n;
    }
    return primary();
  }
  static bool name_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '*' || c == '?' || c == '[';
  }
  static bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '?' || c == '[' ||
           c == ']' || c == '!';
  }
  std::string name_token() {
    const std::size_t start = i_;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '*') {
        // A '*' touching a name character on either side is a glob star
        // ("dev0.me*.busy"); multiplication is written with spaces ("a * b").
        const bool prev_name = i_ > start;
        const bool next_name = i_ + 1 < s_.size() && (name_char(s_[i_ + 1]) || s_[i_ + 1] == '*');
        if (!prev_name && !next_name) break;
        ++i_;
        continue;
      }
      if (c == '-' && (i_ + 1 >= s_.size() || !std::isalnum(static_cast<unsigned char>(s_[i_ + 1])))) break;
      if (!name_char(c)) break;
      ++i_;
    }
    return s_.substr(start, i_ - start);
  }
  std::unique_ptr<Node> primary() {
    skip();
    if (i_ >= s_.size()) fail("expression ends early");
    const char c = s_[i_];
    if (c == '(') {
      ++i_;
      auto n = expr();
      skip();
      if (i_ >= s_.size() || s_[i_] != ')') fail("missing ')'");
      ++i_;
      return n;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const char* begin = s_.c_str() + i_;
      char* end = nullptr;
      const double v = std::strtod(begin, &end);
      if (end == begin) fail("bad number");
      i_ += static_cast<std::size_t>(end - begin);
      auto n = std::make_unique<Node>();
      n->number = v;
      return n;
    }
    if (!name_start(c)) fail("expected a number, a stat name or '('");
    std::string tok = name_token();
    if (tok.empty()) fail("expected a stat name");
    skip();
    if (i_ < s_.size() && s_[i_] == '(') {
      static const std::pair<const char*, Op> funcs[] = {
          {"sum", Op::Sum}, {"min", Op::Min}, {"max", Op::Max}, {"avg", Op::Avg}, {"count", Op::Count}};
      Op op = Op::Number;
      for (const auto& [fname, fop] : funcs) {
        if (tok == fname) op = fop;
      }
      if (op == Op::Number) fail("unknown function '" + tok + "' (known: sum, min, max, avg, count)");
      ++i_;
      skip();
      std::string arg = name_token();
      if (arg.empty()) fail("function '" + tok + "' takes a stat name or glob");
      skip();
      if (i_ >= s_.size() || s_[i_] != ')') fail("missing ')' after the argument of '" + tok + "'");
      ++i_;
      auto n = std::make_unique<Node>();
      n->op = op;
      n->pattern = std::move(arg);
      return n;
    }
    auto n = std::make_unique<Node>();
    n->op = is_glob(tok) ? Op::Sum : Op::Name;
    n->pattern = std::move(tok);
    return n;
  }

  const std::string& name_;
  const std::string& s_;
  std::size_t i_ = 0;
};

}  // namespace

Formula::Formula(std::string name, std::string unit, std::string description, const Registry& registry,
                 std::string expression)
    : Stat(std::move(name), std::move(unit), std::move(description)),
      expression_(std::move(expression)),
      registry_(&registry) {
  root_ = Parser(this->name(), expression_).parse();
}

Formula::Formula(std::string name, std::string unit, std::string description, std::function<double()> fn)
    : Stat(std::move(name), std::move(unit), std::move(description)), fn_(std::move(fn)) {
  if (!fn_) throw std::invalid_argument("formula '" + this->name() + "': empty function");
}

Formula::~Formula() = default;

double Formula::value() const {
  if (evaluating_) throw std::logic_error("formula '" + name() + "' depends on itself");
  evaluating_ = true;
  struct Guard {
    bool& flag;
    ~Guard() { flag = false; }
  } guard{evaluating_};
  return fn_ ? fn_() : root_->eval(*registry_, *this);
}

void Formula::to_json(nlohmann::json& out) const {
  const double v = value();
  out["value"] = std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
  if (!expression_.empty()) out["expression"] = expression_;
}

}  // namespace sohusim::counters
