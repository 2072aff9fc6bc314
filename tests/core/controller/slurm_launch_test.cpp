// Slurm as the launch target (core/launch/slurm.h), against a real
// one-node Slurm (tests/core/controller/local_slurm.h): the pool becomes
// one Slurm job whose step runs the ranks, every worker runs inside it,
// the run trains as a local one does, and neither a stop nor Slurm ending
// the job leaves a job or a process behind.
#include "core/launch/slurm.h"
#include "tests/core/controller/launch_test_support.h"
#include "tests/core/controller/local_slurm.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <set>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;
using rlwb::testing::command_output;
using rlwb::testing::launch_file;
using rlwb::testing::train_sft;

// The jobs this process's controller made are named rlwb-<pid>-...
std::string our_jobs() { return "rlwb-" + std::to_string(getpid()) + "-"; }

// Live (not yet ended) jobs of ours, as "<name> <state>" lines.
std::string live_jobs() {
  std::string out, all = command_output("squeue -h -o '%j %T'");
  std::istringstream lines(all);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(our_jobs(), 0) == 0) out += line + "\n";
  return out;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The SLURM_PROCID of every rlwb-worker process in one of our jobs.
std::set<std::string> workers_in_our_jobs() {
  std::set<std::string> ranks;
  DIR* proc = opendir("/proc");
  if (!proc) return ranks;
  while (dirent* e = readdir(proc)) {
    if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
    std::string dir = std::string("/proc/") + e->d_name;
    if (file_text(dir + "/cmdline").find("rlwb-worker") == std::string::npos) continue;
    std::string env = file_text(dir + "/environ");
    if (env.find("SLURM_JOB_NAME=" + our_jobs()) == std::string::npos) continue;
    if (env.find("SLURM_JOB_ID=") == std::string::npos) continue;
    auto at = env.find("SLURM_PROCID=");
    if (at != std::string::npos) ranks.insert(env.substr(at + 13, env.find('\0', at) - at - 13));
  }
  closedir(proc);
  return ranks;
}

// Polls until `done` or the bound; true when done.
template <typename F>
bool eventually(F done, std::chrono::seconds bound) {
  for (auto end = Clock::now() + bound; Clock::now() < end;) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return done();
}

const char* const kSlurmLaunch = "target: slurm\nslurm: {partition: debug, nodes: 1, cpus_per_task: 1}\n";

class SlurmLaunch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = rlwb::testing::ensure_local_slurm(); !why.empty())
      GTEST_SKIP() << "no local Slurm: " << why;
  }
};

TEST_F(SlurmLaunch, APoolRunsAsOneSlurmJobAndTrainsAsLocally) {
  auto run = std::async(std::launch::async, [] { return train_sft(launch_file(kSlurmLaunch), 6); });
  std::string seen_job, seen_step;
  std::set<std::string> ranks;
  while (run.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready) {
    if (std::string jobs = live_jobs(); jobs.find("RUNNING") != std::string::npos) seen_job = jobs;
    if (std::string steps = command_output("squeue -h -s -o '%j %i'");
        steps.find(our_jobs()) != std::string::npos)
      seen_step = steps;
    for (const auto& r : workers_in_our_jobs()) ranks.insert(r);
  }
  auto on_slurm = run.get();
  ASSERT_EQ(on_slurm.status, "finished") << on_slurm.error;
  EXPECT_NE(seen_job.find("-train RUNNING"), std::string::npos)
      << "squeue never showed the pool's job running";
  EXPECT_NE(seen_step.find(".0"), std::string::npos)
      << "squeue -s never showed the job's step: " << seen_step;
  EXPECT_EQ(ranks, (std::set<std::string>{"0", "1"})) << "not every worker ran inside the Slurm job";
  EXPECT_TRUE(eventually([] { return live_jobs().empty(); }, std::chrono::seconds(15))) << live_jobs();
  EXPECT_TRUE(workers_in_our_jobs().empty());
  auto here = train_sft({}, 6);
  ASSERT_EQ(here.status, "finished") << here.error;
  rlwb::testing::expect_same_training(on_slurm, here);
}

// A stop (Ctrl-C) mid-run ends it as interrupted; the job is gone and no
// worker is left.
TEST_F(SlurmLaunch, AStopEndsTheJobAndLeavesNoProcess) {
  std::stop_source stop;
  auto run = std::async(std::launch::async,
                        [&] { return train_sft(launch_file(kSlurmLaunch), 1000, stop.get_token()); });
  ASSERT_TRUE(eventually([] { return workers_in_our_jobs().size() == 2; }, std::chrono::seconds(60)));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  stop.request_stop();
  ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_EQ(run.get().status, "interrupted");
  EXPECT_TRUE(eventually([] { return live_jobs().empty(); }, std::chrono::seconds(15))) << live_jobs();
  EXPECT_TRUE(eventually([] { return workers_in_our_jobs().empty(); }, std::chrono::seconds(15)));
}

