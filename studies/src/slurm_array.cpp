#include "sohusim/studies/slurm_array.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <sys/stat.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "sohusim/studies/point_runner.hpp"

namespace sohusim::studies {

namespace fs = std::filesystem;

namespace {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

nlohmann::json point_json(const SweepPoint& p) {
  return {{"index", p.index}, {"key", p.key}, {"params", p.params}, {"args", p.args}};
}

SweepPoint point_from(const nlohmann::json& j) {
  SweepPoint p;
  p.index = j.at("index").get<unsigned>();
  p.key = j.at("key").get<std::string>();
  p.params = j.at("params").get<std::vector<std::pair<std::string, std::string>>>();
  p.args = j.at("args").get<std::vector<std::string>>();
  return p;
}

}  // namespace

std::string submit_array(const SweepSpec& spec, const std::vector<SweepPoint>& pending, const std::string& dir,
                         const std::string& program, const SlurmOptions& options) {
  if (pending.empty()) throw std::invalid_argument("no point left to run");
  const unsigned chunk = options.chunk == 0 ? 1 : options.chunk;
  const fs::path root = fs::absolute(dir) / "slurm";
  fs::create_directories(root / "logs");
  fs::create_directories(root / "results");
  for (const auto& e : fs::directory_iterator(root / "results")) fs::remove(e.path());  // a new submission
  nlohmann::json doc;
  doc["chunk"] = chunk;
  doc["timeout_s"] = spec.timeout_s;
  for (const SweepPoint& p : pending) doc["points"].push_back(point_json(p));
  {
    std::ofstream os(root / "points.json");
    os << doc.dump(1) << '\n';
    if (!os) throw std::runtime_error("cannot write " + (root / "points.json").string());
  }
  const std::size_t tasks = (pending.size() + chunk - 1) / chunk;
  const fs::path script = root / "job.sh";
  {
    std::ofstream os(script);
    os << "#!/bin/bash\n"
       << "# A sohusim sweep (" << (spec.name.empty() ? spec.source : spec.name) << "): " << pending.size()
       << " points in " << tasks << " tasks of up to " << chunk << ".\n"
       << "#SBATCH --job-name=sohusim-sweep\n"
       << "#SBATCH --array=0-" << tasks - 1 << "\n"
       << "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n"
       << "#SBATCH --output=" << (root / "logs" / "task-%a.out").string() << "\n";
    if (!options.partition.empty()) os << "#SBATCH --partition=" << options.partition << "\n";
    if (!options.time_limit.empty()) os << "#SBATCH --time=" << options.time_limit << "\n";
    os << "exec " << shell_quote(program) << " sweep --task " << shell_quote(fs::absolute(dir).string())
       << " --index \"$SLURM_ARRAY_TASK_ID\"\n";
  }
  fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  std::string cmd = shell_quote(options.sbatch) + " --parsable" + (options.wait ? " --wait" : "") + " --chdir " +
                    shell_quote(root.string()) + " " + shell_quote(script.string()) + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + options.sbatch);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  const int status = ::pclose(pipe);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  // --wait returns the array's exit code: non-zero when a task failed, which the merge reports.
  const std::string first_line = out.substr(0, out.find('\n'));
  const bool has_id = !first_line.empty() && first_line.find_first_not_of("0123456789;") == std::string::npos;
  if (code == 127 || (!has_id && code != 0))
    throw std::runtime_error(options.sbatch + " failed (exit " + std::to_string(code) + "): " + out);
  if (!has_id) throw std::runtime_error(options.sbatch + " printed no job id: " + out);
  return first_line.substr(0, first_line.find(';'));
}

unsigned run_array_task(const std::string& dir, unsigned index, const std::string& program) {
  const fs::path root = fs::path(dir) / "slurm";
  std::ifstream is(root / "points.json");
  if (!is) throw std::runtime_error("cannot read " + (root / "points.json").string());
  const nlohmann::json doc = nlohmann::json::parse(is);
  const unsigned chunk = doc.at("chunk").get<unsigned>();
  const nlohmann::json& all = doc.at("points");
  std::vector<SweepPoint> mine;
  for (std::size_t i = static_cast<std::size_t>(index) * chunk; i < all.size() && i < (index + 1ULL) * chunk; ++i)
    mine.push_back(point_from(all[i]));
  if (mine.empty()) throw std::runtime_error("task " + std::to_string(index) + " has no points");
  fs::create_directories(root / "results");
  std::ofstream out(root / "results" / ("task-" + std::to_string(index) + ".jsonl"), std::ios::app);
  PointRunner runner(program, (fs::path(dir) / "points").string(), 1, doc.at("timeout_s").get<double>());
  unsigned bad = 0;
  runner.run(mine, [&](const SweepPoint& p, const PointOutcome& o) {
    nlohmann::json line = point_json(p);
    line["status"] = o.status;
    line["exit_code"] = o.exit_code;
    line["wall_seconds"] = o.wall_seconds;
    line["error"] = o.error;
    line["result"] = o.result;
    out << line.dump() << '\n' << std::flush;
    bad += o.status == "ok" ? 0 : 1;
  });
  return bad;
}

unsigned merge_results(const std::string& dir, ResultStore& store, unsigned* skipped) {
  const fs::path results = fs::path(dir) / "slurm" / "results";
  if (!fs::is_directory(results)) throw std::invalid_argument(results.string() + ": no Slurm results to merge");
  unsigned merged = 0, bad = 0;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(results))
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream is(f);
    std::string text;
    while (std::getline(is, text)) {
      const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
      if (j.is_discarded() || !j.is_object() || !j.contains("key")) {
        ++bad;
        continue;
      }
      try {
        PointOutcome o;
        o.status = j.at("status").get<std::string>();
        o.exit_code = j.at("exit_code").get<int>();
        o.wall_seconds = j.at("wall_seconds").get<double>();
        o.error = j.at("error").get<std::string>();
        o.result = j.at("result").get<std::string>();
        store.record(point_from(j), o);
        ++merged;
      } catch (const nlohmann::json::exception&) {
        ++bad;
      }
    }
  }
  if (skipped != nullptr) *skipped = bad;
  return merged;
}

}  // namespace sohusim::studies
