// [SECTION] One step's timeline: node lanes, rank sub-lanes, pools' idle time.
#include "ui/profile/step_timeline_view.h"

#include <algorithm>
#include <cmath>

#include "core/profile/profile_units.h"
#include "ui/platform/item_registry.h"

namespace rlwb::ui {

namespace {

using core::profile::format_percent;
using core::profile::format_seconds;

constexpr float kMinLabelWidth = 150, kAxisHeight = 24, kRowHeight = 18, kLaneGap = 6;
constexpr ImU32 kCritical = IM_COL32(255, 200, 40, 255);
constexpr ImU32 kIdle = IM_COL32(235, 90, 80, 255);
constexpr ImU32 kText = IM_COL32(220, 222, 228, 255);
constexpr ImU32 kGrid = IM_COL32(70, 74, 84, 255);

ImU32 kind_color(const std::string& kind, int alpha) {
  if (kind == "worker") return IM_COL32(92, 150, 230, alpha);
  if (kind == "reward") return IM_COL32(226, 172, 86, alpha);
  return IM_COL32(138, 192, 118, alpha);  // builtin
}

// A tick spacing of 1, 2 or 5 x 10^k seconds giving about `count` ticks.
double tick_step(double length, int count) {
  if (length <= 0) return 1;
  const double raw = length / count;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

// Diagonal hatching in [a, b], clipped to it.
void hatch(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 color) {
  dl->PushClipRect(a, b, true);
  const float h = b.y - a.y;
  for (float x = a.x - h; x < b.x; x += 6) dl->AddLine(ImVec2(x, b.y), ImVec2(x + h, a.y), color, 1);
  dl->PopClipRect();
}

bool inside(ImVec2 p, ImVec2 a, ImVec2 b) { return p.x >= a.x && p.x < b.x && p.y >= a.y && p.y < b.y; }

}  // namespace

TimelineOutput draw_step_timeline(const StepTimelineLayout& layout, ImVec2 size) {
  TimelineOutput out;
  ImGui::BeginChild("timeline", size, true);
  int rows = 0;
  for (const NodeLane& lane : layout.lanes)
    rows += 1 + (lane.kind == "worker" ? static_cast<int>(lane.ranks.size()) : 0);
  const float content_h = kAxisHeight + rows * kRowHeight + layout.lanes.size() * kLaneGap + 16 +
                          layout.pools.size() * (kRowHeight + kLaneGap);
  const float width = ImGui::GetContentRegionAvail().x;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("timeline_canvas",
                         ImVec2(width, std::max(content_h, ImGui::GetContentRegionAvail().y)));
  const bool hovering = ImGui::IsItemHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const double length = layout.length_s > 0 ? layout.length_s : 1e-3;
  // The label column fits the longest label (node and pool names vary).
  auto lane_label = [](const NodeLane& lane) {
    return lane.node + (lane.pool.empty() ? " (" + lane.kind + ")" : " (" + lane.pool + ")");
  };
  auto pool_label = [&](const PoolActivity& pool) {
    return "pool " + pool.pool + ": idle " + format_seconds(pool.idle_s) + " (" +
           format_percent(pool.idle_s / length) + ")";
  };
  float label_w = kMinLabelWidth;
  for (const NodeLane& lane : layout.lanes)
    label_w = std::max(label_w, ImGui::CalcTextSize(lane_label(lane).c_str()).x + 16);
  for (const PoolActivity& pool : layout.pools)
    label_w = std::max(label_w, ImGui::CalcTextSize(pool_label(pool).c_str()).x + 16);
  label_w = std::min(label_w, width * 0.4f);
  const float x0 = origin.x + label_w, plot_w = std::max(50.0f, width - label_w - 12);
  auto x_of = [&](double t) { return x0 + static_cast<float>(t / length) * plot_w; };

  // The time axis, with a grid line per tick through every lane.
  const float grid_bottom = origin.y + content_h;
  const double step = tick_step(length, 8);
  for (double t = 0; t <= length * 1.0001; t += step) {
    const float x = x_of(t);
    dl->AddLine(ImVec2(x, origin.y + kAxisHeight - 4), ImVec2(x, grid_bottom), kGrid);
    const std::string label = format_seconds(t);
    if (x + 3 + ImGui::CalcTextSize(label.c_str()).x <= origin.x + width)  // the last one may not fit
      dl->AddText(ImVec2(x + 3, origin.y + 2), kText, label.c_str());
  }

  auto tooltip = [&](const std::string& text) {
    out.hovered = text;
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(text.c_str());
    ImGui::EndTooltip();
  };

  float y = origin.y + kAxisHeight;
  for (const NodeLane& lane : layout.lanes) {
    // The node's own row: its span, outlined when on the critical path.
    const std::string label = lane_label(lane);
    dl->AddText(ImVec2(origin.x + 4, y + 2), lane.critical ? kCritical : kText, label.c_str());
    const ImVec2 a(x_of(lane.start), y + 2),
        b(std::max(x_of(lane.end), x_of(lane.start) + 2), y + kRowHeight - 2);
    const bool local = lane.kind != "worker";
    dl->AddRectFilled(a, b, kind_color(lane.kind, local ? 110 : 150));
    if (local && !lane.ranks.empty()) {
      const RankBar& r = lane.ranks.front();
      dl->AddRectFilled(ImVec2(x_of(r.compute_start), a.y),
                        ImVec2(std::max(x_of(r.compute_end), x_of(r.compute_start) + 1), b.y),
                        kind_color(lane.kind, 255));
    }
    if (lane.critical) dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), kCritical, 0, 0, 2);
    items().record("timeline/node/" + lane.node, a, b);
    if (hovering && inside(mouse, ImVec2(origin.x, y), ImVec2(origin.x + width, y + kRowHeight)))
      tooltip(lane.node + " (" + lane.call + ", " + lane.kind +
              "): " + format_seconds(lane.end - lane.start) + " wall, dispatch " +
              format_seconds(lane.dispatch_s) + ", collect " + format_seconds(lane.collect_s) +
              (lane.critical ? "; on the critical path" : ""));
    y += kRowHeight;
    if (!local) {
      for (const RankBar& r : lane.ranks) {
        const std::string rank_label = "rank " + std::to_string(r.rank);
        dl->AddText(ImVec2(origin.x + 22, y + 2), IM_COL32(170, 174, 184, 255), rank_label.c_str());
        const ImVec2 ra(x_of(r.start), y + 3),
            rb(std::max(x_of(r.end), x_of(r.start) + 1), y + kRowHeight - 3);
        dl->AddRectFilled(ra, rb, kind_color(lane.kind, 80));
        dl->AddRectFilled(ImVec2(x_of(r.compute_start), ra.y),
                          ImVec2(std::max(x_of(r.compute_end), x_of(r.compute_start) + 1), rb.y),
                          kind_color(lane.kind, 255));
        if (lane.critical) dl->AddRect(ra, rb, kCritical, 0, 0, 1);
        items().record("timeline/rank/" + lane.node + "/" + std::to_string(r.rank), ra, rb);
        if (hovering && inside(mouse, ImVec2(origin.x, y), ImVec2(origin.x + width, y + kRowHeight)))
          tooltip(lane.node + " rank " + std::to_string(r.rank) + ": compute " +
                  format_seconds(r.compute_end - r.compute_start) + ", reply in at " +
                  format_seconds(r.end - r.start) + " after dispatch, waited " +
                  format_seconds(std::max(0.0, lane.end - r.end)) + " for the slowest, " +
                  std::to_string(r.rows) + " rows");
        y += kRowHeight;
      }
    }
    y += kLaneGap;
  }

