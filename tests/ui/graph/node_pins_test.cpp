// The pins a node gets when the editor adds it: its callee's declared
// ports, a fresh column for an output already in use, the dropped link's
// column on the first required input.
#include "ui/graph/node_pins.h"

#include <gtest/gtest.h>

#include "tests/ui/ui_test_support.h"

namespace rlwb::ui {
namespace {

using Strings = std::vector<std::string>;

core::MethodCatalog catalog() {
  core::MethodCatalog c;
  c.role_methods["demo"]["square"] =
      core::call_ports({core::required_port("x", "numbers"), core::optional_port("scale", "a factor")},
                       {core::out_port("x_sq", "squares")});
  c.role_methods["demo"]["pair"] =
      core::call_ports({core::required_port("a", "first"), core::required_port("b", "second")},
                       {core::out_port("ab", "both")});
  c.builtins["add"] = core::call_ports({}, {core::out_port("sum", "the sum")});
  c.builtins["add"].any_in = true;
  return c;
}

TEST(NodePins, RequiredInputsAndEveryOutputEachOnTheColumnOfItsName) {
  const core::Experiment exp = test::demo_experiment();
  const core::MethodCatalog c = catalog();
  NodePins pins = pins_for_new_node(exp, callee_ports(exp, &c, "squarer.pair"));
  EXPECT_EQ(pins.in, (Strings{"a", "b"}));
  EXPECT_EQ(pins.out, (Strings{"ab"}));
  EXPECT_TRUE(pins.in_ports.empty());  // the list form: each column is its port
  EXPECT_TRUE(pins.out_ports.empty());
  // An optional input gets no pin.
  pins = pins_for_new_node(exp, callee_ports(exp, &c, "squarer.square"));
  EXPECT_EQ(pins.in, (Strings{"x"}));
}

TEST(NodePins, AnOutputAlreadyInUseGetsAFreshColumnOnTheSamePort) {
  const core::Experiment exp = test::demo_experiment();  // node 'square' writes x_sq
  const core::MethodCatalog c = catalog();
  NodePins pins = pins_for_new_node(exp, callee_ports(exp, &c, "squarer.square"));
  EXPECT_EQ(pins.out, (Strings{"x_sq_2"}));
  EXPECT_EQ(pins.out_ports, (Strings{"x_sq"}));
}

TEST(NodePins, ADroppedLinksColumnFeedsTheFirstRequiredInput) {
  const core::Experiment exp = test::demo_experiment();
  const core::MethodCatalog c = catalog();
  NodePins pins = pins_for_new_node(exp, callee_ports(exp, &c, "squarer.pair"), "total");
  EXPECT_EQ(pins.in, (Strings{"total", "b"}));
  EXPECT_EQ(pins.in_ports, (Strings{"a", "b"}));  // the map form: a <- total
  // A callee with no required input (builtin.add takes any) reads it on a port of its own name.
  pins = pins_for_new_node(exp, callee_ports(exp, &c, "builtin.add"), "total");
  EXPECT_EQ(pins.in, (Strings{"total"}));
  EXPECT_TRUE(pins.in_ports.empty());
  EXPECT_EQ(pins.out, (Strings{"sum"}));
}

TEST(NodePins, UnknownPortsGiveABareNodeOrOnlyTheDroppedColumn) {
  const core::Experiment exp = test::demo_experiment();
  const core::MethodCatalog c = catalog();
  EXPECT_FALSE(callee_ports(exp, nullptr, "squarer.square").known);  // no catalog
  EXPECT_FALSE(callee_ports(exp, &c, "squarer.negate").known);       // a method it lacks
  EXPECT_FALSE(callee_ports(exp, &c, "nobody.square").known);        // no such model
  EXPECT_FALSE(callee_ports(exp, &c, "builtin").known);              // no method
  NodePins bare = pins_for_new_node(exp, core::CallPorts{});
  EXPECT_TRUE(bare.in.empty());
  EXPECT_TRUE(bare.out.empty());
  NodePins fed = pins_for_new_node(exp, core::CallPorts{}, "total");
  EXPECT_EQ(fed.in, (Strings{"total"}));
  EXPECT_TRUE(fed.in_ports.empty());
}

TEST(NodePins, AFreshColumnSkipsEveryNameInUse) {
  std::set<std::string> taken = {"x", "x_2"};
  EXPECT_EQ(fresh_column("x", taken), "x_3");
  EXPECT_EQ(fresh_column("y", taken), "y");
  EXPECT_TRUE(taken.count("x_3") && taken.count("y"));
}

}  // namespace
}  // namespace rlwb::ui
