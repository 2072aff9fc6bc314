// rlwb run --remote HOST: the run on another host over SSH, mirrored into the
// local tracking DB while it goes (core/launch/remote_host.h, remote_follow.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/launch/remote_host.h"

namespace rlwb::app {

struct RemoteRunRequest {
  core::RemoteHost remote;
  std::string local_db;
  // What to start there: the experiment as it will run (resolved YAML),
  // stored there as `experiment_name`; empty when resuming or following.
  std::string experiment_name, experiment_yaml;
  std::string launch_name, launch_text;  // the launch file, if any
  std::vector<std::string> run_args;     // more `rlwb run` arguments: --name, --transport, --resume
  int64_t follow_run = 0;                // follow this remote run instead of starting one
  double reconnect_for_s = 300;
};

// Checks the host, starts the run there and follows it to its end; the exit
// code `rlwb run` gives (0 finished, 130 interrupted, 1 failed, 2 when the
// host cannot take the run).
int run_remote(const RemoteRunRequest& request);

}  // namespace rlwb::app
