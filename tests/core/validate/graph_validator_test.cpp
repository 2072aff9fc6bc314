// The validator: every problem in a graph, each with file, line, node and a
// hint. One test per kind of problem, on small inline graphs.
#include <gmock/gmock.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/core/graph/graph_test_support.h"
#include "core/validate/validator.h"

namespace rlwb::core {
namespace {

using testing::fixture_path;
using ::testing::HasSubstr;
using testing::issue_with;
using testing::test_catalog;
using testing::validate_text;

// A valid graph; the tests change one line each. Line numbers on the right.
const std::string kSmall = R"(name: small
pools:
  main: {workers: 2}
models:
  actor: {role: actor, config: {model: {}}, pool: main, parallel: {dp: 2}}
  ref: {role: reference, config: {model: {}}, pool: main, parallel: {dp: 2}}
rewards:
  math: {type: math}
task: {name: arithmetic}
trainer: {steps: 2}
nodes:
  - {id: gen, call: actor.generate, in: [prompts], out: [responses]}
  - {id: ref, call: ref.compute_ref_log_prob, in: [responses], out: [ref_log_probs]}
  - {id: score, call: math.score, in: [responses, answers], out: [scores]}
  - {id: update, call: actor.update, in: [responses, ref_log_probs, scores], out: [metrics]}
)";
//   1 name, 2 pools, 3 main, 4 models, 5 actor, 6 ref, 7 rewards, 8 math,
//   9 task, 10 trainer, 11 nodes, 12 gen, 13 ref, 14 score, 15 update

std::string edit(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' is not in the graph";
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

std::vector<GraphIssue> validate_small(const std::string& from, const std::string& to) {
  return validate_text(edit(kSmall, from, to));
}

TEST(GraphValidator, GoodGraphsHaveNoIssues) {
  EXPECT_TRUE(validate_text(kSmall).empty());
  auto issues = validate_experiment(load_experiment_file(fixture_path("grpo_valid.yaml")), test_catalog());
  for (const auto& issue : issues) ADD_FAILURE() << issue.to_string();
}

TEST(GraphValidator, UnknownTargetListsModelsAndRewards) {
  auto issues = validate_small("call: math.score", "call: maths.score");
  GraphIssue issue = issue_with(issues, "calls 'maths', which is not a model, a reward or 'builtin'");
  EXPECT_EQ(issue.file, "exp.yaml");
  EXPECT_EQ(issue.line, 14);
  EXPECT_EQ(issue.node, "score");
  EXPECT_THAT(issue.hint, HasSubstr("models: actor, ref; rewards: math"));
  EXPECT_THAT(issue.hint, HasSubstr("did you mean 'math'?"));
}

TEST(GraphValidator, UnknownBuiltinListsTheBuiltins) {
  auto issues = validate_small("call: math.score", "call: builtin.grpo_advantages");
  GraphIssue issue = issue_with(issues, "calls builtin 'grpo_advantages' that the controller does not have");
  EXPECT_EQ(issue.line, 14);
  EXPECT_THAT(issue.hint, HasSubstr("gae_advantage, grpo_advantage, kl_penalty"));
  EXPECT_THAT(issue.hint, HasSubstr("did you mean 'grpo_advantage'?"));
}

TEST(GraphValidator, UnknownMethodListsTheRolesMethods) {
  auto issues = validate_small("call: actor.generate", "call: actor.generat");
  GraphIssue issue = issue_with(issues, "model 'actor' (role 'actor') has no method 'generat'");
  EXPECT_EQ(issue.line, 12);
  EXPECT_EQ(issue.node, "gen");
  EXPECT_THAT(issue.hint, HasSubstr("has: compute_log_prob, generate, update."));
  EXPECT_THAT(issue.hint, HasSubstr("did you mean 'generate'?"));
}

TEST(GraphValidator, UnknownRewardMethodListsTheTypesMethods) {
  auto issues = validate_small("call: math.score", "call: math.grade");
  GraphIssue issue = issue_with(issues, "reward 'math' (type 'math') has no method 'grade'");
  EXPECT_THAT(issue.hint, HasSubstr("has: score"));
}

TEST(GraphValidator, CallWithoutMethodIsAnIssue) {
  auto issues = validate_small("call: math.score", "call: score");
  EXPECT_THAT(issue_with(issues, "call 'score' is not <target>.<method>").hint,
              HasSubstr("<model>.<method>"));
}

TEST(GraphValidator, ModelWithUnknownRoleListsTheRoles) {
  auto issues = validate_small("actor: {role: actor,", "actor: {role: actr,");
  ASSERT_EQ(issues.size(), 1u);  // the calls of the model are not reported again
  GraphIssue issue = issue_with(issues, "model 'actor' has role 'actr' that no worker implements");
  EXPECT_EQ(issue.line, 5);
  EXPECT_EQ(issue.node, "");
  EXPECT_THAT(issue.hint, HasSubstr("actor, critic, reference, reward_model"));
  EXPECT_THAT(issue.hint, HasSubstr("did you mean 'actor'?"));
}

TEST(GraphValidator, ModelWithoutRoleIsAnIssue) {
  auto issues = validate_small("actor: {role: actor, ", "actor: {");
  EXPECT_EQ(issue_with(issues, "model 'actor' has no role").line, 5);
}

TEST(GraphValidator, ModelInUnknownPoolListsThePools) {
  auto issues =
      validate_small("pool: main, parallel: {dp: 2}}\n  ref", "pool: mian, parallel: {dp: 2}}\n  ref");
  GraphIssue issue = issue_with(issues, "model 'actor' is in pool 'mian' that is not defined");
  EXPECT_EQ(issue.line, 5);
  EXPECT_THAT(issue.hint, HasSubstr("pools: main. did you mean 'main'?"));
}

TEST(GraphValidator, UnknownRewardTypeListsTheTypes) {
  auto issues = validate_small("{type: math}", "{type: mth}");
  GraphIssue issue = issue_with(issues, "reward 'math' has type 'mth' that no reward module implements");
  EXPECT_EQ(issue.line, 8);
  EXPECT_THAT(issue.hint, HasSubstr("code, math"));
}

TEST(GraphValidator, RewardNamedLikeAModelIsAnIssue) {
  auto issues = validate_small("  math: {type: math}", "  math: {type: math}\n  actor: {type: code}");
  GraphIssue issue = issue_with(issues, "the name 'actor' is used by a model or builtins too");
  EXPECT_EQ(issue.line, 9);
}

TEST(GraphValidator, MissingInputColumnNamesTheNodeThatWritesASimilarName) {
  auto issues =
      validate_small("in: [responses, ref_log_probs, scores]", "in: [responses, ref_logprobs, scores]");
  ASSERT_EQ(issues.size(), 1u);
  GraphIssue issue = issue_with(issues, "reads column 'ref_logprobs' that no node writes");
  EXPECT_EQ(issue.line, 15);
  EXPECT_EQ(issue.node, "update");
  EXPECT_THAT(issue.hint, HasSubstr("did you mean 'ref_log_probs' (written by node 'ref')?"));
  EXPECT_EQ(issue.to_string(),
            "exp.yaml:15: node 'update': reads column 'ref_logprobs' that no node writes "
            "(hint: did you mean 'ref_log_probs' (written by node 'ref')?)");
}

TEST(GraphValidator, MissingInputColumnWithNothingSimilarSaysWhatTheTaskProvides) {
  auto issues = validate_small("in: [prompts]", "in: [questions]");
  GraphIssue issue = issue_with(issues, "reads column 'questions' that no node writes");
  EXPECT_EQ(issue.node, "gen");
  EXPECT_THAT(issue.hint, HasSubstr("the task 'arithmetic' provides: answers, prompts"));
}

TEST(GraphValidator, ColumnWrittenByTwoNodesIsAnIssueAtTheSecond) {
  auto issues =
      validate_text(kSmall + "  - {id: score2, call: math.score, in: [responses], out: [scores]}\n");
  GraphIssue issue = issue_with(issues, "writes column 'scores' that node 'score' (line 14) writes too");
  EXPECT_EQ(issue.line, 16);
  EXPECT_EQ(issue.node, "score2");
  EXPECT_THAT(issue.hint, HasSubstr("one writer"));
}

TEST(GraphValidator, NodeWritingATaskColumnIsAnIssue) {
  auto issues =
      validate_text(kSmall + "  - {id: fmt, call: builtin.kl_penalty, in: [responses], out: [answers]}\n");
  GraphIssue issue =
      issue_with(issues, "writes column 'answers' that the task 'arithmetic' already provides");
  EXPECT_EQ(issue.line, 16);
  EXPECT_EQ(issue.node, "fmt");
}

TEST(GraphValidator, CycleNamesItsNodesAndColumns) {
  auto issues = validate_text(kSmall +
                              "  - {id: a, call: builtin.kl_penalty, in: [prompts, y], out: [x]}\n"
                              "  - {id: b, call: builtin.gae_advantage, in: [x], out: [z]}\n"
                              "  - {id: c, call: builtin.grpo_advantage, in: [z], out: [y]}\n");
  ASSERT_EQ(issues.size(), 1u);
  GraphIssue issue =
      issue_with(issues, "is in a cycle 'a' -> 'b' -> 'c' -> 'a' (through columns 'x', 'z', 'y')");
  EXPECT_EQ(issue.line, 16);
  EXPECT_EQ(issue.node, "a");
  EXPECT_THAT(issue.hint, HasSubstr("wait on each other"));
}

TEST(GraphValidator, NodeReadingItsOwnOutputIsACycle) {
  auto issues =
      validate_small("in: [responses, answers], out: [scores]", "in: [responses, scores], out: [scores]");
  GraphIssue issue = issue_with(issues, "reads column 'scores' that it writes itself");
  EXPECT_EQ(issue.line, 14);
  EXPECT_EQ(issue.node, "score");
}

TEST(GraphValidator, DuplicateNodeIdsAreAnIssueAtTheSecond) {
  auto issues = validate_small("{id: score,", "{id: ref,");
  GraphIssue issue = issue_with(issues, "the id is used twice (first on line 13)");
  EXPECT_EQ(issue.line, 14);
  EXPECT_EQ(issue.node, "ref");
}

TEST(GraphValidator, EmptyNodeIdIsAnIssue) {
  auto issues = validate_small("{id: score, call", "{call");
  GraphIssue issue = issue_with(issues, "node 3 (calling 'math.score') has no id");
  EXPECT_EQ(issue.line, 14);
}

TEST(GraphValidator, CudaPoolsLargerThanTheMachineAreAnIssue) {
  auto issues = validate_small("  main: {workers: 2}\n",
                               "  main: {workers: 2}\n  gpus: {workers: 3, device: cuda}\n  more: "
                               "{workers: 1, device: cuda}\n");
  GraphIssue issue =
      issue_with(issues, "the cuda pools need 4 workers (gpus: 3, more: 1) but this machine has 2 GPUs");
  EXPECT_EQ(issue.line, 4);
  EXPECT_THAT(issue.hint, HasSubstr("lower workers"));
}

TEST(GraphValidator, CpuPoolsLargerThanTheMachineAreAnIssue) {
  auto issues = validate_small("  main: {workers: 2}\n", "  main: {workers: 2}\n  big: {workers: 7}\n");
  EXPECT_EQ(issue_with(issues, "the cpu pools need 9 workers (big: 7, main: 2) but this machine has 8").line,
            4);
}

TEST(GraphValidator, PoolWithoutWorkersOrWithAnUnknownDeviceIsAnIssue) {
  auto issues =
      validate_small("  main: {workers: 2}\n", "  main: {workers: 2}\n  odd: {workers: 0, device: gpu}\n");
  EXPECT_EQ(issue_with(issues, "pool 'odd' has 0 workers").line, 4);
  EXPECT_THAT(issue_with(issues, "pool 'odd' has device 'gpu'").hint, HasSubstr("device: cuda"));
}

TEST(GraphValidator, PoolWithFewerThanOneThreadPerWorkerIsAnIssue) {
  auto issues = validate_small("  main: {workers: 2}\n", "  main: {workers: 2, threads: 0}\n");
  GraphIssue issue = issue_with(issues, "pool 'main' has 0 threads per worker");
  EXPECT_EQ(issue.line, 3);
  EXPECT_THAT(issue.hint, HasSubstr("threads: 1 or more"));
  EXPECT_TRUE(validate_small("  main: {workers: 2}\n", "  main: {workers: 2, threads: 2}\n").empty());
}

TEST(GraphValidator, ParallelSizeBelowOneIsAnIssue) {
  auto issues = validate_small("parallel: {dp: 2}}\n  ref", "parallel: {dp: 2, tp: 0}}\n  ref");
  GraphIssue issue = issue_with(issues, "model 'actor' has parallel tp = 0");
  EXPECT_EQ(issue.line, 5);
  EXPECT_THAT(issue.hint, HasSubstr("1 or more"));
}

TEST(GraphValidator, ParallelSizesThatDoNotFillThePoolAreAnIssue) {
  auto issues = validate_small("parallel: {dp: 2}}\n  ref", "parallel: {dp: 2, tp: 2}}\n  ref");
  GraphIssue issue =
      issue_with(issues, "model 'actor' has dp*tp*pp = 2*2*1 = 4 ranks but pool 'main' has 2 workers");
  EXPECT_EQ(issue.line, 5);
  EXPECT_THAT(issue.hint, HasSubstr("set dp: 1, or set pool 'main' workers: 4"));
}

// The 3D-HybridEngine's generation layout: each generation shard a union
// of training shards, only on a role that generates, and a generate.dp
// that agrees -- refused before anything starts; on a CPU or a cuda pool.
TEST(GraphValidator, AGenerationLayoutTheEngineCannotRunIsAnIssue) {
  const std::string actor_was = "pool: main, parallel: {dp: 2}}\n  ref";
  auto issues = validate_small(actor_was, "pool: main, parallel: {dp: 1, tp: 2, generate: {tp: 3}}}\n  ref");
  GraphIssue not_dividing =
      issue_with(issues, "model 'actor' generates with tp = 3, which does not divide its training tp = 2");
  EXPECT_EQ(not_dividing.line, 5);
  EXPECT_THAT(not_dividing.hint, HasSubstr("(1, 2)"));

  issues =
      validate_small(actor_was, "pool: main, parallel: {dp: 1, tp: 2, generate: {tp: 1, dp: 4}}}\n  ref");
  EXPECT_THAT(issue_with(issues, "model 'actor' has generate.dp = 4").hint, HasSubstr("set generate.dp: 2"));

  issues = validate_small("ref: {role: reference, config: {model: {}}, pool: main, parallel: {dp: 2}}",
                          "ref: {role: reference, config: {model: {}}, pool: main, parallel: {dp: 2, "
                          "generate: {tp: 1}}}");
  EXPECT_EQ(issue_with(issues, "its role 'reference' does not generate").line, 6);

  // What the engine runs: no issue about the layout, on either device.
  for (const char* pool : {"  main: {workers: 2}\n", "  main: {workers: 2, device: cuda}\n"}) {
    issues = validate_text(edit(edit(kSmall, "  main: {workers: 2}\n", pool), actor_was,
                                "pool: main, parallel: {dp: 1, tp: 2, generate: {tp: 1, dp: 2}}}\n  ref"));
    for (const auto& issue : issues)
      EXPECT_EQ(issue.message.find("generat"), std::string::npos) << pool << issue.to_string();
  }
}

// What the model roles cannot split is refused before anything starts.
TEST(GraphValidator, ATensorParallelSizeThatDoesNotDivideTheHeadsIsAnIssue) {
  auto issues = validate_small("actor: {role: actor, config: {model: {}}, pool: main, parallel: {dp: 2}}",
                               "actor: {role: actor, config: {model: {num_heads: 4, num_kv_heads: 1}}, pool: "
                               "main, parallel: {tp: 2}}");
  GraphIssue issue = issue_with(
      issues, "model 'actor' has tp = 2, which does not divide models.actor.config.model.num_kv_heads = 1");
  EXPECT_EQ(issue.line, 5);
  EXPECT_THAT(issue.hint, HasSubstr("num_heads (4), num_kv_heads (1)"));
  EXPECT_TRUE(
      validate_small("actor: {role: actor, config: {model: {}}, pool: main, parallel: {dp: 2}}",
                     "actor: {role: actor, config: {model: {num_heads: 4}}, pool: main, parallel: {tp: 2}}")
          .empty());
}

TEST(GraphValidator, ATensorParallelSizeThatDoesNotDivideACheckpointsHeadsIsAnIssue) {
  const auto dir = std::filesystem::temp_directory_path() / ("rlwb-tp-ckpt-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json")
      << R"({"num_attention_heads": 4, "num_key_value_heads": 1, "intermediate_size": 96})";
  auto issues = validate_small(
      "actor: {role: actor, config: {model: {}}, pool: main, parallel: {dp: 2}}",
      "actor: {role: actor, config: {checkpoint: " + dir.string() + "}, pool: main, parallel: {tp: 2}}");
  GraphIssue issue =
      issue_with(issues, "which does not divide " + dir.string() + "/config.json: num_key_value_heads = 1");
  EXPECT_THAT(issue.hint,
              HasSubstr("num_attention_heads (4), num_key_value_heads (1) and intermediate_size (96)"));
  std::filesystem::remove_all(dir);
}

TEST(GraphValidator, PipelineStagesAreAcceptedUpToOnePerLayer) {
  // Two stages over the default model's two layers: valid.
  EXPECT_TRUE(validate_small("parallel: {dp: 2}}\n  ref", "parallel: {pp: 2}}\n  ref").empty());
  // Four stages over two layers cannot give each stage a layer.
  auto issues = validate_text(
      edit(edit(kSmall, "main: {workers: 2}", "main: {workers: 4}"),
           "actor: {role: actor, config: {model: {}}, pool: main, parallel: {dp: 2}}",
           "actor: {role: actor, config: {model: {num_layers: 2}}, pool: main, parallel: {pp: 4}}"));
  GraphIssue issue = issue_with(
      issues, "model 'actor' has pp = 4 pipeline stages but models.actor.config.model.num_layers = 2 layers");
  EXPECT_EQ(issue.line, 5);
  EXPECT_THAT(issue.hint, HasSubstr("choose pp <= 2"));
}

TEST(GraphValidator, FewerGenerationStagesGenerateAtAnyTpDividingTheTrainingOneOverLayersThatDivide) {
  const std::string four_workers =
      edit(edit(kSmall, "main: {workers: 2}", "main: {workers: 4}"),
           "pool: main, parallel: {dp: 2}}\nrewards", "pool: main, parallel: {dp: 4}}\nrewards");
  // Keeping the stages, fewer stages at tp 1, fewer stages with the tp ranks: valid.
  EXPECT_TRUE(validate_text(edit(four_workers, "parallel: {dp: 2}}\n  ref",
                                 "parallel: {pp: 2, tp: 2, generate: {tp: 1}}}\n  ref"))
                  .empty());
  EXPECT_TRUE(validate_text(edit(four_workers, "parallel: {dp: 2}}\n  ref",
                                 "parallel: {pp: 2, tp: 2, generate: {pp: 1, tp: 1}}}\n  ref"))
                  .empty());
  EXPECT_TRUE(validate_text(edit(four_workers, "parallel: {dp: 2}}\n  ref",
                                 "parallel: {pp: 2, tp: 2, generate: {pp: 1, tp: 2}}}\n  ref"))
                  .empty());
  // Fewer stages over layers that do not divide by the training stages.
  GraphIssue issue = issue_with(
      validate_small("actor: {role: actor, config: {model: {}}, pool: main, parallel: {dp: 2}}",
                     "actor: {role: actor, config: {model: {num_layers: 3}}, pool: main, parallel: {pp: 2, "
                     "generate: {pp: 1}}}"),
      "model 'actor' generates with 1 pipeline stages of its 2 training stages, but its 3 layers do not "
      "divide by pp = 2");
  EXPECT_THAT(issue.hint, HasSubstr("choose a pp that divides the layers"));
}

TEST(GraphValidator, TrainerStepsBelowOneIsAnIssue) {
  auto issues = validate_small("steps: 2", "steps: 0");
  GraphIssue issue = issue_with(issues, "trainer.steps: 0 is out of range");
  EXPECT_EQ(issue.line, 10);
  EXPECT_THAT(issue.hint, HasSubstr("it must be > 0"));
}

TEST(GraphValidator, UnknownTaskListsTheTasks) {
  auto issues = validate_small("{name: arithmetic}", "{name: arithmatic}");
  GraphIssue issue = issue_with(issues, "unknown task 'arithmatic'");
  EXPECT_EQ(issue.line, 9);
  EXPECT_THAT(issue.hint, HasSubstr("did you mean 'arithmetic'?"));
}

TEST(GraphValidator, GraphWithoutNodesIsAnIssue) {
  auto issues = validate_text("task: {name: arithmetic}\nnodes: []\n");
  EXPECT_EQ(issue_with(issues, "the experiment has no nodes").line, 2);
}

TEST(GraphValidator, LayoutForAnUnknownNodeIsOnlyAWarning) {
  auto issues = validate_text(kSmall + "layout:\n  gen: {x: 1, y: 2}\n  gne: {x: 5, y: 5}\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].severity, Severity::warning);
  EXPECT_EQ(issues[0].line, 18);
  EXPECT_EQ(issues[0].node, "gne");
  EXPECT_THAT(issues[0].hint, HasSubstr("did you mean 'gen'?"));
  EXPECT_THAT(issues[0].to_string(), HasSubstr("exp.yaml:18: warning: node 'gne':"));
  EXPECT_FALSE(has_errors(issues));
}

TEST(GraphValidator, KeysThatNothingReadsAreErrorsWithADidYouMean) {
  auto issues = validate_text(edit(kSmall, "out: [metrics]}", "out: [metrics], ins: [x]}") + "layuot: {}\n");
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues[0].line, 15);
  EXPECT_EQ(issues[0].node, "update");
  EXPECT_EQ(issues[0].message, "nodes.3.ins: unknown key 'ins'");
  EXPECT_THAT(issues[0].hint, HasSubstr("did you mean 'in'?"));
  EXPECT_EQ(issues[1].line, 16);
  EXPECT_THAT(issues[1].hint, HasSubstr("did you mean 'layout'?"));
  EXPECT_TRUE(has_errors(issues)) << "a typo must not run silently with the default";
}

TEST(GraphValidator, ReportsEveryProblemInFileOrder) {
  std::string text = edit(kSmall, "steps: 2", "steps: 0");
  text = edit(text, "call: actor.generate", "call: actor.generat");
  text = edit(text, "{type: math}", "{type: mth}");
  text = edit(text, "[responses, ref_log_probs, scores]", "[responses, ref_logprobs, scores]");
  auto issues = validate_text(text);
  std::vector<int> lines;
  for (const auto& issue : issues) lines.push_back(issue.line);
  EXPECT_EQ(lines, (std::vector<int>{8, 10, 12, 15}));
}

TEST(GraphValidator, IssuesOfAValueSetByAnOverridePointAtItsKey) {
  auto issues =
      validate_experiment(load_experiment_text(kSmall, "exp.yaml", {"trainer.steps=0"}), test_catalog());
  EXPECT_EQ(issue_with(issues, "trainer.steps: 0 is out of range").line, 10);
}

TEST(GraphValidator, NodesEditedAfterLoadingUseTheirOwnLines) {
  Experiment exp = load_experiment_text(kSmall, "exp.yaml");
  exp.nodes.erase(exp.nodes.begin());  // the GUI deleted 'gen'; `lines` is stale now
  auto issues = validate_experiment(exp, test_catalog());
  ASSERT_EQ(issues.size(), 3u);  // ref, score and update read 'responses'
  EXPECT_THAT(issues[0].message, HasSubstr("reads column 'responses' that no node writes"));
  EXPECT_EQ(issues[0].node, "ref");
  EXPECT_EQ(issues[0].line, 13);
  EXPECT_EQ(issues[2].line, 15);
}

// kSmall with a warm start and an eval phase. Lines on the right.
const std::string kPhases = R"(name: phases
pools:
  main: {workers: 2}
models:
  actor: {role: actor, config: {model: {}}, pool: main, parallel: {dp: 2}}
  ref: {role: reference, config: {model: {}}, pool: main, parallel: {dp: 2}}
rewards:
  math: {type: math}
task: {name: arithmetic}
trainer:
  steps: 2
  warm_start:
    steps: 5
    nodes:
      - {id: sft, call: actor.update, in: [prompts, answers], out: []}
    sync: {from: actor, to: [ref]}
  eval:
    score: eval_scores
    nodes:
      - {id: eval_gen, call: actor.generate, in: [prompts], out: [eval_responses]}
      - {id: eval_score, call: math.score, in: [eval_responses, answers], out: [eval_scores]}
  save: [actor]
nodes:
  - {id: gen, call: actor.generate, in: [prompts], out: [responses]}
)";
//  10 trainer, 12 warm_start, 15 sft, 16 sync, 17 eval, 18 score, 20 eval_gen,
//  21 eval_score, 22 save

std::vector<GraphIssue> validate_phases(const std::string& from, const std::string& to) {
  return validate_text(edit(kPhases, from, to));
}

TEST(GraphValidator, PhaseNodesAreCheckedLikeGraphNodesBeforeAnythingStarts) {
  EXPECT_TRUE(validate_text(kPhases).empty());
  // A typo in an eval node's method: found with its line and the phase named.
  auto issues = validate_phases("call: actor.generate, in: [prompts], out: [eval_responses]",
                                "call: actor.genrate, in: [prompts], out: [eval_responses]");
  GraphIssue issue = issue_with(issues, "has no method 'genrate'");
  EXPECT_EQ(issue.line, 20);
  EXPECT_EQ(issue.node, "eval_gen");
  EXPECT_EQ(issue.phase, "eval");  // so the editor does not mark a graph node of that id
  EXPECT_THAT(issue.to_string(), HasSubstr("node 'eval_gen': trainer.eval: model 'actor'"));
  EXPECT_EQ(issue.message.find("trainer."), std::string::npos) << "the phase is a field, not a prefix";
  EXPECT_THAT(issue.hint, HasSubstr("did you mean 'generate'"));
  // A warm-start node reading a column nobody provides.
  issues = validate_phases("in: [prompts, answers], out: []", "in: [prompts, answer], out: []");
  issue = issue_with(issues, "reads column 'answer' that no node writes");
  EXPECT_EQ(issue.line, 15);
  EXPECT_EQ(issue.phase, "warm_start");
  EXPECT_THAT(issue.to_string(), HasSubstr("trainer.warm_start: reads column 'answer'"));
  // Phase columns are their own: an eval node may not read a step's column.
  issues = validate_phases("in: [eval_responses, answers]", "in: [responses, answers]");
  EXPECT_EQ(issue_with(issues, "reads column 'responses' that no node writes").node, "eval_score");
}

TEST(GraphValidator, PhaseKeysMustNameModelsAndColumnsThatExist) {
  auto issues = validate_phases("sync: {from: actor, to: [ref]}", "sync: {from: actr, to: [ref, critic]}");
  GraphIssue from = issue_with(issues, "trainer.warm_start.sync.from names model 'actr'");
  EXPECT_EQ(from.line, 16);
  EXPECT_THAT(from.hint, HasSubstr("did you mean 'actor'"));
  issue_with(issues, "trainer.warm_start.sync.to names model 'critic'");
  issues = validate_phases("score: eval_scores", "score: eval_score");
  GraphIssue score =
      issue_with(issues, "trainer.eval.score names column 'eval_score', which no eval node writes");
  EXPECT_EQ(score.line, 18);
  EXPECT_EQ(score.phase, "");  // a trainer key, not a phase's node
  EXPECT_THAT(score.hint, HasSubstr("eval_responses, eval_scores"));
  issues = validate_phases("save: [actor]", "save: [actor, reward]");
  EXPECT_EQ(issue_with(issues, "trainer.save names model 'reward'").line, 22);
  issues = validate_phases("    sync: {from: actor, to: [ref]}\n", "    sync: {to: [ref]}\n");
  issue_with(issues, "trainer.warm_start.sync has no 'from'");
  EXPECT_EQ(issues.size(), 1u) << "one missing key, one problem";
  issues = validate_phases("  save: [actor]\n", "  save: [actor]\n  token_masks: [response]\n");
  EXPECT_THAT(issue_with(issues, "trainer.token_masks names column 'response'").hint,
              HasSubstr("did you mean 'responses'"));
  issues = validate_phases("  save: [actor]\n", "  save: [actor]\n  token_masks: responses\n");
  issue_with(issues, "trainer.token_masks should be a list of column names");
}

// Named ports: a catalog whose methods declare them, and a small graph
// binding them. Line numbers on the right.
MethodCatalog port_catalog() {
  MethodCatalog catalog = test_catalog();
  catalog.role_methods["actor"]["generate"] = call_ports(
      {required_port("prompts", "one prompt per row")},
      {out_port("responses", "[B,R]"), out_port("response_mask", "[B,R]"), out_port("response_text", "")});
  catalog.reward_methods["math"]["score"] = call_ports(
      {required_port("response_text", "the text"), required_port("ground_truth", "the reference answer"),
       required_port("response_mask", "[B,R]")},
      {out_port("token_level_scores", "[B,R]"), out_port("reward_details", "")});
  CallPorts add = call_ports({}, {out_port("sum", "")});
  add.any_in = true;
  catalog.builtins["add"] = add;
  return catalog;
}

const std::string kPorts = R"(name: ports
pools:
  main: {workers: 2}
models:
  actor: {role: actor, config: {model: {}}, pool: main, parallel: {dp: 2}}
rewards:
  math: {type: math}
task: {name: arithmetic}
nodes:
  - {id: gen, call: actor.generate, in: [prompts], out: [responses, response_mask, response_text]}
  - {id: score, call: math.score, in: {response_text: response_text, ground_truth: answers, response_mask: response_mask}, out: {token_level_scores: scores}}
  - {id: sum, call: builtin.add, in: [scores, responses], out: {sum: total}}
)";
//   1 name, 2 pools, 3 main, 4 models, 5 actor, 6 rewards, 7 math, 8 task,
//   9 nodes, 10 gen, 11 score, 12 sum

