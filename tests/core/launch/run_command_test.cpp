// run_command (core/launch/run_command.h): what a short command printed and
// how it ended, and a bound that holds when the command hangs.
#include "core/launch/run_command.h"

#include <gtest/gtest.h>

namespace rlwb::core {
namespace {

TEST(RunCommand, ReturnsWhatTheCommandPrintedAndItsExitCode) {
  CommandResult r = run_command({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.output.find("out"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("err"), std::string::npos) << r.output;
  EXPECT_TRUE(run_command({"true"}).ok());
}

TEST(RunCommand, AHangingCommandIsKilledAtTheBound) {
  auto start = std::chrono::steady_clock::now();
  CommandResult r = run_command({"sleep", "30"}, std::chrono::milliseconds(300));
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_NE(r.output.find("did not finish within 300 ms"), std::string::npos) << r.output;
}

TEST(RunCommand, AProgramThatIsNotThereSaysSo) {
  CommandResult r = run_command({"rlwb-no-such-program"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.output.find("cannot run rlwb-no-such-program"), std::string::npos) << r.output;
}

// The input goes to stdin while the output is read, so a large one does
// not block on a full pipe; a command that never reads it does not take the
// caller down with SIGPIPE.
TEST(RunCommand, InputReachesTheCommandsStdinWhateverItsSize) {
  EXPECT_EQ(run_command({"cat"}, std::chrono::seconds(10), "a line\n").output, "a line\n");
  const std::string big(1 << 20, 'x');
  CommandResult copied = run_command({"cat"}, std::chrono::seconds(20), big);
  EXPECT_TRUE(copied.ok());
  EXPECT_EQ(copied.output.size(), big.size());
  EXPECT_EQ(copied.output, big);
  EXPECT_TRUE(run_command({"true"}, std::chrono::seconds(10), big).ok());
}

}  // namespace
}  // namespace rlwb::core
