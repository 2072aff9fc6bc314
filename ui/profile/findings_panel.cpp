// [SECTION] The analyzer's findings, as `rlwb analyze` lists them.
#include "ui/profile/findings_panel.h"

#include <string>

#include "core/profile/profile_units.h"
#include "ui/platform/item_registry.h"

namespace rlwb::ui {

void draw_findings_panel(const std::vector<core::profile::Finding>& findings, ImVec2 size) {
  ImGui::BeginChild("findings", size, true);
  ImGui::Text("Findings (%zu), by expected gain", findings.size());
  items().record_last_item("profile/findings");
  ImGui::Separator();
  if (findings.empty()) {
    ImGui::TextWrapped("no findings: none of the analyzer's rules matched this profile");
    items().record_last_item("profile/no_findings");
  }
  for (size_t i = 0; i < findings.size(); ++i) {
    const core::profile::Finding& f = findings[i];
    ImGui::PushID(static_cast<int>(i));
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImVec4(1, 0.85f, 0.45f, 1), "%zu. %s", i + 1, f.title.c_str());
    ImGui::TextDisabled("[%s]", f.rule.c_str());
    ImGui::Text("expected gain: %s per step (%s of the step)",
                core::profile::format_seconds(f.gain_s).c_str(),
                core::profile::format_percent(f.gain_share).c_str());
    ImGui::TextUnformatted("evidence:");
    ImGui::Indent();
    ImGui::TextColored(ImVec4(0.75f, 0.77f, 0.82f, 1), "%s", f.evidence.c_str());
    ImGui::Unindent();
    ImGui::TextUnformatted("change:");
    ImGui::Indent();
    ImGui::TextColored(ImVec4(0.55f, 0.85f, 0.6f, 1), "%s", f.change.c_str());
    ImGui::Unindent();
    ImGui::PopTextWrapPos();
    if (ImGui::SmallButton("copy change")) ImGui::SetClipboardText(f.change.c_str());
    ImGui::EndGroup();
    items().record_last_item("profile/finding/" + std::to_string(i + 1));
    ImGui::Separator();
    ImGui::PopID();
  }
  ImGui::EndChild();
}

}  // namespace rlwb::ui