  // The pools: busy where any of their nodes ran, hatched red where idle.
  y += 8;
  dl->AddLine(ImVec2(origin.x, y - 4), ImVec2(origin.x + width, y - 4), kGrid);
  for (const PoolActivity& pool : layout.pools) {
    const std::string label = pool_label(pool);
    dl->AddText(ImVec2(origin.x + 4, y + 2), kText, label.c_str());
    for (const Interval& b : pool.busy)
      dl->AddRectFilled(ImVec2(x_of(b.first), y + 2),
                        ImVec2(std::max(x_of(b.second), x_of(b.first) + 1), y + kRowHeight - 2),
                        kind_color("worker", 200));
    for (const Interval& i : pool.idle) {
      const ImVec2 a(x_of(i.first), y + 2),
          b(std::max(x_of(i.second), x_of(i.first) + 1), y + kRowHeight - 2);
      hatch(dl, a, b, kIdle);
      dl->AddRect(a, b, kIdle);
    }
    items().record("timeline/pool/" + pool.pool, ImVec2(x0, y), ImVec2(x0 + plot_w, y + kRowHeight));
    if (hovering && inside(mouse, ImVec2(origin.x, y), ImVec2(origin.x + width, y + kRowHeight)))
      tooltip("pool " + pool.pool + " is idle " + format_seconds(pool.idle_s) + " of the step's " +
              format_seconds(length) + " (" + std::to_string(pool.idle.size()) + " gaps)");
    y += kRowHeight + kLaneGap;
  }
  ImGui::EndChild();
  return out;
}

}  // namespace rlwb::ui