std::vector<GraphIssue> validate_ports(const std::string& from, const std::string& to) {
  return validate_experiment(load_experiment_text(edit(kPorts, from, to), "exp.yaml"), port_catalog());
}

TEST(GraphValidator, NodesThatBindDeclaredPortsHaveNoIssues) {
  auto issues = validate_experiment(load_experiment_text(kPorts, "exp.yaml"), port_catalog());
  for (const auto& issue : issues) ADD_FAILURE() << issue.to_string();
}

TEST(GraphValidator, AnUnknownInputPortListsThePortsWithADidYouMean) {
  auto issues = validate_ports("ground_truth: answers", "ground_truht: answers");
  GraphIssue issue = issue_with(issues, "has no input port");
  EXPECT_EQ(issue.message, "'math.score' has no input port 'ground_truht'");
  EXPECT_EQ(issue.hint,
            "its input ports: response_text, ground_truth, response_mask; to bind a column named otherwise, "
            "write in: {<port>: ground_truht, ...}. did you mean 'ground_truth'?");
  EXPECT_EQ(issue.line, 11);
  EXPECT_EQ(issue.node, "score");
}

TEST(GraphValidator, AListEntryIsAPortOfTheColumnsName) {
  // in: [prompt] binds port 'prompt', which generate does not have.
  auto issues = validate_ports("call: actor.generate, in: [prompts]", "call: actor.generate, in: [prompt]");
  EXPECT_EQ(issue_with(issues, "has no input port").to_string(),
            "exp.yaml:10: node 'gen': 'actor.generate' has no input port 'prompt' (hint: its input ports: "
            "prompts; to bind a column named otherwise, write in: {<port>: prompt, ...}. did you mean "
            "'prompts'?)");
}

