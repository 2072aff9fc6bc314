#include "core/planner/plan_report.h"

#include <cstdio>
#include <sstream>

#include "core/planner/plan_writer.h"

namespace rlwb::core::planner {
namespace {

std::string format(const char* fmt, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, a);
  return buf;
}

}  // namespace

std::string seconds_text(double s) {
  if (s < 1e-3) return format("%.1f us", s * 1e6);
  if (s < 1) return format("%.2f ms", s * 1e3);
  return format("%.3f s", s);
}

std::string bytes_text(double b) {
  if (b < 1024.0 * 1024 * 1024) return format("%.1f MiB", b / (1024.0 * 1024));
  return format("%.1f GiB", b / (1024.0 * 1024 * 1024));
}

std::string layout_text(const PlannedModel& model, const ModelLayout& l) {
  std::string s = "dp" + std::to_string(l.dp) + " tp" + std::to_string(l.tp) + " pp" + std::to_string(l.pp);
  if (model.generates && (l.generate_tp != l.tp || l.generate_pp != l.pp))
    s += ", generates at tp" + std::to_string(l.generate_tp) + " pp" + std::to_string(l.generate_pp);
  return s;
}

std::string placement_summary(const PlanInput& input, const Plan& plan) {
  std::string out;
  for (const DeviceSet& set : plan.sets) {
    std::string names;
    for (int m : set.models) names += (names.empty() ? "" : ",") + input.models[m].name;
    out += (out.empty() ? "" : " + ") + ("{" + names + "}x" + std::to_string(set.devices));
  }
  return out;
}

std::string search_summary(const PlanInput& input, const PlanSearch& search, const DeviceProfile& profile,
                           int devices) {
  std::ostringstream out;
  out << "planned " << input.models.size() << " models on " << devices << " " << profile.name
      << " device(s): " << search.placements << " placements, " << search.allocations
      << " allocations simulated (steps of " << search.unit << " device" << (search.unit > 1 ? "s" : "")
      << ") in " << seconds_text(search.seconds) << "\n";
  out << "workload: " << input.workload.prompts << " prompts x " << input.workload.samples_per_prompt
      << " samples, " << input.workload.prompt_length << " prompt + " << input.workload.response_length
      << " response tokens";
  return out.str();
}

std::string plan_report(const PlanInput& input, const PlanSearch& search, const DeviceProfile& profile,
                        int devices) {
  std::ostringstream out;
  out << search_summary(input, search, profile, devices) << "\n";
  for (std::size_t rank = 0; rank < search.plans.size(); ++rank) {
    const Plan& plan = search.plans[rank];
    out << "\n#" << rank + 1 << "  " << placement_summary(input, plan) << "  step "
        << seconds_text(plan.step.seconds) << ", " << format("%.0f", plan.tokens_per_second) << " tokens/s\n";
    for (std::size_t s = 0; s < plan.sets.size(); ++s) {
      const DeviceSet& set = plan.sets[s];
      out << "  set " << s << ": devices " << set.first_device << "-" << set.first_device + set.devices - 1
          << ", " << bytes_text(set.memory_per_device) << " per device\n";
      for (int m : set.models)
        out << "    " << input.models[m].name << ": " << layout_text(input.models[m], plan.layouts[m])
            << "; memory " << bytes_text(plan.memory[m].resident) << " kept + "
            << bytes_text(plan.memory[m].transient) << " at its peak\n";
    }
    out << "  node            set   start      time       compute    comm       overhead\n";
    for (const StageEstimate& e : plan.step.stages) {
      char line[200];
      std::snprintf(line, sizeof line, "  %-15s %-5s %-10s %-10s %-10s %-10s %s\n", e.node.c_str(),
                    e.set < 0 ? "-" : std::to_string(e.set).c_str(), seconds_text(e.start).c_str(),
                    seconds_text(e.seconds).c_str(), seconds_text(e.time.compute).c_str(),
                    seconds_text(e.time.communication).c_str(), seconds_text(e.time.overhead).c_str());
      out << line;
    }
  }
  return out.str();
}

nlohmann::json plan_json(const PlanInput& input, const Plan& plan) {
  nlohmann::json sets = nlohmann::json::array();
  for (const auto& set : plan.sets) {
    nlohmann::json models = nlohmann::json::object();
    for (int m : set.models) {
      const auto& l = plan.layouts[m];
      models[input.models[m].name] = {{"dp", l.dp},
                                      {"tp", l.tp},
                                      {"pp", l.pp},
                                      {"generate_tp", l.generate_tp},
                                      {"generate_pp", l.generate_pp},
                                      {"memory_bytes", plan.memory[m].total()}};
    }
    sets.push_back({{"pool", pool_name_of(input, set)},
                    {"devices", set.devices},
                    {"memory_per_device", set.memory_per_device},
                    {"models", models}});
  }
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& e : plan.step.stages)
    stages.push_back({{"node", e.node},
                      {"set", e.set},
                      {"start", e.start},
                      {"seconds", e.seconds},
                      {"compute", e.time.compute},
                      {"communication", e.time.communication}});
  return {{"placement", placement_summary(input, plan)},
          {"step_seconds", plan.step.seconds},
          {"tokens_per_second", plan.tokens_per_second},
          {"sets", sets},
          {"stages", stages}};
}

}  // namespace rlwb::core::planner
