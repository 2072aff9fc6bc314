// An ImGui context without a window or renderer, for tests of this
// project's drawing code (plots, cached layers): a display of the given
// size, fonts built, no ini file. Pair with ImGui::DestroyContext().
#pragma once

#include <imgui.h>

namespace rlwb::ui::test {

inline void create_headless_imgui(ImVec2 display_size) {
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = display_size;
  io.DeltaTime = 1.0f / 60;
  io.IniFilename = nullptr;
  io.Fonts->Build();
}

}  // namespace rlwb::ui::test
