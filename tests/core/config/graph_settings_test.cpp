// Every setting of a graph file is typed and checked before anything starts
// (core/config): one test per rule, each on a good graph changed in one
// place, with the message and the line it must give.
#include <gmock/gmock.h>

#include "core/config/experiment_options.h"
#include "core/validate/validator.h"
#include "tests/core/graph/graph_test_support.h"
#include "tests/test_paths.h"

#include <fstream>
#include <sstream>

namespace rlwb::core {
namespace {

using ::testing::HasSubstr;
using testing::issue_with;
using testing::test_catalog;
using testing::validate_text;

// A valid graph; each test changes one line. Line numbers on the right.
const std::string kGraph = R"(name: settings
pools:
  main: {workers: 2}
models:
  actor:
    role: actor
    pool: main
    parallel: {dp: 2}
    config:
      model: {hidden_size: 32, num_layers: 1, num_heads: 4, num_kv_heads: 2}
      optim: {lr: 2.5e-4, warmup_steps: 3}
      rollout: {temperature: 1.0, max_new_tokens: 4}
      ppo: {mini_batch_size: 16, loss_agg_mode: token-mean, kl_loss_type: low_var_kl}
      micro_batch_size: 8
  ref: {role: reference, pool: main, parallel: {dp: 2}, config: {model: {hidden_size: 32}}}
task: {name: arithmetic, batch_size: 8, samples_per_prompt: 4, test_size: 10}
trainer:
  steps: 2
  algorithm: {adv_estimator: grpo}
  eval:
    every: 1
    score: eval_scores
    nodes:
      - {id: eval_gen, call: actor.generate, in: [prompts], out: [eval_scores]}
nodes:
  - {id: gen, call: actor.generate, in: [prompts], out: [responses]}
  - {id: ref, call: ref.compute_ref_log_prob, in: [responses], out: [ref_log_probs]}
  - {id: update, call: actor.update, in: [responses, ref_log_probs], out: [metrics]}
)";
//  10 model, 11 optim, 12 rollout, 13 ppo, 14 micro_batch_size, 15 ref,
//  16 task, 18 steps, 19 algorithm, 20 eval, 21 every

std::vector<GraphIssue> validate_with(const std::string& from, const std::string& to) {
  return validate_text(testing::edited(kGraph, from, to));
}

std::string all(const std::vector<GraphIssue>& issues) {
  std::string s;
  for (const auto& i : issues) s += "\n  " + i.to_string();
  return s;
}

TEST(GraphSettings, TheGoodGraphHasNoIssues) {
  auto issues = validate_text(kGraph);
  EXPECT_TRUE(issues.empty()) << all(issues);
}

TEST(GraphSettings, AMisspeltOptimizerKeyIsAnErrorListingTheKeys) {
  auto issue = issue_with(validate_with("optim: {lr: 2.5e-4", "optim: {learning_rate: 2.5e-4"),
                          "models.actor.config.optim.learning_rate: unknown key 'learning_rate'");
  EXPECT_EQ(issue.line, 11);
  EXPECT_EQ(issue.severity, Severity::error);
  EXPECT_THAT(issue.hint, HasSubstr("the keys of models.actor.config.optim are: lr, weight_decay, betas"));
}

TEST(GraphSettings, AMisspeltAlgorithmKeySaysDidYouMean) {
  auto issue = issue_with(validate_with("{adv_estimator: grpo}", "{adv_estimater: gae}"),
                          "trainer.algorithm.adv_estimater: unknown key 'adv_estimater'");
  EXPECT_EQ(issue.line, 19);
  EXPECT_THAT(issue.hint, HasSubstr("did you mean 'adv_estimator'?"));
}

TEST(GraphSettings, AMisspeltTaskOrEvalKeyIsAnError) {
  auto task = issue_with(validate_with("test_size: 10}", "test_size: 10, max_operant: 9}"),
                         "unknown key 'max_operant'");
  EXPECT_THAT(task.hint, HasSubstr("did you mean 'max_operand'?"));
  EXPECT_EQ(task.line, 16);
  auto eval = issue_with(validate_with("    every: 1", "    evrey: 1"), "trainer.eval.evrey: unknown key");
  EXPECT_EQ(eval.line, 21);
  EXPECT_THAT(eval.hint, HasSubstr("did you mean 'every'?"));
}

TEST(GraphSettings, AKeyAddedByAnOverrideThatNothingReadsIsAnError) {
  auto exp = load_experiment_text(kGraph, "exp.yaml", {"+profiler.enabled=true"});
  auto issue = issue_with(validate_experiment(exp, test_catalog()), "profiler: unknown key 'profiler'");
  EXPECT_THAT(issue.hint, HasSubstr("the keys of the file are: name, algorithm, seed"));
  EXPECT_THAT(issue.hint, HasSubstr("did you mean 'profile'?"));
}

TEST(GraphSettings, ProfileSettingsNeedNoSectionInTheFileAndAreChecked) {
  auto exp = load_experiment_text(kGraph, "exp.yaml", {"profile.enabled=true", "profile.steps=2"});
  EXPECT_TRUE(validate_experiment(exp, test_catalog()).empty());
  EXPECT_TRUE(config::parse_experiment_options(exp).profile.profiles(2));
  EXPECT_FALSE(config::parse_experiment_options(exp).profile.profiles(1));
  auto typo = load_experiment_text(kGraph, "exp.yaml", {"profile.enabeld=true"});
  auto issue =
      issue_with(validate_experiment(typo, test_catalog()), "profile.enabeld: unknown key 'enabeld'");
  EXPECT_THAT(issue.hint, HasSubstr("did you mean 'enabled'?"));
  auto bad_range = load_experiment_text(kGraph, "exp.yaml", {"profile.enabled=true", "profile.steps=5-2"});
  EXPECT_THAT(issue_with(validate_experiment(bad_range, test_catalog()), "profile.steps").message,
              HasSubstr("the last step is before the first"));
  auto beyond = load_experiment_text(kGraph, "exp.yaml", {"profile.enabled=true", "profile.steps=9-12"});
  EXPECT_THAT(issue_with(validate_experiment(beyond, test_catalog()), "profile.steps").hint,
              HasSubstr("choose steps within 1-2"));
}

TEST(GraphSettings, AMisspeltTaskNameIsOneProblemNotOnePerTaskSetting) {
  auto issues = validate_with("{name: arithmetic,", "{name: arithmatic,");
  issue_with(issues, "unknown task 'arithmatic'");
  for (const auto& issue : issues)
    EXPECT_EQ(issue.message.find("task.test_size: unknown key"), std::string::npos) << issue.to_string();
}

TEST(GraphSettings, AValueOfTheWrongTypeNamesTheKeyTheValueAndTheType) {
  auto issue = issue_with(validate_with("temperature: 1.0", "temperature: hot"),
                          "models.actor.config.rollout.temperature: 'hot' is not a number");
  EXPECT_EQ(issue.line, 12);
  EXPECT_EQ(issue.hint, "write a number, e.g. 1");
}

TEST(GraphSettings, AnUnknownEnumNameListsTheNamesAndSaysDidYouMean) {
  auto mode = issue_with(validate_with("loss_agg_mode: token-mean", "loss_agg_mode: token-meen"),
                         "models.actor.config.ppo.loss_agg_mode: 'token-meen' is not a known name");
  EXPECT_EQ(mode.line, 13);
  EXPECT_THAT(mode.hint, HasSubstr("write one of: token-mean, seq-mean-token-sum, seq-mean-token-mean"));
  EXPECT_THAT(mode.hint, HasSubstr("Did you mean 'token-mean'?"));
  issue_with(validate_with("kl_loss_type: low_var_kl", "kl_loss_type: k4"), "'k4' is not a known name");
  issue_with(validate_with("{adv_estimator: grpo}", "{adv_estimator: grpoo}"),
             "trainer.algorithm.adv_estimator: 'grpoo' is not a known name");
}

TEST(GraphSettings, AValueOutOfRangeSaysWhatIsAllowed) {
  auto micro = issue_with(validate_with("micro_batch_size: 8", "micro_batch_size: -4"),
                          "models.actor.config.micro_batch_size: -4 is out of range");
  EXPECT_EQ(micro.hint, "it must be > 0");
  EXPECT_EQ(micro.line, 14);
  auto ratio = issue_with(validate_with("test_size: 10}", "test_size: 10, teacher_carry_error: 1.5}"),
                          "task.teacher_carry_error: 1.5 is out of range");
  EXPECT_EQ(ratio.hint, "it must be in [0, 1]");
  issue_with(validate_with("  steps: 2", "  steps: 0"), "trainer.steps: 0 is out of range");
  issue_with(validate_with("warmup_steps: 3", "warmup_steps: 2.5"), "2.5 is not an integer");
}

TEST(GraphSettings, HeadsMustDivideTheHiddenSizeAndKvHeadsTheHeads) {
  auto heads =
      issue_with(validate_with("num_heads: 4, num_kv_heads: 2", "num_heads: 5, num_kv_heads: 1"),
                 "models.actor.config.model.num_heads: hidden_size 32 does not divide by num_heads 5");
  EXPECT_EQ(heads.line, 10);
  issue_with(validate_with("num_heads: 4, num_kv_heads: 2", "num_heads: 4, num_kv_heads: 3"),
             "models.actor.config.model.num_kv_heads: num_heads 4 does not divide by num_kv_heads 3");
}

// The 3D-HybridEngine gathers equal shards of the vocabulary.
TEST(GraphSettings, AGenerationLayoutNeedsAVocabularyThatDividesByTheTrainingTp) {
  const std::string model = "model: {hidden_size: 32, num_layers: 1, num_heads: 4, num_kv_heads: 2}";
  auto issues = validate_with("parallel: {dp: 2}\n    config:\n      " + model,
                              "parallel: {tp: 2, dp: 1, generate: {tp: 1}}\n    config:\n      "
                              "model: {hidden_size: 32, num_layers: 1, num_heads: 4, num_kv_heads: 2, "
                              "vocab_size: 19}");
  GraphIssue issue = issue_with(issues, "vocab_size = 19 does not divide by tp = 2");
  EXPECT_EQ(issue.line, 10);
  EXPECT_THAT(issue.hint, HasSubstr("vocab_size: 20"));
}

// With stages the vocabulary is split over the pp * tp ranks of a replica.
TEST(GraphSettings, AGenerationLayoutWithFewerStagesNeedsAVocabularyThatDividesByPpTimesTp) {
  const std::string model = "model: {hidden_size: 32, num_layers: 1, num_heads: 4, num_kv_heads: 2}";
  auto issues = validate_with("parallel: {dp: 2}\n    config:\n      " + model,
                              "parallel: {pp: 2, dp: 1, generate: {pp: 1}}\n    config:\n      "
                              "model: {hidden_size: 32, num_layers: 2, num_heads: 4, num_kv_heads: 2, "
                              "vocab_size: 19}");
  GraphIssue issue = issue_with(issues, "vocab_size = 19 does not divide by pp * tp = 2");
  EXPECT_EQ(issue.line, 10);
  EXPECT_THAT(issue.hint, HasSubstr("vocab_size: 20"));
}

TEST(GraphSettings, AStepsRowsMustDivideOverTheDataParallelRanks) {
  auto issue = issue_with(
      validate_with("batch_size: 8, samples_per_prompt: 4", "batch_size: 3, samples_per_prompt: 3"),
      "task.batch_size: a step's batch_size x samples_per_prompt = 9 rows do not divide over "
      "model 'actor''s 2 data-parallel ranks");
  EXPECT_EQ(issue.line, 16);
}

TEST(GraphSettings, TheMiniBatchMustFitTheBatchAndDivideItAndTheRanks) {
  issue_with(validate_with("mini_batch_size: 16", "mini_batch_size: 64"),
             "ppo.mini_batch_size: 64 rows is more than the step's batch of 32");
  issue_with(validate_with("mini_batch_size: 16", "mini_batch_size: 12"),
             "ppo.mini_batch_size: the step's 32 rows do not divide into mini-batches of 12");
  issue_with(validate_with("mini_batch_size: 16", "mini_batch_size: 1"),
             "ppo.mini_batch_size: 1 rows do not divide over the 2 data-parallel ranks");
}

TEST(GraphSettings, AnEvaluationNeedsHeldOutRowsThatDivideOverTheRanks) {
  issue_with(validate_with("test_size: 10}", "test_size: 0}"),
             "trainer.eval: task 'arithmetic' has no held-out rows");
  issue_with(
      validate_with("test_size: 10}", "test_size: 9}"),
      "task.test_size: the evaluation's 9 rows do not divide over model 'actor''s 2 data-parallel ranks");
}

TEST(GraphSettings, AModelNeedsAShapeOrACheckpointButNotBoth) {
  issue_with(validate_with("config: {model: {hidden_size: 32}}", "config: {seed: 3}"),
             "models.ref.config: needs 'model: {...}'");
  issue_with(validate_with("config: {model: {hidden_size: 32}}",
                           "config: {model: {hidden_size: 32}, checkpoint: d}"),
             "models.ref.config.checkpoint: both 'model' and 'checkpoint' are set");
}

TEST(GraphSettings, ASectionTheRoleDoesNotReadIsAnUnknownKey) {
  auto issue = issue_with(validate_with("config: {model: {hidden_size: 32}}",
                                        "config: {model: {hidden_size: 32}, ppo: {epochs: 2}}"),
                          "models.ref.config.ppo: unknown key 'ppo'");
  EXPECT_EQ(issue.line, 15);
}

TEST(GraphSettings, UnknownKeysOfPoolsModelsAndNodesAreErrors) {
  issue_with(validate_with("main: {workers: 2}", "main: {workers: 2, gpus: 1}"),
             "pools.main.gpus: unknown key 'gpus'");
  issue_with(validate_with("parallel: {dp: 2}\n    config:", "parallel: {dp: 2, sp: 1}\n    config:"),
             "models.actor.parallel.sp: unknown key 'sp'");
  issue_with(
      validate_with("parallel: {dp: 2}\n    config:", "parallel: {dp: 2, generate: {tpp: 1}}\n    config:"),
      "models.actor.parallel.generate.tpp: unknown key 'tpp'");
  auto node =
      issue_with(validate_with("in: [prompts], out: [responses]}", "ins: [prompts], out: [responses]}"),
                 "nodes.0.ins: unknown key 'ins'");
  EXPECT_THAT(node.hint, HasSubstr("did you mean 'in'?"));
}

TEST(GraphSettings, TheWorkersParseThrowsEveryProblemAtOnce) {
  nlohmann::json config = {
      {"model", {{"hidden_size", 28}}}, {"rollout", {{"temperature", "hot"}}}, {"optimm", {}}};
  try {
    config::parse_model_options("actor", config, "models.actor.config");
    FAIL() << "expected a ConfigError";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.problems().size(), 3u) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("models.actor.config.rollout.temperature: 'hot' is not a number"));
    EXPECT_THAT(e.what(), HasSubstr("models.actor.config.optimm: unknown key 'optimm'"));
    EXPECT_THAT(e.what(), HasSubstr("head size hidden_size/num_heads = 7 is odd"));
  }
}

