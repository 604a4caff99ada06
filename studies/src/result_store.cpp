#include "sohusim/studies/result_store.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <sqlite3.h>

#include <nlohmann/json.hpp>

namespace sohusim::studies {

namespace {

std::string quote_id(const std::string& name) {
  std::string q = "\"";
  for (const char c : name) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st_, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("SQLite: ") + sqlite3_errmsg(db) + " in: " + sql);
  }
  ~Statement() { sqlite3_finalize(st_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  void bind(int i, const std::string& s) { sqlite3_bind_text(st_, i, s.c_str(), -1, SQLITE_TRANSIENT); }
  // A whole number as an INTEGER (it prints as 32, not 32.0), any other as a REAL.
  void bind(int i, double v) {
    if (v == std::floor(v) && std::fabs(v) < 9.0e15)
      sqlite3_bind_int64(st_, i, static_cast<long long>(v));
    else
      sqlite3_bind_double(st_, i, v);
  }
  void bind_int(int i, long long v) { sqlite3_bind_int64(st_, i, v); }
  void bind_null(int i) { sqlite3_bind_null(st_, i); }
  bool step() {
    const int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw std::runtime_error(std::string("SQLite: ") + sqlite3_errmsg(db_));
  }
  std::string text(int i) const {
    const unsigned char* t = sqlite3_column_text(st_, i);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  bool is_null(int i) const { return sqlite3_column_type(st_, i) == SQLITE_NULL; }
  int columns() const { return sqlite3_column_count(st_); }
  std::string column_name(int i) const { return sqlite3_column_name(st_, i); }
  sqlite3_stmt* get() { return st_; }

 private:
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
};

const char* const kBaseColumns[] = {"key", "idx", "status", "exit_code", "wall_seconds", "error", "args", "result"};

void flatten(const nlohmann::json& j, const std::string& prefix, std::vector<FlatValue>& out) {
  for (const auto& [k, v] : j.items()) {
    const std::string key = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object()) {
      flatten(v, key, out);
    } else if (v.is_number()) {
      const double d = v.get<double>();
      if (std::isfinite(d)) out.push_back({key, v.dump(), d, true});
    } else if (v.is_boolean()) {
      out.push_back({key, v.get<bool>() ? "1" : "0", v.get<bool>() ? 1.0 : 0.0, true});
    } else if (v.is_string()) {
      out.push_back({key, v.get<std::string>(), 0, false});
    }
  }
}

}  // namespace

std::vector<FlatValue> flatten_json(const std::string& json_text) {
  std::vector<FlatValue> out;
  const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) flatten(j, "", out);
  return out;
}

const std::string* ResultStore::Row::get(const std::string& column) const {
  for (const auto& [k, v] : cells)
    if (k == column) return &v;
  return nullptr;
}

