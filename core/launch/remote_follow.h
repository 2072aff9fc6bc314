// Following a run on a remote host: `rlwb runs follow` runs there over SSH
// and what it prints is mirrored into a local tracking DB (RunMirror,
// core/tracking/run_stream.h). A dropped link (ssh exits, or no line for
// `silence_s` though the far side sends one every 2 s) is followed again from
// the last committed batch, so no row is lost or written twice; the mirror
// gives up only after `reconnect_for_s` without a link. A stop request is
// passed on to the remote controller (SIGINT: it ends the run as interrupted)
// and the run is followed to its end.
#pragma once

#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>

#include "core/launch/remote_host.h"

namespace rlwb::core {

struct RemoteFollowOptions {
  std::string local_db;
  std::string remote_db = "runs/rlwb.db";  // relative: to the remote working folder
  int64_t remote_run = 0;                  // the run to follow, or
  int64_t remote_pid = 0;                  // the controller whose run it is (just started)
  std::string remote_log;                  // its output file there, for a start that fails
  double silence_s = 10;
  double reconnect_for_s = 300;
  std::stop_token stop;
  std::function<void(const std::string&)> note;  // progress for the user (stderr)
};

struct RemoteFollowResult {
  int64_t local_run = 0, remote_run = 0;
  std::string status;  // the run's end status; "" when following failed
  std::string error;   // why following failed
  int reconnects = 0;
};

RemoteFollowResult follow_remote_run(const RemoteHost& remote, const RemoteFollowOptions& options);

}  // namespace rlwb::core
