#pragma once
// ResultStore: a sweep's results as one SQLite database (DIR/results.sqlite), one row per point.
//
//   table points: key (primary), idx, status (ok | failed | timeout), exit_code, wall_seconds,
//                 error (the stderr tail of a failed point), args (the point's sohusim command
//                 line), result (its JSON), then one column per parameter (the axis name, the
//                 value as written) and one per metric of the JSON (nested keys joined by dots:
//                 "configuration.hash", "ttft_ms.p99"; whole numbers as INTEGER, others as REAL, text as TEXT; arrays
//                 left in `result`). A metric named like a parameter is stored as "result.<name>".
//   table sweep:  key, value (name, command, spec: what the study was).
//
//   studies::ResultStore db("out/results.sqlite");
//   if (!db.finished(point.key)) db.record(point, outcome);
//   db.write_csv(std::cout);
//
// Each record is its own transaction (WAL journal): a sweep interrupted at any moment keeps
// every point it finished. Several processes may read it while one writes.
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sohusim/studies/sweep_spec.hpp"

struct sqlite3;

namespace sohusim::studies {

/// What running one point gave.
struct PointOutcome {
  std::string status;  // "ok" | "failed" | "timeout"
  int exit_code = 0;
  double wall_seconds = 0;
  std::string error;   // the stderr tail when not ok
  std::string result;  // the point's JSON (stdout), "" when it printed none
};

class ResultStore {
 public:
  /// Opens (creating) the database. Throws std::runtime_error naming the file.
  explicit ResultStore(const std::string& path);
  ~ResultStore();
  ResultStore(const ResultStore&) = delete;
  ResultStore& operator=(const ResultStore&) = delete;

  void set_meta(const std::string& key, const std::string& value);
  std::optional<std::string> meta(const std::string& key) const;

  /// The point's status when it has a row ("ok", "failed", "timeout"), else nullopt.
  std::optional<std::string> status(const std::string& key) const;
  /// Inserts or replaces the point's row.
  void record(const SweepPoint& point, const PointOutcome& outcome);

  /// Rows by status: {"ok": n, "failed": m, ...}.
  std::map<std::string, unsigned> counts() const;
  /// Every column of every row except `result`, rows by index, RFC 4180 quoting.
  void write_csv(std::ostream& os) const;

  /// One row as column -> value text ("" for NULL), in index order; for reports and tests.
  struct Row {
    std::vector<std::pair<std::string, std::string>> cells;
    const std::string* get(const std::string& column) const;
  };
  std::vector<Row> rows() const;
  /// The parameter columns (axis names, "repeat") in the order they were first recorded.
  std::vector<std::string> parameter_columns() const;

 private:
  void exec(const std::string& sql) const;
  void ensure_column(const std::string& name, const char* type);
  std::string path_;
  sqlite3* db_ = nullptr;
  std::vector<std::string> columns_;  // known columns of `points`
};

/// A JSON document flattened to (dotted key, value): numbers, strings and booleans kept
/// (booleans as 0/1), arrays left out. `is_number` says how to store each.
struct FlatValue {
  std::string key, text;
  double number = 0;
  bool is_number = false;
};
std::vector<FlatValue> flatten_json(const std::string& json_text);

}  // namespace sohusim::studies
