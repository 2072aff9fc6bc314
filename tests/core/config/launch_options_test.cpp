// The launch file (core/config/launch_options.h): what it places where,
// and every mistake in it reported at once, with its line and a hint,
// before anything starts.
#include "core/config/launch_options.h"
#include "tests/core/rpc/runtime_test_support.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace rlwb::core::config {
namespace {

std::string write_launch(const std::string& text) {
  auto path = std::filesystem::temp_directory_path() / rlwb::testing::unique_name("rlwb-launch.yaml");
  std::ofstream(path) << text;
  return path.string();
}

// Every problem of a file, one per line.
std::string problems_of(const std::string& text, const std::map<std::string, int>& pools) {
  try {
    read_launch_file(write_launch(text), pools);
  } catch (const ConfigError& e) {
    std::string all;
    for (const auto& p : e.problems()) all += p.to_string() + "\n";
    return all;
  }
  return "";
}

TEST(LaunchFile, PlacesEachRankOnItsHostAndLeavesOtherPoolsHere) {
  LaunchOptions o = read_launch_file(write_launch("bind: 0.0.0.0:5555\nadvertise: 10.77.0.1\n"
                                                  "hosts:\n"
                                                  "  a: {exec: [ip, netns, exec, ha]}\n"
                                                  "  b: {exec: [ssh, node-b]}\n"
                                                  "placement:\n"
                                                  "  train: [a, b]\n"
                                                  "  gen: b\n"),
                                     {{"train", 2}, {"gen", 3}, {"ref", 1}});
  EXPECT_EQ(o.bind_host(), "0.0.0.0");
  EXPECT_EQ(o.bind_port(), 5555);
  EXPECT_EQ(o.advertised_host(), "10.77.0.1");
  EXPECT_TRUE(o.spans_hosts());
  EXPECT_EQ(o.host_of("train", 0), "a");
  EXPECT_EQ(o.host_of("train", 1), "b");
  EXPECT_EQ(o.host_of("gen", 2), "b");
  EXPECT_EQ(o.host_of("ref", 0), "");
  EXPECT_EQ(o.exec_of("train", 0), (std::vector<std::string>{"ip", "netns", "exec", "ha"}));
  EXPECT_TRUE(o.exec_of("ref", 0).empty());
}

TEST(LaunchFile, AnEmptyFileRunsEverythingHere) {
  LaunchOptions o = read_launch_file(write_launch("# nothing\n"), {{"main", 2}});
  EXPECT_FALSE(o.spans_hosts());
  EXPECT_EQ(o.bind_host(), "127.0.0.1");
  EXPECT_EQ(o.bind_port(), 0);
}

TEST(LaunchFile, ReportsEveryMistakeWithItsLineAndAHint) {
  std::string all = problems_of(
      "bnd: 10.0.0.1\n"  // line 1: a typo
      "hosts:\n"
      "  a: {exec: [ip, netns, exec, ha], user: me}\n"  // line 3: unknown key
      "placement:\n"
      "  trian: a\n"          // line 5: no such pool
      "  train: [a, a, a]\n"  // line 6: 3 hosts for 2 ranks
      "  gen: [c]\n",         // line 7: host not defined
      {{"train", 2}, {"gen", 1}});
  EXPECT_NE(all.find("line 1"), std::string::npos) << all;
  EXPECT_NE(all.find("bind"), std::string::npos) << all;  // did you mean
  EXPECT_NE(all.find("user"), std::string::npos) << all;
  EXPECT_NE(all.find("no pool 'trian'"), std::string::npos) << all;
  EXPECT_NE(all.find("Did you mean 'train'"), std::string::npos) << all;
  EXPECT_NE(all.find("names 3 hosts, but the pool has 2 workers"), std::string::npos) << all;
  EXPECT_NE(all.find("host 'c' is not defined"), std::string::npos) << all;
}

TEST(LaunchFile, RanksElsewhereNeedAnAddressTheyCanReach) {
  const std::string placed = "hosts: {a: {exec: [ip, netns, exec, ha]}}\nplacement: {main: a}\n";
  std::string loopback = problems_of(placed, {{"main", 1}});  // bind defaults to 127.0.0.1
  EXPECT_NE(loopback.find("cannot reach"), std::string::npos) << loopback;
  std::string wildcard = problems_of("bind: 0.0.0.0\n" + placed, {{"main", 1}});
  EXPECT_NE(wildcard.find("set advertise:"), std::string::npos) << wildcard;
  EXPECT_EQ(problems_of("bind: 0.0.0.0\nadvertise: 10.0.0.1\n" + placed, {{"main", 1}}), "");
  std::string port = problems_of("bind: 127.0.0.1:99999\n", {{"main", 1}});
  EXPECT_NE(port.find("no valid port"), std::string::npos) << port;
  // An address no interface here has: known now, not when ZeroMQ binds.
  std::string elsewhere = problems_of("bind: 192.0.2.77\n", {{"main", 1}});
  EXPECT_NE(elsewhere.find("192.0.2.77 is not an address of this host"), std::string::npos) << elsewhere;
  EXPECT_NE(elsewhere.find("127.0.0.1"), std::string::npos) << elsewhere;  // the hint lists them
}

TEST(LaunchFile, AMissingOrUnparsableFileSaysSo) {
  EXPECT_THROW(read_launch_file("/nonexistent/launch.yaml", {}), std::runtime_error);
  std::string broken = problems_of("hosts: {a: [unclosed\n", {});
  EXPECT_FALSE(broken.empty());
}

}  // namespace
}  // namespace rlwb::core::config