ResultStore::ResultStore(const std::string& path) : path_(path) {
  if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw std::runtime_error("cannot open the results database '" + path + "': " + msg);
  }
  sqlite3_busy_timeout(db_, 10'000);
  try {
    exec("PRAGMA journal_mode=WAL");
    exec("CREATE TABLE IF NOT EXISTS sweep(key TEXT PRIMARY KEY, value TEXT)");
    exec("CREATE TABLE IF NOT EXISTS columns(name TEXT PRIMARY KEY, kind TEXT, pos INTEGER)");
    exec(
        "CREATE TABLE IF NOT EXISTS points(key TEXT PRIMARY KEY, idx INTEGER, status TEXT, exit_code INTEGER, "
        "wall_seconds REAL, error TEXT, args TEXT, result TEXT)");
    Statement st(db_, "SELECT name FROM pragma_table_info('points') ORDER BY cid");
    while (st.step()) columns_.push_back(st.text(0));
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

ResultStore::~ResultStore() {
  sqlite3_close(db_);
}

void ResultStore::exec(const std::string& sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw std::runtime_error("results database '" + path_ + "': " + msg);
  }
}

void ResultStore::ensure_column(const std::string& name, const char* type) {
  for (const std::string& c : columns_)
    if (c == name) return;
  exec("ALTER TABLE points ADD COLUMN " + quote_id(name) + " " + type);
  columns_.push_back(name);
}

void ResultStore::set_meta(const std::string& key, const std::string& value) {
  Statement st(db_, "INSERT OR REPLACE INTO sweep(key, value) VALUES(?, ?)");
  st.bind(1, key);
  st.bind(2, value);
  st.step();
}

std::optional<std::string> ResultStore::meta(const std::string& key) const {
  Statement st(db_, "SELECT value FROM sweep WHERE key = ?");
  st.bind(1, key);
  if (st.step()) return st.text(0);
  return std::nullopt;
}

std::optional<std::string> ResultStore::status(const std::string& key) const {
  Statement st(db_, "SELECT status FROM points WHERE key = ?");
  st.bind(1, key);
  if (st.step()) return st.text(0);
  return std::nullopt;
}

void ResultStore::record(const SweepPoint& point, const PointOutcome& outcome) {
  exec("BEGIN IMMEDIATE");
  try {
    std::vector<std::string> names(std::begin(kBaseColumns), std::end(kBaseColumns));
    std::string args;
    for (const std::string& a : point.args) {
      const bool plain = a.find_first_of(" \t'\"\\$") == std::string::npos && !a.empty();
      args += (args.empty() ? "" : " ") + (plain ? a : "'" + a + "'");
    }
    auto register_column = [this](const std::string& name, const char* kind) {
      Statement st(db_, "INSERT OR IGNORE INTO columns(name, kind, pos) VALUES(?, ?, (SELECT COUNT(*) FROM columns))");
      st.bind(1, name);
      st.bind(2, std::string(kind));
      st.step();
    };
    std::vector<std::pair<std::string, const FlatValue*>> metrics;
    const std::vector<FlatValue> flat = flatten_json(outcome.result);
    for (const auto& [k, v] : point.params) {
      ensure_column(k, "");
      register_column(k, "parameter");
      names.push_back(k);
    }
    for (const FlatValue& f : flat) {
      std::string name = f.key;
      for (const auto& [k, v] : point.params)
        if (k == name) name = "result." + name;
      for (const char* b : kBaseColumns)
        if (name == b) name = "result." + name;
      ensure_column(name, "");  // no affinity: each value keeps its own type (an integer prints as one)
      register_column(name, "metric");
      metrics.emplace_back(name, &f);
      names.push_back(name);
    }
    std::string sql = "INSERT OR REPLACE INTO points(";
    std::string marks;
    for (std::size_t i = 0; i < names.size(); ++i) {
      sql += (i ? ", " : "") + quote_id(names[i]);
      marks += i ? ", ?" : "?";
    }
    sql += ") VALUES(" + marks + ")";
    Statement st(db_, sql);
    int i = 1;
    st.bind(i++, point.key);
    st.bind_int(i++, point.index);
    st.bind(i++, outcome.status);
    st.bind_int(i++, outcome.exit_code);
    sqlite3_bind_double(st.get(), i++, outcome.wall_seconds);
    if (outcome.error.empty())
      st.bind_null(i++);
    else
      st.bind(i++, outcome.error);
    st.bind(i++, args);
    if (outcome.result.empty())
      st.bind_null(i++);
    else
      st.bind(i++, outcome.result);
    for (const auto& [k, v] : point.params) {
      // A plain number is stored as one (so that ORDER BY and charts see numbers); the rest as text.
      char* end = nullptr;
      const double d = std::strtod(v.c_str(), &end);
      if (!v.empty() && end != nullptr && *end == '\0' && std::isfinite(d))
        st.bind(i++, d);
      else
        st.bind(i++, v);
    }
    for (const auto& [name, f] : metrics) {
      if (f->is_number)
        st.bind(i++, f->number);
      else
        st.bind(i++, f->text);
    }
    st.step();
    exec("COMMIT");
  } catch (...) {
    exec("ROLLBACK");
    throw;
  }
}

std::map<std::string, unsigned> ResultStore::counts() const {
  std::map<std::string, unsigned> out;
  Statement st(db_, "SELECT status, COUNT(*) FROM points GROUP BY status");
  while (st.step()) out[st.text(0)] = static_cast<unsigned>(std::stoul(st.text(1)));
  return out;
}

std::vector<ResultStore::Row> ResultStore::rows() const {
  std::vector<Row> out;
  Statement st(db_, "SELECT * FROM points ORDER BY idx, key");
  while (st.step()) {
    Row r;
    for (int c = 0; c < st.columns(); ++c) r.cells.emplace_back(st.column_name(c), st.is_null(c) ? "" : st.text(c));
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::string> ResultStore::parameter_columns() const {
  std::vector<std::string> out;
  Statement st(db_, "SELECT name FROM columns WHERE kind = 'parameter' ORDER BY pos");
  while (st.step()) out.push_back(st.text(0));
  return out;
}

void ResultStore::write_csv(std::ostream& os) const {
  auto field = [&os](const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) {
      os << s;
      return;
    }
    os << '"';
    for (const char c : s) os << (c == '"' ? "\"\"" : std::string(1, c));
    os << '"';
  };
  Statement st(db_, "SELECT * FROM points ORDER BY idx, key");
  std::vector<int> shown;
  for (int c = 0; c < st.columns(); ++c)
    if (st.column_name(c) != "result") shown.push_back(c);
  for (std::size_t i = 0; i < shown.size(); ++i) {
    if (i) os << ',';
    field(st.column_name(shown[i]));
  }
  os << '\n';
  while (st.step()) {
    for (std::size_t i = 0; i < shown.size(); ++i) {
      if (i) os << ',';
      if (!st.is_null(shown[i])) field(st.text(shown[i]));
    }
    os << '\n';
  }
}

}  // namespace sohusim::studies
