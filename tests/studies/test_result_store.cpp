// ResultStore: one row per point with parameters and flattened metrics as columns, statuses
// for resuming, CSV export; and the JSON flattening it uses.
#include <cstdio>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "sohusim/studies/result_store.hpp"

namespace sohusim::studies {
namespace {

std::string fresh_db(const std::string& name) {
  const std::string path = testing::TempDir() + name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return path;
}

SweepPoint point(unsigned index, const std::string& key, const std::string& batch) {
  SweepPoint p;
  p.index = index;
  p.key = key;
  p.params = {{"batch", batch}, {"device.c2c.bandwidth", "100 GB/s"}};
  p.args = {"run", "--batch", batch, "--set", "device.c2c.bandwidth=100 GB/s", "--json"};
  return p;
}

TEST(FlattenJson, KeepsScalarsJoinsNestedKeysAndDropsArrays) {
  const std::vector<FlatValue> f =
      flatten_json(R"({"ok": true, "tpot_ms": 7.5, "ttft_ms": {"p50": 1, "p99": 2}, "model": "gpt2", "rows": [1, 2]})");
  ASSERT_EQ(f.size(), 5U);
  std::map<std::string, FlatValue> by;
  for (const FlatValue& v : f) by[v.key] = v;
  EXPECT_TRUE(by.at("ok").is_number);
  EXPECT_EQ(by.at("ok").number, 1.0);
  EXPECT_EQ(by.at("ttft_ms.p99").number, 2.0);
  EXPECT_FALSE(by.at("model").is_number);
  EXPECT_EQ(by.count("rows"), 0U);
  EXPECT_TRUE(flatten_json("not json").empty());
}

TEST(ResultStore, RecordsParametersAndMetricsAsColumns) {
  const std::string path = fresh_db("store_columns.sqlite");
  ResultStore db(path);
  EXPECT_FALSE(db.status("k0").has_value());
  PointOutcome ok{"ok", 0, 0.5, "", R"({"tpot_ms": 7.25, "batch": 64, "configuration": {"hash": "abc"}})"};
  db.record(point(0, "k0", "64"), ok);
  PointOutcome failed{"failed", 2, 0.1, "sohusim: --tp 4: a host has 1 devices", ""};
  db.record(point(1, "k1", "128"), failed);
  EXPECT_EQ(db.status("k0"), std::optional<std::string>("ok"));
  EXPECT_EQ(db.status("k1"), std::optional<std::string>("failed"));
  EXPECT_EQ(db.counts(), (std::map<std::string, unsigned>{{"failed", 1}, {"ok", 1}}));
  EXPECT_EQ(db.parameter_columns(), (std::vector<std::string>{"batch", "device.c2c.bandwidth"}));
  const std::vector<ResultStore::Row> rows = db.rows();
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(*rows[0].get("batch"), "64");
  EXPECT_EQ(*rows[0].get("tpot_ms"), "7.25");
  EXPECT_EQ(*rows[0].get("result.batch"), "64");  // a metric named like a parameter
  EXPECT_EQ(*rows[0].get("configuration.hash"), "abc");
  EXPECT_EQ(*rows[1].get("error"), "sohusim: --tp 4: a host has 1 devices");
  EXPECT_EQ(*rows[1].get("tpot_ms"), "");
  // A point run again replaces its row.
  db.record(point(1, "k1", "128"), ok);
  EXPECT_EQ(db.counts(), (std::map<std::string, unsigned>{{"ok", 2}}));
}

TEST(ResultStore, SurvivesReopeningAndExportsCsv) {
  const std::string path = fresh_db("store_reopen.sqlite");
  {
    ResultStore db(path);
    db.set_meta("name", "study");
    db.record(point(0, "k0", "1"), PointOutcome{"ok", 0, 0.5, "", R"({"note": "a, \"quoted\" word"})"});
  }
  ResultStore db(path);
  EXPECT_EQ(db.meta("name"), std::optional<std::string>("study"));
  EXPECT_EQ(db.status("k0"), std::optional<std::string>("ok"));
  std::ostringstream csv;
  db.write_csv(csv);
  const std::string text = csv.str();
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "key,idx,status,exit_code,wall_seconds,error,args,batch,device.c2c.bandwidth,note");
  EXPECT_NE(text.find("\"a, \"\"quoted\"\" word\""), std::string::npos) << text;
  EXPECT_EQ(text.find("result"), std::string::npos);  // the raw JSON stays in the database
}

TEST(ResultStore, AFileThatCannotBeOpenedIsNamed) {
  try {
    ResultStore db("/nonexistent-dir/x.sqlite");
    FAIL() << "opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.sqlite"), std::string::npos);
  }
}

}  // namespace
}  // namespace sohusim::studies
