// Every benchmark's peer, run in quick mode, so that a broken peer script
// (or a peer package missing from scripts/python-requirements.txt) fails
// the suite instead of a benchmark run much later. Each check reads the
// figure the benchmark takes from its peer. No timing is asserted: the
// benchmarks measure, the tests only run them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/test_paths.h"

namespace rlwb::bench {
namespace {

struct Output {
  int code = -1;
  std::string text;
};

Output run(const std::vector<std::string>& argv) {
  std::string cmd = "timeout 300";
  for (const auto& a : argv) cmd += " '" + a + "'";
  cmd += " 2>&1";
  Output out;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.text.append(buf.data(), n);
  const int status = ::pclose(pipe);
  out.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// A peer script under bench/, with the reference Python.
Output peer(const std::string& script, std::vector<std::string> args) {
  args.insert(args.begin(), {rlwb::testing::reference_python(),
                             std::string(rlwb::testing::kSourceDir) + "/bench/" + script});
  return run(args);
}

// The JSON of the last line that parses as an object (peers print logs first).
nlohmann::json last_json(const std::string& text) {
  size_t end = text.size();
  while (end > 0) {
    const size_t start = text.rfind('\n', end - 1);
    const size_t from = start == std::string::npos ? 0 : start + 1;
    auto j = nlohmann::json::parse(text.substr(from, end - from), nullptr, false);
    if (!j.is_discarded() && j.is_object()) return j;
    if (start == std::string::npos) break;
    end = start;
  }
  return nullptr;
}

std::string bench(const std::string& name) { return std::string(rlwb::testing::kBenchDir) + "/" + name; }

TEST(PeerScripts, RayActorsAnswerTheRpcBenchmarksEmptyCall) {
  Output o = peer("ray_rpc.py", {"50"});
  const nlohmann::json j = last_json(o.text);
  ASSERT_TRUE(j.is_object()) << o.text;
  for (const char* workers : {"1", "8"}) {
    ASSERT_TRUE(j.contains(workers)) << j.dump();
    EXPECT_GT(j[workers]["p50_us"].get<double>(), 0) << j.dump();
  }
}

TEST(PeerScripts, MathVerifyGivesAVerdictForEveryCaseOfTheCorpus) {
  const std::string corpus = std::string(rlwb::testing::kSourceDir) + "/tests/rewards/math/math_corpus.jsonl";
  Output o = peer("math_verify_ref.py", {corpus});
  ASSERT_EQ(o.code, 0) << o.text;
  const nlohmann::json j = last_json(o.text);
  ASSERT_TRUE(j.is_object()) << o.text.substr(0, 2000);
  std::ifstream in(corpus);
  int lines = 0;
  for (std::string line; std::getline(in, line);) lines += !line.empty();
  EXPECT_EQ(j["verdicts"].size(), static_cast<size_t>(lines));
  EXPECT_EQ(j["version"], "0.9.0");
}

TEST(PeerScripts, TrlTakesAGrpoStep) {
  Output o = peer("bench_grpo_trl.py",
                  {"--prompts", "2", "--num-generations", "2", "--steps", "1", "--warmup", "0"});
  ASSERT_EQ(o.code, 0) << o.text;
  const nlohmann::json j = last_json(o.text);
  ASSERT_TRUE(j.is_object()) << o.text;
  EXPECT_EQ(j["peer"], "trl");
  EXPECT_GT(j["tokens_per_s"].get<double>(), 0);
}

// RLWB's own layout for TRL: two data-parallel processes (torchrun, DDP
// over Gloo), one thread each; the step's rows are split between them and
// the tokens summed (the script checks them against TRL's own count).
TEST(PeerScripts, TrlTakesAGrpoStepInTwoDataParallelProcesses) {
  Output o = peer("bench_grpo_trl.py", {"--prompts", "2", "--num-generations", "2", "--steps", "1",
                                        "--warmup", "0", "--processes", "2", "--threads", "1"});
  ASSERT_EQ(o.code, 0) << o.text;
  const nlohmann::json j = last_json(o.text);
  ASSERT_TRUE(j.is_object()) << o.text;
  EXPECT_EQ(j["processes"], 2);
  EXPECT_EQ(j["threads"], 1);
  EXPECT_GT(j["tokens_per_s"].get<double>(), 0);
  EXPECT_NE(o.text.find("distributed: DistributedType.MULTI_CPU"), std::string::npos) << o.text;
}

// bench_grpo_scaling's response axis: longer responses need more positions.
TEST(PeerScripts, TrlGeneratesLongerResponsesWhenTheModelHasThePositions) {
  Output o = peer("bench_grpo_trl.py", {"--prompts", "2", "--num-generations", "2", "--steps", "1",
                                        "--warmup", "0", "--max-new-tokens", "24", "--max-positions", "32"});
  ASSERT_EQ(o.code, 0) << o.text;
  EXPECT_EQ(last_json(o.text)["max_new_tokens"], 24);
  Output refused = peer("bench_grpo_trl.py", {"--max-new-tokens", "24"});  // 16 positions by default
  EXPECT_EQ(refused.code, 2) << refused.text;
  EXPECT_NE(refused.text.find("exceeds the model's 16 positions (--max-positions)"), std::string::npos)
      << refused.text;
}

TEST(PeerScripts, TrlRefusesRowsThatDoNotSplitOverItsProcesses) {
  Output o = peer("bench_grpo_trl.py", {"--prompts", "3", "--num-generations", "3", "--processes", "2"});
  EXPECT_EQ(o.code, 2) << o.text;
  EXPECT_NE(o.text.find("must divide by --processes (2)"), std::string::npos) << o.text;
}

// The two benchmarks whose peers read the checkpoint RLWB writes: run the
// benchmark itself; it exits 1 when its peer fails.
TEST(PeerScripts, HfGenerateRunsBesideRlwbsOnTheSameCheckpoint) {
  Output o = run({bench("bench_generate"), "--batch", "2", "--prompt", "8", "--new", "4", "--repeats", "1",
                  "--rounds", "1"});
  ASSERT_EQ(o.code, 0) << o.text;
  EXPECT_NE(o.text.find("| HF transformers"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("same greedy tokens (row 0): yes"), std::string::npos) << o.text;
}

TEST(PeerScripts, PytorchEagerTrainStepRunsBesideRlwbsOnTheSameBatch) {
  Output o = run({bench("bench_train_step"), "--batch", "2", "--seq", "16", "--steps", "1", "--rounds", "1"});
  ASSERT_EQ(o.code, 0) << o.text;
  // Each peer at its faster AdamW (fused or foreach), its parts timed apart.
  EXPECT_THAT(o.text, ::testing::ContainsRegex("\\| PyTorch eager \\(AdamW (fused|foreach)\\) \\|"));
  EXPECT_THAT(o.text, ::testing::ContainsRegex("\\| HF Llama \\(AdamW (fused|foreach)\\) \\|"));
  EXPECT_THAT(o.text, ::testing::HasSubstr("torch AdamW"));
  EXPECT_THAT(o.text, ::testing::HasSubstr("torch fwd+bwd"));
}

// The served peer (the benchmark alternates with it step by step) failing
// to start: the benchmark stops with the script's own error, not a hang.
TEST(PeerScripts, TrainStepReportsAPeerThatCannotStart) {
  // The system's python3 has no torch: the script dies on its imports.
  Output o = run({"env", "RLWB_PYTHON=/usr/bin/python3", bench("bench_train_step"), "--batch", "2", "--seq",
                  "16", "--steps", "1", "--rounds", "1"});
  EXPECT_EQ(o.code, 1) << o.text;
  EXPECT_THAT(o.text, ::testing::HasSubstr("reference unavailable"));
  EXPECT_THAT(o.text, ::testing::HasSubstr("ModuleNotFoundError"));
}

}  // namespace
}  // namespace rlwb::bench