TEST(GraphSettings, AnAbsentSettingHasItsOneDocumentedDefault) {
  auto o = config::parse_model_options("actor", {{"model", nlohmann::json::object()}}, "m");
  EXPECT_EQ(o.micro_batch_size, 64);
  EXPECT_EQ(o.ppo.mini_batch_size, 0);
  EXPECT_EQ(o.ppo.loss_agg_mode, algorithms::LossAggMode::kTokenMean);
  EXPECT_EQ(o.ppo.kl_loss_type, algorithms::KlEstimator::kK3);
  EXPECT_EQ(o.ppo.clip_ratio_c, 3.0);
  EXPECT_DOUBLE_EQ(o.rollout.temperature, 1.0);
  EXPECT_EQ(o.model->resolved_kv_heads(), 4);
  EXPECT_FALSE(o.sft_optim);
  auto off = config::parse_model_options(
      "actor", {{"model", nlohmann::json::object()}, {"ppo", {{"clip_ratio_c", nullptr}}}}, "m");
  EXPECT_FALSE(off.ppo.clip_ratio_c) << "null turns the dual clip off";
}

TEST(GraphSettings, TheSettingsReferenceInDocsIsTheGeneratedOne) {
  std::ifstream in(std::string(rlwb::testing::kSourceDir) + "/docs/settings.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string generated = config::settings_reference();
  EXPECT_THAT(generated,
              HasSubstr("| `models.<name>.config.optim.lr` | number > 0 | `0.001` | peak learning rate |"));
  EXPECT_THAT(text.str(), HasSubstr(generated))
      << "docs/settings.md is out of date: regenerate it with `rlwb settings > docs/settings.md`";
}

}  // namespace
}  // namespace rlwb::core
