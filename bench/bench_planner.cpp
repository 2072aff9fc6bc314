// The planner at the HybridFlow paper's scale: PPO with four Llama models
// of one size (actor, critic, reference, reward) on 16 to 128 A100-80G, the
// paper's workload (section 8.1: 1024 prompts, 1024 prompt and 1024
// response tokens, one PPO epoch of 8 updates). For each model size and
// device count it prints the planner's choice and estimated throughput,
// the best plan of each placement family (all colocated; split in two
// sets; each model apart) and the paper's finding, then the search time
// for 4 models on 128 devices. Figures go to bench/RESULTS.md.
//   bench_planner [--profile A100-80G] [--sizes 7b,13b,34b,70b] [--devices 16,32,64,96,128]
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/planner/device_profile.h"
#include "core/planner/paper_workload.h"
#include "core/planner/plan_error.h"
#include "core/planner/plan_report.h"
#include "core/planner/planner.h"

namespace planner = rlwb::core::planner;

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The paper's finding for a size and device count (section 8.4, figure 14,
// as the issue summarises it).
const char* paper_finding(const std::string& size, int devices) {
  if (devices >= 96 && (size == "34b" || size == "70b" || size == "13b")) return "split best";
  return "colocate best";
}

const char* family(const planner::Plan& plan) {
  if (plan.sets.size() == 1) return "colocate";
  if (plan.sets.size() == 4) return "standalone";
  return "split";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"the planner on the HybridFlow paper's PPO workloads"};
  std::string profile_name = "A100-80G", sizes = "7b,13b,34b,70b", device_counts = "16,32,64,96,128";
  app.add_option("--profile", profile_name, "device profile")->capture_default_str();
  app.add_option("--sizes", sizes, "Llama sizes")->capture_default_str();
  app.add_option("--devices", device_counts, "device counts")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const planner::DeviceProfile profile = planner::load_device_profile(profile_name);
  std::printf("PPO, 4 models of one size, 1024 prompts x (1024 + 1024) tokens, %s\n\n", profile.name.c_str());
  std::printf(
      "| model | GPUs | planner's choice | step (s) | tokens/s | best colocate | best split | best "
      "standalone | paper | agrees |\n");
  std::printf("|---|---:|---|---:|---:|---:|---:|---:|---|---|\n");
  for (const std::string& size : split(sizes)) {
    const planner::PlanInput input = planner::paper_ppo_input(size);
    for (const std::string& count : split(device_counts)) {
      planner::PlanOptions options;
      options.devices = std::stoi(count);
      options.max_pp = 16;
      options.generation_layouts = true;
      options.keep = 1 << 20;
      planner::PlanSearch search;
      try {
        search = planner::search_plans(input, profile, options);
      } catch (const planner::PlanError&) {
        std::printf("| %s | %s | does not fit | - | - | - | - | - | %s | - |\n", size.c_str(), count.c_str(),
                    paper_finding(size, options.devices));
        continue;
      }
      std::map<std::string, double> best;
      for (const auto& p : search.plans)
        if (!best.count(family(p))) best[family(p)] = p.tokens_per_second;
      auto cell = [&](const char* f) {
        char buf[32];
        if (!best.count(f)) return std::string("-");
        std::snprintf(buf, sizeof buf, "%.0f", best[f]);
        return std::string(buf);
      };
      const planner::Plan& top = search.plans.front();
      std::string choice = planner::placement_summary(input, top) + " [";
      for (std::size_t m = 0; m < input.models.size(); ++m) {
        const auto& l = top.layouts[m];
        choice += (m ? "; " : "") + input.models[m].name + " t" + std::to_string(l.tp) + "p" +
                  std::to_string(l.pp) + "d" + std::to_string(l.dp);
        if (input.models[m].generates)
          choice += " gen t" + std::to_string(l.generate_tp) + "p" + std::to_string(l.generate_pp);
      }
      choice += "]";
      const std::string finding = paper_finding(size, options.devices);
      const bool agrees =
          (finding == std::string("colocate best")) == (std::string(family(top)) == "colocate");
      std::printf("| %s | %d | %s | %.1f | %.0f | %s | %s | %s | %s | %s |\n", size.c_str(), options.devices,
                  choice.c_str(), top.step.seconds, top.tokens_per_second, cell("colocate").c_str(),
                  cell("split").c_str(), cell("standalone").c_str(), finding.c_str(), agrees ? "yes" : "no");
    }
  }
  // The search time the issue bounds: 4 models on 128 devices.
  for (const std::string& size : split(sizes)) {
    planner::PlanOptions options;
    options.devices = 128;
    options.max_pp = 16;
    options.generation_layouts = true;
    const auto t0 = std::chrono::steady_clock::now();
    const planner::PlanSearch search =
        planner::search_plans(planner::paper_ppo_input(size), profile, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "\nsearch, %s PPO on 128 devices: %.3f s (%d placements, %lld allocations, steps of %d devices)",
        size.c_str(), seconds, search.placements, search.allocations, search.unit);
  }
  std::printf("\n");
  return 0;
}
