// rlwb-gui: the workbench window. Argument parsing only; the GUI is ui/.
//   rlwb-gui [--db DB] [--open FILE | --compare ID,ID,... | --run ID] [--screen NAME]
//            [--cli PATH] [--catalog FILE.json]
//   headless (needs an X display, e.g. xvfb-run -a):
//            --frames N --screenshot OUT.png [--size WxH] [--script FILE]
//            [--dump-state OUT.json] [--frame-times OUT.json]
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ui/platform/frame_loop.h"
#include "ui/workbench.h"

namespace {

constexpr const char* kUsage = R"(usage: rlwb-gui [options]
  --db PATH             tracking database (default runs/rlwb.db)
  --open FILE           open a graph file in the editor
  --compare ID,ID,...   open the compare view on these runs
  --run ID              open the dashboard of one run
  --screen NAME         editor | runs | dashboard | compare | launch
  --cli PATH            the rlwb CLI that launches runs (default: next to rlwb-gui)
  --catalog FILE        method catalog JSON: what the editor validates calls against
headless, for scripts and tests (under xvfb-run -a):
  --frames N            render N frames (after the script, if any), then exit
  --screenshot OUT.png  write the last frame
  --size WxH            window size (default 1600x1000)
  --script FILE         input events, one a line (see ui/platform/input_script.h)
  --dump-state OUT.json what is on screen at exit, as JSON
  --frame-times OUT.json per-frame build/render milliseconds
)";

std::string default_cli() {
  if (const char* env = std::getenv("RLWB_CLI")) return env;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto next = self.parent_path() / "rlwb";
    if (std::filesystem::exists(next)) return next.string();
  }
  return "";
}

// A whole number for `option`, or an error that says what was wrong.
int64_t parse_number(const std::string& option, const std::string& text) {
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size())
    throw std::invalid_argument(option + " wants a whole number, got '" + text + "'");
  return value;
}

std::vector<int64_t> parse_ids(const std::string& text) {
  std::vector<int64_t> ids;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');)
    ids.push_back(parse_number("--compare (run ids separated by commas, e.g. 3,4)", part));
  if (ids.empty()) throw std::invalid_argument("--compare wants run ids, e.g. 3,4");
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  rlwb::ui::WorkbenchOptions options;
  rlwb::ui::FrameLoopOptions loop;
  loop.title = "RLWB workbench";
  std::string dump_state;
  options.cli = default_cli();
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a == "-h" || a == "--help") {
        std::cout << kUsage;
        return 0;
      }
      if (i + 1 >= args.size()) throw std::invalid_argument("option " + a + " needs a value");
      const std::string& v = args[++i];
      if (a == "--db")
        options.db = v;
      else if (a == "--open")
        options.open_file = v;
      else if (a == "--compare")
        options.compare = parse_ids(v);
      else if (a == "--run")
        options.dashboard_run = parse_number("--run", v);
      else if (a == "--screen") {
        rlwb::ui::Screen s;
        if (!rlwb::ui::parse_screen(v, s))
          throw std::invalid_argument("unknown screen '" + v + "'");
        options.screen = v;
      } else if (a == "--cli")
        options.cli = v;
      else if (a == "--catalog")
        options.catalog = v;
      else if (a == "--frames")
        loop.frames = static_cast<int>(parse_number("--frames", v));
      else if (a == "--screenshot")
        loop.screenshot = v;
      else if (a == "--script")
        loop.script = v;
      else if (a == "--dump-state")
        dump_state = v;
      else if (a == "--frame-times")
        loop.frame_times = v;
      else if (a == "--size") {
        if (std::sscanf(v.c_str(), "%dx%d", &loop.width, &loop.height) != 2 || loop.width < 200 ||
            loop.height < 200)
          throw std::invalid_argument("--size wants WxH, e.g. 1600x1000");
      } else {
        throw std::invalid_argument("unknown option " + a);
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "rlwb-gui: " << e.what() << "\n" << kUsage;
    return 2;
  }
  if ((!loop.screenshot.empty() || !dump_state.empty()) && loop.frames <= 0 && loop.script.empty())
    loop.frames = 3;

  auto app = std::make_unique<rlwb::ui::AppState>();
  rlwb::ui::init_workbench(*app, options);
  rlwb::ui::FrameLoopHooks hooks;
  hooks.draw = [&] { rlwb::ui::draw_workbench(*app); };
  hooks.settled = [&] { return rlwb::ui::workbench_settled(*app); };
  hooks.before_exit = [&] {
    if (dump_state.empty()) return;
    std::ofstream out(dump_state);
    out << rlwb::ui::dump_state(*app).dump(2) << "\n";
  };
  // A run started from the GUI stops with it: the launcher's destructor
  // asks the controller to stop, then kills what is left.
  return rlwb::ui::run_frame_loop(loop, hooks);
}
