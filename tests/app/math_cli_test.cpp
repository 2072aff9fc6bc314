// `rlwb reward math` as a user runs it: one check, a JSON Lines file, and the
// errors for bad input. Needs the rlwb program (built with the whole tree).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include "tests/test_paths.h"

namespace {

struct CliResult {
  int code = -1;
  std::string out, err;
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CliResult rlwb(const std::string& args) {
  std::string base = std::filesystem::temp_directory_path() / ("rlwb-reward-cli-" + std::to_string(getpid()));
  // Through the shell (the arguments are written quoted); coreutils'
  // timeout bounds the wait, as run_program.h does for the others.
  std::string command = "timeout -k 5 120 " + quote(rlwb::testing::kCliBin) + " " + args + " >" + base +
                        ".out 2>" + base + ".err";
  int status = std::system(command.c_str());
  CliResult r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(base + ".out"), slurp(base + ".err")};
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

class RewardCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(rlwb::testing::kCliBin))
      GTEST_SKIP() << "build the rlwb program first (ninja rlwb); " << rlwb::testing::kCliBin
                   << " is missing";
    dir_ = std::filesystem::temp_directory_path() / ("rlwb-reward-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string write(const std::string& name, const std::string& text) {
    std::string path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(RewardCli, OneCheckPrintsTheVerdict) {
  CliResult r = rlwb("reward math --response " + quote("so \\boxed{\\frac{1}{2}}") + " --reference 0.5");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("score: 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("extracted: \\frac{1}{2} (from boxed)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("reason: equal as exact rationals: 1/2"), std::string::npos) << r.out;
  CliResult wrong = rlwb("reward math --response 4 --reference 5 --format json");
  EXPECT_EQ(wrong.code, 0);
  nlohmann::json j = nlohmann::json::parse(wrong.out);
  EXPECT_EQ(j["score"], 0);
  EXPECT_EQ(j["extracted"], "4");
}

TEST_F(RewardCli, OptionsReachTheChecker) {
  EXPECT_NE(rlwb("reward math --response " + quote("50\\%") + " --reference 0.5").out.find("score: 0"),
            std::string::npos);
  EXPECT_NE(rlwb("reward math --response " + quote("50\\%") + " --reference 0.5 --percent fraction")
                .out.find("score: 1"),
            std::string::npos);
  EXPECT_NE(rlwb("reward math --response " + quote("She has 5.") + " --reference 5 --last-number yes")
                .out.find("score: 1"),
            std::string::npos);
  EXPECT_NE(rlwb("reward math --response " + quote("\\boxed{5!}") + " --reference 120").out.find("score: 0"),
            std::string::npos);
  EXPECT_NE(rlwb("reward math --response " + quote("\\boxed{5!}") + " --reference 120 --compat math-verify")
                .out.find("score: 1"),
            std::string::npos);
}

TEST_F(RewardCli, FileGivesOneJsonLinePerInputInOrder) {
  std::string in = write("in.jsonl", R"({"response": "\\boxed{3}", "reference": "3"})"
                                     "\n"
                                     R"({"response": "#### 4", "reference": "5"})"
                                     "\n"
                                     R"({"response": "x=2", "reference": "2"})"
                                     "\n");
  CliResult r = rlwb("reward math --file " + quote(in));
  EXPECT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::vector<int> scores;
  std::vector<std::string> extracted;
  while (std::getline(lines, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    scores.push_back(j["score"]);
    extracted.push_back(j["extracted"]);
  }
  EXPECT_EQ(scores, (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(extracted, (std::vector<std::string>{"3", "4", "x=2"}));
  EXPECT_NE(r.err.find("3 lines checked, 2 scored 1"), std::string::npos) << r.err;
}

TEST_F(RewardCli, BadLineNamesItAndKeepsTheLinesBefore) {
  std::string in = write("bad.jsonl", R"({"response": "1", "reference": "1"})"
                                      "\n"
                                      R"({"response": "2"})"
                                      "\n"
                                      R"({"response": "3", "reference": "3"})"
                                      "\n");
  std::string out = (dir_ / "out.jsonl").string();
  CliResult r = rlwb("reward math --file " + quote(in) + " --out " + quote(out));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("bad.jsonl:2: no \"reference\" field"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fix line 2 and run again"), std::string::npos) << r.err;
  std::string written = slurp(out);
  EXPECT_EQ(std::count(written.begin(), written.end(), '\n'), 1) << written;
  EXPECT_EQ(nlohmann::json::parse(written.substr(0, written.find('\n')))["score"], 1);
}

// It used to answer "option --help needs a value".
TEST_F(RewardCli, HelpListsEveryOptionAndExitsZero) {
  CliResult r = rlwb("reward math --help");
  EXPECT_EQ(r.code, 0) << r.err;
  for (const char* flag : {"--response", "--reference", "--question", "--format", "--file", "--out",
                           "--compat", "--percent", "--last-number", "--tolerance", "--rounding-places",
                           "--final-form", "--numeric-identity", "--timeout-ms"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag << " in\n" << r.out;
  EXPECT_NE(r.out.find("500"), std::string::npos) << "the defaults are shown:\n" << r.out;
}

TEST_F(RewardCli, BadOptionValuesAreExitTwoAndNameTheOption) {
  CliResult percent = rlwb("reward math --response 1 --reference 1 --percent half");
  EXPECT_EQ(percent.code, 2);
  EXPECT_NE(percent.err.find("--percent"), std::string::npos) << percent.err;
  CliResult compat = rlwb("reward math --response 1 --reference 1 --compat sympy");
  EXPECT_EQ(compat.code, 2);
  EXPECT_NE(compat.err.find("--compat"), std::string::npos) << compat.err;
  CliResult yes_no = rlwb("reward math --response 1 --reference 1 --last-number maybe");
  EXPECT_EQ(yes_no.code, 2);
  EXPECT_NE(yes_no.err.find("--last-number"), std::string::npos) << yes_no.err;
  CliResult timeout = rlwb("reward math --response 1 --reference 1 --timeout-ms 0");
  EXPECT_EQ(timeout.code, 2);
  EXPECT_NE(timeout.err.find("--timeout-ms"), std::string::npos) << timeout.err;
  CliResult both = rlwb("reward math --file x.jsonl --reference 1");
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("--file"), std::string::npos) << both.err;
}

TEST_F(RewardCli, UnreadableFileAndBadUsageSayWhatToDo) {
  CliResult missing = rlwb("reward math --file /nonexistent/in.jsonl");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("cannot read /nonexistent/in.jsonl"), std::string::npos) << missing.err;
  CliResult no_ref = rlwb("reward math --response 5");
  EXPECT_EQ(no_ref.code, 2);
  EXPECT_NE(no_ref.err.find("--reference"), std::string::npos);
  CliResult typo = rlwb("reward math --respons 5 --reference 5");
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("unknown option --respons"), std::string::npos);
  CliResult which = rlwb("reward maths --response 5 --reference 5");
  EXPECT_EQ(which.code, 2);
  EXPECT_NE(which.err.find("unknown reward 'maths'"), std::string::npos);
}

}  // namespace
