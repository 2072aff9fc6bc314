// Where a run's workers run: the launch file, given as
// `rlwb run FILE --launch LAUNCH.yaml`. It is kept apart from the graph
// file so that one experiment runs unchanged on one host or several:
//
//   bind: 10.77.0.1            # the controller's RPC listens here (tcp);
//                              # "host:port" fixes the port
//   advertise: 10.77.0.1       # what workers dial; default: bind's host
//   hosts:                     # how to start a process on each host
//     a: {exec: [ip, netns, exec, rlwb-a]}
//     b: {exec: [ssh, -o, BatchMode=yes, node-b]}
//   placement:                 # the host of each rank of a pool, in order;
//     main: [a, b]             #   one name puts every rank there; a pool
//                              #   not named runs on this host
//
// Or, with `target: slurm`, every pool is one Slurm allocation made by
// `srun` (one task per rank; see core/controller/slurm_pool.h):
//
//   target: slurm
//   slurm: {partition: debug, nodes: 1, cpus_per_task: 1, time: "00:30:00",
//           account: lab, gpus_per_node: 0, extra_args: [--exclusive]}
//
// The worker command line is appended to a host's `exec`, so an SSH host
// or a namespace is started the same way. Read with the typed settings
// (core/config/section.h): an unknown key is an error with did-you-mean.
// No LibTorch.
#pragma once

#include "core/config/section.h"

#include <map>
#include <string>
#include <vector>

namespace rlwb::core::config {

struct LaunchHost {
  std::vector<std::string> exec;  // argv prefix; empty: this host
};

struct SlurmOptions {
  std::string partition;  // empty: the cluster's default
  std::string account;    // empty: the user's default
  std::string time;       // srun --time (e.g. "00:30:00"); empty: the partition's limit
  int nodes = 1;
  int cpus_per_task = 1;
  int gpus_per_node = 0;
  std::vector<std::string> extra_args;  // appended to srun's options as given
};

enum class LaunchTarget { kLocal, kSlurm };

struct LaunchOptions {
  LaunchTarget target = LaunchTarget::kLocal;
  SlurmOptions slurm;
  std::string bind = "127.0.0.1";  // host, or host:port
  std::string advertise;           // empty: bind's host
  std::map<std::string, LaunchHost> hosts;
  std::map<std::string, std::vector<std::string>> placement;  // pool -> host of each rank

  // The host of `pool`'s rank `rank` ("" for this host).
  std::string host_of(const std::string& pool, int rank) const;
  // The argv prefix that starts a process on the host of that rank.
  std::vector<std::string> exec_of(const std::string& pool, int rank) const;
  bool spans_hosts() const;  // any rank placed on a named host
  std::string bind_host() const;
  int bind_port() const;  // 0: chosen when bound
  std::string advertised_host() const;
};

// Reads an already parsed launch document; problems go to `ctx`.
LaunchOptions parse_launch_options(const nlohmann::json& doc, ParseContext& ctx);

// Checks the placement against the experiment's pools (name -> workers):
// a pool that does not exist, a list of the wrong length, a host that is
// not defined, workers on other hosts with a loopback bind. Problems go to
// `ctx`.
void check_launch_against_pools(const LaunchOptions& launch, const std::map<std::string, int>& pools,
                                ParseContext& ctx);

// Reads and parses a launch file, checks it against the pools and that
// bind is an address of this host; for target slurm, that Slurm answers
// and knows the partition (and account). Throws ConfigError (every problem, with
// lines) or std::runtime_error when the file cannot be read.
LaunchOptions read_launch_file(const std::string& path, const std::map<std::string, int>& pools);

}  // namespace rlwb::core::config
