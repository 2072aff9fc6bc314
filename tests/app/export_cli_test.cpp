// rlwb export through the CLI binary, on a real run: a GRPO run whose actor
// is tensor-parallel (or pipeline-parallel) over two worker processes
// checkpoints every 2 steps;
// the export of its last checkpoint joins the two shards into the same
// Hugging Face files the run's own final save (trainer.save, gathered
// over c10d by the live workers) wrote. Then the bad input: an unknown
// run, a step without a checkpoint, a folder that is not empty, a corrupt
// checkpoint asked for by step and skipped when newest.
#include "core/controller/checkpoint_store.h"
#include "core/tracking/tracking.h"
#include "tests/app/cli_runs.h"
#include "tests/core/rpc/runtime_test_support.h"
#include "tests/run_program.h"
#include "tests/test_files.h"
#include "tests/test_paths.h"
#include "workers/model/safetensors.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace rlwb::core;
using rlwb::testing::read_bytes;
using rlwb::testing::run_program;

namespace {

std::vector<std::string> short_run_args(const std::string& experiment, const std::string& db) {
  return {"run",
          std::string(rlwb::testing::kSourceDir) + "/experiments/" + experiment,
          "--db",
          db,
          "trainer.steps=4",
          "trainer.warm_start.steps=2",
          "trainer.warm_start.batch_size=8",
          "trainer.eval.every=100",
          "trainer.eval.batch_size=8",
          "task.batch_size=8",
          "task.samples_per_prompt=2",
          "task.test_size=8",
          "models.actor.config.ppo.mini_batch_size=16",
          "models.actor.config.micro_batch_size=16",
          "+trainer.checkpoint.every=2",
          "+trainer.checkpoint.keep=2"};
}

std::string artifact_path(const std::string& db, const std::string& kind, const std::string& name) {
  std::string path;
  for (auto& a : TrackingReader(db).artifacts(1))
    if (a.kind == kind && fs::path(a.path).filename() == name) path = a.path;
  return path;
}

rlwb::testing::ProgramOutput rlwb_export(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"export"};
  all.insert(all.end(), args.begin(), args.end());
  return run_program(rlwb::testing::kCliBin, all, 120);
}

struct ExportedRun {
  fs::path root;
  std::string db, final_save, step4, out;
};

// Runs `experiment` for 4 steps on two worker processes, checkpointing
// every 2, and exports the newest checkpoint: the export must say it
// joined `joined` and hold the files the run's own final save wrote.
ExportedRun export_short_run(const std::string& experiment, const std::string& joined) {
  ExportedRun run;
  run.root = fs::temp_directory_path() / rlwb::testing::unique_name("rlwb-export-cli");
  run.db = (run.root / "runs.db").string();
  EXPECT_EQ(
      rlwb::testing::wait_cli(rlwb::testing::start_cli(short_run_args(experiment, run.db), run.root / "run")),
      0)
      << read_bytes((run.root / "run" / "err.txt").string());
  run.final_save = artifact_path(run.db, "checkpoint", "actor");
  run.step4 = artifact_path(run.db, kResumeCheckpointArtifact, checkpoint_folder_name(4));
  if (run.final_save.empty() || run.step4.empty()) {
    ADD_FAILURE() << experiment << ": no final save or no step-4 checkpoint";
    return run;
  }
  EXPECT_TRUE(fs::exists(fs::path(run.step4) / "actor" / "rank-1.pt"))
      << "the actor is not sharded over 2 ranks";

  run.out = (run.root / "exported").string();
  auto exported = rlwb_export({"1", "--db", run.db, "--out", run.out});
  EXPECT_EQ(exported.code, 0) << exported.text;
  EXPECT_NE(exported.out.find("models.actor of run 1 at step 4 (" + joined + " joined)"), std::string::npos)
      << exported.out;
  for (const char* file : {"config.json", "rlwb_tokenizer.json"})
    EXPECT_EQ(read_bytes(run.out + "/" + file), read_bytes(run.final_save + "/" + file)) << file;
  auto ours = rlwb::workers::model::read_safetensors(run.out + "/model.safetensors");
  auto theirs = rlwb::workers::model::read_safetensors(run.final_save + "/model.safetensors");
  EXPECT_EQ(ours.size(), theirs.size());
  for (auto& [name, tensor] : theirs) {
    if (!ours.count(name)) {
      ADD_FAILURE() << name << " is not exported";
      continue;
    }
    EXPECT_TRUE(torch::equal(ours.at(name), tensor)) << name << " differs from the final save";
  }
  return run;
}

