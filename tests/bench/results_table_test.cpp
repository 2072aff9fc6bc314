// The machine-readable figures of the benchmarks and the table made from
// them: a benchmark run with RLWB_BENCH_RESULTS set appends one JSON line
// per headline figure (bench/bench_record.h); scripts/bench_table.py keeps
// the latest line of each figure and rewrites only the block between its
// markers in RESULTS.md; bench/run_all.sh refuses what it cannot run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/run_program.h"
#include "tests/test_paths.h"

namespace rlwb::bench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using rlwb::testing::ProgramOutput;
using rlwb::testing::run_program;

const std::string kSource = rlwb::testing::kSourceDir;

// The benchmark with RLWB_BENCH_RESULTS set to `results`.
ProgramOutput run_bench_transfer(const std::string& results) {
  ::setenv("RLWB_BENCH_RESULTS", results.c_str(), 1);
  ::setenv("RLWB_COMMIT", "abc123", 1);
  ProgramOutput o =
      run_program((std::string(rlwb::testing::kBenchDir) + "/bench_transfer").c_str(), {"--quick"});
  ::unsetenv("RLWB_BENCH_RESULTS");
  ::unsetenv("RLWB_COMMIT");
  return o;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ResultsTable : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("rlwb-results-table-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ProgramOutput table(bool check = false) {
    std::vector<std::string> args = {kSource + "/scripts/bench_table.py", "--results",
                                     (dir_ / "results.jsonl").string(), "--doc",
                                     (dir_ / "RESULTS.md").string()};
    if (check) args.push_back("--check");
    return run_program("/usr/bin/python3", args);
  }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }

  std::filesystem::path dir_;
};

TEST_F(ResultsTable, ABenchmarkAppendsOneJsonLinePerFigureWithItsHostAndCommit) {
  const std::string results = (dir_ / "results.jsonl").string();
  ProgramOutput o = run_bench_transfer(results);
  ASSERT_EQ(o.code, 0) << o.text;
  std::ifstream in(results);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 1u) << read_file(results);
  const nlohmann::json& f = lines[0];
  EXPECT_EQ(f["figure"], "transfer/16MiB_shm");
  EXPECT_EQ(f["unit"], "ms");
  EXPECT_GT(f["value"].get<double>(), 0);
  EXPECT_GT(f["peer_value"].get<double>(), 0);
  EXPECT_EQ(f["peer"], "single-thread memcpy");
  // One ratio per timed pair, summarised.
  ASSERT_TRUE(f.contains("ratio"));
  const auto pairs = f["ratio"]["pairs"].get<std::vector<double>>();
  EXPECT_GE(pairs.size(), 2u);
  EXPECT_LE(f["ratio"]["min"].get<double>(), f["ratio"]["median"].get<double>());
  EXPECT_LE(f["ratio"]["median"].get<double>(), f["ratio"]["max"].get<double>());
  EXPECT_EQ(f["commit"], "abc123");
  EXPECT_FALSE(f["host_cpu"].get<std::string>().empty());
  EXPECT_FALSE(f["cores"].get<std::string>().empty());
  EXPECT_EQ(f["date"].get<std::string>().size(), 20u);  // 2026-12-04T20:32:38Z
  EXPECT_TRUE(f["met"].is_boolean());
}

