#include "core/controller/run_profiler.h"

#include "core/config/model_options.h"
#include "core/profile/profile_store.h"
#include "core/rpc/protocol.h"

#include <algorithm>
#include <thread>

namespace rlwb::core {

namespace {
constexpr std::chrono::milliseconds kCollectTimeout{30000};
}

RunProfiler::RunProfiler(const config::ProfileOptions& options, const Experiment& exp, int64_t steps,
                         RpcServer& rpc, std::vector<std::string> workers, TrackingWriter* tracking,
                         int64_t run_id, std::string trace_dir,
                         std::chrono::steady_clock::time_point clock_origin)
    : options_(options),
      exp_(exp),
      last_step_(options.last_profiled_step(steps)),
      rpc_(rpc),
      workers_(std::move(workers)),
      tracking_(tracking),
      run_id_(run_id),
      trace_dir_(std::move(trace_dir)),
      clock_origin_(clock_origin) {}

std::vector<std::optional<Batch>> RunProfiler::each_worker(const nlohmann::json& args,
                                                           const std::string& what) {
  std::vector<ReplyFuture> replies;
  for (auto& w : workers_)
    replies.push_back(
        rpc_.call(w, "", kProfileMethod, Batch{}, args, nlohmann::json::object(), kCollectTimeout));
  std::vector<std::optional<Batch>> out;
  for (size_t i = 0; i < replies.size(); ++i) {
    try {
      out.emplace_back(replies[i].get());
    } catch (const std::exception& e) {
      warn("worker " + workers_[i] + ": " + what + " failed: " + e.what());
      out.emplace_back(std::nullopt);
    }
  }
  return out;
}

void RunProfiler::warn(const std::string& text) {
  if (tracking_ && run_id_) tracking_->log_event(run_id_, "warning", "profiler", text);
}

void RunProfiler::start() {
  const nlohmann::json settings = {{"shapes", options_.shapes},
                                   {"native_stacks", options_.native_stacks},
                                   {"trace", options_.trace},
                                   {"hardware_counters", options_.hardware_counters}};
  if (options_.engine == config::ProfileEngine::rlwb)
    each_worker({{"action", "configure"}, {"options", settings}}, "starting the profiler");
  if (!tracking_) return;
  profile::ProfileMeta meta;
  meta.first_step = options_.step_range.first;
  meta.last_step = last_step_;
  meta.window = options_.window;
  meta.shapes = options_.shapes;
  meta.native_stacks = options_.native_stacks;
  meta.trace = options_.trace;
  meta.host_cores = static_cast<int>(std::thread::hardware_concurrency());
  meta.clock_origin_us = std::chrono::duration<double, std::micro>(clock_origin_.time_since_epoch()).count();
  for (auto& [name, pool] : exp_.pools)
    meta.pools[name] = {{"workers", pool.workers}, {"device", pool.device}, {"threads", pool.threads}};
  for (auto& [name, m] : exp_.models) {
    meta.models[name] = {{"pool", m.pool},      {"role", m.role},      {"dp", m.parallel.dp},
                         {"tp", m.parallel.tp}, {"pp", m.parallel.pp}, {"config", m.config}};
    // The batch settings as the role reads them, defaults filled in (the
    // analyzer's memory rule names overrides of them); the experiment was
    // validated, so the parse has nothing to report.
    const config::ModelSections sections = config::model_sections_of(m.role);
    config::ParseContext quiet;
    const config::ModelOptions o =
        config::parse_model_options(m.role, m.config, "models." + name + ".config", quiet);
    if (sections.network) meta.models[name]["micro_batch_size"] = o.micro_batch_size;
    if (sections.actor_ppo || sections.critic_ppo)
      meta.models[name]["mini_batch_size"] = o.ppo.mini_batch_size;
  }
  for (auto& [name, r] : exp_.rewards) {
    meta.rewards[name] = {{"type", r.type}, {"config", r.config}};
    // The code reward's sandbox runs one executor per core unless told (the analyzer's reward rule).
    if (r.type == "code")
      meta.rewards[name]["executors"] =
          r.config.value("executors", 0) > 0 ? r.config.value("executors", 0) : meta.host_cores;
  }
  profile::write_profile_meta(*tracking_, run_id_, meta);
}

void RunProfiler::step_starting(int64_t step) {
  // torch's profiler records everything while on: it runs for the profiled steps only.
  if (profiles(step) && options_.engine == config::ProfileEngine::kineto)
    each_worker({{"action", "kineto_start"}}, "starting torch's profiler");
}

void RunProfiler::step_done(const StepReport& report) {
  if (!profiles(report.step)) return;
  if (window_first_ == 0) window_first_ = report.step;
  window_last_ = report.step;
  profile::StepTiming step;
  step.step = report.step;
  step.seconds = report.seconds;
  step.nodes = report.timings;
  // Times stay on the runner's clock (since the run's first pass), so the
  // steps follow each other on the trace export's timeline.
  step.critical_path = profile::critical_path(step.nodes);
  if (tracking_) profile::write_step_timing(*tracking_, run_id_, step);
  if (options_.engine == config::ProfileEngine::kineto) collect_kineto(report.step);
  ++window_steps_;
  const bool window_full = options_.window > 0 && window_steps_ >= options_.window;
  if (window_full || report.step >= last_step_) collect(report.step);
}

void RunProfiler::finish() {
  if (window_first_ != 0) collect(window_last_);
}

void RunProfiler::collect_kineto(int64_t step) {
  const std::string steps = std::to_string(step);
  std::vector<std::string> paths;
  std::vector<ReplyFuture> replies;  // every worker writes its trace at once
  for (const std::string& worker : workers_) {
    std::string name = worker;
    std::replace(name.begin(), name.end(), '/', '-');
    paths.push_back(trace_dir_ + "/kineto-" + name + "-step-" + steps + ".json");
    replies.push_back(rpc_.call(worker, "", kProfileMethod, Batch{},
                                {{"action", "kineto_stop"}, {"path", paths.back()}}, nlohmann::json::object(),
                                kCollectTimeout));
  }
  for (size_t i = 0; i < workers_.size(); ++i) {
    try {
      Batch done = replies[i].get();
      if (tracking_) {
        tracking_->log_artifact(run_id_, "kineto_trace", paths[i]);
        tracking_->log_profile(run_id_, step, workers_[i], "kineto",
                               nlohmann::json{{"path", paths[i]},
                                              {"bytes", done.meta().value("trace_bytes", int64_t{0})},
                                              {"first_step", step},
                                              {"last_step", step}}
                                   .dump());
      }
    } catch (const std::exception& e) {
      warn("worker " + workers_[i] + ": writing torch's trace for step " + steps + " failed: " + e.what());
    }
  }
}

void RunProfiler::collect(int64_t last_step) {
  const int64_t first = window_first_;
  window_first_ = 0;
  window_steps_ = 0;
  if (options_.engine == config::ProfileEngine::kineto) return;  // written after each step
  auto replies =
      each_worker({{"action", "collect"}}, "collecting the profile of steps " + std::to_string(first) + "-" +
                                               std::to_string(last_step));
  for (size_t i = 0; i < replies.size(); ++i) {
    if (!replies[i]) continue;
    try {
      const nlohmann::json& p = replies[i]->meta().at("profile");
      nlohmann::json window = p;
      window["worker"] = workers_[i];
      window["first_step"] = first;
      window["last_step"] = last_step;
      nlohmann::json events;
      if (window.contains("trace")) {  // profile.trace: the operator events, a row of their own
        events = std::move(window["trace"]);
        window.erase("trace");
      }
      profile::WorkerWindow parsed = profile::worker_window_from_json(window);
      if (tracking_) {
        profile::write_worker_window(*tracking_, run_id_, parsed);
        if (!events.is_null())
          tracking_->log_profile(
              run_id_, first, workers_[i], "trace",
              nlohmann::json{{"first_step", first}, {"last_step", last_step}, {"events", std::move(events)}}
                  .dump());
      }
      collected_.push_back(std::move(parsed));
    } catch (const std::exception& e) {
      warn("no profile from worker " + workers_[i] + " for steps " + std::to_string(first) + "-" +
           std::to_string(last_step) + ": " + e.what());
    }
  }
}

}  // namespace rlwb::core
