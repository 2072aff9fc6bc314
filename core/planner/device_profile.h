// DeviceProfile: what one device of a cluster can do, as the cost model
// (stage_cost.h, collective_cost.h) reads it. A profile is a JSON file:
//   {"name": "A100-80G", "kind": "gpu", "precision": "bf16-mixed",
//    "memory_gib": 80, "usable_memory_fraction": 0.9, "kv_cache_fraction": 0.4,
//    "peak_matmul_flops": 312e12, "matmul_efficiency": 0.5,
//    "attention_efficiency": 0.3,
//    "memory_bandwidth": 2.039e12, "memory_efficiency": 0.7,
//    "op_overhead_s": 5e-6, "call_overhead_s": 2e-3,
//    "stage_call_overhead_s": {"generate": 3e-3, "forward": 2e-3, "train": 6e-3},
//    "compute_scale": {"experiment": "ppo-arithmetic", "nodes": {"actor_update": 0.55}},
//    "devices_per_node": 8, "concurrent_devices": 0,
//    "intra_node": {"bandwidth": 300e9, "latency_s": 5e-6},
//    "inter_node": {"bandwidth": 25e9, "latency_s": 10e-6},
//    "collectives": {"all_reduce": [{"ranks": 2, "latency_s": ..., "bandwidth": ...}], ...},
//    "sources": {...}}
// Bandwidths are bytes/s one device sends; FLOP/s are one device's. The
// achieved rates are peak x efficiency. `collectives`, when present,
// holds measured fits (time = latency_s + bytes / bandwidth, bytes the
// tensor's size) that replace the link formulas for those group sizes.
// `concurrent_devices` > 0 says that only so many devices compute at full
// speed at once (a CPU host whose worker processes share its cores).
// `stage_call_overhead_s` (optional; calibration writes it) is what a call
// of that stage kind costs whatever its rows; call_overhead_s otherwise.
// `compute_scale` (optional; `rlwb plan --calibrate FILE` writes it) is,
// for the experiment named, what each node's calls measured per row on
// this machine over what this cost model computes for them: the FLOP and
// operator counts see the model's matmuls, not the role's own work around
// them (log-softmax and entropy over the vocabulary, loss terms, masks),
// nor how fast this CPU runs the experiment's shapes; a plan of that
// experiment multiplies the node's compute by it in every layout.
//
// Profiles are found by name among the built-in ones (core/planner/devices/,
// compiled in), then in device_profile_dir() (where `rlwb plan --calibrate`
// stores this machine's), or read from a file path.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rlwb::core::planner {

struct LinkSpeed {
  double bandwidth = 0;  // bytes/s
  double latency_s = 0;
};

// One measured collective: time(bytes) = latency_s + bytes / bandwidth.
struct CollectiveFit {
  int ranks = 2;
  double latency_s = 0;
  double bandwidth = 0;
};

struct DeviceProfile {
  std::string name;
  std::string kind = "gpu";  // "gpu" or "cpu": the pools' device in a written graph file
  std::string precision = "bf16-mixed";
  double memory_bytes = 0;
  double usable_memory_fraction = 0.9;
  // The share of usable memory generation may fill with its KV cache; more
  // rows than fit are decoded in waves (as vLLM's max_num_seqs would).
  double kv_cache_fraction = 0.4;
  double peak_matmul_flops = 0;
  double matmul_efficiency = 1;
  double attention_efficiency = 1;
  double memory_bandwidth = 0;
  double memory_efficiency = 1;
  double op_overhead_s = 0;
  double call_overhead_s = 0;
  // What a call of each stage kind ("generate", "forward", "train") costs
  // whatever its rows, where calibration measured it (app/call_cost.h);
  // call_overhead_s for a kind not in it.
  std::map<std::string, double> stage_call_overhead_s;
  // Per node of one experiment (by its name): measured over modelled
  // compute, 1 for anything else.
  struct ComputeScale {
    std::string experiment;
    std::map<std::string, double> by_node;
  } compute_scale;
  int devices_per_node = 8;
  int concurrent_devices = 0;  // 0: every device at full speed
  LinkSpeed intra_node, inter_node;
  std::map<std::string, std::vector<CollectiveFit>> collectives;  // "all_reduce", "all_gather", "broadcast"
  nlohmann::json sources = nlohmann::json::object();
  nlohmann::json measured = nlohmann::json::object();  // calibration's raw figures, kept as written

  double matmul_flops() const { return peak_matmul_flops * matmul_efficiency; }
  double attention_flops() const { return peak_matmul_flops * attention_efficiency; }
  double usable_memory() const { return memory_bytes * usable_memory_fraction; }
  double kv_cache_budget() const { return usable_memory() * kv_cache_fraction; }
  double effective_memory_bandwidth() const { return memory_bandwidth * memory_efficiency; }
  double call_overhead(const std::string& stage_kind) const {
    auto it = stage_call_overhead_s.find(stage_kind);
    return it == stage_call_overhead_s.end() ? call_overhead_s : it->second;
  }
  double compute_scale_of(const std::string& experiment, const std::string& node) const {
    if (experiment.empty() || experiment != compute_scale.experiment) return 1.0;
    auto it = compute_scale.by_node.find(node);
    return it == compute_scale.by_node.end() ? 1.0 : it->second;
  }
};

// Parses a profile; `where` (a file name) starts every message. Throws
// PlanError naming the key that is missing, of the wrong type or out of
// range, and unknown keys.
DeviceProfile parse_device_profile(const nlohmann::json& json, const std::string& where);
nlohmann::json device_profile_json(const DeviceProfile& profile);

// The built-in profiles' names (A100-80G, H100-80G, H200).
std::vector<std::string> builtin_device_profile_names();
// $RLWB_HOME/devices (RLWB_HOME defaults to ~/.local/share/rlwb).
std::string device_profile_dir();
// This machine's profile as `rlwb plan --calibrate` stores it by default:
// the name, and its file under device_profile_dir() (which may not exist).
inline constexpr const char* kThisHostProfile = "this-host";
std::string this_host_profile_path();
// `name_or_file`: a path to a JSON file (it contains '/' or ends in .json),
// else a built-in name, else <device_profile_dir()>/<name>.json. Throws
// PlanError listing the names it knows when none matches.
DeviceProfile load_device_profile(const std::string& name_or_file);
// Writes `profile` to `path` (creating its folder); returns the path.
std::string save_device_profile(const DeviceProfile& profile, const std::string& path);

}  // namespace rlwb::core::planner
