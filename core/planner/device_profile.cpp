#include "core/planner/device_profile.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/common/durable_file.h"
#include "core/planner/builtin_profiles.h"
#include "core/planner/plan_error.h"
#include "core/planner/precision.h"

namespace fs = std::filesystem;

namespace rlwb::core::planner {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Reads the keys of one JSON object, each once, and refuses the rest.
class ProfileReader {
 public:
  ProfileReader(const nlohmann::json& json, std::string where) : json_(json), where_(std::move(where)) {
    if (!json_.is_object()) fail("", "must be a JSON object");
  }

  double number(const std::string& key, bool required, double fallback, double min, double max) {
    seen_.insert(key);
    if (!json_.contains(key)) {
      if (required) fail(key, "is missing; give a number (see core/planner/devices/A100-80G.json)");
      return fallback;
    }
    const auto& v = json_.at(key);
    if (!v.is_number()) fail(key, "must be a number, not " + v.dump());
    const double value = v.get<double>();
    if (value < min || value > max) {
      std::ostringstream range;
      range << "must be in [" << min << ", " << max << "], not " << value;
      fail(key, range.str());
    }
    return value;
  }

  std::string text(const std::string& key, bool required, const std::string& fallback) {
    seen_.insert(key);
    if (!json_.contains(key)) {
      if (required) fail(key, "is missing; give a string");
      return fallback;
    }
    if (!json_.at(key).is_string()) fail(key, "must be a string, not " + json_.at(key).dump());
    return json_.at(key).get<std::string>();
  }

  const nlohmann::json* object(const std::string& key) {
    seen_.insert(key);
    if (!json_.contains(key)) return nullptr;
    if (!json_.at(key).is_object()) fail(key, "must be a JSON object, not " + json_.at(key).dump());
    return &json_.at(key);
  }

  void refuse_unknown_keys() {
    for (const auto& [key, _] : json_.items())
      if (!seen_.count(key)) {
        std::string known;
        for (const auto& k : seen_) known += (known.empty() ? "" : ", ") + k;
        fail(key, "is not a profile key; the keys are " + known);
      }
  }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw PlanError(where_ + ": " + (key.empty() ? std::string("the profile") : "'" + key + "'") + " " +
                    what);
  }

  const std::string& where() const { return where_; }

 private:
  const nlohmann::json& json_;
  std::string where_;
  std::set<std::string> seen_;
};

LinkSpeed read_link(ProfileReader& outer, const std::string& key) {
  const nlohmann::json* json = outer.object(key);
  if (!json) outer.fail(key, "is missing; give {\"bandwidth\": bytes/s, \"latency_s\": seconds}");
  ProfileReader r(*json, outer.where() + ": " + key);
  LinkSpeed link;
  link.bandwidth = r.number("bandwidth", true, 0, 1, 1e15);
  link.latency_s = r.number("latency_s", true, 0, 0, 10);
  r.refuse_unknown_keys();
  return link;
}

std::vector<CollectiveFit> read_fits(const nlohmann::json& json, const std::string& where) {
  if (!json.is_array()) throw PlanError(where + " must be a list of {ranks, latency_s, bandwidth}");
  std::vector<CollectiveFit> fits;
  for (std::size_t i = 0; i < json.size(); ++i) {
    ProfileReader r(json[i], where + "[" + std::to_string(i) + "]");
    CollectiveFit fit;
    fit.ranks = static_cast<int>(r.number("ranks", true, 2, 2, 1 << 20));
    fit.latency_s = r.number("latency_s", true, 0, 0, 10);
    fit.bandwidth = r.number("bandwidth", true, 0, 1, 1e15);
    r.refuse_unknown_keys();
    fits.push_back(fit);
  }
  return fits;
}

}  // namespace

