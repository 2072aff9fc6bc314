// rlwb plan as a user runs it: a plan written with --write passes
// rlwb validate, and bad input (an unknown profile, too few devices, a
// malformed graph file, a rollout pool it does not plan) ends with exit 1
// and a message saying what to do.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/graph/experiment.h"
#include "core/planner/device_profile.h"
#include "tests/app/cli_process.h"

namespace rlwb::testing {
namespace {

namespace fs = std::filesystem;

class PlanCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rlwb-plan-cli-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // A CPU profile as calibration writes one (the A100's figures, CPU pools).
    core::planner::DeviceProfile cpu = core::planner::load_device_profile("A100-80G");
    cpu.name = "test-cpu";
    cpu.kind = "cpu";
    cpu.precision = "fp32";
    cpu.devices_per_node = 8;
    cpu.concurrent_devices = 2;
    core::planner::save_device_profile(cpu, (dir_ / "cpu.json").string());
  }
  void TearDown() override { fs::remove_all(dir_); }

  int rlwb(const std::vector<std::string>& args) {
    fs::remove(dir_ / "out.txt");
    fs::remove(dir_ / "err.txt");
    return wait_cli(start_cli(args, dir_));
  }
  std::string read(const std::string& name) {
    std::ifstream in(dir_ / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::string experiment(const std::string& name) { return std::string(kSourceDir) + "/experiments/" + name; }

  fs::path dir_;
};

TEST_F(PlanCli, AWrittenPlanOfThePpoExperimentPassesValidate) {
  const std::string out = (dir_ / "planned.yaml").string();
  ASSERT_EQ(rlwb({"plan", experiment("ppo.yaml"), "--devices", "4", "--device-profile",
                  (dir_ / "cpu.json").string(), "--top", "3", "--write", out}),
            0)
      << read("err.txt");
  const std::string printed = read("out.txt");
  EXPECT_NE(printed.find("5 placements"), std::string::npos) << printed;
  EXPECT_NE(printed.find("#1  {"), std::string::npos) << printed;
  EXPECT_NE(printed.find("wrote plan #1 to " + out), std::string::npos) << printed;
  ASSERT_EQ(rlwb({"validate", out}), 0) << read("err.txt");
  const core::Experiment planned = core::load_experiment_file(out);
  int workers = 0;
  for (const auto& [name, pool] : planned.pools) {
    workers += pool.workers;
    EXPECT_EQ(pool.device, "cpu") << name;
  }
  EXPECT_EQ(workers, 4) << read("planned.yaml");
}

// On a CPU profile the actor's generation layout is planned too; a plan
// whose actor generates at another tp than it trains is written as
// parallel.generate, and validate accepts it.
TEST_F(PlanCli, APlanWithTheActorsOwnGenerationLayoutIsWrittenAsParallelGenerate) {
  // grpo.yaml's models made 7B-sized, so that the actor's training state
  // needs tensor parallelism and generation does not.
  std::vector<std::string> args = {"plan",
                                   experiment("grpo.yaml"),
                                   "--devices",
                                   "4",
                                   "--device-profile",
                                   (dir_ / "cpu.json").string(),
                                   "--top",
                                   "40"};
  for (const char* model : {"actor", "ref"})
    for (const char* size : {"hidden_size=4096", "num_layers=40", "num_heads=32", "num_kv_heads=8",
                             "intermediate_size=11008", "vocab_size=32"})
      args.push_back(std::string(size[0] == 'v' ? "+" : "") + "models." + model + ".config.model." + size);
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  ASSERT_EQ(rlwb(json_args), 0) << read("err.txt");
  const nlohmann::json plans = nlohmann::json::parse(read("out.txt")).at("plans");
  int pick = 0, train_tp = 0, generate_tp = 0;
  for (std::size_t k = 0; k < plans.size() && pick == 0; ++k)
    for (const auto& set : plans[k].at("sets"))
      if (set.at("models").contains("actor")) {
        const auto& actor = set.at("models").at("actor");
        if (actor.at("generate_tp") != actor.at("tp"))
          pick = static_cast<int>(k) + 1, train_tp = actor.at("tp"), generate_tp = actor.at("generate_tp");
      }
  ASSERT_GT(pick, 0) << "no plan lets the actor generate at another tp:\n" << plans.dump(1);
  const std::string out = (dir_ / "hybrid.yaml").string();
  for (const std::string& more : {std::string("--write"), out, std::string("--pick"), std::to_string(pick)})
    args.push_back(more);
  ASSERT_EQ(rlwb(args), 0) << read("err.txt");
  ASSERT_EQ(rlwb({"validate", out}), 0) << read("err.txt") << read("hybrid.yaml");
  const core::ParallelSpec actor = core::load_experiment_file(out).models.at("actor").parallel;
  EXPECT_EQ(actor.tp, train_tp);
  EXPECT_EQ(actor.generation_tp(), generate_tp);
  EXPECT_NE(read("hybrid.yaml").find("generate: {tp: " + std::to_string(generate_tp)), std::string::npos)
      << read("hybrid.yaml");
}

TEST_F(PlanCli, AnUnknownProfileSaysWhichOnesExist) {
  EXPECT_EQ(rlwb({"plan", experiment("grpo.yaml"), "--devices", "2", "--device-profile", "TPUv9"}), 1);
  const std::string err = read("err.txt");
  EXPECT_NE(err.find("unknown device profile 'TPUv9'; known: A100-80G, H100-80G, H200"), std::string::npos)
      << err;
}

TEST_F(PlanCli, TooFewDevicesForAnyPlacementSaysWhatToChange) {
  // Three models that each need a device of their own at this size do not
  // fit on one A100 together.
  EXPECT_EQ(
      rlwb({"plan", experiment("ppo.yaml"), "--devices", "1", "--device-profile", "A100-80G",
            "models.actor.config.model.hidden_size=8192", "models.actor.config.model.intermediate_size=28672",
            "models.actor.config.model.num_layers=80", "models.actor.config.model.num_heads=64",
            "models.actor.config.model.num_kv_heads=8"}),
      1);
  const std::string err = read("err.txt");
  EXPECT_NE(err.find("no placement of the 3 models fits on 1 A100-80G"), std::string::npos) << err;
  EXPECT_NE(err.find("Give more devices (--devices)"), std::string::npos) << err;
}

TEST_F(PlanCli, ARolloutModelOnAPoolOfItsOwnIsRefusedWithWhatToDoInstead) {
  EXPECT_EQ(
      rlwb({"plan", experiment("grpo_rollout_pool.yaml"), "--devices", "4", "--device-profile", "A100-80G"}),
      1);
  const std::string err = read("err.txt");
  EXPECT_NE(err.find("models.rollout (role rollout) generates on a pool of its own with 'actor''s weights"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("plan the file with the actor generating"), std::string::npos) << err;
}

TEST_F(PlanCli, AMalformedGraphFileIsReportedWithItsLine) {
  std::ofstream(dir_ / "broken.yaml") << "name: x\nmodels: [unclosed\n";
  EXPECT_EQ(rlwb({"plan", (dir_ / "broken.yaml").string(), "--devices", "2", "--device-profile", "A100-80G"}),
            1);
  EXPECT_NE(read("err.txt").find("broken.yaml"), std::string::npos) << read("err.txt");
}

// --calibrate FILE runs the experiment on one worker at two batch sizes:
// each worker node's own seconds (compute_s) are a line over its rows; a
// stage kind's fixed cost is the intercept of its nodes' lines plus the
// call's round trip, call_overhead_s the mean of them all, and each node's
// slope over the cost model's is its compute scale (app/call_cost.h).
// ppo hands the one worker two calls at once (ref and values, then both
// updates): the second is not charged the first's seconds -- timed
// dispatch to collect, actor_update cost twice critic_update.
TEST_F(PlanCli, CalibrationWithAFileMeasuresWhatACallCostsWhateverItsRows) {
  const std::string out = (dir_ / "calibrated.json").string();
  ASSERT_EQ(rlwb({"plan", "--calibrate", experiment("ppo.yaml"), "--device-profile", out, "--calibrate-ranks",
                  "2", "task.batch_size=128", "models.actor.config.ppo.mini_batch_size=128",
                  "models.critic.config.ppo.mini_batch_size=128"}),
            0)
      << read("err.txt");
  const core::planner::DeviceProfile p = core::planner::load_device_profile(out);
  const nlohmann::json calls = p.measured.at("call_fixed_seconds");
  EXPECT_EQ(calls.at("rows"), nlohmann::json::array({32.0, 128.0})) << "32 and 128 prompts, 1 sample each";
  const double round_trip = calls.at("round_trip_seconds").get<double>();
  EXPECT_GT(round_trip, 0.0);
  EXPECT_LT(round_trip, 0.05) << "a call's round trip over ipc on one host";
  double sum = 0;
  const std::vector<std::string> nodes = {"gen", "ref", "values", "critic_update", "actor_update"};
  for (const auto& node : nodes) {
    ASSERT_TRUE(calls.at("nodes").contains(node)) << calls.dump();
    const auto& n = calls["nodes"][node];
    const double small = n["compute_seconds"][0].get<double>(), big = n["compute_seconds"][1].get<double>();
    EXPECT_LT(small, big) << node << ": more rows, more time";
    EXPECT_GE(n["fixed_seconds"].get<double>(), round_trip) << node;
    EXPECT_LE(n["fixed_seconds"].get<double>(), small + round_trip) << node;
    const double modelled = n["modelled_seconds"][1].get<double>() - n["modelled_seconds"][0].get<double>();
    ASSERT_GT(modelled, 0.0) << node;
    EXPECT_NEAR(p.compute_scale_of("ppo-arithmetic", node), (big - small) / modelled, 1e-9) << node;
    sum += n["fixed_seconds"].get<double>();
  }
  EXPECT_EQ(calls["nodes"].size(), nodes.size()) << "reward and adv run on the controller: no worker call";
  EXPECT_NEAR(p.call_overhead_s, sum / 5, 1e-12);
  auto fixed = [&](const char* node) { return calls["nodes"][node]["fixed_seconds"].get<double>(); };
  // Each stage kind its own: gen generates, ref and values are forward
  // passes, the updates train.
  EXPECT_DOUBLE_EQ(p.call_overhead("generate"), fixed("gen"));
  EXPECT_NEAR(p.call_overhead("forward"), (fixed("ref") + fixed("values")) / 2, 1e-12);
  EXPECT_NEAR(p.call_overhead("train"), (fixed("critic_update") + fixed("actor_update")) / 2, 1e-12);
  EXPECT_EQ(calls["nodes"]["actor_update"]["kind"], "train");
  // The two updates run the same network over the same rows (the actor's
  // head is a small vocabulary's, the critic's one value): neither is
  // charged the other's time (which made the ratio 2; the bounds leave
  // room for a test running beside this one).
  const double ratio = p.compute_scale_of("ppo-arithmetic", "actor_update") /
                       p.compute_scale_of("ppo-arithmetic", "critic_update");
  EXPECT_GT(ratio, 0.5) << calls.dump();
  EXPECT_LT(ratio, 1.6) << calls.dump();
  EXPECT_DOUBLE_EQ(p.compute_scale_of("grpo-arithmetic", "actor_update"), 1.0) << "another experiment's node";
  EXPECT_NE(p.sources.value("call_overhead_s", "").find("measured"), std::string::npos);
  EXPECT_NE(p.sources.value("compute_scale", "").find("measured"), std::string::npos);
  EXPECT_NE(read("out.txt").find("a call costs"), std::string::npos) << read("out.txt");
  EXPECT_NE(read("out.txt").find("actor_update x"), std::string::npos) << read("out.txt");
}

}  // namespace
}  // namespace rlwb::testing
