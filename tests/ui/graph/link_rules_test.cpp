// Which links the editor may create: output to input, no cycle, one writer
// per column; and what applying one does to the file.
#include "ui/graph/link_rules.h"

#include <gtest/gtest.h>

#include "tests/ui/ui_test_support.h"

namespace rlwb::ui {
namespace {

TEST(GraphLinks, TaskColumnsAndLinksOfTheDemo) {
  core::Experiment exp = test::demo_experiment();
  EXPECT_EQ(task_columns(exp), std::vector<std::string>{"x"});
  auto links = graph_links(exp);
  // square<-x, negate<-x, total<-x_sq,x_neg, global<-total, metrics<-total,global_total
  ASSERT_EQ(links.size(), 7u);
  EXPECT_EQ(links[0], (Link{kTaskNode, "x", "square", 0}));
  EXPECT_EQ(links[2], (Link{"square", "x_sq", "total", 0}));
  EXPECT_TRUE(depends_on(exp, "metrics", "square"));
  EXPECT_FALSE(depends_on(exp, "square", "metrics"));
}

TEST(CheckLink, AValidLinkIntoANewInputSlot) {
  core::Experiment exp = test::demo_experiment();
  LinkCheck c = check_link(exp, "square", "x_sq", "metrics", -1);
  EXPECT_TRUE(c.ok) << c.reason;
  apply_link(exp, "x_sq", "metrics", -1);
  EXPECT_EQ(exp.nodes[4].in, (std::vector<std::string>{"total", "global_total", "x_sq"}));
}

TEST(CheckLink, ReplacingAnInputRewiresIt) {
  core::Experiment exp = test::demo_experiment();
  ASSERT_TRUE(check_link(exp, "negate", "x_neg", "global", 0).ok);
  apply_link(exp, "x_neg", "global", 0);
  EXPECT_EQ(exp.nodes[3].in, std::vector<std::string>{"x_neg"});
  EXPECT_EQ(exp.nodes[3].in_port(0), "x");  // the slot keeps its port
}

TEST(CheckLink, RewiringAListSlotKeepsItsPortThroughTheMapForm) {
  core::Experiment exp = test::demo_experiment();
  ASSERT_TRUE(check_link(exp, "negate", "x_neg", "square", 0).ok);
  apply_link(exp, "x_neg", "square", 0);  // square: in: [x]
  EXPECT_EQ(exp.nodes[0].in, std::vector<std::string>{"x_neg"});
  EXPECT_EQ(exp.nodes[0].in_port(0), "x");
}

TEST(CheckLink, RefusesACycle) {
  core::Experiment exp = test::demo_experiment();
  LinkCheck c = check_link(exp, "global", "global_total", "square", -1);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.reason.find("cycle"), std::string::npos);
}

TEST(CheckLink, RefusesANodeReadingItsOwnOutput) {
  core::Experiment exp = test::demo_experiment();
  EXPECT_FALSE(check_link(exp, "square", "x_sq", "square", -1).ok);
}

TEST(CheckLink, RefusesAColumnWithTwoWriters) {
  core::Experiment exp = test::demo_experiment();
  exp.nodes[1].out.push_back("x_sq");  // negate writes x_sq too: a broken file
  LinkCheck c = check_link(exp, "square", "x_sq", "metrics", -1);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.reason.find("one writer"), std::string::npos);
}

TEST(CheckLink, RefusesADuplicateInputAndAnExistingLink) {
  core::Experiment exp = test::demo_experiment();
  EXPECT_FALSE(check_link(exp, "square", "x_sq", "total", -1).ok);  // already reads x_sq
  EXPECT_FALSE(check_link(exp, "square", "x_sq", "total", 0).ok);   // that is this very link
}

TEST(CheckLink, RefusesAnOutputTheNodeDoesNotWriteAndTaskColumnsThatANodeWrites) {
  core::Experiment exp = test::demo_experiment();
  EXPECT_FALSE(check_link(exp, "square", "nope", "total", -1).ok);
  EXPECT_FALSE(check_link(exp, kTaskNode, "x_sq", "metrics", -1).ok);
  EXPECT_TRUE(check_link(exp, kTaskNode, "x", "metrics", -1).ok);
}

TEST(SetNodeCall, KeepsTargetAndMethodInStep) {
  core::NodeSpec node;
  set_node_call(node, "actor.generate");
  EXPECT_EQ(node.target, "actor");
  EXPECT_EQ(node.method, "generate");
  set_node_call(node, "builtin");
  EXPECT_EQ(node.method, "");
}

}  // namespace
}  // namespace rlwb::ui
