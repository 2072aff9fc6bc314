// How rlwb run --remote words its commands for the shell on the remote host
// (core/launch/remote_host.h): checked by running them through a real sh.
#include "core/launch/remote_host.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/launch/run_command.h"

namespace rlwb::core {
namespace {

// What `sh -c "printf %s WORD"` prints: the word as that shell reads it.
std::string as_the_shell_reads(const std::string& word) {
  return run_command({"sh", "-c", "printf %s " + word}).output;
}

TEST(RemoteHost, AQuotedWordReachesTheShellAsItIsWhateverItHolds) {
  for (const std::string text : {"plain", "two words", "it's", "$HOME `id` *", "a\\b\"c"})
    EXPECT_EQ(as_the_shell_reads(shell_quote(text)), text) << text;
}

TEST(RemoteHost, ALeadingTildeMeansTheHomeFolderThereAndTheRestStaysQuoted) {
  const std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  ASSERT_FALSE(home.empty());
  EXPECT_EQ(as_the_shell_reads(remote_path("~/rlwb build/rlwb")), home + "/rlwb build/rlwb");
  EXPECT_EQ(as_the_shell_reads(remote_path("~")), home);
  EXPECT_EQ(as_the_shell_reads(remote_path("/opt/rlwb/bin/rlwb")), "/opt/rlwb/bin/rlwb");
  EXPECT_EQ(as_the_shell_reads(remote_path("a~/b $x")), "a~/b $x");
}

TEST(RemoteHost, SshNeverPromptsAndGivesUpOnADeadLink) {
  RemoteHost remote;
  remote.host = "gpu-box";
  remote.ssh_config = "/tmp/cfg";
  const auto argv = ssh_argv(remote, "true");
  auto has = [&](const std::string& option) {
    return std::find(argv.begin(), argv.end(), option) != argv.end();
  };
  EXPECT_TRUE(has("BatchMode=yes"));
  EXPECT_TRUE(has("ConnectTimeout=10"));
  EXPECT_TRUE(has("ServerAliveInterval=2"));
  EXPECT_TRUE(has("ServerAliveCountMax=3"));
  EXPECT_EQ(argv[1], "-F");
  EXPECT_EQ(argv[2], "/tmp/cfg");
  EXPECT_EQ(argv[argv.size() - 3], "gpu-box");
  EXPECT_EQ(argv[argv.size() - 2], "--");  // the host is never read as an option
  EXPECT_EQ(argv.back(), "true");
}

}  // namespace
}  // namespace rlwb::core