TEST_F(ResultsTable, TheLatestLineOfEachFigureFillsTheBlockAndNothingElseChanges) {
  write(
      "results.jsonl",
      R"({"figure":"a/x","title":"figure A","value":10,"unit":"ms","peer":"floor","peer_value":5,)"
      R"("ratio":{"min":1.9,"median":2,"max":2.1,"pairs":[1.9,2,2.1]},"goal":"< 3x","met":true,)"
      R"("host_cpu":"CPU one","cores":"0,1","load":0.5,"date":"2026-12-01T00:00:00Z","commit":"old"})"
      "\n"
      R"({"figure":"b/y","title":"figure B","value":1234.5,"unit":"tokens/s","peer":"","peer_value":null,)"
      R"("goal":"","met":null,"host_cpu":"CPU one","cores":"0","date":"2026-12-02T00:00:00Z","commit":"c2"})"
      "\n"
      R"({"figure":"a/x","title":"figure A","value":12,"unit":"ms","peer":"floor","peer_value":4,)"
      R"("ratio":{"min":3,"median":3,"max":3,"pairs":[3]},"goal":"< 3x","met":false,)"
      R"("host_cpu":"CPU two","cores":"0,1","load":1.5,"date":"2026-12-03T00:00:00Z","commit":"new"})"
      "\n");
  write("RESULTS.md",
        "# Results\n\nintro\n\n<!-- bench-table:begin -->\nstale row\n<!-- bench-table:end -->\n\n"
        "## History\nkept\n");
  EXPECT_EQ(table(/*check=*/true).code, 1);  // the stale table differs from the results
  ProgramOutput o = table();
  ASSERT_EQ(o.code, 0) << o.text;
  const std::string doc = read_file(dir_ / "RESULTS.md");
  EXPECT_THAT(doc, HasSubstr("# Results\n\nintro\n\n<!-- bench-table:begin -->\n| figure |"));
  EXPECT_THAT(doc, HasSubstr("<!-- bench-table:end -->\n\n## History\nkept\n"));
  EXPECT_THAT(doc, Not(HasSubstr("stale row")));
  // figure A: only its latest line, with its host, load and commit; not met is marked.
  EXPECT_THAT(doc, HasSubstr("| figure A | 12.0 ms | floor: 4.00 ms | 3.00x (1) | < 3x | **no** | CPU two, "
                             "cores 0,1, load 1.5 | 2026-12-03, new |"));
  EXPECT_THAT(doc, Not(HasSubstr("CPU one, cores 0,1")));
  EXPECT_THAT(doc,
              HasSubstr("| figure B | 1,234 tokens/s | - | - | - | - | CPU one, cores 0 | 2026-12-02, c2 |"));
  EXPECT_EQ(table(/*check=*/true).code, 0) << read_file(dir_ / "RESULTS.md");
}

TEST_F(ResultsTable, ABrokenResultsLineIsNamedAndTheDocumentIsLeftAlone) {
  write("results.jsonl", R"({"figure":"a/x","value":1})"
                         "\n{not json\n");
  const std::string before = "<!-- bench-table:begin -->\nkeep me\n<!-- bench-table:end -->\n";
  write("RESULTS.md", before);
  ProgramOutput o = table();
  EXPECT_NE(o.code, 0);
  EXPECT_THAT(o.text, HasSubstr("results.jsonl:2: not JSON"));
  EXPECT_EQ(read_file(dir_ / "RESULTS.md"), before);
}

TEST_F(ResultsTable, ADocumentWithoutTheMarkersIsRefusedWithWhatToAdd) {
  write("results.jsonl", R"({"figure":"a/x","value":1})"
                         "\n");
  write("RESULTS.md", "# no markers\n");
  ProgramOutput o = table();
  EXPECT_NE(o.code, 0);
  EXPECT_THAT(o.text, HasSubstr("add the two markers"));
  EXPECT_EQ(read_file(dir_ / "RESULTS.md"), "# no markers\n");
}

TEST_F(ResultsTable, TheScalingPlotsAreOnePngPerAxisWithBothSides) {
  write("scaling.csv",
        "axis,x,work,rlwb_step_s,rlwb_tokens,trl_step_s,trl_tokens\n"
        "layers,2,1e9,0.05,1500,0.08,1450\nlayers,4,2e9,0.07,1500,0.13,1450\nlayers,8,4e9,0.15,1500,,\n"
        "dp,1,1e9,0.06,1500,0.10,1450\ndp,2,1e9,0.04,1500,0.11,1450\n");
  ProgramOutput o =
      run_program(rlwb::testing::reference_python().c_str(),
                  {kSource + "/bench/plot_scaling.py", (dir_ / "scaling.csv").string(), dir_.string()});
  ASSERT_EQ(o.code, 0) << o.text;
  for (const char* axis : {"layers", "dp"}) {
    const auto png = dir_ / (std::string("scaling_") + axis + ".png");
    ASSERT_TRUE(std::filesystem::exists(png)) << png;
    EXPECT_EQ(read_file(png).substr(1, 3), "PNG");
  }
}

TEST(RunAll, RefusesCoresTheMachineDoesNotHaveBeforeBuildingAnything) {
  ProgramOutput o = run_program((kSource + "/bench/run_all.sh").c_str(), {"--cpus", "4095"});
  EXPECT_EQ(o.code, 2) << o.text;
  EXPECT_THAT(o.text, HasSubstr("cannot pin to cores '4095'"));
  EXPECT_THAT(o.text, Not(HasSubstr("building")));
}

TEST(RunAll, RefusesAnUnknownArgument) {
  ProgramOutput o = run_program((kSource + "/bench/run_all.sh").c_str(), {"--fast"});
  EXPECT_EQ(o.code, 2) << o.text;
  EXPECT_THAT(o.text, HasSubstr("unknown argument '--fast'"));
}

}  // namespace
}  // namespace rlwb::bench
