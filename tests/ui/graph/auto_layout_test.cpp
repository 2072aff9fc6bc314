// The editor's auto layout (Graphviz dot) on every shipped experiment: a
// box for every node, no two boxes overlapping, links running left to
// right, the same positions every time, each trainer phase's nodes in a
// frame of their own that touches no other box; and the shipped files' own
// stored positions do not overlap either.
#include "ui/graph/auto_layout.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/graph/experiment.h"
#include "tests/core/graph/yaml_edit_test_support.h"
#include "tests/test_paths.h"
#include "ui/graph/link_rules.h"
#include "ui/graph/node_geometry.h"
#include "ui/graph/phase_graphs.h"
#include "ui/graph/phase_groups.h"

namespace rlwb::ui {
namespace {

using core::testing::experiment_files;

// Names the first pair of boxes (of any graph) closer than `gap`, or a
// phase's frame that meets another graph's box or another frame, else "".
std::string overlapping_pair(const core::Experiment& exp, const std::map<std::string, Vec2>& pos, float gap) {
  const std::vector<std::string> keys = canvas_keys(exp);
  for (size_t i = 0; i < keys.size(); ++i)
    for (size_t j = i + 1; j < keys.size(); ++j) {
      const auto &a = *find_graph_node(exp, keys[i]), &b = *find_graph_node(exp, keys[j]);
      const Vec2 pa = pos.at(keys[i]), pb = pos.at(keys[j]), sa = node_size(exp, a), sb = node_size(exp, b);
      const bool apart = pa.x + sa.x + gap <= pb.x || pb.x + sb.x + gap <= pa.x ||
                         pa.y + sa.y + gap <= pb.y || pb.y + sb.y + gap <= pa.y;
      if (!apart) return keys[i] + " and " + keys[j];
    }
  const auto groups = phase_groups(exp, pos);
  for (size_t i = 0; i < groups.size(); ++i) {
    for (size_t j = i + 1; j < groups.size(); ++j)
      if (groups[i].frame.overlaps(groups[j].frame))
        return "the " + groups[i].phase + " and " + groups[j].phase + " groups";
    for (const auto& graph : graphs_with_nodes(exp))
      if (graph != groups[i].phase)
        if (auto bounds = graph_bounds(exp, pos, graph); bounds && bounds->overlaps(groups[i].frame))
          return "the " + groups[i].phase + " group and the graph of '" + graph + "'";
  }
  return "";
}

TEST(AutoLayout, EveryShippedExperimentGetsBoxesThatDoNotOverlapAndLinksLeftToRight) {
  const auto files = experiment_files();
  ASSERT_GE(files.size(), 8u);
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    const core::Experiment exp = core::load_experiment_file(file);
    const auto pos = auto_layout(exp);
    ASSERT_EQ(pos.size(), canvas_keys(exp).size());
    for (const auto& key : canvas_keys(exp)) {
      ASSERT_TRUE(pos.count(key)) << key;
      EXPECT_GE(pos.at(key).x, 260.0f) << "room for the task box on the left";
      EXPECT_GE(pos.at(key).y, 40.0f);
    }
    EXPECT_EQ(overlapping_pair(exp, pos, kLayoutNodeGap - 1), "");
    for (const Link& link : graph_links(exp)) {
      if (link.from == kTaskNode) continue;
      const core::NodeSpec* from = nullptr;
      for (const auto& n : exp.nodes)
        if (n.id == link.from) from = &n;
      ASSERT_NE(from, nullptr);
      EXPECT_LT(pos.at(link.from).x + node_size(exp, *from).x, pos.at(link.to).x)
          << link.from << " -> " << link.to << " (" << link.column << ") runs right to left";
    }
    EXPECT_EQ(auto_layout(exp), pos) << "not deterministic";
  }
}

TEST(AutoLayout, TheShippedExperimentsStoredPositionsDoNotOverlap) {
  for (const auto& file : experiment_files()) {
    SCOPED_TRACE(file);
    const core::Experiment exp = core::load_experiment_file(file);
    std::map<std::string, Vec2> stored;
    for (const auto& key : canvas_keys(exp)) {  // a phase's nodes too, as "<phase>/<id>"
      ASSERT_TRUE(exp.layout.contains(key)) << key << " has no stored position";
      stored[key] = {exp.layout[key]["x"].get<float>(), exp.layout[key]["y"].get<float>()};
    }
    EXPECT_EQ(overlapping_pair(exp, stored, 0), "");
  }
}

TEST(AutoLayout, AnEmptyGraphAndACycleAreLaidOutWithoutFailing) {
  core::Experiment empty;
  EXPECT_TRUE(auto_layout(empty).empty());
  const core::Experiment cycle = core::load_experiment_text(
      "name: c\nnodes:\n  - {id: a, call: m.f, in: [z], out: [y]}\n  - {id: b, call: m.g, in: [y], out: "
      "[z]}\n",
      "cycle.yaml");
  const auto pos = auto_layout(cycle);
  ASSERT_EQ(pos.size(), 2u);
  EXPECT_EQ(overlapping_pair(cycle, pos, kLayoutNodeGap - 1), "");
}

}  // namespace
}  // namespace rlwb::ui
