// Workers on other hosts (docs/launching.md): a pool's two ranks placed by
// a launch file on two hosts made of network namespaces
// (tests/core/controller/netns_hosts.h), started through each host's exec
// prefix, dialing the controller and the pool's c10d store over the
// bridge, and all-reducing their gradients with Gloo across the hosts'
// links. The run must train exactly as the same pool on one host does, and
// the tensors must really have crossed the links.
#include "tests/core/controller/launch_test_support.h"
#include "tests/core/controller/netns_hosts.h"

namespace {

using rlwb::testing::launch_file;
using rlwb::testing::train_sft;

std::string two_hosts(const rlwb::testing::NetnsHosts& hosts) {
  return "bind: " + hosts.controller_address() + "\n" +
         "hosts:\n"
         "  a: {exec: [ip, netns, exec, " +
         hosts.name(0) + "]}\n" + "  b: {exec: [ip, netns, exec, " + hosts.name(1) + "]}\n" +
         "placement:\n"
         "  train: [a, b]\n";
}

TEST(MultiHost, APoolOnTwoHostsTrainsAsOnOneAndItsTensorsCrossTheLinks) {
  rlwb::testing::NetnsHosts hosts(2);
  if (!hosts.available()) GTEST_SKIP() << "cannot make network-namespace hosts here: " << hosts.why_not();
  const long long before_a = hosts.link_bytes(0), before_b = hosts.link_bytes(1);
  auto spread = train_sft(launch_file(two_hosts(hosts)));
  ASSERT_EQ(spread.status, "finished") << spread.error;
  const long long crossed_a = hosts.link_bytes(0) - before_a, crossed_b = hosts.link_bytes(1) - before_b;
  auto here = train_sft({});
  ASSERT_EQ(here.status, "finished") << here.error;
  rlwb::testing::expect_same_training(spread, here);
  // Four steps each all-reduce the whole gradient between the two hosts
  // (each rank sends and receives about half of it per step), and each
  // rank's batch and replies travel inline: every link carried more than
  // one copy of the model.
  const long long model = rlwb::testing::parameter_bytes(here);
  EXPECT_GT(crossed_a, model) << "host a's link carried " << crossed_a << " bytes";
  EXPECT_GT(crossed_b, model) << "host b's link carried " << crossed_b << " bytes";
}

// A host whose exec prefix cannot start the worker fails the start-up
// with that worker's log, within the start-up bound.
TEST(MultiHost, AHostThatCannotStartTheWorkerFailsTheRunWithItsLog) {
  rlwb::testing::NetnsHosts hosts(1);
  if (!hosts.available()) GTEST_SKIP() << "cannot make network-namespace hosts here: " << hosts.why_not();
  auto result = train_sft(launch_file("bind: " + hosts.controller_address() + "\n" +
                                      "hosts: {a: {exec: [ip, netns, exec, rlwb-no-such-namespace]}}\n"
                                      "placement: {train: a}\n"));
  EXPECT_EQ(result.status, "failed");
  EXPECT_NE(result.error.find("during start-up"), std::string::npos) << result.error;
  EXPECT_NE(result.error.find("rlwb-no-such-namespace"), std::string::npos) << result.error;
}

}  // namespace
