#include "core/controller/resume.h"

#include <filesystem>

namespace rlwb::core {
namespace {

void differences(const nlohmann::json& saved, const nlohmann::json& now, const std::string& path,
                 std::vector<std::string>& out) {
  if (saved.is_object() && now.is_object()) {
    for (const auto& [key, value] : saved.items())
      differences(value, now.contains(key) ? now.at(key) : nlohmann::json(), path + "." + key, out);
    for (const auto& [key, value] : now.items())
      if (!saved.contains(key)) differences(nlohmann::json(), value, path + "." + key, out);
    return;
  }
  if (saved == now) return;
  auto show = [](const nlohmann::json& v) { return v.is_null() ? std::string("(absent)") : v.dump(); };
  out.push_back(path + ": " + show(saved) + " in the checkpoint, " + show(now) + " now");
}

}  // namespace

nlohmann::json checkpoint_model_signature(const Experiment& exp) {
  nlohmann::json models = nlohmann::json::object();
  for (const auto& [name, m] : exp.models) {
    const PoolSpec& pool = exp.pools.at(m.pool);
    models[name] = {{"role", m.role},
                    {"pool", m.pool},
                    {"workers", pool.workers},
                    {"parallel", {{"dp", m.parallel.dp}, {"pp", m.parallel.pp}, {"tp", m.parallel.tp}}},
                    {"model", m.config.value("model", nlohmann::json())},
                    {"tokenizer", m.config.value("tokenizer", nlohmann::json())}};
  }
  return models;
}

std::vector<std::string> signature_changes(const nlohmann::json& saved, const nlohmann::json& now) {
  std::vector<std::string> out;
  for (const auto& [name, model] : saved.items())
    if (!now.contains(name))
      out.push_back("models." + name + ": in the checkpoint, not in the graph file now");
  for (const auto& [name, model] : now.items()) {
    if (!saved.contains(name)) {
      out.push_back("models." + name + ": in the graph file now, not in the checkpoint");
      continue;
    }
    differences(saved.at(name), model, "models." + name, out);
  }
  return out;
}

std::vector<std::string> recorded_checkpoints(TrackingReader& reader, int64_t run) {
  std::vector<std::string> dirs;
  auto artifacts = reader.artifacts(run);
  for (auto a = artifacts.rbegin(); a != artifacts.rend(); ++a)
    if (a->kind == kResumeCheckpointArtifact) dirs.push_back(a->path);
  return dirs;
}

RunInfo resumable_run(TrackingReader& reader, int64_t id, const std::string& db) {
  auto run = reader.run(id);
  const std::string name = "run " + std::to_string(id);
  if (!run)
    throw ResumeError("--resume " + std::to_string(id) + ": there is no " + name + " in " + db +
                      "; 'rlwb runs list --db " + db + "' lists the runs");
  if (run->status == "finished")
    throw ResumeError("--resume " + std::to_string(id) + ": " + name +
                      " finished; there is nothing to resume. To train further, start a new run "
                      "(rlwb run FILE trainer.steps=N)");
  if (run->status == "running")
    throw ResumeError("--resume " + std::to_string(id) + ": " + name + " is still running (pid " +
                      std::to_string(run->pid) + " on " + run->host +
                      "); stop it first (Ctrl-C, or 'rlwb runs' / the GUI)");
  return *run;
}

ResumePlan plan_resume(TrackingReader& reader, const RunInfo& run, const Experiment& exp) {
  const std::string name = "--resume " + std::to_string(run.id) + ": run " + std::to_string(run.id);
  const std::vector<std::string> dirs = recorded_checkpoints(reader, run.id);
  if (dirs.empty())
    throw ResumeError(name + " (" + run.status +
                      ") has no checkpoint to resume from: it ran without trainer.checkpoint.every, or "
                      "ended before its first checkpoint. Start it again with checkpoints on: rlwb run FILE "
                      "trainer.checkpoint.every=N");
  std::vector<std::string> skipped;
  auto found = newest_good_checkpoint(dirs, &skipped);
  if (!found) {
    std::string why;
    for (auto& s : skipped) why += "\n  " + s;
    throw ResumeError(name + " has no usable checkpoint; every one is damaged or gone:" + why +
                      "\nStart the run again (rlwb run FILE)");
  }
  auto changes = signature_changes(found->manifest.models, checkpoint_model_signature(exp));
  if (!changes.empty()) {
    std::string what;
    for (auto& c : changes) what += "\n  " + c;
    throw ResumeError(name + ": the graph file no longer fits the checkpoint of step " +
                      std::to_string(found->manifest.step) + " (" + found->dir + "):" + what +
                      "\nResume with the graph file the run was started with (rlwb run --resume " +
                      std::to_string(run.id) + ", without FILE), or start a new run");
  }
  ResumePlan plan;
  plan.run_id = run.id;
  plan.checkpoint = std::move(*found);
  bool older = false;
  for (auto d = dirs.begin(); d != dirs.end(); ++d) {
    if (*d == plan.checkpoint.dir) {
      older = true;
      continue;
    }
    if (older && std::filesystem::is_directory(*d)) plan.earlier.insert(plan.earlier.begin(), *d);
  }
  return plan;
}

}  // namespace rlwb::core
