// Scripted input for rlwb-gui --script FILE: mouse moves, clicks, drags,
// keys and text, applied frame by frame as if a person did them, so tests
// drive the real program. One command a line; '#' starts a comment.
//
//   frames N                  render N frames with the input left as it is
//   move POS                  put the mouse at POS
//   click POS [right|middle] [ctrl] [shift]     press and release there
//   dclick POS                double click
//   drag POS POS [right|middle] [ctrl] [shift] [steps=N]
//   scroll POS DY             mouse wheel (DY > 0: away from the user)
//   key [ctrl+][shift+]NAME   NAME: a..z, 0..9, delete, backspace, enter,
//                             escape, tab, left, right, up, down, home, end
//   text WORDS...             types the rest of the line
//   wait @ITEM MS             render until ITEM is on screen (error after MS)
//   sleep MS                  render frames for MS of wall-clock time
//   screenshot FILE.png       write the current frame
//   close                     ask the window to close, as its close button does
//
// POS is "X,Y" in window pixels, "@ITEM" (the centre of a recorded item, see
// item_registry.h), "@ITEM~DX,DY" (offset from that centre), or, as the
// second point of a drag, "+DX,DY" relative to the first. Double quotes
// keep blanks in a word: click @"button/Start run".
#pragma once

#include <chrono>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "imgui.h"
#include "ui/platform/item_registry.h"

namespace rlwb::ui {

class ScriptError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ScriptPos {
  enum class Kind { absolute, item, relative } kind = Kind::absolute;
  std::string item;
  float x = 0, y = 0;  // absolute position, or offset from the item's centre / the drag start
};

struct ScriptCommand {
  enum class Kind { frames, move, click, dclick, drag, scroll, key, text, wait, sleep, screenshot, close };
  Kind kind = Kind::frames;
  int line = 0;
  int count = 0;   // frames, sleep/wait milliseconds, drag steps
  int button = 0;  // 0 left, 1 right, 2 middle
  bool ctrl = false, shift = false;
  int key = 0;  // GLFW key code
  float wheel = 0;
  std::vector<ScriptPos> pos;
  std::string text;  // typed text, screenshot path
};

// Throws ScriptError("script:LINE: ...") on the first malformed line.
std::vector<ScriptCommand> parse_script(const std::string& text);

// The input state of one frame, as the player wants ImGui to see it.
struct ScriptFrame {
  ImVec2 mouse{-1, -1};
  bool buttons[3] = {false, false, false};
  bool ctrl = false, shift = false;
  int key_down = 0;   // GLFW key held this frame (0: none)
  std::string chars;  // typed this frame
  float wheel = 0;
  float delta_time = 1.0f / 60.0f;
  std::string screenshot;  // write a screenshot after this frame
  bool close = false;      // the window is asked to close (FrameLoopHooks::may_close decides)
};

// Plays commands one frame at a time. Item positions are looked up when a
// command starts, in what the previous frame drew.
class ScriptPlayer {
 public:
  explicit ScriptPlayer(std::vector<ScriptCommand> commands);
  // The next frame's input; nullopt once every command has run. Throws
  // ScriptError when an item never shows up.
  std::optional<ScriptFrame> next_frame(const ItemRegistry& items);
  bool done() const { return commands_.empty() && queue_.empty() && !waiting_; }

 private:
  void expand(const ScriptCommand& cmd, const ItemRegistry& items);
  ImVec2 resolve(const ScriptPos& pos, const ItemRegistry& items, const ScriptCommand& cmd,
                 ImVec2 origin) const;
  ScriptFrame hold() const;  // the current state, nothing new

  std::deque<ScriptCommand> commands_;
  std::deque<ScriptFrame> queue_;
  ScriptFrame state_;
  // A command waiting for something on screen (wait/sleep, or an item to click).
  bool waiting_ = false;
  ScriptCommand pending_;
  std::chrono::steady_clock::time_point deadline_;
};

}  // namespace rlwb::ui
