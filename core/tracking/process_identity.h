// Who owns a 'running' run: the controller process's host, pid and start
// token (boot id + the kernel's start time of that pid), stored in the runs
// table so that a later process can tell the owner died -- even when the pid
// has since been reused, as happens when a container restarts. Linux only
// (reads /proc); without /proc the start token is empty and only the pid is
// checked. Used by the writer (start_run) and TrackingAdmin::mark_stale_runs.
#pragma once

#include <cstdint>
#include <string>

namespace rlwb::core {

struct ProcessIdentity {
  std::string host;
  int64_t pid = 0;
  std::string start;  // "<boot id>:<start ticks>", or "" if /proc is unreadable
};

ProcessIdentity current_process_identity();

// Is the process `pid` with start token `start` still running on this host?
// A zombie (exited, not yet reaped) counts as dead.
bool process_is_running(int64_t pid, const std::string& start);

}  // namespace rlwb::core
