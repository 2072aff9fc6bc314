// rlwb export RUN [--step S] [--model NAME] --out DIR [--dtype D]: one
// model of a run's resumable checkpoint (trainer.checkpoint) written as a
// Hugging Face checkpoint that transformers' from_pretrained loads. The
// checkpoint is verified against its manifest first; the work is
// workers/roles/role_state.h's export_role_state.
#include <filesystem>
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "core/controller/checkpoint_store.h"
#include "core/controller/resume.h"
#include "workers/roles/role_state.h"

namespace rlwb::app {
namespace {

namespace fs = std::filesystem;

struct ExportArgs {
  int64_t run = 0;
  int64_t step = 0;  // 0: the newest good checkpoint
  std::string model, out, dtype = "float32";
  std::string db = kDefaultTrackingDb;
};

std::string steps_text(const std::vector<std::string>& dirs) {
  std::string text;
  for (const auto& dir : dirs) text += (text.empty() ? "" : ", ") + fs::path(dir).filename().string();
  return text.empty() ? "none" : text;
}

// The checkpoint to export: the one of --step, verified, or the newest good one.
core::FoundCheckpoint choose_checkpoint(const ExportArgs& args, core::TrackingReader& reader) {
  const std::string run = "run " + std::to_string(args.run);
  if (!reader.run(args.run))
    throw core::UsageError("there is no " + run + " in " + args.db + "; 'rlwb runs list --db " + args.db +
                           "' lists the runs");
  std::vector<std::string> dirs = core::recorded_checkpoints(reader, args.run);  // newest first
  std::erase_if(dirs, [](const std::string& dir) { return !fs::is_directory(dir); });
  if (dirs.empty())
    throw std::runtime_error(run +
                             " has no checkpoint on disk: it ran without trainer.checkpoint.every, ended "
                             "before its first one, or its folders were removed");
  if (args.step > 0) {
    const std::string name = core::checkpoint_folder_name(args.step);
    for (const auto& dir : dirs) {
      if (fs::path(dir).filename() != name) continue;
      try {
        return {dir, core::verify_checkpoint(dir), {}};
      } catch (const core::CheckpointError& e) {
        throw std::runtime_error(std::string(e.what()) + "; export another step (" + steps_text(dirs) + ")");
      }
    }
    throw core::UsageError("--step " + std::to_string(args.step) + ": " + run +
                           " has no checkpoint of that step; it has " + steps_text(dirs) +
                           " (trainer.checkpoint.keep keeps only the newest)");
  }
  std::vector<std::string> skipped;
  auto found = core::newest_good_checkpoint(dirs, &skipped);
  for (const auto& why : skipped) std::cerr << "[rlwb] skipped a damaged checkpoint: " << why << "\n";
  if (!found) throw std::runtime_error(run + " has no usable checkpoint; every one is damaged");
  return *found;
}

// --model, or the checkpoint's one actor.
std::string choose_model(const ExportArgs& args, const nlohmann::json& models) {
  std::string names, actors;
  for (const auto& [name, model] : models.items()) {
    names += (names.empty() ? "" : ", ") + name;
    if (model.value("role", "") == "actor") actors += (actors.empty() ? "" : ",") + name;
  }
  if (!args.model.empty()) {
    if (!models.contains(args.model))
      throw core::UsageError("--model " + args.model + ": the checkpoint has no such model; it has " + names);
    return args.model;
  }
  if (actors.empty() || actors.find(',') != std::string::npos)
    throw core::UsageError("say which model to export with --model NAME (the checkpoint has " + names + ")");
  return actors;
}

torch::Dtype dtype_of(const std::string& name) {
  if (name == "bfloat16") return torch::kBFloat16;
  if (name == "float16") return torch::kFloat16;
  return torch::kFloat32;
}

int export_checkpoint(const ExportArgs& args) {
  if (fs::exists(args.out) && !(fs::is_directory(args.out) && fs::is_empty(args.out)))
    throw core::UsageError(
        "--out " + args.out +
        " exists and is not an empty folder; name a new or empty one (nothing was written)");
  core::TrackingReader reader = open_tracking_reader(args.db);
  core::FoundCheckpoint checkpoint = choose_checkpoint(args, reader);
  const std::string model = choose_model(args, checkpoint.manifest.models);
  const nlohmann::json& layout = checkpoint.manifest.models.at(model).at("parallel");
  const int tp = layout.value("tp", 1), pp = layout.value("pp", 1);
  workers::roles::export_role_state((fs::path(checkpoint.dir) / model).string(), tp, pp, args.out,
                                    dtype_of(args.dtype));
  std::string joined;
  if (tp > 1) joined += std::to_string(tp) + " tensor-parallel shards";
  if (pp > 1) joined += (joined.empty() ? "" : " x ") + std::to_string(pp) + " pipeline stages";
  std::cout << "exported models." << model << " of run " << args.run << " at step "
            << checkpoint.manifest.step << (joined.empty() ? std::string() : " (" + joined + " joined)")
            << " to " << args.out << "\n";
  return 0;
}

}  // namespace

std::vector<core::Subcommand> add_export_commands(CLI::App& rlwb) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* command = rlwb.add_subcommand(
      "export", "write a model of a run's checkpoint in the Hugging Face layout (docs/launching.md)");
  command->add_option("RUN", args->run, "run id (see 'rlwb runs list')")->required();
  command->add_option("--out", args->out, "a new or empty folder to write into")->required();
  command->add_option("--step", args->step, "the checkpoint of this step (default: the newest good one)")
      ->check(CLI::PositiveNumber);
  command->add_option("--model", args->model, "the model to export (default: the actor)");
  command->add_option("--dtype", args->dtype, "the weights' type in the file")
      ->capture_default_str()
      ->check(CLI::IsMember({"float32", "bfloat16", "float16"}));
  add_db_option(*command, args->db);
  return {{command, [args] { return export_checkpoint(*args); }}};
}

}  // namespace rlwb::app