TEST(GraphValidator, AnUnknownOutputPortIsAnError) {
  auto issues = validate_ports("out: {token_level_scores: scores}", "out: {scores: scores}");
  GraphIssue issue = issue_with(issues, "has no output port");
  EXPECT_EQ(issue.message, "'math.score' has no output port 'scores'");
  EXPECT_EQ(issue.hint,
            "its output ports: token_level_scores, reward_details; to bind a column named otherwise, write "
            "out: {<port>: scores, ...}. did you mean 'token_level_scores'?");
  EXPECT_EQ(issue.line, 11);
}

TEST(GraphValidator, AMissingRequiredInputPortIsAnError) {
  auto issues = validate_ports("ground_truth: answers, ", "");
  GraphIssue issue = issue_with(issues, "needs input port");
  EXPECT_EQ(
      issue.message,
      "'math.score' needs input port 'ground_truth' (the reference answer), which the node does not bind");
  EXPECT_EQ(issue.hint,
            "add ground_truth to in: when a column of that name exists, or bind another column: in: "
            "{ground_truth: <column>, ...}");
  EXPECT_EQ(issue.line, 11);
  EXPECT_EQ(issues.size(), 1u) << "an optional output left unbound is fine";
}

TEST(GraphValidator, AVariadicBuiltinTakesInputPortsOfAnyName) {
  auto issues =
      validate_ports("in: [scores, responses], out: {sum: total}", "in: [scores], out: {total: total}");
  EXPECT_EQ(issue_with(issues, "has no").message, "'builtin.add' has no output port 'total'");
  EXPECT_EQ(issues.size(), 1u);
}