DeviceProfile parse_device_profile(const nlohmann::json& json, const std::string& where) {
  ProfileReader r(json, where);
  DeviceProfile p;
  p.name = r.text("name", true, "");
  p.kind = r.text("kind", true, "gpu");
  if (p.kind != "gpu" && p.kind != "cpu")
    r.fail("kind", "must be \"gpu\" or \"cpu\", not \"" + p.kind + "\"");
  p.precision = r.text("precision", false, "bf16-mixed");
  try {
    precision_named(p.precision);
  } catch (const PlanError& e) {
    r.fail("precision", e.what());
  }
  p.memory_bytes = r.number("memory_gib", true, 0, 0.001, 1e6) * kGiB;
  p.usable_memory_fraction = r.number("usable_memory_fraction", false, 0.9, 0.01, 1);
  p.kv_cache_fraction = r.number("kv_cache_fraction", false, 0.4, 0.01, 1);
  p.peak_matmul_flops = r.number("peak_matmul_flops", true, 0, 1, 1e18);
  p.matmul_efficiency = r.number("matmul_efficiency", false, 1, 1e-4, 1);
  p.attention_efficiency = r.number("attention_efficiency", false, p.matmul_efficiency, 1e-4, 1);
  p.memory_bandwidth = r.number("memory_bandwidth", true, 0, 1, 1e15);
  p.memory_efficiency = r.number("memory_efficiency", false, 1, 1e-4, 1);
  p.op_overhead_s = r.number("op_overhead_s", false, 0, 0, 1);
  p.call_overhead_s = r.number("call_overhead_s", false, 0, 0, 10);
  if (const nlohmann::json* calls = r.object("stage_call_overhead_s")) {
    for (const auto& [kind, seconds] : calls->items()) {
      const std::string key = "stage_call_overhead_s." + kind;
      if (kind != "generate" && kind != "forward" && kind != "train")
        r.fail(key, "is not a stage kind; use generate, forward or train");
      if (!seconds.is_number() || seconds.get<double>() < 0 || seconds.get<double>() > 10)
        r.fail(key, "must be a number of seconds in [0, 10]");
      p.stage_call_overhead_s[kind] = seconds.get<double>();
    }
  }
  if (const nlohmann::json* scale = r.object("compute_scale")) {
    if (!scale->contains("experiment") || !(*scale)["experiment"].is_string())
      r.fail("compute_scale.experiment", "must name the experiment the scales were measured for");
    p.compute_scale.experiment = (*scale)["experiment"].get<std::string>();
    for (const auto& [key, value] : scale->items()) {
      if (key == "experiment") continue;
      if (key != "nodes" || !value.is_object())
        r.fail("compute_scale." + key,
               "is not known; compute_scale holds experiment and nodes {node: factor}");
      for (const auto& [node, factor] : value.items()) {
        if (!factor.is_number() || factor.get<double>() <= 0 || factor.get<double>() > 100)
          r.fail("compute_scale.nodes." + node, "must be a factor in (0, 100]");
        p.compute_scale.by_node[node] = factor.get<double>();
      }
    }
  }
  p.devices_per_node = static_cast<int>(r.number("devices_per_node", true, 8, 1, 4096));
  p.concurrent_devices = static_cast<int>(r.number("concurrent_devices", false, 0, 0, 1 << 20));
  p.intra_node = read_link(r, "intra_node");
  p.inter_node = read_link(r, "inter_node");
  if (const nlohmann::json* c = r.object("collectives")) {
    for (const auto& [kind, fits] : c->items()) {
      if (kind != "all_reduce" && kind != "all_gather" && kind != "broadcast")
        r.fail("collectives." + kind, "is not a collective; use all_reduce, all_gather or broadcast");
      p.collectives[kind] = read_fits(fits, where + ": collectives." + kind);
    }
  }
  if (const nlohmann::json* s = r.object("sources")) p.sources = *s;
  if (const nlohmann::json* m = r.object("measured")) p.measured = *m;
  r.text("description", false, "");
  r.refuse_unknown_keys();
  return p;
}

