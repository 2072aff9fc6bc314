// rlwb run --remote HOST (see remote_run.h).
#include <unistd.h>

#include <iostream>

#include "app/interrupt_stop.h"
#include "app/remote_run.h"
#include "core/common/version.h"
#include "core/launch/remote_follow.h"

namespace rlwb::app {

int run_remote(const RemoteRunRequest& request) {
  const core::RemoteHost& remote = request.remote;
  core::RemoteFollowOptions follow;
  follow.local_db = request.local_db;
  follow.reconnect_for_s = request.reconnect_for_s;
  follow.note = [](const std::string& text) { std::cerr << text << "\n"; };
  try {
    core::check_remote_host(remote, core::version());
    if (request.follow_run > 0) {
      follow.remote_run = request.follow_run;
    } else {
      std::vector<std::string> args;
      if (!request.experiment_yaml.empty()) {
        core::upload_file(remote, request.experiment_name, request.experiment_yaml);
        args.push_back(request.experiment_name);
      }
      if (!request.launch_text.empty()) {
        core::upload_file(remote, request.launch_name, request.launch_text);
        args.insert(args.end(), {"--launch", request.launch_name});
      }
      args.insert(args.end(), {"--db", follow.remote_db});
      args.insert(args.end(), request.run_args.begin(), request.run_args.end());
      const std::string stem = request.experiment_name.empty() ? "resume" : request.experiment_name;
      follow.remote_log = stem.substr(0, stem.rfind('.')) + ".log";
      follow.remote_pid = core::start_detached(remote, args, follow.remote_log);
      std::cerr << "[rlwb] started on " << remote.host << " (pid " << follow.remote_pid << ", output in "
                << remote.dir << "/" << follow.remote_log << "); it goes on if this connection drops\n";
    }
  } catch (const core::RemoteHostError& e) {
    std::cerr << "rlwb: " << e.what() << "\n";
    return 2;
  }
  // Ctrl-C (or the GUI's stop, SIGTERM) asks the remote run to stop; the
  // mirror follows it to its end.
  InterruptStop interrupt;
  follow.stop = interrupt.stop_token();
  const core::RemoteFollowResult result = core::follow_remote_run(remote, follow);
  if (!result.error.empty()) {
    std::cerr << "rlwb: " << result.error << "\n";
    return 1;
  }
  std::cerr << "[rlwb] run " << result.remote_run << " on " << remote.host << " " << result.status
            << "; mirrored as run " << result.local_run << " of " << request.local_db;
  if (result.reconnects) std::cerr << " (links dropped and followed again: " << result.reconnects << ")";
  std::cerr << "\n";
  if (result.status == "finished") return 0;
  return result.status == "interrupted" ? 130 : 1;
}

}  // namespace rlwb::app
