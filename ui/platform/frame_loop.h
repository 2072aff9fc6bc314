// The GLFW window, the Dear ImGui frame loop and the headless modes that
// scripts and tests use. The app gives a function that draws one frame from
// its state; this file owns the window, the GL context and the input.
//
//   interactive: a visible window, real input, until it is closed.
//   headless (frames > 0 or a script): a hidden window rendering into an
//     offscreen framebuffer of exactly width x height; input comes only
//     from the script; after the script and `frames` more frames, the last
//     frame is written to `screenshot`. Needs an X display (xvfb-run).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace rlwb::ui {

struct FrameLoopOptions {
  std::string title = "RLWB";
  int width = 1600, height = 1000;
  int frames = 0;           // headless: frames to render after the script and once
                            // hooks.settled says so (0: interactive)
  std::string script;       // input script file (input_script.h); implies headless
  std::string screenshot;   // PNG written after the last frame
  std::string frame_times;  // headless: per-frame milliseconds written as JSON
};

struct FrameLoopHooks {
  std::function<void()> draw;           // one frame of ImGui calls
  std::function<bool()> wants_to_quit;  // checked after each frame (may be empty)
  // The window is asked to close (its close button, or a script's `close`):
  // true lets it close; false keeps it open (the app asks the user first,
  // then quits through wants_to_quit). Empty: it closes.
  std::function<bool()> may_close;
  std::function<void()> before_exit;  // last chance to read state while ImGui lives
  // Headless: `frames` are counted once this is true (the data a screen
  // shows has arrived), or after settle_timeout_s. May be empty.
  std::function<bool()> settled;
  double settle_timeout_s = 20;
};

struct FrameTiming {
  double build_ms = 0;     // ImGui::NewFrame .. ImGui::Render (the app's CPU work)
  double render_ms = 0;    // the GL draw of the frame, finished (glFinish)
  int vertices = 0;        // what the frame asked the GPU to draw
  int layers_redrawn = 0;  // cached layers (layer_cache.h) drawn again this frame
};

// Returns the process exit code: 0, or 3 when the script failed (the
// message is printed) or the window could not be opened.
int run_frame_loop(const FrameLoopOptions& options, const FrameLoopHooks& hooks);

// Per-frame timings of the last headless run (for the benchmark).
const std::vector<FrameTiming>& last_frame_timings();

}  // namespace rlwb::ui
