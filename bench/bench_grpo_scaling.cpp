// How the cost of a GRPO step grows: the default experiment's step (RL
// steps only, as bench_grpo_step runs it) as the work grows along one axis
// at a time, RLWB beside TRL's GRPOTrainer where TRL can run the point:
//   prompts    16 .. 256 prompts per step (x 8 samples)
//   response   5 .. 64 new tokens at most (the model gets 80 positions on
//              this axis; a random model stops at <eos> early, but a batch
//              decodes until its longest row stops, so the work counts
//              the limit)
//   hidden     128 .. 1024 (MLP 2x, one head per 32 dims, kv heads half)
//   layers     2 .. 8
//   dp         1, 2 data-parallel ranks (TRL: 1, 2 processes; 1 thread each)
// Everything else stays at the base point (16 prompts x 8, 5 tokens, hidden
// 128, 2 layers, dp 2; TRL 1 process x 2 threads, its faster layout in
// bench_grpo_step). For each axis it prints the step time of every point and
// the scaling exponent: the slope of log(step time) against log(x), and
// against log(work), work = rows x tokens x the model's parameters outside
// the embeddings (what the matmuls grow with). An exponent in the work
// above 1 is cost that grows faster than the work.
// Writes scaling.csv to --out and, when matplotlib is in the reference
// Python, one log-log PNG per axis (bench/plot_scaling.py).
//
//   bench_grpo_scaling [--axes prompts,response,hidden,layers,dp] [--steps 3] [--warmup 1]
//                      [--no-trl] [--cpus 0,1] [--out DIR]
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "bench/bench_grpo_common.h"
#include "bench/bench_record.h"
#include "core/common/command_line.h"

using namespace rlwb::core;
using namespace rlwb::bench;

namespace {

// <bos> "99+99=": the arithmetic task's longest prompt, in tokens.
constexpr double kLongestPrompt = 7;

struct Point {
  std::string axis;
  double x = 0;  // the axis value
  std::vector<std::string> overrides;
  int trl_processes = 1, trl_threads = 2;
  // Measured:
  double rlwb_step_s = 0, rlwb_tokens = 0, work = 0;
  double trl_step_s = 0, trl_tokens = 0;
  bool trl_ran = false;
};

std::vector<std::string> model_overrides(const std::string& key, const std::string& value) {
  return {"models.actor.config.model." + key + "=" + value, "models.ref.config.model." + key + "=" + value};
}

std::vector<Point> points_of(const std::string& axis) {
  std::vector<Point> out;
  auto add = [&](double x, std::vector<std::string> o) {
    Point p;
    p.axis = axis;
    p.x = x;
    p.overrides = std::move(o);
    out.push_back(std::move(p));
  };
  if (axis == "prompts")
    for (int v : {16, 32, 64, 128, 256}) add(v, {"task.batch_size=" + std::to_string(v)});
  if (axis == "response")
    for (int v : {5, 16, 32, 64}) {
      auto o = model_overrides("max_position_embeddings", "80");
      o.push_back("models.actor.config.rollout.max_new_tokens=" + std::to_string(v));
      add(v, o);
    }
  if (axis == "hidden")
    for (int h : {128, 256, 512, 1024}) {
      std::vector<std::string> o;
      for (auto [k, v] : {std::pair{"hidden_size", h}, std::pair{"intermediate_size", 2 * h},
                          std::pair{"num_heads", h / 32}, std::pair{"num_kv_heads", h / 64}})
        for (auto& s : model_overrides(k, std::to_string(v))) o.push_back(s);
      add(h, o);
    }
  if (axis == "layers")
    for (int l : {2, 4, 8}) add(l, model_overrides("num_layers", std::to_string(l)));
  if (axis == "dp")
    for (int d : {1, 2}) {
      add(d, {"pools.train.workers=" + std::to_string(d), "models.actor.parallel.dp=" + std::to_string(d),
              "models.ref.parallel.dp=" + std::to_string(d)});
      out.back().trl_processes = d;
      out.back().trl_threads = 1;
    }
  return out;
}

// Least-squares slope of log(y) over log(x).
double loglog_slope(const std::vector<double>& x, const std::vector<double>& y) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] <= 0 || y[i] <= 0) continue;
    const double a = std::log(x[i]), b = std::log(y[i]);
    n += 1, sx += a, sy += b, sxx += a * a, sxy += a * b;
  }
  const double d = n * sxx - sx * sx;
  return n >= 2 && d > 0 ? (n * sxy - sx * sy) / d : std::nan("");
}

