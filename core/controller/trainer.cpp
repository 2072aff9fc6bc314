#include "core/controller/trainer.h"

#include "core/controller/resume.h"
#include "core/controller/run_profiler.h"
#include "core/controller/weight_links.h"

#include <torch/torch.h>

#include <unistd.h>

#include <ctime>
#include <filesystem>

namespace rlwb::core {

std::string CheckpointFolders::path(const std::string& name) {
  if (run_folder_.empty()) {
    char stamp[32];
    std::time_t now = std::time(nullptr);
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
    run_folder_ = "run-" + std::to_string(run_id_) + "-" + stamp + "-" + std::to_string(getpid());
  }
  return (std::filesystem::absolute(root_) / run_folder_ / name).lexically_normal().string();
}

Trainer::Trainer(const Experiment& exp, const config::ExperimentOptions& settings,
                 const tasks::TaskSources& tasks, GraphRunner& runner, NodeTargets& targets,
                 TrackingWriter* tracking, int64_t run_id, CheckpointFolders& folders, TrainerHooks hooks)
    : exp_(exp),
      settings_(settings),
      tasks_(tasks),
      runner_(runner),
      targets_(targets),
      tracking_(tracking),
      run_id_(run_id),
      folders_(folders),
      hooks_(std::move(hooks)) {
  // The loader read them and the validator checked them.
  if (auto p = exp.phase_nodes.find("warm_start"); p != exp.phase_nodes.end()) warm_start_nodes_ = p->second;
  if (auto p = exp.phase_nodes.find("eval"); p != exp.phase_nodes.end()) eval_nodes_ = p->second;
}

void Trainer::fit(TrainingRecord& record) {
  if (resumed_step_ == 0) warm_start();
  // The rollout models start from the actor as it is now: warm-started,
  // or as the checkpoint resumed from left it.
  if (links_ && !links_->empty()) {
    auto m = links_->sync();
    event("weights streamed to the rollout models in " + std::to_string(m["timing_s/weight_stream"]) + " s");
  }
  if (resumed_step_ == 0)
    if (auto e = evaluate(0)) record.evals.push_back(*e);
  const int64_t steps = settings_.trainer.steps;
  const int64_t eval_every = settings_.trainer.eval.every;
  if (profiler_) profiler_->start();
  try {
    rl_steps(record, steps, eval_every);
  } catch (...) {
    // What was profiled before a stop or a failure is kept.
    if (profiler_) {
      try {
        profiler_->finish();
      } catch (...) {
      }
    }
    throw;
  }
  if (profiler_) profiler_->finish();
  record.checkpoints = save_models();
}

void Trainer::rl_steps(TrainingRecord& record, int64_t steps, int64_t eval_every) {
  const int64_t every = settings_.trainer.checkpoint.every;
  for (int64_t step = resumed_step_ + 1; step <= steps; ++step) {
    if (profiler_) profiler_->step_starting(step);
    StepReport report = rl_step(step, step == steps);
    if (profiler_) profiler_->step_done(report);
    log_metrics(report.metrics, step);
    log_samples(report);
    if (eval_every > 0 && (step % eval_every == 0 || step == steps))
      if (auto e = evaluate(step)) record.evals.push_back(*e);
    // After the step's rows and evaluation: a resume repeats none of them.
    if (every > 0 && step % every == 0) save_resume_checkpoint(step);
    if (hooks_.step_done)
      hooks_.step_done(report, record.evals.empty() ? std::nullopt : std::optional(record.evals.back()));
    record.steps.push_back(std::move(report));
  }
}

Batch Trainer::task_batch(const tasks::TaskDraw& draw) const {
  auto task = tasks_.find(settings_.task.name);
  if (task == tasks_.end())
    throw std::runtime_error("task '" + settings_.task.name + "' is not a task source of this controller");
  return task->second.make(settings_.task, draw, exp_.seed);
}

Batch Trainer::step_batch(const std::function<tasks::TaskDraw(int64_t)>& draw_of, int64_t step, bool last) {
  Batch batch = prefetch_.take(draw_of(step));
  if (!last) prefetch_.prefetch(draw_of(step + 1));
  return batch;
}

StepReport Trainer::rl_step(int64_t step, bool last) {
  auto step_start = std::chrono::steady_clock::now();
  auto draw_of = [this](int64_t s) {
    return tasks::TaskDraw{s, false, settings_.task.batch_size, settings_.task.samples_per_prompt};
  };
  Batch batch = step_batch(draw_of, step, last);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
  StepReport report = runner_.run(exp_.nodes, std::move(batch), step, profiler_ && profiler_->profiles(step));
  report.metrics["timing_s/task_draw"] = waited;  // ~0 when the batch was prefetched
  if (links_ && !links_->empty())
    for (auto& [key, value] : links_->sync()) report.metrics[key] = value;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
  report.metrics["perf/time_per_step"] = report.seconds;
  // Tokens through the step's models per second: the sums of the token
  // masks (trainer.token_masks; by default prompt + response).
  double tokens = 0;
  for (const auto& col : settings_.trainer.token_masks)
    if (report.batch.has_tensor(col)) tokens += report.batch.tensor(col).sum().item<double>();
  if (tokens > 0) report.metrics["perf/throughput"] = tokens / report.seconds;
  return report;
}

// trainer.warm_start: supervised steps before RL (SFT), then the trained
// weights are copied into the models that start from them (reference,
// critic) through a checkpoint directory.
void Trainer::warm_start() {
  const auto& ws = settings_.trainer.warm_start;
  if (!ws.enabled) return;
  // Warm start and evaluation take one sample per prompt.
  auto draw_of = [&](int64_t step) {
    return tasks::TaskDraw{step, false, ws.batch_size.value_or(settings_.task.batch_size), 1};
  };
  for (int64_t s = 1; s <= ws.steps; ++s) {
    Batch batch = step_batch(draw_of, s, s == ws.steps);
    StepReport r = runner_.run(warm_start_nodes_, std::move(batch), s);
    log_metrics(r.metrics, s, "warm_start/");
    if (hooks_.warm_start_step) hooks_.warm_start_step(s, ws.steps, r.metrics);
  }
  if (ws.sync_from.empty()) return;
  std::string dir = folders_.path(ws.sync_from + "-warm-start");
  model(ws.sync_from, "trainer.warm_start.sync.from")
      .call("save_checkpoint", Batch{}, {}, {{"dir", dir}})
      .get();
  if (tracking_) tracking_->log_artifact(run_id_, "checkpoint", dir);
  for (auto& to : ws.sync_to)
    model(to, "trainer.warm_start.sync.to").call("load_checkpoint", Batch{}, {}, {{"dir", dir}}).get();
  event("warm start done after " + std::to_string(ws.steps) + " steps; " + ws.sync_from + " saved to " + dir);
}

// trainer.eval: the eval nodes over the task's test split; the score
// column's row sums, averaged, are val/score/mean, and per data source
// (a dataset's data_source column) val/<data_source>/score/mean; each
// metric a node reports is val/<metric>.
std::optional<EvalReport> Trainer::evaluate(int64_t step) {
  if (eval_nodes_.empty()) return std::nullopt;
  const auto& ev = settings_.trainer.eval;
  tasks::TaskDraw draw{step, true, ev.batch_size.value_or(settings_.task.test_size()), 1};
  StepReport r = runner_.run(eval_nodes_, task_batch(draw), step);
  if (!r.batch.has_tensor(ev.score))
    throw std::runtime_error("trainer.eval.score names column '" + ev.score +
                             "', which the eval nodes do not produce");
  torch::Tensor scores = r.batch.tensor(ev.score).to(torch::kFloat64);
  if (scores.dim() == 2) scores = scores.sum(1);
  EvalReport report{step, scores.mean().item<double>(), scores.size(0)};
  std::map<std::string, double> metrics = {{"val/score/mean", report.score}};
  if (r.batch.has_objects("data_source")) {
    std::map<std::string, std::pair<double, int64_t>> by_source;  // sum, rows
    const auto& sources = r.batch.objects("data_source");
    const torch::Tensor flat = scores.contiguous();
    const auto* row_score = flat.data_ptr<double>();
    for (size_t i = 0; i < sources.size() && static_cast<int64_t>(i) < scores.size(0); ++i) {
      auto& [sum, rows] =
          by_source[sources[i].is_string() ? sources[i].get<std::string>() : sources[i].dump()];
      sum += row_score[i];
      ++rows;
    }
    for (const auto& [source, sum_rows] : by_source)
      metrics["val/" + source + "/score/mean"] = sum_rows.first / static_cast<double>(sum_rows.second);
  }
  // The eval nodes' own metrics too (a reward model's accuracy on held-out
  // pairs, a reward module's mean), beside their timings.
  for (auto& [k, v] : r.metrics)
    if (k.rfind("compute_s/", 0) != 0) metrics["val/" + k] = v;
  log_metrics(metrics, step);
  if (hooks_.evaluated) hooks_.evaluated(report);
  return report;
}

// trainer.samples: the first rows of a step, for the samples view.
void Trainer::log_samples(const StepReport& r) {
  const auto& cfg = settings_.trainer.samples;
  if (!tracking_ || !cfg.enabled) return;
  const Batch& b = r.batch;
  if (!b.has(cfg.prompt) || !b.has(cfg.response)) return;
  auto prompts = b.objects(cfg.prompt);
  auto responses = b.objects(cfg.response);
  torch::Tensor scores;
  if (b.has_tensor(cfg.score)) {
    scores = b.tensor(cfg.score).to(torch::kFloat64);
    if (scores.dim() == 2) scores = scores.sum(1);
  }
  int64_t rows = std::min<int64_t>(cfg.rows, static_cast<int64_t>(prompts.size()));
  auto text = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  for (int64_t i = 0; i < rows; ++i) {
    nlohmann::json details = nlohmann::json::object();
    for (auto& col : cfg.details)
      if (b.has_objects(col)) details[col] = b.objects(col)[i];
    tracking_->log_sample(run_id_, r.step, text(prompts[i]), text(responses[i]),
                          scores.defined() ? scores[i].item<double>() : 0.0, details);
  }
}

// trainer.save: final checkpoints (HF layout) of the named models.
std::map<std::string, std::string> Trainer::save_models() {
  std::map<std::string, std::string> saved;
  for (auto& name : settings_.trainer.save) {
    std::string dir = folders_.path(name);
    model(name, "trainer.save").call("save_checkpoint", Batch{}, {}, {{"dir", dir}}).get();
    if (tracking_) tracking_->log_artifact(run_id_, "checkpoint", dir);
    saved[name] = dir;
  }
  return saved;
}

// trainer.checkpoint: every model's ranks write their state into the
// partial folder, then the manifest seals it (checkpoint_store.h). The
// random states of the controller are its seed and the step: every task
// draw and generation seed is made from (seed, step), so the step is the
// sampler's position too.
void Trainer::save_resume_checkpoint(int64_t step) {
  namespace fs = std::filesystem;
  const std::string dir = folders_.path(checkpoint_folder_name(step));
  const std::string partial = partial_folder(dir);
  fs::remove_all(partial);
  fs::create_directories(partial);
  std::vector<GroupCall> calls;
  for (auto& [name, group] : targets_.models)
    calls.push_back(group->call("save_state", Batch{}, {}, {{"dir", (fs::path(partial) / name).string()}}));
  for (auto& call : calls) call.get();
  CheckpointManifest manifest;
  manifest.step = step;
  nlohmann::json nodes = nlohmann::json::object();
  for (const auto& [id, state] : runner_.node_state()) nodes[id] = state;
  manifest.state = {{"node_state", nodes}, {"sampler", {{"seed", exp_.seed}, {"step", step}}}};
  manifest.models = checkpoint_model_signature(exp_);
  seal_checkpoint(dir, std::move(manifest));
  if (tracking_) tracking_->log_artifact(run_id_, kResumeCheckpointArtifact, dir);
  checkpoints_.push_back(dir);
  while (static_cast<int64_t>(checkpoints_.size()) > settings_.trainer.checkpoint.keep) {
    std::error_code ec;
    fs::remove_all(checkpoints_.front(), ec);
    checkpoints_.erase(checkpoints_.begin());
  }
}

void Trainer::resume_from(const FoundCheckpoint& checkpoint, std::vector<std::string> earlier) {
  namespace fs = std::filesystem;
  std::vector<GroupCall> calls;
  for (auto& [name, group] : targets_.models)
    calls.push_back(
        group->call("load_state", Batch{}, {}, {{"dir", (fs::path(checkpoint.dir) / name).string()}}));
  for (auto& call : calls) call.get();
  const nlohmann::json saved = checkpoint.manifest.state.value("node_state", nlohmann::json::object());
  std::map<std::string, nlohmann::json> nodes;
  for (const auto& [id, state] : saved.items()) nodes[id] = state;
  runner_.restore_node_state(std::move(nodes));
  resumed_step_ = checkpoint.manifest.step;
  checkpoints_ = std::move(earlier);
  checkpoints_.push_back(checkpoint.dir);
}

WorkerGroup& Trainer::model(const std::string& name, const std::string& where) {
  auto g = targets_.models.find(name);
  if (g == targets_.models.end())
    throw std::runtime_error(where + " names model '" + name + "', which the graph does not have");
  return *g->second;
}

void Trainer::log_metrics(const std::map<std::string, double>& metrics, int64_t step,
                          const std::string& prefix) {
  if (!tracking_) return;
  for (auto& [k, v] : metrics) tracking_->log_metric(run_id_, prefix + k, step, v);
}

void Trainer::event(const std::string& text) {
  if (tracking_ && run_id_) tracking_->log_event(run_id_, "info", "controller", text);
}

}  // namespace rlwb::core
