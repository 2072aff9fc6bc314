#include "core/planner/device_profile.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/planner/plan_error.h"

namespace rlwb::core::planner {
namespace {

std::string error_of(const nlohmann::json& json) {
  try {
    parse_device_profile(json, "my.json");
  } catch (const PlanError& e) {
    return e.what();
  }
  return "";
}

nlohmann::json valid_profile() { return device_profile_json(load_device_profile("A100-80G")); }

TEST(DeviceProfile, BuiltInProfilesLoadAndNameTheirSources) {
  EXPECT_EQ(builtin_device_profile_names(), (std::vector<std::string>{"A100-80G", "H100-80G", "H200"}));
  for (const auto& name : builtin_device_profile_names()) {
    const DeviceProfile p = load_device_profile(name);
    EXPECT_EQ(p.name, name);
    EXPECT_TRUE(p.sources.contains("peak_matmul_flops")) << name;
    EXPECT_TRUE(p.sources.contains("memory_bandwidth")) << name;
    EXPECT_GT(p.matmul_flops(), 1e14) << name;
  }
  EXPECT_DOUBLE_EQ(load_device_profile("H200").memory_bytes, 141.0 * (1 << 30));
}

TEST(DeviceProfile, AProfileWrittenAndReadBackIsTheSame) {
  const DeviceProfile a = load_device_profile("H100-80G");
  const DeviceProfile b = parse_device_profile(device_profile_json(a), "x");
  EXPECT_EQ(device_profile_json(a), device_profile_json(b));
}

TEST(DeviceProfile, AMissingKeyIsNamedWithWhatToGive) {
  nlohmann::json j = valid_profile();
  j.erase("memory_bandwidth");
  EXPECT_EQ(error_of(j),
            "my.json: 'memory_bandwidth' is missing; give a number (see core/planner/devices/A100-80G.json)");
}

TEST(DeviceProfile, AWrongTypeAnOutOfRangeValueAndAnUnknownKeyAreRefusedByName) {
  nlohmann::json j = valid_profile();
  j["memory_gib"] = "eighty";
  EXPECT_EQ(error_of(j), "my.json: 'memory_gib' must be a number, not \"eighty\"");
  j = valid_profile();
  j["matmul_efficiency"] = 1.5;
  EXPECT_NE(error_of(j).find("'matmul_efficiency' must be in [0.0001, 1], not 1.5"), std::string::npos);
  j = valid_profile();
  j["memory_bandwith"] = 1e12;
  EXPECT_NE(error_of(j).find("'memory_bandwith' is not a profile key; the keys are"), std::string::npos);
  j = valid_profile();
  j["intra_node"].erase("latency_s");
  EXPECT_EQ(
      error_of(j),
      "my.json: intra_node: 'latency_s' is missing; give a number (see core/planner/devices/A100-80G.json)");
}

// A calibration's call costs per stage kind: kept through a save, used for
// their kind, call_overhead_s for any other; a kind or a value the planner
// cannot use is refused by name.
TEST(DeviceProfile, CallCostsPerStageKindRoundTripAndBadOnesAreNamed) {
  nlohmann::json j = valid_profile();
  j["call_overhead_s"] = 0.004;
  j["stage_call_overhead_s"] = {{"generate", 0.003}, {"train", 0.006}};
  const DeviceProfile p = parse_device_profile(j, "my.json");
  EXPECT_DOUBLE_EQ(p.call_overhead("generate"), 0.003);
  EXPECT_DOUBLE_EQ(p.call_overhead("train"), 0.006);
  EXPECT_DOUBLE_EQ(p.call_overhead("forward"), 0.004) << "no figure of its own: call_overhead_s";
  EXPECT_EQ(device_profile_json(parse_device_profile(device_profile_json(p), "x")), device_profile_json(p));
  j["stage_call_overhead_s"] = {{"decode", 0.003}};
  EXPECT_NE(
      error_of(j).find("'stage_call_overhead_s.decode' is not a stage kind; use generate, forward or train"),
      std::string::npos)
      << error_of(j);
  j["stage_call_overhead_s"] = {{"train", -1}};
  EXPECT_NE(error_of(j).find("'stage_call_overhead_s.train' must be a number of seconds in [0, 10]"),
            std::string::npos)
      << error_of(j);
}

// A calibration's compute scales, per node of the experiment it ran:
// kept through a save, 1 for another experiment or node; a scale without
// its experiment, or out of range, is refused by name.
TEST(DeviceProfile, ComputeScalesRoundTripForTheirExperimentAndBadOnesAreNamed) {
  nlohmann::json j = valid_profile();
  j["compute_scale"] = {{"experiment", "ppo-arithmetic"}, {"nodes", {{"actor_update", 0.5}, {"gen", 2.0}}}};
  const DeviceProfile p = parse_device_profile(j, "my.json");
  EXPECT_DOUBLE_EQ(p.compute_scale_of("ppo-arithmetic", "actor_update"), 0.5);
  EXPECT_DOUBLE_EQ(p.compute_scale_of("ppo-arithmetic", "gen"), 2.0);
  EXPECT_DOUBLE_EQ(p.compute_scale_of("ppo-arithmetic", "values"), 1.0) << "not measured";
  EXPECT_DOUBLE_EQ(p.compute_scale_of("grpo-arithmetic", "gen"), 1.0) << "another experiment";
  EXPECT_EQ(device_profile_json(parse_device_profile(device_profile_json(p), "x")), device_profile_json(p));
  j["compute_scale"] = {{"nodes", {{"gen", 2.0}}}};
  EXPECT_NE(error_of(j).find("'compute_scale.experiment' must name the experiment"), std::string::npos)
      << error_of(j);
  j["compute_scale"] = {{"experiment", "ppo-arithmetic"}, {"nodes", {{"gen", 0}}}};
  EXPECT_NE(error_of(j).find("'compute_scale.nodes.gen' must be a factor in (0, 100]"), std::string::npos)
      << error_of(j);
  j["compute_scale"] = {{"experiment", "ppo-arithmetic"}, {"node", {{"gen", 1}}}};
  EXPECT_NE(error_of(j).find("'compute_scale.node' is not known"), std::string::npos) << error_of(j);
}

TEST(DeviceProfile, AnUnknownNameListsTheKnownOnesAndHowToCalibrate) {
  try {
    load_device_profile("V100");
    FAIL();
  } catch (const PlanError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("unknown device profile 'V100'; known: A100-80G, H100-80G, H200"), std::string::npos)
        << m;
    EXPECT_NE(m.find("rlwb plan --calibrate"), std::string::npos) << m;
  }
}

TEST(DeviceProfile, AFileThatIsNotJsonNamesTheFile) {
  const auto path = std::filesystem::temp_directory_path() / "rlwb_bad_profile.json";
  std::ofstream(path) << "{\"name\": ";
  try {
    load_device_profile(path.string());
    FAIL();
  } catch (const PlanError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path.string() + ": not valid JSON", 0), 0u) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(DeviceProfile, ASavedProfileIsFoundByItsNameInTheProfileFolder) {
  const auto home = std::filesystem::temp_directory_path() / "rlwb_profile_home";
  setenv("RLWB_HOME", home.c_str(), 1);
  DeviceProfile p = load_device_profile("A100-80G");
  p.name = "my-cluster";
  save_device_profile(p, device_profile_dir() + "/my-cluster.json");
  EXPECT_EQ(load_device_profile("my-cluster").name, "my-cluster");
  unsetenv("RLWB_HOME");
  std::filesystem::remove_all(home);
}

}  // namespace
}  // namespace rlwb::core::planner