TEST(ExportCli, APipelineParallelCheckpointBecomesTheFilesOfTheRunsOwnFinalSave) {
  const ExportedRun run = export_short_run("grpo_pp.yaml", "2 pipeline stages");
  fs::remove_all(run.root);
}

TEST(ExportCli, ATensorParallelCheckpointBecomesTheFilesOfTheRunsOwnFinalSave) {
  const ExportedRun run = export_short_run("grpo_tp.yaml", "2 tensor-parallel shards");
  ASSERT_FALSE(testing::Test::HasFailure());
  const fs::path& root = run.root;
  const std::string &db = run.db, &step4 = run.step4, &out = run.out;
  auto theirs = rlwb::workers::model::read_safetensors(run.final_save + "/model.safetensors");

  // --dtype bfloat16: the same weights, rounded.
  auto half =
      rlwb_export({"1", "--db", db, "--out", (root / "bf16").string(), "--dtype", "bfloat16", "--step", "4"});
  ASSERT_EQ(half.code, 0) << half.text;
  rlwb::workers::model::SafetensorsReader bf16((root / "bf16" / "model.safetensors").string());
  EXPECT_EQ(bf16.entry("model.embed_tokens.weight").dtype, "BF16");
  EXPECT_TRUE(torch::equal(bf16.tensor("model.embed_tokens.weight"),
                           theirs.at("model.embed_tokens.weight").to(torch::kBFloat16)));

  // Bad input, each refused with what to do; nothing written.
  auto unknown = rlwb_export({"7", "--db", db, "--out", (root / "x").string()});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("there is no run 7"), std::string::npos) << unknown.err;
  auto no_step = rlwb_export({"1", "--db", db, "--out", (root / "x").string(), "--step", "1"});
  EXPECT_EQ(no_step.code, 2);
  EXPECT_NE(no_step.err.find("has no checkpoint of that step; it has step-000004, step-000002"),
            std::string::npos)
      << no_step.err;
  auto full = rlwb_export({"1", "--db", db, "--out", out});
  EXPECT_EQ(full.code, 2);
  EXPECT_NE(full.err.find("exists and is not an empty folder"), std::string::npos) << full.err;
  EXPECT_FALSE(fs::exists(root / "x"));

  // A corrupt checkpoint: named by step it is an error with its checksum
  // problem; as the newest it is skipped for the one before.
  {
    std::fstream rank0(fs::path(step4) / "actor" / "rank-0.pt",
                       std::ios::in | std::ios::out | std::ios::binary);
    rank0.seekg(200);
    const char byte = static_cast<char>(rank0.get());
    rank0.seekp(200);
    rank0.put(static_cast<char>(byte ^ 0x5a));
  }
  auto corrupt = rlwb_export({"1", "--db", db, "--out", (root / "y").string(), "--step", "4"});
  EXPECT_EQ(corrupt.code, 1);
  EXPECT_NE(corrupt.err.find("rank-0.pt"), std::string::npos) << corrupt.err;
  EXPECT_NE(corrupt.err.find("export another step"), std::string::npos) << corrupt.err;
  auto fallback = rlwb_export({"1", "--db", db, "--out", (root / "z").string()});
  ASSERT_EQ(fallback.code, 0) << fallback.text;
  EXPECT_NE(fallback.err.find("skipped a damaged checkpoint"), std::string::npos) << fallback.err;
  EXPECT_NE(fallback.out.find("at step 2"), std::string::npos) << fallback.out;
  fs::remove_all(root);
}

}  // namespace
