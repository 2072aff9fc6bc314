// Every graph file in experiments/ is checked by the suite: each one loads
// and passes the validator against this build's catalog (the workers'
// roles, the builtins, the reward types), and each RL experiment that no
// other test runs (ppo, ppo_rm, remax, rloo, reinforce_pp, safe_rlhf, grpo_dataset
// on the Parquet and JSON Lines files of experiments/data), run for 30
// steps (ppo_rm 90) on real worker processes, raises its held-out score (Safe-RLHF:
// brings its learned cost under the threshold, and the rule's share of
// unsafe answers with it, without losing more than 10 points of held-out
// score); a learned cost model tells held-out unsafe answers from safe
// ones, as the run's tracking database records. PPO against a learned
// reward model (ppo_rm: the checker only labels online pairs) raises the
// held-out score too, and its reward model keeps ranking held-out pairs.
// grpo.yaml's run is default_experiment_test, grpo_code.yaml's
// code_reward_graph_test, sft.yaml's data_parallel_test, grpo_rollout_pool's
// rollout_pool_test (its learning is recorded in bench/RESULTS.md).
//
// ppo, remax, rloo and reinforce_pp warm-start their actor exactly as
// grpo.yaml does (the same model, seed, data-parallel layout, SFT optimizer,
// batches and steps), so under ctest they start from the SFT checkpoint
// that SharedWarmStart saves once per ctest run (a ctest fixture,
// tests/CMakeLists.txt) instead of repeating 1000 identical SFT steps each:
// the actor loads it (config.checkpoint) and the warm start's sync still
// copies it to the reference and critic. ppo_rm, safe_rlhf and grpo_dataset
// fit other models or other data in their warm starts, and run them as
// written.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <vector>

#include "core/controller/controller.h"
#include "core/tracking/tracking.h"
#include "core/validate/validator.h"
#include "tests/core/rpc/runtime_test_support.h"
#include "app/catalog.h"
#include "app/registries.h"
#include "tests/test_paths.h"

using namespace rlwb::core;
namespace fs = std::filesystem;

