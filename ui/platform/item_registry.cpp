#include "ui/platform/item_registry.h"

#include <cstring>

namespace rlwb::ui {

void ItemRegistry::begin_frame() {
  last_.swap(current_);
  current_.clear();
}

void ItemRegistry::record(const std::string& id, ImVec2 min, ImVec2 max) {
  // Clipped out of its window: a person could not click it either.
  if (ImGui::GetCurrentContext() && !ImGui::IsRectVisible(min, max)) return;
  current_[id] = ItemRect{min, max};
}

void ItemRegistry::record_last_item(const std::string& id) {
  record(id, ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
}

std::optional<ItemRect> ItemRegistry::find(const std::string& id) const {
  auto it = last_.find(id);
  if (it == last_.end()) return std::nullopt;
  return it->second;
}

ItemRegistry& items() {
  static ItemRegistry registry;
  return registry;
}

bool recorded_button(const char* label, ImVec2 size) {
  bool pressed = ImGui::Button(label, size);
  const char* end = std::strstr(label, "##");
  items().record_last_item("button/" + std::string(label, end ? end - label : std::strlen(label)));
  return pressed;
}

}  // namespace rlwb::ui
