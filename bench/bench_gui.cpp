// bench_gui: frame time of the compare view with 20 runs x 10 metrics x
// 10,000 steps (2 million points) loaded, under Xvfb. Goal: under 16 ms a
// frame. Builds the tracking DB with the real writer, runs rlwb-gui headless
// (--compare with every run, --frame-times), and prints the per-frame build
// time (ImGui + this project's drawing code, CPU) and the GL render time
// (Mesa's software rasterizer under Xvfb, glFinish'ed), for a still view
// and for a view that zooms every frame (every reduction recomputed).
//   bench_gui [--runs 20] [--metrics 10] [--steps 10000] [--frames 120] [--keep DIR]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/bench_record.h"
#include "core/common/command_line.h"
#include "core/tracking/tracking.h"

namespace {

std::string gui_binary(const char* argv0) {
  if (const char* env = std::getenv("RLWB_GUI")) return env;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) self = std::filesystem::absolute(argv0);
  return (self.parent_path() / ".." / "app" / "rlwb-gui").lexically_normal().string();
}

struct Stats {
  double median = 0, p90 = 0, max = 0;
};

Stats stats(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.median = v[v.size() / 2];
  s.p90 = v[v.size() * 9 / 10];
  s.max = v.back();
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 20, metrics = 10, steps = 10000, frames = 120;
  std::string keep;
  CLI::App app{
      "bench_gui: rlwb-gui's per-frame build and render times on a database of many "
      "runs (under xvfb-run)",
      "bench_gui"};
  app.option_defaults()->always_capture_default();
  app.add_option("--runs", runs, "runs in the database")->check(CLI::PositiveNumber);
  app.add_option("--metrics", metrics, "metric keys per run")->check(CLI::PositiveNumber);
  app.add_option("--steps", steps, "steps per metric")->check(CLI::PositiveNumber);
  app.add_option("--frames", frames, "frames timed per view")->check(CLI::PositiveNumber);
  app.add_option("--keep", keep, "keep the database and screenshots in this folder");
  if (auto exit_code = rlwb::core::parse_command_line(app, argc, argv)) return *exit_code;
  const std::string gui = gui_binary(argv[0]);
  if (!std::filesystem::exists(gui)) {
    std::cerr << "bench_gui: no rlwb-gui at " << gui << " (build it, or set RLWB_GUI)\n";
    return 1;
  }
  std::filesystem::path dir =
      keep.empty() ? std::filesystem::temp_directory_path() / ("rlwb-bench-gui-" + std::to_string(getpid()))
                   : std::filesystem::path(keep);
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "rlwb.db").string();
  std::filesystem::remove(db);

  auto t0 = std::chrono::steady_clock::now();
  std::string ids;
  {
    rlwb::core::TrackingWriter writer(db, 1000);
    for (int r = 0; r < runs; ++r) {
      int64_t id = writer.start_run("bench-" + std::to_string(r), "experiments/bench.yaml", "", "grpo", r,
                                    {{"trainer", {{"lr", 1e-6 * (1 + r % 4)}}}, {"seed", r}});
      ids += (ids.empty() ? "" : ",") + std::to_string(id);
      for (int step = 0; step < steps; ++step)
        for (int m = 0; m < metrics; ++m)
          writer.log_metric(id, "metric/" + std::to_string(m), step,
                            std::sin(step * 0.001 * (m + 1)) + 0.1 * r + 0.05 * std::sin(step * 0.37 + r));
      writer.end_run(id, "finished");
    }
  }
  double write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("database: %d runs x %d metrics x %d steps = %lld points, written in %.1f s\n", runs, metrics,
              steps, static_cast<long long>(runs) * metrics * steps, write_s);

  // Wait until every run's metrics have arrived ("compare/loaded") and the
  // plots are drawn, then measure: still frames, then frames zooming on a plot.
  std::string script = "wait @compare/loaded 120000\nwait @plot/metric/0 10000\nframes 10\n";
  const std::string still_script = (dir / "still.script").string(),
                    zoom_script = (dir / "zoom.script").string();
  std::ofstream(still_script) << script << "move @plot/metric/0\n";
  std::string zoom = script + "move @plot/metric/0\n";
  for (int i = 0; i < frames / 3; ++i)
    zoom += (i % 2 ? "scroll @plot/metric/0 1\n" : "scroll @plot/metric/0 -1\n");
  std::ofstream(zoom_script) << zoom;

  auto measure = [&](const std::string& name, const std::string& script_path, int extra_frames) {
    const std::string times = (dir / (name + ".json")).string();
    std::string cmd = "xvfb-run -a -s '-screen 0 1600x1000x24' '" + gui + "' --db '" + db + "' --compare " +
                      ids + " --script '" + script_path + "' --frames " + std::to_string(extra_frames) +
                      " --frame-times '" + times + "' --screenshot '" + (dir / (name + ".png")).string() +
                      "' > '" + (dir / (name + ".log")).string() + "' 2>&1";
    int rc = std::system(cmd.c_str());
    if (rc != 0) {
      std::cerr << "bench_gui: rlwb-gui failed (" << rc << "); see " << (dir / (name + ".log")).string()
                << "\n";
      std::exit(1);
    }
    nlohmann::json all = nlohmann::json::parse(std::ifstream(times));
    // The last frames are the measured ones (the script's waiting frames come first).
    const size_t n =
        std::min<size_t>(all.size(), static_cast<size_t>(name == "still" ? extra_frames : frames / 3 * 3));
    std::vector<double> build, render, total, vertices;
    for (size_t i = all.size() - n; i < all.size(); ++i) {
      build.push_back(all[i]["build_ms"].get<double>());
      render.push_back(all[i]["render_ms"].get<double>());
      total.push_back(build.back() + render.back());
      vertices.push_back(all[i]["vertices"].get<double>());
    }
    Stats b = stats(build), g = stats(render), t = stats(total), v = stats(vertices);
    std::printf(
        "%-6s %3zu frames  build (CPU) median %6.2f ms  p90 %6.2f  max %6.2f | GL render "
        "(llvmpipe) median %6.2f ms | frame (build + render) median %6.2f ms  p90 %6.2f | "
        "%.0f vertices\n",
        name.c_str(), n, b.median, b.p90, b.max, g.median, t.median, t.p90, v.median);
    return std::make_pair(b, t);
  };
  auto [still_build, still_frame] = measure("still", still_script, frames);
  auto [zoom_build, zoom_frame] = measure("zoom", zoom_script, 2);
  auto verdict = [](const Stats& s) { return s.p90 < 16 ? "met" : "NOT met"; };
  std::printf("goal: < 16 ms a frame (p90)\n");
  std::printf("  building the frame (ImGui + plots, CPU): still %s, zooming %s\n", verdict(still_build),
              verdict(zoom_build));
  std::printf("  whole frame incl. GL render (here: Mesa llvmpipe): still %s, zooming %s\n",
              verdict(still_frame), verdict(zoom_frame));
  for (const auto& [what, st] : {std::pair{"still", still_frame}, std::pair{"zoom", zoom_frame}})
    rlwb::bench::record_figure({.key = std::string("gui/frame_p90_") + what,
                                .title = std::string("GUI frame p90, ") + what +
                                         ", build + llvmpipe render under Xvfb (`bench_gui`)",
                                .value = st.p90,
                                .unit = "ms",
                                .peer = "60 Hz frame budget",
                                .peer_value = 16,
                                .pair_ratios = {st.p90 / 16},
                                .higher_is_better = false,
                                .goal = "< 16 ms",
                                .met = st.p90 < 16});
  if (keep.empty())
    std::filesystem::remove_all(dir);
  else
    std::printf("kept %s (screenshots still.png, zoom.png)\n", dir.c_str());
  return 0;
}