// Slurm ending the job (here: scancel, as preemption or an operator would)
// fails the run with Slurm's word for it.
TEST_F(SlurmLaunch, AJobSlurmEndsFailsTheRunWithSlurmsReason) {
  auto run = std::async(std::launch::async, [] { return train_sft(launch_file(kSlurmLaunch), 1000); });
  ASSERT_TRUE(eventually([] { return workers_in_our_jobs().size() == 2; }, std::chrono::seconds(60)));
  std::this_thread::sleep_for(std::chrono::seconds(1));
  command_output("scancel --name=$(squeue -h -o %j | grep '^" + our_jobs() + "' | head -1)");
  ASSERT_EQ(run.wait_for(std::chrono::seconds(90)), std::future_status::ready);
  auto result = run.get();
  EXPECT_EQ(result.status, "failed");
  EXPECT_NE(result.error.find("Slurm job " + our_jobs()), std::string::npos) << result.error;
  EXPECT_NE(result.error.find("CANCELLED"), std::string::npos) << result.error;
  EXPECT_TRUE(eventually([] { return workers_in_our_jobs().empty(); }, std::chrono::seconds(15)));
}

// With trainer.on_worker_failure: restart, a job Slurm ends is a worker
// failure like any other: the pool is submitted again as a new job, its
// ranks load the last checkpoint, and the run trains as an undisturbed one.
// 200 steps, so that the job is cancelled mid-run: 40 took under 2 s on an
// Intel Xeon (session 29) and ended before the cancel, submitting no job
// again.
TEST_F(SlurmLaunch, WithRestartAJobSlurmEndsIsSubmittedAgainAndTheRunGoesOn) {
  constexpr int kSteps = 200;
  const std::vector<std::string> restart = {"+trainer.checkpoint.every=2",
                                            "+trainer.on_worker_failure=restart"};
  auto run = std::async(std::launch::async,
                        [&] { return train_sft(launch_file(kSlurmLaunch), kSteps, {}, restart); });
  std::set<std::string> job_ids;
  auto note_jobs = [&] {
    std::istringstream lines(command_output("squeue -h -o '%j %i'"));
    for (std::string name, id; lines >> name >> id;)
      if (name.rfind(our_jobs(), 0) == 0) job_ids.insert(id);
  };
  ASSERT_TRUE(eventually([] { return workers_in_our_jobs().size() == 2; }, std::chrono::seconds(60)));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  note_jobs();
  command_output("scancel --name=$(squeue -h -o %j | grep '^" + our_jobs() + "' | head -1)");
  while (run.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready) note_jobs();
  auto restarted = run.get();
  ASSERT_EQ(restarted.status, "finished") << restarted.error;
  EXPECT_GE(job_ids.size(), 2u) << "the pool was not submitted again";
  EXPECT_TRUE(eventually([] { return live_jobs().empty(); }, std::chrono::seconds(15))) << live_jobs();
  auto undisturbed = train_sft({}, kSteps, {}, restart);
  ASSERT_EQ(undisturbed.status, "finished") << undisturbed.error;
  rlwb::testing::expect_same_training(restarted, undisturbed);
}

// Requests Slurm cannot honour, and a Slurm that does not answer, are
// reported before anything starts.
TEST_F(SlurmLaunch, BadRequestsAreReportedBeforeAnythingStarts) {
  rlwb::core::config::SlurmOptions slurm;
  slurm.partition = "gpu-a100";
  auto problems = rlwb::core::check_slurm(slurm, {{"train", 2}});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("no partition 'gpu-a100'"), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("debug"), std::string::npos) << problems[0];  // the ones it has

  slurm.partition = "debug";
  slurm.nodes = 7;
  problems = rlwb::core::check_slurm(slurm, {{"train", 2}});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("Slurm refuses pool 'train'"), std::string::npos) << problems[0];

  EXPECT_TRUE(rlwb::core::check_slurm({}, {{"train", 2}}).empty());

  // A configuration whose controller port nothing listens on: slurmctld down.
  const std::string conf = std::getenv("SLURM_CONF");
  std::string text = file_text(conf);
  auto at = text.find("SlurmctldPort=");
  text.replace(at, text.find('\n', at) - at, "SlurmctldPort=9");
  auto down = std::filesystem::temp_directory_path() / rlwb::testing::unique_name("slurm-down.conf");
  std::ofstream(down) << text;
  setenv("SLURM_CONF", down.c_str(), 1);
  problems = rlwb::core::check_slurm({}, {{"train", 2}});
  setenv("SLURM_CONF", conf.c_str(), 1);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("does not answer"), std::string::npos) << problems[0];

  // Slurm places the ranks: a placement with target slurm is a mistake.
  EXPECT_THROW(
      launch_file(std::string(kSlurmLaunch) + "hosts: {a: {exec: [ssh, a]}}\nplacement: {train: a}\n"),
      rlwb::core::config::ConfigError);
}

}  // namespace

namespace {

// A pool's threads per worker reach each rank through srun's environment.
TEST(SrunCommand, ExportsThePoolsThreadsPerWorker) {
  rlwb::core::config::SlurmOptions slurm;
  const auto argv = rlwb::core::srun_command(slurm, "rlwb-train", 2, 3, {"rlwb-worker", "--pool", "train"});
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--export=ALL,OMP_NUM_THREADS=3"), argv.end());
  EXPECT_EQ(argv.back(), "train");
}

}  // namespace
