// Shared by tests/ui: a fresh directory per test, file helpers, and running
// rlwb-gui headless under xvfb-run with a script, reading back its state
// dump and screenshot.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/experiment.h"
#include "tests/test_files.h"
#include "ui/platform/png.h"
#include "tests/test_paths.h"

namespace rlwb::ui::test {

class TempDirTest : public rlwb::testing::TempDirTest {
 protected:
  TempDirTest() : rlwb::testing::TempDirTest("rlwb-ui") {}
};

using rlwb::testing::read_bytes;
using rlwb::testing::write_bytes;

// Sets an environment variable (which programs the test starts inherit)
// for its lifetime, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    setenv(name_.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_.c_str(), old_->c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

inline std::string source_path(const std::string& relative) {
  return std::string(rlwb::testing::kSourceDir) + "/" + relative;
}

// experiments/demo.yaml, loaded: the graph most editor tests work on.
inline core::Experiment demo_experiment() {
  return core::load_experiment_text(read_bytes(source_path("experiments/demo.yaml")), "demo.yaml");
}

// Pixels in [x0,x1) x [y0,y1) whose colour is within `tolerance` of rgb.
inline int count_color(const Image& image, int x0, int y0, int x1, int y1, uint32_t rgb, int tolerance = 24) {
  int n = 0;
  for (int y = std::max(0, y0); y < std::min(image.height, y1); ++y)
    for (int x = std::max(0, x0); x < std::min(image.width, x1); ++x) {
      const uint8_t* p = &image.rgba[(static_cast<size_t>(y) * image.width + x) * 4];
      if (std::abs(p[0] - int((rgb >> 16) & 255)) <= tolerance &&
          std::abs(p[1] - int((rgb >> 8) & 255)) <= tolerance && std::abs(p[2] - int(rgb & 255)) <= tolerance)
        ++n;
    }
  return n;
}

// Distinct colours in a region (a blank or flat region has one or two).
inline size_t distinct_colors(const Image& image, int x0, int y0, int x1, int y1) {
  std::vector<uint32_t> seen;
  for (int y = std::max(0, y0); y < std::min(image.height, y1); y += 2)
    for (int x = std::max(0, x0); x < std::min(image.width, x1); x += 2) {
      uint32_t c = image.pixel(x, y);
      if (std::find(seen.begin(), seen.end(), c) == seen.end()) seen.push_back(c);
      if (seen.size() > 1000) return seen.size();
    }
  return seen.size();
}

struct GuiResult {
  int exit_code = -1;
  nlohmann::json state;
  Image screenshot;
  std::string log;
};

#ifdef RLWB_HAVE_GUI
// Runs rlwb-gui in `dir` under xvfb-run: `args` plus --screenshot, --dump-state
// and (when non-empty) --script with `script` as its text.
inline GuiResult run_gui(const std::filesystem::path& dir, const std::vector<std::string>& args,
                         const std::string& script = "", const std::string& tag = "gui") {
  GuiResult result;
  const std::string shot = (dir / (tag + ".png")).string(), state = (dir / (tag + ".json")).string(),
                    log = (dir / (tag + ".log")).string();
  std::string cmd = "cd '" + dir.string() + "' && xvfb-run -a -s '-screen 0 1600x1000x24' '" +
                    std::string(rlwb::testing::kGuiBin) + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  if (!script.empty()) {
    write_bytes((dir / (tag + ".script")).string(), script);
    cmd += " --script '" + (dir / (tag + ".script")).string() + "'";
  }
  cmd += " --screenshot '" + shot + "' --dump-state '" + state + "' > '" + log + "' 2>&1";
  // xvfb-run -a can lose the race for a display number to another X server
  // starting at the same moment; that is the machine, not the GUI: try
  // again (3 times at most).
  for (int attempt = 0; attempt < 3; ++attempt) {
    int status = std::system(cmd.c_str());
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.log = read_bytes(log);
    if (result.log.find("Xvfb failed to start") == std::string::npos) break;
  }
  std::ifstream in(state);
  if (in) result.state = nlohmann::json::parse(in, nullptr, false);
  if (std::filesystem::exists(shot)) result.screenshot = read_png(shot);
  return result;
}
#endif

// The rect of a recorded item in a state dump: {x0, y0, x1, y1}.
inline std::vector<int> item_rect(const nlohmann::json& state, const std::string& id) {
  if (!state.contains("items") || !state["items"].contains(id)) return {};
  const auto& r = state["items"][id];
  return {int(r[0].get<float>()), int(r[1].get<float>()), int(r[2].get<float>()), int(r[3].get<float>())};
}

}  // namespace rlwb::ui::test
