// The runner's port renaming (core/controller/node_ports.h): a callee gets
// the node's columns under its own port names, and its output ports come
// back as the node's columns; tensors are shared, not copied.
#include "core/controller/node_ports.h"

#include <gmock/gmock.h>
#include <torch/torch.h>

namespace rlwb::core {
namespace {

using ::testing::HasSubstr;

// in: {response_text: greedy_text, response_mask: response_mask},
// out: {token_level_scores: baseline_scores}
NodeSpec baseline_node() {
  NodeSpec node;
  node.id = "baseline";
  node.call = "math.score";
  node.in = {"greedy_text", "response_mask"};
  node.in_ports = {"response_text", "response_mask"};
  node.out = {"baseline_scores"};
  node.out_ports = {"token_level_scores"};
  return node;
}

Batch step_state() {
  Batch state;
  state.set_objects("greedy_text", {"#### 1", "#### 2"});
  state.set_tensor("response_mask", torch::ones({2, 3}, torch::kInt64));
  state.set_tensor("other", torch::zeros({2}));
  return state;
}

TEST(NodePorts, ACalleeSeesItsPortsNotTheGraphsColumns) {
  Batch state = step_state();
  Batch in = port_inputs(baseline_node(), state);
  EXPECT_EQ(in.column_names(), (std::vector<std::string>{"response_mask", "response_text"}));
  EXPECT_EQ(in.objects("response_text"), state.objects("greedy_text"));
  // The same tensor, not a copy.
  EXPECT_EQ(in.tensor("response_mask").data_ptr(), state.tensor("response_mask").data_ptr());
}

TEST(NodePorts, AListBindsEachColumnToThePortOfItsName) {
  NodeSpec node;
  node.id = "n";
  node.in = {"other", "response_mask"};
  node.out = {"x"};
  EXPECT_EQ(port_inputs(node, step_state()).column_names(),
            (std::vector<std::string>{"other", "response_mask"}));
  EXPECT_EQ(wanted_out_ports(node), (std::vector<std::string>{"x"}));
}

TEST(NodePorts, OutputPortsComeBackAsTheNodesColumnsAndTheRestIsDropped) {
  Batch reply;
  reply.set_tensor("token_level_scores", torch::ones({2, 3}));
  reply.set_objects("reward_details", {nlohmann::json::object(), nlohmann::json::object()});
  reply.meta()["metrics"] = {{"reward/baseline/mean", 1.0}};
  const NodeSpec node = baseline_node();
  EXPECT_EQ(wanted_out_ports(node), (std::vector<std::string>{"token_level_scores"}));
  Batch out = column_outputs(node, reply);
  EXPECT_EQ(out.column_names(), (std::vector<std::string>{"baseline_scores"}));
  EXPECT_EQ(out.tensor("baseline_scores").data_ptr(), reply.tensor("token_level_scores").data_ptr());
  EXPECT_TRUE(out.meta().empty());
}

TEST(NodePorts, AMissingOutputPortNamesTheNodeThePortAndItsColumn) {
  Batch reply;
  reply.set_tensor("scores", torch::ones({2, 3}));
  try {
    column_outputs(baseline_node(), reply);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "node 'baseline' (math.score) did not return its output port 'token_level_scores' (column "
              "'baseline_scores'); it returned: scores");
  }
}

TEST(NodePorts, WantedPortsFromAWorkersContext) {
  EXPECT_TRUE(WantedPorts::from_context({{"step", 1}}).wants("anything"));  // a direct call names none
  WantedPorts some = WantedPorts::from_context({{"out", {"responses"}}});
  EXPECT_TRUE(some.wants("responses"));
  EXPECT_FALSE(some.wants("response_text"));
}

}  // namespace
}  // namespace rlwb::core