// Parameters outside the embeddings: attention (q, o full; k, v by kv heads) and the MLP.
double matmul_params(const Experiment& exp) {
  const auto& m = *config::parse_experiment_options(exp).models.at("actor").model;
  const double h = static_cast<double>(m.hidden_size),
               i = static_cast<double>(m.resolved_intermediate_size());
  const double kv = h / static_cast<double>(m.num_heads) * static_cast<double>(m.resolved_kv_heads());
  return static_cast<double>(m.num_layers) * (2 * h * h + 2 * h * kv + 3 * h * i);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> axes = {"prompts", "response", "hidden", "layers", "dp"};
  int steps = 3, warmup = 1;
  bool no_trl = false;
  std::vector<int> cpus = {0, 1};
  std::string out_dir = (std::filesystem::temp_directory_path() / "rlwb-bench-scaling").string();
  CLI::App app{
      "bench_grpo_scaling: how a GRPO step's cost grows with the work, axis by axis, RLWB beside TRL",
      "bench_grpo_scaling"};
  app.option_defaults()->always_capture_default();
  app.add_option("--axes", axes, "the axes to measure")
      ->delimiter(',')
      ->check(CLI::IsMember({"prompts", "response", "hidden", "layers", "dp"}));
  app.add_option("--steps", steps, "timed steps per point")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "untimed steps first")->check(CLI::NonNegativeNumber);
  app.add_flag("--no-trl", no_trl, "RLWB alone");
  app.add_option("--cpus", cpus, "the cores both sides are pinned to")->delimiter(',');
  app.add_option("--out", out_dir, "where scaling.csv and the PNG plots go");
  if (auto exit_code = parse_command_line(app, argc, argv)) return *exit_code;
  pin_to_cores(cpus);
  std::filesystem::create_directories(out_dir);
  const int prompts = 16, n = 8;
  std::printf(
      "GRPO step cost by axis, base point %d prompts x %d samples, 5 new tokens, hidden 128, 2 layers, "
      "dp 2; %d timed steps after %d per point; pinned to cores %s\n",
      prompts, n, steps, warmup, core_list(cpus).c_str());

  std::vector<Point> all;
  for (const auto& axis : axes) {
    std::printf("\n%-9s %9s %12s %12s %12s %12s %10s\n", axis.c_str(), "x", "RLWB s", "RLWB tok", "TRL s",
                "TRL tok", "TRL/RLWB");
    for (Point p : points_of(axis)) {
      const Experiment exp = grpo_step_experiment(prompts, n, steps + warmup, p.overrides);
      try {
        const RlwbRun r = run_rlwb(exp, warmup);
        p.rlwb_step_s = r.step_s;
        p.rlwb_tokens = r.tokens_per_s * r.step_s;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_grpo_scaling: %s = %g: %s\n", axis.c_str(), p.x, e.what());
        return 1;
      }
      const auto options = config::parse_experiment_options(exp);
      // The work: the step's tokens (prompts + responses) x the matmul weights.
      // On the response axis, the tokens a batched generator computes: every
      // row runs until the longest stops, so its decode steps are the
      // response limit, not the mean length (a random model stops early).
      const double rows = static_cast<double>(options.task.rows_per_step());
      const double tokens = axis == "response" ? rows * (kLongestPrompt + p.x) : p.rlwb_tokens;
      p.work = tokens * matmul_params(exp);
      if (!no_trl) {
        const nlohmann::json t = run_trl(exp, steps, warmup, p.trl_processes, p.trl_threads);
        if (!t.contains("error")) {
          p.trl_ran = true;
          p.trl_step_s = t.value("step_s_median", 0.0);
          p.trl_tokens = t.value("tokens_per_s", 0.0) * p.trl_step_s;
        } else {
          std::fprintf(stderr, "bench_grpo_scaling: TRL at %s = %g did not run: %s\n", axis.c_str(), p.x,
                       t["error"].get<std::string>().substr(0, 300).c_str());
        }
      }
      std::printf("%-9s %9.1f %12.4f %12.0f %12.4f %12.0f %9.2fx\n", "", p.x, p.rlwb_step_s, p.rlwb_tokens,
                  p.trl_step_s, p.trl_tokens, p.trl_ran ? p.trl_step_s / p.rlwb_step_s : 0.0);
      std::fflush(stdout);
      all.push_back(p);
    }
  }

  std::ofstream csv(std::filesystem::path(out_dir) / "scaling.csv");
  csv << "axis,x,work,rlwb_step_s,rlwb_tokens,trl_step_s,trl_tokens\n";
  for (const Point& p : all)
    csv << p.axis << "," << p.x << "," << p.work << "," << p.rlwb_step_s << "," << p.rlwb_tokens << ","
        << (p.trl_ran ? std::to_string(p.trl_step_s) : "") << ","
        << (p.trl_ran ? std::to_string(p.trl_tokens) : "") << "\n";
  csv.close();

  std::printf("\nscaling exponents (slope of log step time; 1 = linear):\n");
  std::printf("%-9s %12s %12s %12s %12s\n", "axis", "RLWB vs x", "TRL vs x", "RLWB vs work", "TRL vs work");
  for (const auto& axis : axes) {
    std::vector<double> x, work, rlwb, trl_x, trl_work, trl;
    for (const Point& p : all) {
      if (p.axis != axis) continue;
      x.push_back(p.x), work.push_back(p.work), rlwb.push_back(p.rlwb_step_s);
      if (p.trl_ran) trl_x.push_back(p.x), trl_work.push_back(p.work), trl.push_back(p.trl_step_s);
    }
    // At dp 1 and 2 the work is the same: the slope against x is the speed-up's exponent (-1 = ideal).
    const bool same_work = axis == "dp";
    const double rx = loglog_slope(x, rlwb), rw = same_work ? std::nan("") : loglog_slope(work, rlwb);
    const double tx = loglog_slope(trl_x, trl), tw = same_work ? std::nan("") : loglog_slope(trl_work, trl);
    std::printf("%-9s %12.2f %12.2f %12.2f %12.2f\n", axis.c_str(), rx, tx, rw, tw);
    if (axis == "dp") continue;  // the work is the same at dp 1 and 2: a speed-up, not an exponent
    record_figure(
        {.key = "scaling/" + axis,
         .title = "GRPO step time vs the work along '" + axis + "', exponent (`bench_grpo_scaling`)",
         .value = rw,
         .unit = "exponent",
         .peer = "TRL's exponent",
         .peer_value = std::isnan(tw) ? std::optional<double>() : std::optional<double>(tw),
         .pair_ratios = {},
         .higher_is_better = false,
         .goal = "<= 1 (no worse than linear in the work)",
         .met = rw <= 1.05});
  }
  const std::string plot = "'" + reference_python() + "' '" + (bench_dir() / "plot_scaling.py").string() +
                           "' '" + (std::filesystem::path(out_dir) / "scaling.csv").string() + "' '" +
                           out_dir + "'";
  if (std::system(plot.c_str()) != 0)
    std::printf(
        "plots not drawn (matplotlib missing from %s? pip install -r scripts/python-requirements.txt)\n",
        reference_python().c_str());
  std::printf("wrote %s/scaling.csv and the plots beside it\n", out_dir.c_str());
  return 0;
}
