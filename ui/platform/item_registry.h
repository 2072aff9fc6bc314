// Where named things were drawn in the last frame, so that a script (and a
// test) can point at "the Save button" or "the output pin x_sq of node
// square" the way a person would, by looking at the screen. Widgets record
// themselves as they draw; the frame loop clears the registry each frame.
// Ids are paths: "button/Save", "node/square", "pin/square/out/x_sq",
// "tab/Editor", "runs/row/3", "plot/critic/score/mean".
#pragma once

#include <map>
#include <optional>
#include <string>

#include "imgui.h"

namespace rlwb::ui {

struct ItemRect {
  ImVec2 min, max;
  ImVec2 center() const { return {(min.x + max.x) * 0.5f, (min.y + max.y) * 0.5f}; }
};

class ItemRegistry {
 public:
  void begin_frame();  // what the last frame drew becomes what find() sees
  void record(const std::string& id, ImVec2 min, ImVec2 max);
  // Records the last ImGui item (ImGui::GetItemRectMin/Max) under `id`.
  void record_last_item(const std::string& id);
  std::optional<ItemRect> find(const std::string& id) const;  // from the last full frame
  const std::map<std::string, ItemRect>& last_frame() const { return last_; }
  const std::map<std::string, ItemRect>& this_frame() const { return current_; }  // so far

 private:
  std::map<std::string, ItemRect> current_, last_;
};

ItemRegistry& items();  // the process's registry (ImGui's context is global too)

// ImGui::Button that records itself as "button/<label>" (label up to "##").
bool recorded_button(const char* label, ImVec2 size = ImVec2(0, 0));

}  // namespace rlwb::ui
