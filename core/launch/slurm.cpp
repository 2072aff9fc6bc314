#include "core/launch/slurm.h"

#include "core/launch/run_command.h"

#include <sstream>

namespace rlwb::core {
namespace {

// The first line of a command's output, trimmed, for messages.
std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// The options srun and sbatch share.
std::vector<std::string> allocation_options(const config::SlurmOptions& slurm, int tasks) {
  std::vector<std::string> o = {"--ntasks=" + std::to_string(tasks), "--nodes=" + std::to_string(slurm.nodes),
                                "--cpus-per-task=" + std::to_string(slurm.cpus_per_task)};
  if (!slurm.partition.empty()) o.push_back("--partition=" + slurm.partition);
  if (!slurm.account.empty()) o.push_back("--account=" + slurm.account);
  if (!slurm.time.empty()) o.push_back("--time=" + slurm.time);
  if (slurm.gpus_per_node > 0) o.push_back("--gpus-per-node=" + std::to_string(slurm.gpus_per_node));
  o.insert(o.end(), slurm.extra_args.begin(), slurm.extra_args.end());
  return o;
}

}  // namespace

std::vector<std::string> srun_command(const config::SlurmOptions& slurm, const std::string& job_name,
                                      int tasks, int threads,
                                      const std::vector<std::string>& worker_command) {
  std::vector<std::string> argv = {"srun", "--job-name=" + job_name};
  for (auto& o : allocation_options(slurm, tasks)) argv.push_back(o);
  // One rank's death ends the step (the controller fails or restarts the
  // pool as a whole); the environment carries the thread count.
  argv.insert(argv.end(), {"--kill-on-bad-exit=1", "--export=ALL,OMP_NUM_THREADS=" + std::to_string(threads),
                           "/bin/sh", "-c", "exec \"$0\" \"$@\" --rank \"$SLURM_PROCID\""});
  argv.insert(argv.end(), worker_command.begin(), worker_command.end());
  return argv;
}

std::vector<std::string> check_slurm(const config::SlurmOptions& slurm,
                                     const std::map<std::string, int>& pools) {
  CommandResult ping = run_command({"scontrol", "ping"});
  if (ping.exit_code == 127 || ping.output.find("cannot run") != std::string::npos)
    return {"Slurm is not installed here (no scontrol in PATH): install slurm-client, or use target: local"};
  if (!ping.ok() || ping.output.find("is UP") == std::string::npos)
    return {"Slurm's controller does not answer (scontrol ping: " + first_line(ping.output) +
            "): start slurmctld, or check SLURM_CONF"};
  std::vector<std::string> problems;
  if (!slurm.partition.empty()) {
    CommandResult part = run_command({"scontrol", "show", "partition", slurm.partition, "-o"});
    if (!part.ok()) {
      CommandResult all = run_command({"sinfo", "-h", "-o", "%R"});
      std::string names;
      std::istringstream lines(all.output);
      for (std::string line; std::getline(lines, line);)
        if (!line.empty()) names += (names.empty() ? "" : ", ") + line;
      problems.push_back("slurm.partition: Slurm has no partition '" + slurm.partition +
                         "' (it has: " + names + ")");
    }
  }
  if (!problems.empty()) return problems;
  for (const auto& [pool, workers] : pools) {
    std::vector<std::string> test = {"sbatch", "--test-only", "--job-name=rlwb-check"};
    for (auto& o : allocation_options(slurm, workers)) test.push_back(o);
    test.push_back("--wrap=true");
    CommandResult r = run_command(test);
    if (!r.ok())
      problems.push_back("Slurm refuses pool '" + pool + "' (" + std::to_string(workers) + " tasks): " +
                         trimmed(r.output) + " (check slurm.account, nodes, cpus_per_task, time)");
  }
  return problems;
}

std::string slurm_job_id(const std::string& job_name) {
  // Every state: a job that just ended stays listed for MinJobAge.
  CommandResult r = run_command({"squeue", "-h", "--states=all", "--name=" + job_name, "-o", "%i"});
  return r.ok() ? first_line(r.output) : "";
}

std::string slurm_job_state(const std::string& job_id) {
  if (job_id.empty()) return "";
  CommandResult r = run_command({"scontrol", "show", "job", job_id, "-o"});
  if (!r.ok()) return "";
  auto field = [&](const std::string& key) {
    auto at = r.output.find(key + "=");
    if (at == std::string::npos) return std::string();
    at += key.size() + 1;
    return r.output.substr(at, r.output.find_first_of(" \n", at) - at);
  };
  std::string state = field("JobState");
  return state.empty() ? "" : state + " (" + field("Reason") + ")";
}

bool cancel_slurm_job(const std::string& job_name) {
  return run_command({"scancel", "--name=" + job_name}).ok();
}

}  // namespace rlwb::core
