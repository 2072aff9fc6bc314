#include "core/planner/planner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include "core/planner/plan_error.h"
#include "core/planner/precision.h"
#include "core/planner/set_partitions.h"

namespace rlwb::core::planner {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr std::size_t kLayoutsCombinedPerModel = 4;

std::string gib(double bytes) {
  std::ostringstream s;
  s.precision(bytes < 0.1 * kGiB ? 3 : 1);
  s << std::fixed << bytes / kGiB;
  return s.str();
}

// Everything the search needs that does not change with the placement.
struct SearchContext {
  const PlanInput& input;
  DeviceProfile profile;  // with devices_per_node from --nodes
  Precision precision;
  LayoutLimits limits;
  int devices = 1;

  StageContext stage_context(int set_devices) const {
    return {profile, precision, input.workload, set_devices > profile.devices_per_node};
  }
  MemoryUse memory(int m, const ModelLayout& layout) const {
    return model_memory(input.models[m], layout, input.workload, precision, profile.kv_cache_budget());
  }
  // The time of every stage of model m in `layout` (0 for other stages),
  // its compute scaled as this experiment's calls measured (DeviceProfile::
  // compute_scale).
  std::vector<StageTime> model_stage_times(int m, const ModelLayout& layout, int set_devices) const {
    std::vector<StageTime> times(input.stages.size());
    const StageContext ctx = stage_context(set_devices);
    for (std::size_t i = 0; i < input.stages.size(); ++i)
      if (input.stages[i].model == m) {
        times[i] = stage_time(input.stages[i].kind, input.models[m], layout, ctx);
        times[i].compute *= profile.compute_scale_of(input.experiment, input.stages[i].node);
      }
    return times;
  }
};

double sum_of(const std::vector<StageTime>& times) {
  double s = 0;
  for (const auto& t : times) s += t.total();
  return s;
}

struct LayoutOption {
  ModelLayout layout;
  MemoryUse memory;
  std::vector<StageTime> times;  // by stage
  double seconds = 0;
};

// The best layouts of each model of a set on `devices` devices, combined.
struct SetChoice {
  std::vector<LayoutOption> options;  // one per model of the set, in set order
  double memory_per_device = 0;
};

std::optional<SetChoice> choose_set(const SearchContext& sc, const std::vector<int>& models, int devices) {
  std::vector<std::vector<LayoutOption>> per_model;
  for (int m : models) {
    std::vector<LayoutOption> options;
    for (const ModelLayout& layout :
         candidate_layouts(sc.input.models[m], devices, sc.input.workload, sc.limits)) {
      LayoutOption o{layout, sc.memory(m, layout), {}, 0};
      if (o.memory.total() > sc.profile.usable_memory()) continue;
      o.times = sc.model_stage_times(m, layout, devices);
      o.seconds = sum_of(o.times);
      options.push_back(std::move(o));
    }
    if (options.empty()) return std::nullopt;
    std::sort(options.begin(), options.end(),
              [](const auto& a, const auto& b) { return a.seconds < b.seconds; });
    if (options.size() > kLayoutsCombinedPerModel) options.resize(kLayoutsCombinedPerModel);
    per_model.push_back(std::move(options));
  }
  std::optional<SetChoice> best;
  double best_seconds = 0;
  std::vector<std::size_t> pick(models.size(), 0);
  while (true) {
    std::vector<MemoryUse> uses;
    double seconds = 0;
    for (std::size_t k = 0; k < models.size(); ++k) {
      uses.push_back(per_model[k][pick[k]].memory);
      seconds += per_model[k][pick[k]].seconds;
    }
    const double memory = set_memory(uses);
    if (memory <= sc.profile.usable_memory() && (!best || seconds < best_seconds)) {
      SetChoice c;
      for (std::size_t k = 0; k < models.size(); ++k) c.options.push_back(per_model[k][pick[k]]);
      c.memory_per_device = memory;
      best = std::move(c);
      best_seconds = seconds;
    }
    std::size_t k = 0;
    while (k < models.size() && ++pick[k] == per_model[k].size()) pick[k++] = 0;
    if (k == models.size()) break;
  }
  return best;
}

int allocation_unit(int devices) {
  int unit = 1;
  while (devices / unit > 32 && devices % (unit * 2) == 0) unit *= 2;
  return unit;
}

Plan assemble_plan(const SearchContext& sc, const SetPartition& partition,
                   const std::vector<int>& set_devices, const std::vector<const SetChoice*>& choices) {
  const int n = static_cast<int>(sc.input.models.size());
  Plan plan;
  plan.set_of_model.assign(n, -1);
  plan.layouts.resize(n);
  plan.memory.resize(n);
  std::vector<StageTime> times(sc.input.stages.size());
  int first = 0;
  for (std::size_t s = 0; s < partition.size(); ++s) {
    DeviceSet set{partition[s], first, set_devices[s], choices[s]->memory_per_device};
    first += set_devices[s];
    for (std::size_t k = 0; k < partition[s].size(); ++k) {
      const int m = partition[s][k];
      const LayoutOption& o = choices[s]->options[k];
      plan.set_of_model[m] = static_cast<int>(s);
      plan.layouts[m] = o.layout;
      plan.memory[m] = o.memory;
      for (std::size_t i = 0; i < times.size(); ++i)
        if (sc.input.stages[i].model == m) times[i] = o.times[i];
    }
    plan.sets.push_back(set);
  }
  plan.step = simulate_step(sc.input, plan.set_of_model, times, set_devices, sc.profile.concurrent_devices);
  const double tokens = double(sc.input.workload.rows()) * sc.input.workload.sequence_length();
  plan.tokens_per_second = plan.step.seconds > 0 ? tokens / plan.step.seconds : 0;
  return plan;
}

SearchContext make_context(const PlanInput& input, const DeviceProfile& profile, const PlanOptions& options) {
  if (options.devices < 1)
    throw PlanError("--devices must be at least 1, not " + std::to_string(options.devices));
  SearchContext sc{input, profile, precision_named(profile.precision), {}, options.devices};
  if (options.nodes > 0) {
    if (options.devices % options.nodes != 0)
      throw PlanError("--devices " + std::to_string(options.devices) + " do not divide over --nodes " +
                      std::to_string(options.nodes) +
                      "; give a device count that is a multiple of the nodes");
    sc.profile.devices_per_node = options.devices / options.nodes;
  }
  sc.limits.max_tp = std::min(sc.profile.devices_per_node, options.devices);
  sc.limits.max_pp = std::max(1, options.max_pp);
  sc.limits.generation_layouts = options.generation_layouts;
  return sc;
}

// Why nothing fits: each model's smallest need on all the devices.
[[noreturn]] void throw_nothing_fits(const SearchContext& sc) {
  std::ostringstream msg;
  msg << "no placement of the " << sc.input.models.size() << " models fits on " << sc.devices << " "
      << sc.profile.name << " device(s) (" << gib(sc.profile.usable_memory()) << " GiB usable each):";
  for (std::size_t m = 0; m < sc.input.models.size(); ++m) {
    const auto layouts = candidate_layouts(sc.input.models[m], sc.devices, sc.input.workload, sc.limits);
    msg << "\n  " << sc.input.models[m].name << ": ";
    if (layouts.empty()) {
      msg << "no layout on " << sc.devices
          << " devices (tp must divide its heads and MLP width, dp the step's " << sc.input.workload.rows()
          << " rows and its mini-batch)";
      continue;
    }
    double least = -1;
    for (const auto& l : layouts) {
      const double need = sc.memory(static_cast<int>(m), l).total();
      if (least < 0 || need < least) least = need;
    }
    msg << "needs at least " << gib(least) << " GiB per device alone";
  }
  msg << "\nGive more devices (--devices), a device profile with more memory, allow pipeline parallelism "
         "(--max-pp), or lower micro_batch_size / the batch.";
  // Every plan uses all the devices, and each set's count must split into
  // t p d with d dividing the rows: a count with odd factors may have none.
  int rounded = 1;
  while (rounded * 2 <= sc.devices) rounded *= 2;
  if (rounded != sc.devices)
    msg << " Every plan uses all " << sc.devices << " devices, and data parallelism must divide the step's "
        << sc.input.workload.rows() << " rows: a count such as " << rounded << " splits more ways.";
  throw PlanError(msg.str());
}

}  // namespace