namespace {

std::string experiment_path(const std::string& file) {
  return std::string(rlwb::testing::kSourceDir) + "/experiments/" + file;
}

// Where SharedWarmStart leaves grpo.yaml's post-SFT actor for the short runs
// (in this build tree, so that two builds' suites do not share it).
fs::path shared_sft_dir() {
  return fs::path(rlwb::testing::kBenchDir).parent_path() / "tests" / "shared" / "arithmetic-sft";
}

// What an arithmetic file's actor warm start depends on: the run's seed,
// the actor (less its RL settings), its layout and pool, the warm start
// (less where it syncs to) and the task (less the RL batch's shape). Two
// files that agree here warm-start to the same weights.
nlohmann::json actor_warm_start_inputs(const Experiment& exp) {
  const ModelSpec& actor = exp.models.at("actor");
  nlohmann::json config = actor.config,
                 warm_start = exp.trainer.value("warm_start", nlohmann::json::object()), task = exp.task;
  for (const char* rl_only : {"optim", "ppo", "rollout"}) config.erase(rl_only);
  warm_start.erase("sync");
  for (const char* rl_only : {"batch_size", "samples_per_prompt"}) task.erase(rl_only);
  const PoolSpec& pool = exp.pools.at(actor.pool);
  return {{"seed", exp.seed},
          {"actor", config},
          {"layout", {actor.parallel.dp, actor.parallel.tp, actor.parallel.pp}},
          {"pool", {pool.workers, pool.device}},
          {"warm_start", warm_start},
          {"task", task}};
}

// The shipped files name their dataset and tokenizer files relative to the
// checkout's root, where README's commands run them (grpo_dataset.yaml).
// Each test is its own process (ctest), so the change ends with it.
void run_from_checkout_root() { fs::current_path(rlwb::testing::kSourceDir); }

TEST(ExperimentFiles, EveryFilePassesTheValidator) {
  run_from_checkout_root();
  const MethodCatalog catalog = rlwb::app::catalog();
  int files = 0;
  for (const auto& entry : fs::directory_iterator(experiment_path(""))) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    SCOPED_TRACE(entry.path().filename().string());
    Experiment exp;
    try {
      exp = load_experiment_file(entry.path().string());
    } catch (const GraphError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    for (const auto& issue : validate_experiment(exp, catalog)) ADD_FAILURE() << issue.to_string();
  }
  EXPECT_GE(files, 10);
}

// A reward's settings are checked by the validator, before any worker or
// sandbox starts: each type's own check, with the key's line, for every
// reward type of this build.
TEST(ExperimentFiles, BadRewardSettingsAreFoundByTheValidatorWithTheirLine) {
  const MethodCatalog catalog = rlwb::app::catalog();
  struct Case {
    std::string type, config, message;
  };
  const std::vector<Case> cases = {
      {"math", "{percent: half}", "rewards.r.config.percent"},
      {"math", "{last_number_fallbak: true}", "last_number_fallbak"},
      {"code", "{scoring: best}", "'best' is not one of all_or_nothing, pass_rate"},
      {"format", "{pattern: '('}", "rewards.r.config.pattern"},
      {"length", "{unit: miles}", "rewards.r.config.unit"},
      {"weighted_sum", "{terms: {nothere: 1}}", "there is no reward 'nothere'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.type + " " + c.config);
    const std::string text =
        "name: rewards\n"             // 1
        "pools: {p: {workers: 1}}\n"  // 2
        "models: {m: {role: demo, pool: p}}\n"
        "rewards:\n"
        "  r:\n"  // 5
        "    type: " +
        c.type +
        "\n"
        "    config: " +
        c.config +
        "\n"  // 7
        "task: {name: toy_numbers, batch_size: 2}\n"
        "trainer: {steps: 1}\n"
        "nodes:\n"
        "  - {id: square, call: m.square, in: [x], out: [x_sq]}\n";
    Experiment exp = load_experiment_text(text, "bad.yaml");
    const GraphIssue* found = nullptr;
    auto issues = validate_experiment(exp, catalog);
    for (const auto& issue : issues)
      if (issue.message.find(c.message) != std::string::npos) found = &issue;
    ASSERT_NE(found, nullptr) << "issues: " << GraphError(issues).what();
    EXPECT_EQ(found->line, 7);
    EXPECT_EQ(found->severity, Severity::error);
  }
}

// A short run of one experiment file and what it must show. Its warm start
// (the sloppy-teacher SFT, 1000 steps; or, the same, SharedWarmStart's
// checkpoint of it) and batches stay as written: a weaker warm start or a
// smaller batch makes 30 RL steps lower the held-out score as often as
// raise it. The held-out score is measured after the
// warm start (step 0) and after the last step.
struct ShortRun {
  std::string file;
  // Of the held-out score (val/score/mean) over the run; seed 1 gains 15 to
  // 26 points.
  double min_gain = 0.05;
  // Safe-RLHF trades reward for cost first: over a short run its cost must
  // fall under the threshold while the held-out score stays within 10
  // points (seed 1: learned cost 0.19 -> 0.02, held-out 0.57 -> 0.59).
  bool constrained = false;
  // Held-out metrics (val/...) of the last evaluation and their floors: a
  // learned model's accuracy on held-out pairs.
  std::map<std::string, double> held_out_floors = {};
  // The data sources of a dataset whose held-out rows all come from one
  // source: its val/<source>/score/mean is the whole score at each
  // evaluation.
  std::string only_source = {};
  // A learned reward's mean over the last steps and the truth it stands
  // in for (the checker's share of right samples), within `tolerance`: a
  // reward model the policy has not over-optimised. Empty: no check.
  struct Tracks {
    std::string model_metric, truth_metric;
    double tolerance = 0;
  } tracks = {};
  // Starts from SharedWarmStart's checkpoint, when ctest made it, rather
  // than from the file's own (identical) 1000 SFT steps.
  bool shared_warm_start = false;
  // RL steps of the run, evaluated before the first and after the last.
  int steps = 30;
};

void PrintTo(const ShortRun& run, std::ostream* out) { *out << run.file; }

class ExperimentRun : public ::testing::TestWithParam<ShortRun> {};

constexpr std::size_t kWindow = 5;  // steps averaged at the start and at the end

// Mean of `metric` over the first and the last kWindow steps.
std::pair<double, double> first_and_last(const std::vector<StepReport>& steps, const std::string& metric) {
  auto mean = [&](std::size_t from) {
    double sum = 0;
    for (std::size_t i = from; i < from + kWindow; ++i) sum += steps.at(i).metrics.at(metric);
    return sum / kWindow;
  };
  return {mean(0), mean(steps.size() - kWindow)};
}

// A run's controller options: this build's worker, logs and checkpoints
// in folders of their own.
ControllerOptions short_run_options() {
  ControllerOptions o = rlwb::app::controller_options();
  o.worker_binary = rlwb::testing::kWorkerBin;
  o.log_dir = fs::temp_directory_path() / rlwb::testing::unique_name("rlwb-experiment-logs");
  o.checkpoint_dir = fs::temp_directory_path() / rlwb::testing::unique_name("rlwb-experiment-ckpt");
  return o;
}

// grpo.yaml's warm start (and the one RL step a run takes at least): its
// actor after the SFT steps -- the checkpoint the warm start's sync copies
// to the reference -- is left where the short runs find it.
TEST(SharedWarmStart, GrpoYamlsSftCheckpointIsLeftForTheShortRuns) {
  run_from_checkout_root();
  Experiment exp = load_experiment_file(experiment_path("grpo.yaml"), {"trainer.steps=1", "~trainer.eval",
                                                                       "~trainer.save", "~trainer.samples"});
  const ControllerOptions o = short_run_options();
  const RunResult result = Controller(exp, o, nullptr).run();
  ASSERT_EQ(result.status, "finished") << result.error;
  fs::path saved;
  for (const auto& entry : fs::recursive_directory_iterator(o.checkpoint_dir))
    if (entry.path().filename() == "actor-warm-start") saved = entry.path();
  ASSERT_TRUE(fs::exists(saved / "config.json"))
      << "no actor-warm-start checkpoint under " << o.checkpoint_dir;
  const fs::path shared = shared_sft_dir(), partial = shared.string() + ".partial";
  fs::remove_all(partial);
  fs::create_directories(shared.parent_path());
  fs::copy(saved, partial, fs::copy_options::recursive);
  fs::remove_all(shared);
  fs::rename(partial, shared);  // whole or not at all
  fs::remove_all(o.checkpoint_dir);
  fs::remove_all(o.log_dir);
}

TEST_P(ExperimentRun, RaisesItsRewardOverAShortRun) {
  const ShortRun& run = GetParam();
  run_from_checkout_root();
  const std::string steps = std::to_string(run.steps);
  std::vector<std::string> overrides = {"trainer.steps=" + steps, "trainer.eval.every=" + steps,
                                        "~trainer.save", "~trainer.samples"};
  if (run.shared_warm_start) {
    // The shared start stands for this file's own only while both warm
    // starts are the same computation.
    ASSERT_EQ(actor_warm_start_inputs(load_experiment_file(experiment_path(run.file))).dump(1),
              actor_warm_start_inputs(load_experiment_file(experiment_path("grpo.yaml"))).dump(1))
        << run.file
        << " no longer warm-starts its actor as grpo.yaml does: give it shared_warm_start = false";
    // One saved before the worker was last built may not be this build's.
    const fs::path sft = shared_sft_dir();
    if (fs::exists(sft / "config.json") &&
        fs::last_write_time(sft / "config.json") > fs::last_write_time(rlwb::testing::kWorkerBin)) {
      overrides.insert(overrides.end(), {"+models.actor.config.checkpoint=" + sft.string(),
                                         "~models.actor.config.model", "trainer.warm_start.steps=0"});
      std::cerr << run.file << ": the actor starts from " << sft << " (SharedWarmStart)\n";
    } else {
      std::cerr << run.file << ": no " << sft
                << " newer than rlwb-worker (ctest's SharedWarmStart makes it): the file's own warm start\n";
    }
  }
  Experiment exp = load_experiment_file(experiment_path(run.file), overrides);

  const ControllerOptions o = short_run_options();
  const std::string db =
      (fs::temp_directory_path() / (rlwb::testing::unique_name("rlwb-experiment") + ".db")).string();
  const auto start = std::chrono::steady_clock::now();
  RunResult result;
  {
    TrackingWriter tracking(db);
    result = Controller(exp, o, &tracking).run();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(result.status, "finished") << result.error;
  ASSERT_EQ(result.steps.size(), static_cast<std::size_t>(run.steps));
  ASSERT_EQ(result.evals.size(), 2u);
  const double before = result.evals.front().score, after = result.evals.back().score;
  const auto [reward_first, reward_last] = first_and_last(result.steps, "critic/score/mean");
  std::cerr << run.file << ": held-out " << before << " -> " << after << ", critic/score/mean "
            << reward_first << " -> " << reward_last << ", " << seconds << " s\n";

  if (run.constrained)
    EXPECT_GE(after - before, -0.10) << "held-out " << before << " -> " << after;
  else
    EXPECT_GE(after - before, run.min_gain) << "held-out " << before << " -> " << after;
  TrackingReader reader(db);
  for (const auto& [metric, floor] : run.held_out_floors) {
    auto points = reader.metrics(result.run_id, 0, metric);
    ASSERT_EQ(points.size(), 2u) << metric << ": one per evaluation";
    std::cerr << run.file << ": " << metric << " " << points.front().value << " -> " << points.back().value
              << "\n";
    EXPECT_GE(points.back().value, floor) << metric;
  }
  if (!run.only_source.empty()) {
    auto points = reader.metrics(result.run_id, 0, "val/" + run.only_source + "/score/mean");
    ASSERT_EQ(points.size(), result.evals.size()) << "one per evaluation";
    for (std::size_t i = 0; i < points.size(); ++i)
      EXPECT_DOUBLE_EQ(points[i].value, result.evals[i].score) << "evaluation " << i;
  }
  if (!run.tracks.model_metric.empty()) {
    const auto [model_first, model_last] = first_and_last(result.steps, run.tracks.model_metric);
    const auto [truth_first, truth_last] = first_and_last(result.steps, run.tracks.truth_metric);
    std::cerr << run.file << ": " << run.tracks.model_metric << " " << model_first << " -> " << model_last
              << ", " << run.tracks.truth_metric << " " << truth_first << " -> " << truth_last << "\n";
    EXPECT_NEAR(model_last, truth_last, run.tracks.tolerance)
        << "the learned reward has drifted from the truth";
  }
  if (!run.constrained) return;
  const double threshold = exp.trainer["algorithm"]["safe_rlhf"]["cost_threshold"].get<double>();
  const auto [cost_first, cost_last] = first_and_last(result.steps, "cost/score/mean");
  const auto [rule_first, rule_last] = first_and_last(result.steps, "reward/rule_cost/mean");
  std::cerr << run.file << ": cost/score/mean " << cost_first << " -> " << cost_last << " (threshold "
            << threshold << "), reward/rule_cost/mean " << rule_first << " -> " << rule_last << "\n";
  EXPECT_GT(cost_first, threshold) << "the warm-started policy should break the constraint";
  EXPECT_LE(cost_last, threshold);
  EXPECT_LE(rule_last, threshold + 0.05) << "the learned cost follows the rule it learned";
}

INSTANTIATE_TEST_SUITE_P(
    Arithmetic, ExperimentRun,
    ::testing::Values(ShortRun{"ppo.yaml", 0.05, false, {}, {}, {}, true},
                      // PPO against a learned reward moves slowly: seed 1 gained 3 points in
                      // 30 steps, and 0.5 once RoPE and SwiGLU's rounding changed (session 29),
                      // so it runs 90 (the warm start takes most of the run's time): +10.5
                      // points (60 steps: +2.5; 24 over the 300 of the file,
                      // bench/RESULTS.md). Its reward model ranks the held-out pairs less
                      // well as the policy moves away from the pairs it learned from (0.775
                      // before, 0.745 after 60 steps, 0.665 after 90), above chance (0.5);
                      // its probability that a sample is right stays within 0.1 of the
                      // checker's share.
                      ShortRun{"ppo_rm.yaml",
                               0.05,
                               false,
                               {{"val/reward_model/pair_accuracy", 0.6}},
                               {},
                               {"critic/score/mean", "reward/label/mean", 0.1},
                               false,
                               90},
                      ShortRun{"remax.yaml", 0.05, false, {}, {}, {}, true},
                      ShortRun{"rloo.yaml", 0.05, false, {}, {}, {}, true},
                      ShortRun{"reinforce_pp.yaml", 0.05, false, {}, {}, {}, true},
                      ShortRun{"safe_rlhf.yaml", 0.0, true, {{"val/cost_model/sign_accuracy", 0.95}}},
                      ShortRun{"grpo_dataset.yaml", 0.05, false, {}, "arithmetic"}),
    [](const ::testing::TestParamInfo<ShortRun>& info) {
      return info.param.file.substr(0, info.param.file.find('.'));
    });

}  // namespace
