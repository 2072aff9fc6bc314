#include "app/progress.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

namespace rlwb::app {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One step's line: "[rlwb] step 3/60 [#...]  reward 0.41  held-out 0.57  kl 0.0012  tok/s 4100  0.90 s/step
// ETA 0m51s".
std::string step_line(const core::StepReport& r, int64_t steps, double elapsed,
                      const std::optional<core::EvalReport>& held_out) {
  double eta = r.step > 0 ? elapsed / r.step * (steps - r.step) : 0;
  const int width = 20;
  int filled = steps > 0 ? static_cast<int>(width * std::min(r.step, steps) / steps) : width;
  std::string line = "[rlwb] step " + std::to_string(r.step) + "/" + std::to_string(steps) + " [" +
                     std::string(filled, '#') + std::string(width - filled, '.') + "]";
  auto add = [&](const char* label, const char* key, const char* fmt) {
    auto it = r.metrics.find(key);
    if (it == r.metrics.end()) return;
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, it->second);
    line += std::string("  ") + label + " " + buf;
  };
  add("reward", "critic/score/mean", "%.3f");
  if (held_out) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", held_out->score);
    line += std::string("  held-out ") + buf;
  }
  // The KL to the reference: as a loss term, or inside the reward.
  add("kl",
      r.metrics.count("actor/kl_loss")             ? "actor/kl_loss"
      : r.metrics.count("actor/reward_kl_penalty") ? "actor/reward_kl_penalty"
                                                   : "actor/ppo_kl",
      "%.4f");
  add("tok/s", "perf/throughput", "%.0f");
  char tail[64];
  std::snprintf(tail, sizeof tail, "  %.2f s/step  ETA %dm%02ds", r.seconds, static_cast<int>(eta) / 60,
                static_cast<int>(eta) % 60);
  return line + tail;
}

}  // namespace

core::TrainerHooks progress_printer(int64_t steps) {
  // The clocks start when the first hook runs: the warm start's, or the RL loop's.
  struct Clocks {
    std::optional<Clock::time_point> warm_start, rl;
  };
  auto clocks = std::make_shared<Clocks>();
  core::TrainerHooks hooks;
  hooks.warm_start_step = [clocks](int64_t s, int64_t total, const std::map<std::string, double>& metrics) {
    if (!clocks->warm_start) clocks->warm_start = Clock::now();
    if (s != total && s % std::max<int64_t>(1, total / 10) != 0) return;
    std::fprintf(stderr, "[rlwb] warm start %lld/%lld", static_cast<long long>(s),
                 static_cast<long long>(total));
    for (auto& [k, v] : metrics)
      if (k.rfind("timing_s/", 0) != 0) std::fprintf(stderr, "  %s=%.4g", k.c_str(), v);
    std::fprintf(stderr, "  (%.0f s)\n", seconds_since(*clocks->warm_start));
  };
  hooks.evaluated = [clocks](const core::EvalReport& e) {
    std::fprintf(stderr, "[rlwb] eval at step %lld: held-out score %.3f over %lld rows\n",
                 static_cast<long long>(e.step), e.score, static_cast<long long>(e.rows));
    if (e.step == 0) clocks->rl = Clock::now();  // the RL loop starts after the first evaluation
  };
  hooks.step_done = [clocks, steps](const core::StepReport& r, const std::optional<core::EvalReport>& last) {
    if (!clocks->rl)
      clocks->rl = Clock::now() -
                   std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(r.seconds));
    std::fprintf(stderr, "%s\n", step_line(r, steps, seconds_since(*clocks->rl), last).c_str());
  };
  return hooks;
}

}  // namespace rlwb::app