PlanSearch search_plans(const PlanInput& input, const DeviceProfile& profile, const PlanOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  const SearchContext sc = make_context(input, profile, options);
  PlanSearch search;
  search.unit = allocation_unit(options.devices);
  const int units = options.devices / search.unit;
  std::map<std::pair<std::vector<int>, int>, std::optional<SetChoice>> choices;
  auto choice_for = [&](const std::vector<int>& models, int devices) -> const std::optional<SetChoice>& {
    auto key = std::make_pair(models, devices);
    auto it = choices.find(key);
    if (it == choices.end()) it = choices.emplace(key, choose_set(sc, models, devices)).first;
    return it->second;
  };
  std::vector<Plan> plans;
  const auto partitions = set_partitions(static_cast<int>(input.models.size()));
  search.placements = static_cast<int>(partitions.size());
  for (const SetPartition& partition : partitions) {
    const int k = static_cast<int>(partition.size());
    if (k > units) continue;
    // Each set's smallest device count (in units) that fits.
    std::vector<int> least(k, 0);
    bool possible = true;
    int reserved = 0;
    for (int s = 0; s < k && possible; ++s) {
      for (int u = 1; u + (k - s - 1) + reserved <= units; ++u)
        if (choice_for(partition[s], u * search.unit)) {
          least[s] = u;
          break;
        }
      possible = least[s] > 0;
      reserved += least[s];
    }
    if (!possible || reserved > units) continue;
    // Every allocation of all units with set s getting at least least[s].
    std::vector<int> given(k, 0);
    auto allocate = [&](auto& self, int s, int left) -> void {
      if (s == k - 1) {
        if (left < least[s]) return;
        given[s] = left;
        std::vector<const SetChoice*> picked;
        std::vector<int> devices;
        for (int t = 0; t < k; ++t) {
          const auto& c = choice_for(partition[t], given[t] * search.unit);
          if (!c) return;
          picked.push_back(&*c);
          devices.push_back(given[t] * search.unit);
        }
        ++search.allocations;
        plans.push_back(assemble_plan(sc, partition, devices, picked));
        return;
      }
      int rest = 0;
      for (int t = s + 1; t < k; ++t) rest += least[t];
      for (int u = least[s]; u <= left - rest; ++u) {
        given[s] = u;
        self(self, s + 1, left - u);
      }
    };
    allocate(allocate, 0, units);
    // Keep the best few as we go: the list stays short.
    if (plans.size() > 4u * std::max(1, options.keep) + 1024) {
      std::sort(plans.begin(), plans.end(),
                [](const Plan& a, const Plan& b) { return a.step.seconds < b.step.seconds; });
      plans.resize(std::max(1, options.keep));
    }
  }
  if (plans.empty()) throw_nothing_fits(sc);
  std::stable_sort(plans.begin(), plans.end(),
                   [](const Plan& a, const Plan& b) { return a.step.seconds < b.step.seconds; });
  if (static_cast<int>(plans.size()) > std::max(1, options.keep)) plans.resize(std::max(1, options.keep));
  search.plans = std::move(plans);
  search.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return search;
}

Plan evaluate_plan(const PlanInput& input, const DeviceProfile& profile, const PlanOptions& options,
                   const std::vector<int>& set_of_model, const std::vector<int>& set_devices,
                   const std::vector<ModelLayout>& layouts) {
  const SearchContext sc = make_context(input, profile, options);
  SetPartition partition(set_devices.size());
  for (std::size_t m = 0; m < set_of_model.size(); ++m)
    partition.at(set_of_model[m]).push_back(static_cast<int>(m));
  std::vector<SetChoice> choices(partition.size());
  for (std::size_t s = 0; s < partition.size(); ++s) {
    std::vector<MemoryUse> uses;
    for (int m : partition[s]) {
      LayoutOption o{layouts[m], sc.memory(m, layouts[m]),
                     sc.model_stage_times(m, layouts[m], set_devices[s]), 0};
      o.seconds = sum_of(o.times);
      uses.push_back(o.memory);
      choices[s].options.push_back(std::move(o));
    }
    choices[s].memory_per_device = set_memory(uses);
  }
  std::vector<const SetChoice*> picked;
  for (const auto& c : choices) picked.push_back(&c);
  return assemble_plan(sc, partition, set_devices, picked);
}

}  // namespace rlwb::core::planner
