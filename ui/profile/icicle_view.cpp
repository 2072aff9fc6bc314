// [SECTION] The icicle: boxes, labels, hover, zoom.
#include "ui/profile/icicle_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/profile/profile_units.h"
#include "ui/platform/item_registry.h"

namespace rlwb::ui {

namespace profile = core::profile;
using profile::FrameKind;

namespace {

struct Rgb {
  float r, g, b;
};

// Light enough for dark labels; one hue per kind.
Rgb kind_color(FrameKind kind) {
  switch (kind) {
    case FrameKind::root:
      return {150, 155, 165};
    case FrameKind::node:
      return {178, 146, 228};
    case FrameKind::method:
      return {104, 196, 192};
    case FrameKind::op:
      return {238, 164, 84};
    case FrameKind::native:
      return {156, 204, 112};
    case FrameKind::kernel:
      return {236, 124, 124};
  }
  return {150, 150, 150};
}

// Neighbours of one kind differ a little in brightness, so their edges read.
float name_jitter(const std::string& name) {
  uint32_t h = 2166136261u;
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  return 0.88f + 0.12f * static_cast<float>(h % 1000) / 1000.0f;
}

Rgb mix(Rgb a, Rgb b, float t) {
  return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}

ImU32 to_u32(Rgb c, float alpha = 1) {
  auto byte = [](float v) { return static_cast<int>(std::clamp(v, 0.0f, 255.0f)); };
  return IM_COL32(byte(c.r), byte(c.g), byte(c.b), byte(alpha * 255));
}

constexpr Rgb kBackground{30, 32, 38};
constexpr Rgb kUnchanged{160, 160, 166};
constexpr Rgb kSlower{228, 72, 60};
constexpr Rgb kFaster{66, 126, 232};

Rgb diff_color(double shade) {
  return shade >= 0 ? mix(kUnchanged, kSlower, static_cast<float>(shade))
                    : mix(kUnchanged, kFaster, static_cast<float>(-shade));
}

// `text` cut to fit `width` pixels, with ".." where cut; "" when not even
// three characters fit.
std::string fit(const std::string& text, float width) {
  if (ImGui::CalcTextSize(text.c_str()).x <= width) return text;
  const float dots = ImGui::CalcTextSize("..").x;
  size_t n = text.size();
  while (n > 0 && ImGui::CalcTextSize(text.c_str(), text.c_str() + n).x + dots > width) --n;
  return n < 3 ? std::string() : text.substr(0, n) + "..";
}

std::string per_step(int64_t ns, int64_t steps) {
  return profile::format_seconds(static_cast<double>(ns) * 1e-9 /
                                 static_cast<double>(std::max<int64_t>(1, steps)));
}

std::string ratio(double r) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", r);
  return text;
}

std::string signed_seconds(double s) { return (s >= 0 ? "+" : "-") + profile::format_seconds(std::fabs(s)); }

}  // namespace

HoveredFrame describe_frame(const profile::Frame& frame, const std::string& path, int64_t steps,
                            const IcicleDiff* diff) {
  HoveredFrame h;
  h.path = path;
  h.name = frame.kind == FrameKind::root ? "all" : frame.name;
  h.kind = profile::frame_kind_name(frame.kind);
  h.metrics = frame.metrics;
  if (frame.kind == FrameKind::root) h.metrics.wall_ns = frame_wall_ns(frame);
  h.self_ns = frame.kind == FrameKind::root ? 0 : frame.self_wall_ns();
  h.bytes = frame.bytes();
  h.shapes = frame.shapes;
  h.steps = std::max<int64_t>(1, steps);
  if (diff && frame.kind != FrameKind::root)
    h.change = diff->at(path, static_cast<double>(h.self_ns) * 1e-9 / static_cast<double>(h.steps));
  return h;
}

std::vector<std::string> hovered_frame_lines(const HoveredFrame& f) {
  std::vector<std::string> lines;
  const auto& m = f.metrics;
  lines.push_back(f.kind + ": " + (f.path.empty() ? "all nodes" : f.path));
  lines.push_back("calls: " + std::to_string(m.calls));
  lines.push_back("total wall: " + profile::format_ns(m.wall_ns) + " (" + per_step(m.wall_ns, f.steps) +
                  " per step)");
  lines.push_back("self wall: " + profile::format_ns(f.self_ns) + " (" + per_step(f.self_ns, f.steps) +
                  " per step)");
  if (m.cpu_ns > 0) lines.push_back("CPU: " + profile::format_ns(m.cpu_ns));
  lines.push_back("bytes: " + profile::format_bytes(m.self_bytes) + " self, " +
                  profile::format_bytes(f.bytes) + " with children");
  if (m.cycles >= 0) lines.push_back("cycles: " + std::to_string(m.cycles));
  if (m.instructions >= 0) lines.push_back("instructions: " + std::to_string(m.instructions));
  if (m.kernels > 0)
    lines.push_back("kernels: " + std::to_string(m.kernels) + ", " + profile::format_ns(m.kernel_ns));
  if (m.memcpy_bytes > 0) lines.push_back("memcpy: " + profile::format_bytes(m.memcpy_bytes));
  if (m.sync_ns > 0) lines.push_back("sync waits: " + profile::format_ns(m.sync_ns));
  for (const auto& [shape, calls] : f.shapes)
    lines.push_back("shape " + shape + ": " + std::to_string(calls) + " calls");
  if (f.change) {
    const PathChange& c = *f.change;
    lines.push_back("self per step: run A " + profile::format_seconds(c.a_s) + ", run B " +
                    (c.only_in_a ? std::string("- (not in B)") : profile::format_seconds(c.b_s)));
    if (!c.only_in_a)
      lines.push_back("change: " + signed_seconds(c.change()) +
                      (c.b_s > 0 ? " (" + ratio(c.a_s / c.b_s) + ")" : ""));
  }
  return lines;
}