nlohmann::json device_profile_json(const DeviceProfile& p) {
  nlohmann::json out = {
      {"name", p.name},
      {"kind", p.kind},
      {"precision", p.precision},
      {"memory_gib", p.memory_bytes / kGiB},
      {"usable_memory_fraction", p.usable_memory_fraction},
      {"kv_cache_fraction", p.kv_cache_fraction},
      {"peak_matmul_flops", p.peak_matmul_flops},
      {"matmul_efficiency", p.matmul_efficiency},
      {"attention_efficiency", p.attention_efficiency},
      {"memory_bandwidth", p.memory_bandwidth},
      {"memory_efficiency", p.memory_efficiency},
      {"op_overhead_s", p.op_overhead_s},
      {"call_overhead_s", p.call_overhead_s},
      {"devices_per_node", p.devices_per_node},
      {"concurrent_devices", p.concurrent_devices},
      {"intra_node", {{"bandwidth", p.intra_node.bandwidth}, {"latency_s", p.intra_node.latency_s}}},
      {"inter_node", {{"bandwidth", p.inter_node.bandwidth}, {"latency_s", p.inter_node.latency_s}}},
      {"sources", p.sources},
      {"measured", p.measured}};
  nlohmann::json collectives = nlohmann::json::object();
  for (const auto& [kind, fits] : p.collectives) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& f : fits)
      list.push_back({{"ranks", f.ranks}, {"latency_s", f.latency_s}, {"bandwidth", f.bandwidth}});
    collectives[kind] = list;
  }
  if (!collectives.empty()) out["collectives"] = collectives;
  if (!p.stage_call_overhead_s.empty()) out["stage_call_overhead_s"] = p.stage_call_overhead_s;
  if (!p.compute_scale.by_node.empty())
    out["compute_scale"] = {{"experiment", p.compute_scale.experiment}, {"nodes", p.compute_scale.by_node}};
  return out;
}

std::vector<std::string> builtin_device_profile_names() {
  std::vector<std::string> names;
  for (const auto& [stem, _] : builtin_profile_texts()) names.push_back(stem);
  return names;
}

std::string device_profile_dir() {
  const char* home = std::getenv("RLWB_HOME");
  const char* user = std::getenv("HOME");
  const fs::path root = home ? fs::path(home) : fs::path(user ? user : "/root") / ".local/share/rlwb";
  return (root / "devices").string();
}

std::string this_host_profile_path() { return device_profile_dir() + "/" + kThisHostProfile + ".json"; }

namespace {

DeviceProfile parse_text(const std::string& text, const std::string& where) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw PlanError(where + ": not valid JSON (" + e.what() +
                    "); fix the file or calibrate again with 'rlwb plan --calibrate'");
  }
  return parse_device_profile(json, where);
}

DeviceProfile read_profile_file(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw PlanError("device profile " + path +
                    " cannot be read; give an existing JSON file, a built-in name, or " +
                    "make one with 'rlwb plan --calibrate'");
  std::stringstream text;
  text << in.rdbuf();
  return parse_text(text.str(), path);
}

}  // namespace

DeviceProfile load_device_profile(const std::string& name_or_file) {
  const bool is_path = name_or_file.find('/') != std::string::npos ||
                       (name_or_file.size() > 5 && name_or_file.ends_with(".json"));
  if (is_path) return read_profile_file(name_or_file);
  for (const auto& [stem, text] : builtin_profile_texts())
    if (stem == name_or_file) return parse_text(text, "built-in profile " + stem);
  const fs::path stored = fs::path(device_profile_dir()) / (name_or_file + ".json");
  if (fs::exists(stored)) return read_profile_file(stored.string());
  std::string known;
  for (const auto& n : builtin_device_profile_names()) known += (known.empty() ? "" : ", ") + n;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(device_profile_dir(), ec))
    if (entry.path().extension() == ".json") known += ", " + entry.path().stem().string();
  throw PlanError("unknown device profile '" + name_or_file + "'; known: " + known +
                  " (or a JSON file's path; 'rlwb plan --calibrate' measures this machine into " +
                  device_profile_dir() + ")");
}

std::string save_device_profile(const DeviceProfile& profile, const std::string& path) {
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  write_file_durably(path, device_profile_json(profile).dump(2) + "\n");
  return path;
}

}  // namespace rlwb::core::planner
