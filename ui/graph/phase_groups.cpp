#include "ui/graph/phase_groups.h"

#include <algorithm>
#include <cmath>

#include "ui/graph/link_rules.h"
#include "ui/graph/node_geometry.h"
#include "ui/graph/phase_graphs.h"

namespace rlwb::ui {
namespace {

constexpr float kTaskGap = 80;  // between the task box and the leftmost node
// A settings box: its title band, padding, and the gap between two boxes.
constexpr float kSettingsTitle = 26, kSettingsPad = 10, kSettingsGap = 30, kSettingsMinWidth = 170;

Vec2 at(const std::map<std::string, Vec2>& pos, const std::string& key) {
  auto it = pos.find(key);
  return it == pos.end() ? Vec2{} : it->second;
}

WorldRect grow(WorldRect r, const WorldRect& o) {
  return {{std::min(r.min.x, o.min.x), std::min(r.min.y, o.min.y)},
          {std::max(r.max.x, o.max.x), std::max(r.max.y, o.max.y)}};
}

}  // namespace

std::optional<WorldRect> task_box(const core::Experiment& exp, const std::map<std::string, Vec2>& pos,
                                  const std::string& phase) {
  const auto& nodes = graph_nodes(exp, phase);
  const size_t columns = task_columns(phase.empty() ? exp : graph_view(exp, phase)).size();
  if (nodes.empty() || columns == 0) return std::nullopt;
  Vec2 top_left = at(pos, canvas_key(phase, nodes[0].id));
  for (const auto& node : nodes) {
    const Vec2 p = at(pos, canvas_key(phase, node.id));
    top_left = {std::min(top_left.x, p.x), std::min(top_left.y, p.y)};
  }
  const float x = top_left.x - kTaskWidth - kTaskGap;
  return WorldRect{{x, top_left.y}, {x + kTaskWidth, top_left.y + 30 + kPinRow * columns + 6}};
}

std::optional<WorldRect> graph_bounds(const core::Experiment& exp, const std::map<std::string, Vec2>& pos,
                                      const std::string& phase) {
  std::optional<WorldRect> bounds = task_box(exp, pos, phase);
  for (const auto& node : graph_nodes(exp, phase)) {
    const Vec2 p = at(pos, canvas_key(phase, node.id)), size = node_size(exp, node);
    const WorldRect box{p, {p.x + size.x, p.y + size.y}};
    bounds = bounds ? grow(*bounds, box) : box;
  }
  return bounds;
}

std::vector<PhaseGroup> phase_groups(const core::Experiment& exp, const std::map<std::string, Vec2>& pos) {
  std::vector<PhaseGroup> groups;
  std::optional<WorldRect> all = graph_bounds(exp, pos, "");
  for (const auto& phase : canvas_phases()) {
    // A phase the file does not set is left out: a graph without phases looks as it did.
    if (graph_nodes(exp, phase).empty() && !(exp.trainer.is_object() && exp.trainer.contains(phase)))
      continue;
    PhaseGroup group{phase, phase_title(phase), phase_summary(exp, phase), false, {}};
    if (auto bounds = graph_bounds(exp, pos, phase)) {
      group.has_nodes = true;
      group.frame = {{bounds->min.x - kGroupPad, bounds->min.y - kGroupPad - kGroupTitle},
                     {bounds->max.x + kGroupPad, bounds->max.y + kGroupPad}};
      all = all ? grow(*all, group.frame) : group.frame;
    }
    groups.push_back(group);
  }
  // Settings boxes: one row under everything drawn, from its left edge.
  const WorldRect below = all.value_or(WorldRect{{260, 40}, {260, 40}});
  float x = below.min.x;
  for (auto& group : groups) {
    if (group.has_nodes) continue;
    size_t chars = group.title.size();
    for (const auto& line : group.summary) chars = std::max(chars, line.size());
    const float w = std::max(kSettingsMinWidth, std::ceil(kPinLabelCharWidth * chars + 2 * kSettingsPad));
    const float h = kSettingsTitle + kNodeInfoLine * group.summary.size() + kSettingsPad;
    group.frame = {{x, below.max.y + kGroupGap}, {x + w, below.max.y + kGroupGap + h}};
    x += w + kSettingsGap;
  }
  return groups;
}

}  // namespace rlwb::ui
