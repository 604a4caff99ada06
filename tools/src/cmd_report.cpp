// `sohusim report PROFILE`: analyses a run's profile (written by `sohusim run --profile`)
// and writes the HTML report, and on request the op dependency graph (DOT) and per-op CSV;
// prints the verdict and the findings (or one JSON object with --json).
#include <algorithm>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "report_outputs.hpp"
#include "sohusim/profiler/analysis.hpp"
#include "sohusim/profiler/profile.hpp"

namespace sohusim::tools {

namespace {

struct ReportCliOptions {
  std::string input, html = "report.html", dot, csv;
  bool json = false;
  profiler::AnalysisOptions analysis;
};

int run_report(const ReportCliOptions& o) {
  profiler::RunProfile p;
  try {
    p = profiler::read_profile_file(o.input);
  } catch (const profiler::ProfileError& e) {
    throw UsageError(e.what());
  }
  const profiler::Analysis a = profiler::analyze(p, o.analysis);
  write_report(p, a, o.html, o.dot, o.csv, o.input);
  if (o.json) {
    nlohmann::json j;
    j["run_verdict"] = profiler::verdict_name(a.run_verdict);
    nlohmann::json shares = nlohmann::json::object();
    for (unsigned v = 0; v < profiler::kVerdicts; ++v) {
      const auto verdict = static_cast<profiler::Verdict>(v);
      shares[profiler::verdict_name(verdict)] = a.verdict_share(verdict);
    }
    j["verdict_shares"] = shares;
    j["critical_path_ns"] = a.critical_ns;
    j["critical_ops"] = a.critical_path.size();
    j["ops"] = p.ops.size();
    nlohmann::json findings = nlohmann::json::array();
    for (const profiler::Finding& f : a.findings) {
      findings.push_back({{"detector", f.detector},
                          {"place", f.place},
                          {"start_ns", f.start_ns},
                          {"end_ns", f.end_ns},
                          {"message", f.message},
                          {"numbers", f.numbers}});
    }
    j["findings"] = findings;
    nlohmann::json commands = nlohmann::json::array();
    for (const profiler::CommandAnalysis& c : a.commands) {
      const profiler::CommandStat& row = p.commands[c.row];
      nlohmann::json sol = nlohmann::json::object();
      for (unsigned r = 0; r < profiler::kResources; ++r) {
        if (c.sol[r] > 0) sol[profiler::resource_name(static_cast<profiler::Resource>(r))] = c.sol[r];
      }
      commands.push_back({{"place", row.place},
                          {"name", row.name},
                          {"count", row.count},
                          {"mean_ns", row.mean},
                          {"sol", sol},
                          {"top", profiler::resource_name(c.top)},
                          {"verdict", profiler::verdict_name(c.verdict)}});
    }
    j["commands"] = commands;
    nlohmann::json kinds = nlohmann::json::array();
    for (const profiler::CommandKind& k : a.kinds) {
      nlohmann::json sol = nlohmann::json::object();
      for (unsigned r = 0; r < profiler::kResources; ++r) {
        if (k.sol[r] > 0) sol[profiler::resource_name(static_cast<profiler::Resource>(r))] = k.sol[r];
      }
      nlohmann::json places = nlohmann::json::array();
      for (std::uint32_t r : k.rows) places.push_back(p.commands[r].place);
      kinds.push_back({{"name", k.name},
                       {"places", places},
                       {"count", k.count},
                       {"total_ns", k.total_ns},
                       {"sol", sol},
                       {"top", profiler::resource_name(k.top)},
                       {"verdict", profiler::verdict_name(k.verdict)}});
    }
    j["command_kinds"] = kinds;
    std::cout << j.dump(2) << "\n";
    return kOk;
  }
  std::cout.setf(std::ios::fixed);
  std::cout.precision(3);
  std::cout << o.input << ": " << p.ops.size() << " ops, critical path " << a.critical_ns * 1e-6 << " ms\n";
  std::cout.precision(1);
  if (const auto failed = p.summary_text.find("failure"); failed != p.summary_text.end())
    std::cout << "  failed   " << failed->second << "\n";
  double shared = 0;
  for (unsigned v = 0; v < profiler::kVerdicts; ++v) shared += a.verdict_share(static_cast<profiler::Verdict>(v));
  if (shared <= 0) {
    std::cout << "  verdict  none: no op finished, so there is no critical path to judge\n";
  } else {
    std::cout << "  verdict  " << profiler::verdict_name(a.run_verdict) << " (";
    bool first = true;
    for (unsigned v = 0; v < profiler::kVerdicts; ++v) {
      const auto verdict = static_cast<profiler::Verdict>(v);
      if (a.verdict_share(verdict) <= 0) continue;
      std::cout << (first ? "" : ", ") << profiler::verdict_name(verdict) << " " << a.verdict_share(verdict) * 100
                << " %";
      first = false;
    }
    std::cout << " of the critical path)\n";
  }
  // The kinds of command with most total time.
  const std::size_t kinds_shown = std::min<std::size_t>(a.kinds.size(), 10);
  for (std::size_t i = 0; i < kinds_shown; ++i) {
    const profiler::CommandKind& k = a.kinds[i];
    std::cout << "  command  " << k.name << " on " << profiler::kind_places(p, k) << ": "
              << static_cast<std::uint64_t>(k.count) << " x " << k.total_ns / k.count * 1e-3 << " us, "
              << profiler::resource_name(k.top) << " at " << k.top_sol * 100 << " % of peak ("
              << profiler::verdict_name(k.verdict) << ")\n";
  }
  if (a.kinds.size() > kinds_shown)
    std::cout << "  (" << a.kinds.size() - kinds_shown << " more kinds of command in the report)\n";
  const std::size_t shown = std::min<std::size_t>(a.findings.size(), 10);
  for (std::size_t i = 0; i < shown; ++i) std::cout << "  finding  " << a.findings[i].message << "\n";
  if (a.findings.size() > shown) std::cout << "  (" << a.findings.size() - shown << " more in the report)\n";
  if (!o.html.empty()) std::cout << "  report   " << o.html << "\n";
  return kOk;
}

}  // namespace

void add_report_command(CLI::App& root, const GlobalOptions& /*global*/, Action& action) {
  auto o = std::make_shared<ReportCliOptions>();
  auto* cmd = root.add_subcommand("report", "analyse a run's profile: bottlenecks, findings, HTML report");
  cmd->add_option("profile", o->input, "profile written by `sohusim run --profile FILE`")->required();
  cmd->add_option("-o,--output", o->html, "HTML report (\"\" for none)")->capture_default_str();
  cmd->add_option("--dot", o->dot, "op dependency graph, Graphviz DOT, critical path highlighted");
  cmd->add_option("--csv", o->csv, "per-op metrics, CSV");
  cmd->add_option("--bound-threshold", o->analysis.bound_threshold,
                  "speed of light from which an op is bound by a unit (else latency-bound)")
      ->capture_default_str()
      ->check(finite_range(0.01, 1.0));
  cmd->add_option("--gap", o->analysis.gap_ns, "smallest bubble / launch gap reported, ns")
      ->capture_default_str()
      ->check(finite_range(0.0, 1e12));
  cmd->add_flag("--json", o->json, "print one JSON object (verdict, shares, findings)");
  cmd->callback([o, &action] { action = [o] { return run_report(*o); }; });
}

}  // namespace sohusim::tools
