// Slurm as a launch target (launch file `target: slurm`, docs/launching.md):
// each resource pool is one Slurm allocation with one job step, made by
// `srun` run from the controller -- one task per rank, rank = SLURM_PROCID.
// One allocation per pool (rather than one sbatch script for the run) so
// that a pool is started, followed and ended like a local process: srun
// stays in the foreground, its output (with Slurm's own messages: "CANCELLED
// DUE TO TIME LIMIT", "NODE FAIL") is the pool's log, and its exit is the
// pool's end. Jobs are named so that they can be found and cancelled
// (squeue/scancel --name) whatever happened to srun. Every Slurm command
// runs with a bound (core/launch/run_command.h). No LibTorch.
#pragma once

#include "core/config/launch_options.h"

#include <map>
#include <string>
#include <vector>

namespace rlwb::core {

// srun's command line for `tasks` ranks of a job named `job_name`, each
// with `threads` intra-op threads (OMP_NUM_THREADS); the worker's command
// (without --rank) follows it, then "--rank $SLURM_PROCID" is appended by a
// shell inside the allocation.
std::vector<std::string> srun_command(const config::SlurmOptions& slurm, const std::string& job_name,
                                      int tasks, int threads, const std::vector<std::string>& worker_command);

// Problems with the request, before anything starts: Slurm not installed,
// its controller down, a partition or account it refuses, a pool it cannot
// place (sbatch --test-only per pool). Empty when all is well.
std::vector<std::string> check_slurm(const config::SlurmOptions& slurm,
                                     const std::map<std::string, int>& pools);

// The job's id, also shortly after it ended; "" when Slurm knows no such job.
std::string slurm_job_id(const std::string& job_name);
// "TIMEOUT (TimeLimit)", "CANCELLED (None)", ...: the job's state and
// reason as scontrol tells them, "" when it cannot tell.
std::string slurm_job_state(const std::string& job_id);
// scancel --name; true when Slurm took the request.
bool cancel_slurm_job(const std::string& job_name);

}  // namespace rlwb::core
