// rlwb-gui: the workbench window. Argument handling only; the GUI is ui/.
//   rlwb-gui [--db DB] [--open FILE | --compare ID,ID,... | --run ID] [--screen NAME]
//            [--cli PATH] [--catalog FILE.json]
//   headless (needs an X display, e.g. xvfb-run -a):
//            --frames N --screenshot OUT.png [--size WxH] [--script FILE]
//            [--dump-state OUT.json] [--frame-times OUT.json]
// `rlwb-gui --help` lists them.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/common/command_line.h"
#include "core/validate/validator.h"
#include "app/catalog.h"
#include "app/tokenizer_vocab.h"
#include "ui/platform/frame_loop.h"
#include "ui/workbench.h"

namespace {

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

// Accepts the names parse_screen accepts.
const CLI::Validator kScreenName(
    [](std::string& name) -> std::string {
      rlwb::ui::Screen screen;
      return rlwb::ui::parse_screen(name, screen) ? "" : "unknown screen '" + name + "'";
    },
    "editor|runs|dashboard|compare|launch|profile");

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

// "3,4": the run ids of --compare.
std::vector<int64_t> parse_ids(const std::string& text) {
  std::vector<int64_t> ids;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');)
    ids.push_back(parse_number("--compare (run ids separated by commas, e.g. 3,4)", part));
  if (ids.empty()) throw std::invalid_argument("--compare wants run ids, e.g. 3,4");
  return ids;
}

// "1600x1000" into the window size, at least 200 x 200.
std::string parse_size(const std::string& text, rlwb::ui::FrameLoopOptions& loop) {
  int width = 0, height = 0;
  char rest = 0;
  if (std::sscanf(text.c_str(), "%dx%d%c", &width, &height, &rest) != 2 || width < 200 || height < 200)
    return "wants WxH of at least 200x200, e.g. 1600x1000; got '" + text + "'";
  loop.width = width;
  loop.height = height;
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  rlwb::ui::WorkbenchOptions options;
  rlwb::ui::FrameLoopOptions loop;
  loop.title = "RLWB workbench";
  // Read as text and checked after the parse, so that a bad value is named
  // in full ("--compare ... got 'x'").
  std::string compare, run, size;
  std::string dump_state;
  options.cli = default_cli();
  CLI::App command_line{
      "rlwb-gui: the RLWB workbench (graph editor, runs, dashboard, compare, launch, profile)", "rlwb-gui"};
  command_line.add_option("--db", options.db, "tracking database")->capture_default_str();
  command_line.add_option("--open", options.open_file, "open a graph file in the editor");
  command_line.add_option("--compare", compare, "open the compare view on these runs")
      ->type_name("ID,ID,...");
  command_line.add_option("--run", run, "open the dashboard of one run (with --screen profile: its profile)")
      ->type_name("ID");
  command_line.add_option("--screen", options.screen, "the screen to show first")->check(kScreenName);
  command_line.add_option("--cli", options.cli,
                          "the rlwb CLI that launches runs (default: next to rlwb-gui)");
  command_line
      .add_option("--templates", options.templates, "folder of experiment files the editor's New... offers")
      ->capture_default_str();
  command_line.add_option("--catalog", options.catalog,
                          "method catalog JSON the editor checks calls against (default: this build's)");
  const std::string headless = "Headless, for scripts and tests (under xvfb-run -a)";
  command_line.add_option("--frames", loop.frames, "render N frames (after the script, if any), then exit")
      ->check(CLI::NonNegativeNumber)
      ->group(headless);
  command_line.add_option("--screenshot", loop.screenshot, "write the last frame (PNG)")->group(headless);
  command_line.add_option("--size", size, "window size (default 1600x1000)")
      ->type_name("WxH")
      ->group(headless);
  command_line
      .add_option("--script", loop.script, "input events, one a line (see ui/platform/input_script.h)")
      ->group(headless);
  command_line.add_option("--dump-state", dump_state, "what is on screen at exit, as JSON")->group(headless);
  command_line.add_option("--frame-times", loop.frame_times, "per-frame build/render milliseconds (JSON)")
      ->group(headless);
  if (auto exit_code = rlwb::core::parse_command_line(command_line, argc, argv)) return *exit_code;
  // The composition root: the editor checks graphs against what this build
  // registers (worker roles, builtins, tasks, reward types), in-process.
  options.build_catalog = std::make_shared<const rlwb::core::MethodCatalog>(rlwb::app::catalog());
  // ...and the Plan panel reads model shapes through this build's tokenizers.
  options.tokenizer_vocab = rlwb::app::tokenizer_vocab;
  try {
    if (!compare.empty()) options.compare = parse_ids(compare);
    if (!run.empty()) options.dashboard_run = parse_number("--run", run);
  } catch (const std::invalid_argument& e) {
    return rlwb::core::report_usage_error(command_line, e.what());
  }
  if (!size.empty())
    if (std::string problem = parse_size(size, loop); !problem.empty())
      return rlwb::core::report_usage_error(command_line, "--size " + problem);
  if ((!loop.screenshot.empty() || !dump_state.empty()) && loop.frames <= 0 && loop.script.empty())
    loop.frames = 3;

  auto app = std::make_unique<rlwb::ui::AppState>();
  rlwb::ui::init_workbench(*app, options);
  rlwb::ui::FrameLoopHooks hooks;
  hooks.draw = [&] { rlwb::ui::draw_workbench(*app); };
  hooks.settled = [&] { return rlwb::ui::workbench_settled(*app); };
  // Closing with unsaved edits asks first; the dialog's choice ends the loop.
  hooks.may_close = [&] { return rlwb::ui::request_quit(app->editor); };
  hooks.wants_to_quit = [&] { return app->editor.quit_now; };
  hooks.before_exit = [&] {
    if (dump_state.empty()) return;
    std::ofstream out(dump_state);
    out << rlwb::ui::dump_state(*app).dump(2) << "\n";
  };
  // A run started from the GUI stops with it: the launcher's destructor
  // asks the controller to stop, then kills what is left.
  return rlwb::ui::run_frame_loop(loop, hooks);
}