TEST(GraphValidator, PortsGoUncheckedWhenTheCatalogNamesOnlyMethods) {
  // A catalog that lists methods without their ports (a catalog file, the editor's).
  MethodCatalog catalog = test_catalog();
  catalog.builtins["add"];
  auto issues = validate_experiment(
      load_experiment_text(edit(kPorts, "ground_truth: answers", "anything: answers"), "exp.yaml"), catalog);
  for (const auto& issue : issues) ADD_FAILURE() << issue.to_string();
}

TEST(GraphValidator, PhaseNodesBindPortsToo) {
  const std::string text = edit(kPorts, "task: {name: arithmetic}\n",
                                "task: {name: arithmetic}\ntrainer:\n  eval:\n    score: s\n    nodes:\n"
                                "      - {id: gen, call: actor.generate, in: [promts], out: [responses]}\n");
  auto issues = validate_experiment(load_experiment_text(text, "exp.yaml"), port_catalog());
  GraphIssue issue = issue_with(issues, "has no input port 'promts'");
  EXPECT_EQ(issue.phase, "eval");
  EXPECT_EQ(issue.node, "gen");
}

TEST(GraphValidator, ExperimentBuiltInCodeIsValidated) {
  Experiment exp;
  exp.pools["main"] = {"main", 1, "cpu"};
  exp.models["actor"] = {"actor", "actor", "main", {1, 1, 1}, {{"model", nlohmann::json::object()}}};
  exp.task = {{"name", "arithmetic"}};
  NodeSpec gen;
  gen.id = "gen";
  gen.call = "actor.generate";
  gen.target = "actor";
  gen.method = "generate";
  gen.in = {"prompts"};
  gen.out = {"responses"};
  exp.nodes.push_back(gen);
  EXPECT_TRUE(validate_experiment(exp, test_catalog()).empty());
  exp.nodes[0].in = {"prompt"};
  auto issues = validate_experiment(exp, test_catalog());
  EXPECT_EQ(issue_with(issues, "reads column 'prompt'").line, 0);
  EXPECT_EQ(issues[0].to_string().rfind("node 'gen': reads column 'prompt'", 0), 0u);
}

}  // namespace
}  // namespace rlwb::core
