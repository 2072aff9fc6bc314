// A rollout model on a pool of its own takes its weights from an actor
// (core/config/weight_stream_checks.h): every layout or setting the stream
// cannot honour is found before anything starts, each with the key it is
// about and what to write instead.
#include <gmock/gmock.h>

#include "core/validate/validator.h"
#include "tests/core/graph/graph_test_support.h"

namespace rlwb::core {
namespace {

using ::testing::HasSubstr;
using testing::issue_with;

const std::string kGraph = R"(name: streams
pools:
  train: {workers: 2}
  gen: {workers: 1}
models:
  actor:
    role: actor
    pool: train
    parallel: {tp: 2}
    config:
      model: &arch {hidden_size: 32, num_layers: 2, num_heads: 4, num_kv_heads: 2}
      rollout: {temperature: 1.0}
  ref: {role: reference, pool: train, parallel: {dp: 2}, config: {model: *arch}}
  rollout:
    role: rollout
    pool: gen
    parallel: {dp: 1}
    config:
      model: *arch
      rollout: {temperature: 1.0}
      weight_stream: {from: actor, bucket_mb: 4}
task: {name: arithmetic, batch_size: 8, samples_per_prompt: 4, test_size: 10}
trainer: {steps: 2, algorithm: {adv_estimator: grpo}}
nodes:
  - {id: gen, call: rollout.generate, in: [prompts], out: [responses]}
  - {id: update, call: actor.update, in: [responses], out: [metrics]}
)";

// The test catalog with the rollout role.
std::vector<GraphIssue> validate_with(const std::string& from, const std::string& to) {
  MethodCatalog catalog = testing::test_catalog();
  catalog.role_methods["rollout"] = testing::methods({"generate"});
  return testing::validate_text(testing::edited(kGraph, from, to), catalog);
}

TEST(WeightStreamChecks, TheGoodGraphHasNoIssues) {
  auto issues = validate_with("", "");
  std::string all;
  for (const auto& i : issues) all += "\n  " + i.to_string();
  EXPECT_TRUE(issues.empty()) << all;
}

TEST(WeightStreamChecks, TheSourceMustBeAnActorOfThisFile) {
  auto unknown = issue_with(validate_with("from: actor", "from: actr"), "which is no model of this file");
  EXPECT_THAT(unknown.message, HasSubstr("models.rollout.config.weight_stream.from: "));
  EXPECT_EQ(unknown.line, 21);
  EXPECT_THAT(unknown.hint, HasSubstr("actor, ref, rollout"));
  issue_with(validate_with("from: actor", "from: ref"), "weights stream from an actor only");
  issue_with(validate_with("weight_stream: {from: actor, bucket_mb: 4}", "seed: 2"),
             "a rollout model needs the actor its weights come from");
}

TEST(WeightStreamChecks, TheRolloutRunsOnAnotherPoolAndHoldsWholeModels) {
  auto shared =
      issue_with(validate_with("pool: gen", "pool: train"), "a rollout model generates on a pool of its own");
  EXPECT_THAT(shared.message, HasSubstr("models.rollout.pool: "));
  EXPECT_THAT(shared.hint, HasSubstr("parallel.generate"));
  // On any devices: the buckets travel on the host (weight_stream.h).
  for (const char* gen : {"gen: {workers: 1, device: cuda}", "gen: {workers: 1, device: cpu}"}) {
    const auto issues = validate_with("gen: {workers: 1}", gen);
    EXPECT_TRUE(issues.empty()) << gen << ": " << (issues.empty() ? "" : issues.front().to_string());
  }
  issue_with(validate_with("parallel: {dp: 1}", "parallel: {tp: 1, pp: 2}"),
             "rollout model 'rollout' has tp = 1, pp = 2; each of its ranks holds the whole model");
}

TEST(WeightStreamChecks, TheActorTrainsWithoutPipelineStages) {
  auto issue = issue_with(validate_with("parallel: {tp: 2}", "parallel: {pp: 2}"),
                          "trains with pp = 2 pipeline stages; streaming sends tensor-parallel shards only");
  EXPECT_THAT(issue.message, HasSubstr("models.actor.parallel.pp: "));
}

TEST(WeightStreamChecks, BothAreOneNetworkWithOneTokenizerAndTemperature) {
  auto shape =
      issue_with(validate_with("      model: *arch\n", "      model: {hidden_size: 64, num_layers: 2}\n"),
                 "model 'rollout' is not the network of 'actor'");
  EXPECT_THAT(shape.message, HasSubstr("models.rollout.config.model: "));
  EXPECT_THAT(shape.hint, HasSubstr("model: *arch"));
  issue_with(validate_with("      rollout: {temperature: 1.0}\n      weight_stream",
                           "      rollout: {temperature: 0.7}\n      weight_stream"),
             "'rollout' samples at temperature 0.7");
  issue_with(validate_with("      model: *arch\n",
                           "      model: *arch\n      tokenizer: {alphabet: \"0123456789+=\"}\n"),
             "model 'rollout' has another tokenizer than 'actor'");
}

TEST(WeightStreamChecks, AnActorFeedsOneRolloutModel) {
  auto issue =
      issue_with(validate_with("task:", R"(  rollout2:
    role: rollout
    pool: gen2
    config: {model: *arch, weight_stream: {from: actor}}
task:)"),
                 "'actor' streams its weights to 'rollout' already; an actor feeds one rollout model");
  EXPECT_THAT(issue.message, HasSubstr("models.rollout2.config.weight_stream.from: "));
}

TEST(WeightStreamChecks, OnlyARolloutReadsAWeightStreamSection) {
  issue_with(validate_with("config: {model: *arch}", "config: {model: *arch, weight_stream: {from: actor}}"),
             "models.ref.config.weight_stream: unknown key 'weight_stream'");
}

}  // namespace
}  // namespace rlwb::core
