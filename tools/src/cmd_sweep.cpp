// `sohusim sweep`: a design-space study — a spec's points checked, then run as separate
// processes (N at a time, or as a Slurm job array), their results in DIR/results.sqlite;
// resumable, exportable as CSV (docs/studies.md).
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include "cli.hpp"
#include "sohusim/studies/point_runner.hpp"
#include "sohusim/studies/result_store.hpp"
#include "sohusim/studies/slurm_array.hpp"
#include "sohusim/studies/study_report.hpp"
#include "sohusim/studies/sweep_spec.hpp"
#include "sohusim/studies/sweep_validation.hpp"

namespace sohusim::tools {

namespace {

namespace fs = std::filesystem;

struct SweepOptions {
  std::string spec, out, merge, csv, report, task, output;
  std::vector<std::string> metrics, pareto;
  unsigned jobs = 1, index = 0;
  bool retry = false, dry_run = false, slurm = false, wait = false;
  studies::SlurmOptions slurm_options;
};

studies::PointRunner* g_runner = nullptr;
extern "C" void on_interrupt(int) {
  if (g_runner != nullptr) g_runner->stop();
}

std::string self_program() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this program's path (/proc/self/exe): " + ec.message());
  return p.string();
}

std::string database_path(const std::string& dir) {
  return (fs::path(dir) / "results.sqlite").string();
}

// Parses a point's arguments with a fresh copy of the command line, running nothing.
std::string check_point_args(const std::vector<std::string>& args) {
  CLI::App app{"sohusim"};
  GlobalOptions global;
  Action action;
  add_commands(app, global, action);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return {};
}

std::string duration_text(double s) {
  std::ostringstream o;
  if (s < 60) {
    o << static_cast<int>(s + 0.5) << " s";
  } else if (s < 3600) {
    o << static_cast<int>(s / 60) << " min " << static_cast<int>(s) % 60 << " s";
  } else {
    o << static_cast<int>(s / 3600) << " h " << static_cast<int>(s / 60) % 60 << " min";
  }
  return o.str();
}

std::string params_text(const studies::SweepPoint& p) {
  std::string t;
  for (const auto& [k, v] : p.params) t += (t.empty() ? "" : ", ") + k + "=" + v;
  return t.empty() ? "(no axes)" : t;
}

int run_sweep(const GlobalOptions& global, const SweepOptions& o) {
  if (!o.merge.empty()) {
    if (!fs::is_directory(fs::path(o.merge) / "slurm" / "results"))
      throw UsageError("--merge: " + (fs::path(o.merge) / "slurm" / "results").string() +
                       ": no Slurm results to merge (sohusim sweep SPEC -o DIR --slurm writes them)");
    studies::ResultStore store(database_path(o.merge));
    unsigned skipped = 0;
    const unsigned n = studies::merge_results(o.merge, store, &skipped);
    const auto counts = store.counts();
    std::cout << "merged " << n << " points into " << database_path(o.merge);
    for (const auto& [status, c] : counts) std::cout << ", " << c << " " << status;
    std::cout << (skipped ? ", " + std::to_string(skipped) + " unreadable lines skipped" : "") << "\n";
    return counts.count("failed") || counts.count("timeout") ? kSimulationError : kOk;
  }
  if (!o.csv.empty()) {
    if (!fs::exists(database_path(o.csv))) throw UsageError("--csv: " + database_path(o.csv) + " does not exist");
    studies::ResultStore store(database_path(o.csv));
    if (o.output.empty()) {
      store.write_csv(std::cout);
    } else {
      std::ofstream os(o.output);
      store.write_csv(os);
      os.flush();
      if (!os) throw UsageError("-o: cannot write `" + o.output + "`");
      std::cerr << "wrote " << o.output << " (" << fs::file_size(o.output) << " bytes)\n";
    }
    return kOk;
  }
  if (!o.report.empty()) {
    if (!fs::exists(database_path(o.report)))
      throw UsageError("--report: " + database_path(o.report) + " does not exist");
    if (o.output.empty()) throw UsageError("--report DIR -o FILE.html: where the page goes");
    studies::ResultStore store(database_path(o.report));
    studies::StudyReportOptions ro;
    ro.metrics = o.metrics;
    for (const std::string& pair : o.pareto) {
      const std::size_t comma = pair.find(',');
      if (comma == std::string::npos)
        throw UsageError("--pareto: `" + pair + "` is not X,Y (e.g. output_tokens_per_second,average_watts)");
      try {
        ro.pareto.emplace_back(studies::parse_objective(pair.substr(0, comma)),
                               studies::parse_objective(pair.substr(comma + 1)));
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
    }
    std::ostringstream page;
    try {
      studies::write_study_report(page, store, ro);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    std::ofstream os(o.output);
    os << page.str();
    os.flush();
    if (!os) throw UsageError("-o: cannot write `" + o.output + "`");
    std::cerr << "wrote " << o.output << " (" << fs::file_size(o.output) << " bytes)\n";
    return kOk;
  }
  if (!o.task.empty()) return studies::run_array_task(o.task, o.index, self_program()) == 0 ? kOk : kSimulationError;

  if (o.spec.empty())
    throw UsageError("give a sweep spec (sohusim sweep SPEC.yaml -o DIR), or --merge/--csv/--report DIR");
  if (o.out.empty()) throw UsageError("-o DIR: where the results go");
  studies::SweepSpec spec;
  std::vector<studies::SweepPoint> points;
  try {
    spec = studies::SweepSpec::load(o.spec);
    points = studies::expand(spec);
    if (points.empty()) throw std::invalid_argument(o.spec + ": every point is excluded");
    studies::prepare_points(spec, points, preset_dir_strings(global), check_point_args);
  } catch (const std::invalid_argument& e) {
    std::cerr << e.what() << "\n";
    return kUsageError;
  }
  // The points' own command lines carry the global preset folders.
  for (studies::SweepPoint& p : points) {
    std::vector<std::string> args;
    for (const std::string& d : global.config_dirs) args.insert(args.end(), {"--configs", d});
    args.insert(args.end(), p.args.begin(), p.args.end());
    p.args = std::move(args);
  }
  if (o.dry_run) {
    for (const studies::SweepPoint& p : points) {
      std::cout << p.index << "  " << p.key << "  sohusim";
      for (const std::string& a : p.args) std::cout << ' ' << (a.find(' ') == std::string::npos ? a : "'" + a + "'");
      std::cout << "\n";
    }
    return kOk;
  }
  fs::create_directories(o.out);
  studies::ResultStore store(database_path(o.out));
  {
    std::ifstream is(o.spec);
    std::ostringstream text;
    text << is.rdbuf();
    store.set_meta("spec", text.str());
  }
  store.set_meta("spec_file", fs::absolute(o.spec).string());
  store.set_meta("name", spec.name);
  store.set_meta("command", spec.command);
  std::vector<studies::SweepPoint> pending;
  for (const studies::SweepPoint& p : points) {
    const auto status = store.status(p.key);
    if (!status || (o.retry && *status != "ok")) pending.push_back(p);
  }
  const std::size_t done_before = points.size() - pending.size();
  if (pending.empty()) {
    std::cerr << "sohusim sweep: all " << points.size() << " points already in " << database_path(o.out) << "\n";
    const auto counts = store.counts();
    return counts.count("failed") || counts.count("timeout") ? kSimulationError : kOk;
  }
  if (o.slurm) {
    studies::SlurmOptions so = o.slurm_options;
    so.wait = o.wait;
    const std::string job = studies::submit_array(spec, pending, o.out, self_program(), so);
    std::cerr << "sohusim sweep: submitted job " << job << ": " << pending.size() << " points in "
              << (pending.size() + so.chunk - 1) / so.chunk << " array tasks (" << done_before << " already done)\n";
    if (!o.wait) {
      std::cerr << "when it has finished: sohusim sweep --merge " << o.out << "\n";
      return kOk;
    }
    unsigned skipped = 0;
    const unsigned n = studies::merge_results(o.out, store, &skipped);
    const auto counts = store.counts();
    std::cerr << "sohusim sweep: merged " << n << " points";
    for (const auto& [status, c] : counts) std::cerr << ", " << c << " " << status;
    std::cerr << "\n";
    return counts.count("failed") || counts.count("timeout") ? kSimulationError : kOk;
  }

  studies::PointRunner runner(self_program(), (fs::path(o.out) / "points").string(), o.jobs, spec.timeout_s);
  g_runner = &runner;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {
  }, old_term{};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  const bool tty = ::isatty(2) != 0;
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t ok = 0, bad = 0;
  std::cerr << "sohusim sweep: " << points.size() << " points (" << done_before << " already done), " << o.jobs
            << " at a time, results in " << database_path(o.out) << "\n";
  const std::size_t finished = runner.run(pending, [&](const studies::SweepPoint& p, const studies::PointOutcome& r) {
    store.record(p, r);
    (r.status == "ok" ? ok : bad) += 1;
    const std::size_t n = ok + bad;
    if (r.status != "ok") {
      std::string tail = r.error;
      while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
      if (tail.size() > 300) tail = "..." + tail.substr(tail.size() - 300);
      std::cerr << (tty ? "\r\033[K" : "") << "point " << p.index << " (" << params_text(p) << ") " << r.status << ": "
                << tail << "\n";
    }
    if (tty) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double eta = elapsed / static_cast<double>(n) * static_cast<double>(pending.size() - n);
      std::cerr << "\r\033[K  " << done_before + n << "/" << points.size() << " done (" << ok << " ok, " << bad
                << " failed), ETA " << duration_text(eta) << std::flush;
    }
  });
  g_runner = nullptr;
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (tty) std::cerr << "\r\033[K";
  if (runner.stopped()) {
    std::cerr << "sohusim sweep: interrupted after " << finished << " of " << pending.size()
              << " points; every finished point is in " << database_path(o.out)
              << "; run the same command again to go on\n";
    return 130;
  }
  std::cerr << "sohusim sweep: " << ok << " ok, " << bad << " failed or timed out, in " << duration_text(wall) << " ("
            << database_path(o.out) << ")\n";
  return bad == 0 ? kOk : kSimulationError;
}

}  // namespace

void add_sweep_command(CLI::App& root, const GlobalOptions& global, Action& action) {
  auto o = std::make_shared<SweepOptions>();
  auto* cmd = root.add_subcommand(
      "sweep", "run a design-space study: every point of a spec as its own process, results in SQLite");
  cmd->add_option("spec", o->spec, "the sweep spec (YAML; docs/studies.md)");
  cmd->add_option("-o,--out", o->out, "results folder (DIR/results.sqlite); with --csv or --report: the file written");
  cmd->add_option("-j,--jobs", o->jobs, "points run at once")->capture_default_str()->check(CLI::Range(1u, 1024u));
  cmd->add_flag("--retry", o->retry, "run the failed and timed-out points of DIR again");
  cmd->add_flag("--dry-run", o->dry_run, "check the spec and print every point's command line; run nothing");
  cmd->add_option("--merge", o->merge, "gather a Slurm sweep's task results in DIR into its database");
  cmd->add_option("--csv", o->csv, "export DIR's results as CSV (to stdout, or -o FILE)");
  cmd->add_option("--report", o->report,
                  "write DIR's study report (HTML: charts over the axes, Pareto fronts) to -o FILE");
  cmd->add_option("--metric", o->metrics,
                  "--report: a metric to chart (repeatable; default: the command's usual ones)");
  cmd->add_option("--pareto", o->pareto,
                  "--report: a Pareto front of two metrics, X,Y, each NAME[:max|:min] (repeatable; "
                  "e.g. output_tokens_per_second:max,average_watts:min)");
  cmd->add_flag("--slurm", o->slurm, "submit the points as a Slurm job array (sbatch) instead of running them here");
  cmd->add_option("--partition", o->slurm_options.partition, "--slurm: the partition (default: the cluster's)");
  cmd->add_option("--time", o->slurm_options.time_limit, "--slurm: time limit per task, Slurm syntax (e.g. 30:00)");
  cmd->add_option("--chunk", o->slurm_options.chunk, "--slurm: points per array task")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  cmd->add_flag("--wait", o->wait, "--slurm: wait for the array to end, then merge its results");
  cmd->add_option("--sbatch", o->slurm_options.sbatch, "--slurm: the submit command")->capture_default_str();
  auto* task = cmd->add_option("--task", o->task, "(run by a Slurm array task) the sweep folder");
  cmd->add_option("--index", o->index, "(run by a Slurm array task) the task's index")->needs(task);
  task->group("");  // internal: not in --help
  cmd->callback([o, &global, &action] {
    action = [o, &global] {
      SweepOptions opts = *o;
      if (!opts.csv.empty() || !opts.report.empty()) std::swap(opts.output, opts.out);
      return run_sweep(global, opts);
    };
  });
}

}  // namespace sohusim::tools