IcicleOutput draw_icicle(const IcicleInput& in, ImVec2 size) {
  IcicleOutput out;
  const IcicleLayout& layout = *in.layout;
  ImGui::BeginChild("icicle", size, true, ImGuiWindowFlags_NoMove);
  const float width = ImGui::GetContentRegionAvail().x;
  const float height = std::max(ImGui::GetContentRegionAvail().y, layout.rows * kIcicleRowHeight);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("icicle_canvas", ImVec2(width, height),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  const bool canvas_hovered = ImGui::IsItemHovered();
  const bool left_click = ImGui::IsItemClicked(ImGuiMouseButton_Left);
  const bool right_click = ImGui::IsItemClicked(ImGuiMouseButton_Right);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const bool searching = !in.search.empty();
  int hovered = -1;
  for (size_t i = 0; i < layout.boxes.size(); ++i) {
    const IcicleBox& box = layout.boxes[i];
    const ImVec2 a(origin.x + static_cast<float>(box.x0) * width, origin.y + box.depth * kIcicleRowHeight);
    const ImVec2 b(origin.x + static_cast<float>(box.x1) * width, a.y + kIcicleRowHeight - 1);
    if (b.x - a.x < 1) continue;
    if (!ImGui::IsRectVisible(a, b)) continue;
    const profile::Frame& frame = *box.frame;
    Rgb color = kind_color(frame.kind);
    if (in.diff && frame.kind != FrameKind::root) {
      const double self_s = static_cast<double>(frame.self_wall_ns()) * 1e-9 /
                            static_cast<double>(std::max<int64_t>(1, in.steps));
      color = diff_color(diff_shade(in.diff->at(box.path, self_s)));
    } else {
      const float j = name_jitter(frame.name);
      color = {color.r * j, color.g * j, color.b * j};
    }
    if (box.ancestor) color = mix(color, kBackground, 0.45f);
    const bool match = searching && frame_matches(frame, in.search);
    if (searching && !match) color = mix(color, kBackground, 0.7f);
    dl->AddRectFilled(a, ImVec2(std::max(a.x + 1, b.x - 1), b.y), to_u32(color));
    if (match) dl->AddRect(a, ImVec2(std::max(a.x + 1, b.x - 1), b.y), IM_COL32(255, 236, 80, 255), 0, 0, 2);
    if (b.x - a.x > 24) {
      const std::string name = frame.kind == FrameKind::root ? "all" : frame.name;
      const std::string label = fit(name, b.x - a.x - 8);
      if (!label.empty()) {
        const ImU32 text = searching && !match ? IM_COL32(120, 122, 130, 255) : IM_COL32(18, 18, 22, 255);
        dl->AddText(ImVec2(a.x + 4, a.y + (kIcicleRowHeight - ImGui::GetFontSize()) * 0.5f - 1), text,
                    label.c_str());
      }
    }
    items().record(frame.kind == FrameKind::root ? "profile/frame/all" : "profile/frame/" + box.path, a, b);
    ++out.boxes_drawn;
    if (canvas_hovered && mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y + 1)
      hovered = static_cast<int>(i);
  }
  if (hovered >= 0) {
    const IcicleBox& box = layout.boxes[hovered];
    out.hovered = describe_frame(*box.frame, box.path, in.steps, in.diff);
    const ImVec2 a(origin.x + static_cast<float>(box.x0) * width, origin.y + box.depth * kIcicleRowHeight);
    const ImVec2 b(origin.x + static_cast<float>(box.x1) * width, a.y + kIcicleRowHeight - 1);
    dl->AddRect(a, b, IM_COL32(255, 255, 255, 255), 0, 0, 1.5f);
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
    for (const std::string& line : hovered_frame_lines(*out.hovered)) ImGui::TextUnformatted(line.c_str());
    ImGui::TextDisabled("click: zoom in; right-click or Escape: zoom out");
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
    if (left_click) out.zoom_to = focus_of(layout, static_cast<size_t>(hovered));
  }
  if (right_click) out.zoom_out = true;
  ImGui::EndChild();
  return out;
}

}  // namespace rlwb::ui
