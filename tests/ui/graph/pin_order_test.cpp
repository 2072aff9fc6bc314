// The rows pins are drawn in: an output goes level with where its readers
// are, an input level with the pin it comes from, ties keep the file's
// order, and on every shipped experiment (as GraphDocument opens it, with
// its stored positions) the ordered pins cross no more links than the
// file's order does, and fewer over all of them.
#include "ui/graph/pin_order.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/graph/experiment.h"
#include "tests/test_paths.h"
#include "ui/graph/graph_document.h"
#include "ui/graph/phase_graphs.h"

namespace rlwb::ui {
namespace {

// `split` writes lo and hi; `high` (above) reads hi and `low` (below) reads
// lo: drawn in the file's order, their links cross.
core::Experiment crossed() {
  return core::load_experiment_text(R"(
name: crossed
pools: {p: {workers: 1}}
models: {m: {role: demo, pool: p}}
nodes:
  - {id: split, call: m.split, in: [x], out: [lo, hi]}
  - {id: high, call: m.use, in: [hi], out: [a]}
  - {id: low, call: m.use, in: [lo], out: [b]}
  - {id: both, call: m.join, in: [lo, hi], out: [c]}
)",
                                    "");
}

std::map<std::string, Vec2> placed() {
  return {{"split", {0, 100}}, {"high", {400, 0}}, {"low", {400, 400}}, {"both", {800, 200}}};
}

TEST(PinOrder, AnOutputGoesLevelWithItsReadersAndAnInputWithItsSource) {
  const core::Experiment exp = crossed();
  const GraphPinRows rows = order_pins(exp, placed(), "");
  // lo's readers (low at 400, both at 200) sit lower than hi's (high at 0, both): hi on top.
  EXPECT_EQ(rows.of("split").out, (std::vector<size_t>{1, 0}));
  // both reads lo and hi from split, where hi is now the upper pin.
  EXPECT_EQ(rows.of("both").in, (std::vector<size_t>{1, 0}));
  EXPECT_GT(link_crossings(exp, placed(), "", file_order_pins(exp, "")), 0u);
  EXPECT_EQ(link_crossings(exp, placed(), "", rows), 0u);
}

TEST(PinOrder, PinsThatTieKeepTheFilesOrder) {
  const core::Experiment exp = crossed();
  // Every node level: nothing to choose between, so nothing moves.
  const std::map<std::string, Vec2> level = {
      {"split", {0, 0}}, {"high", {400, 0}}, {"low", {400, 0}}, {"both", {800, 0}}};
  EXPECT_EQ(order_pins(exp, level, "").of("split").out, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(order_pins(exp, level, "").of("both").in, (std::vector<size_t>{0, 1}));
}

TEST(PinOrder, TheShippedExperimentsCrossNoMoreThanInFileOrderAndFewerOverAll) {
  size_t before = 0, after = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(rlwb::testing::kSourceDir) + "/experiments")) {
    if (e.path().extension() != ".yaml") continue;
    const GraphDocument doc = GraphDocument::open(e.path().string());
    ASSERT_TRUE(doc.loaded()) << e.path();
    for (const std::string& phase : graphs_with_nodes(doc.experiment())) {
      const size_t in_file_order =
          link_crossings(doc.experiment(), doc.positions(), phase, file_order_pins(doc.experiment(), phase));
      const size_t ordered = link_crossings(doc.experiment(), doc.positions(), phase,
                                            order_pins(doc.experiment(), doc.positions(), phase));
      EXPECT_LE(ordered, in_file_order) << e.path().filename() << " graph '" << phase << "'";
      before += in_file_order;
      after += ordered;
    }
  }
  EXPECT_LT(after, before);
  std::cout << "link crossings over every shipped experiment: " << before << " in file order, " << after
            << " ordered\n";
}

}  // namespace
}  // namespace rlwb::ui
