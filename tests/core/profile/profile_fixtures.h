// Synthetic profiles for the tests of the profile readers (report, exports,
// diff, analyzer) and of `rlwb profile` / `rlwb analyze`: a GRPO-like step
// on one pool of two ranks that none of the analyzer's rules flags, which
// each test bends into the one problem it is about, and a writer that puts a
// profile into a real tracking DB through the store's functions.
#pragma once

#include "core/profile/profile_store.h"

#include <algorithm>
#include <string>
#include <vector>

namespace rlwb::core::profile::fixtures {

// A worker node: each rank gets `dispatch`, computes, then its reply takes
// `transfer` to arrive; the node ends `collect` after the slowest reply.
struct WorkerNodeShape {
  std::vector<double> compute = {0.3, 0.3};
  std::vector<int64_t> rows = {16, 16};
  double dispatch = 0.002, transfer = 0.002, collect = 0.001;
};

inline NodeTiming worker_node(const std::string& id, const std::string& call, const std::string& pool,
                              double start, std::vector<std::string> after,
                              const WorkerNodeShape& shape = {}) {
  NodeTiming n;
  n.node = id;
  n.call = call;
  n.kind = "worker";
  n.pool = pool;
  n.start = start;
  n.dispatch_s = shape.dispatch;
  n.collect_s = shape.collect;
  double last_reply = 0;
  for (size_t r = 0; r < shape.compute.size(); ++r) {
    const double reply = shape.dispatch + shape.compute[r] + shape.transfer;
    n.ranks.push_back({static_cast<int>(r), shape.compute[r], reply, shape.rows[r % shape.rows.size()]});
    last_reply = std::max(last_reply, reply);
  }
  n.end = start + last_reply + shape.collect;
  n.after = std::move(after);
  return n;
}

// A node run on the controller (a builtin or a reward): one "rank", its own time.
inline NodeTiming local_node(const std::string& id, const std::string& call, const std::string& kind,
                             double start, double seconds, std::vector<std::string> after) {
  NodeTiming n;
  n.node = id;
  n.call = call;
  n.kind = kind;
  n.start = start;
  n.end = start + seconds;
  n.ranks = {{0, seconds, seconds, 0}};
  n.after = std::move(after);
  return n;
}

inline StepTiming step_of(int64_t number, std::vector<NodeTiming> nodes) {
  StepTiming step;
  step.step = number;
  step.nodes = std::move(nodes);
  double first = step.nodes.front().start, last = step.nodes.front().end;
  for (const NodeTiming& n : step.nodes) first = std::min(first, n.start), last = std::max(last, n.end);
  step.seconds = last - first;
  step.critical_path = critical_path(step.nodes);
  return step;
}

// What a test changes in the clean step.
struct StepShape {
  WorkerNodeShape gen, ref{.compute = {0.1, 0.1}}, update{.compute = {0.25, 0.25}};
  std::string ref_pool = "main";
  double reward_s = 0.02;
  std::string reward_call = "math.score";
  bool ref_waits_for_reward = false;
};

// gen -> {reward, ref} -> adv -> update; ref outlasts the reward, so the
// critical path is gen, ref, adv, update (0.67 s a step when clean).
inline StepTiming grpo_step(int64_t number, double at, const StepShape& shape) {
  NodeTiming gen = worker_node("gen", "actor.generate", "main", at, {}, shape.gen);
  NodeTiming reward = local_node("reward", shape.reward_call, "reward", gen.end, shape.reward_s, {"gen"});
  NodeTiming ref = shape.ref_waits_for_reward ? worker_node("ref", "reference.log_probs", shape.ref_pool,
                                                            reward.end, {"gen", "reward"}, shape.ref)
                                              : worker_node("ref", "reference.log_probs", shape.ref_pool,
                                                            gen.end, {"gen"}, shape.ref);
  NodeTiming adv = local_node("adv", "builtin.compute_advantage", "builtin", std::max(reward.end, ref.end),
                              0.005, {"reward", "ref"});
  NodeTiming update = worker_node("update", "actor.update", "main", adv.end, {"adv"}, shape.update);
  return step_of(number, {gen, reward, ref, adv, update});
}

// What a test changes in the clean workers' trees.
struct TreeShape {
  // aten::softmax under ref/log_probs: its input shape and calls per window and worker.
  std::string softmax_shape = "[8,64]";
  int64_t softmax_calls = 8;
  int64_t copy_ns = 0;               // aten::contiguous under update/update/aten::linear
  int64_t generate_ops = 40;         // aten::add calls per generate call
  int64_t generate_op_ns = 200'000;  // each
  int64_t allreduce_ns = 0;          // c10d::allreduce under update/update, per step
  int64_t recv_ns = 0;               // c10d::recv under update/update's backward, per step (4 calls)
  int64_t update_views = 0;          // cheap aten::view calls under update/update, per step ...
  int64_t view_ns = 10'000;          // ... each
  int threads = 1;
};

inline Frame& timed(Frame& f, int64_t calls, int64_t wall_ns) {
  f.metrics.calls += calls;
  f.metrics.wall_ns += wall_ns;
  return f;
}

// One worker's tree for one window of `steps` steps.
inline ContextTree worker_tree(const TreeShape& shape, int64_t steps) {
  ContextTree t;
  Frame& gen = timed(t.root().child(FrameKind::node, "gen"), steps, 0);
  Frame& generate = timed(gen.child(FrameKind::method, "generate"), steps, 0);
  const int64_t add_ns = shape.generate_ops * shape.generate_op_ns;
  Frame& add = timed(generate.child(FrameKind::op, "aten::add"), shape.generate_ops * steps, add_ns * steps);
  add.add_shape("[8,64] [8,64]", shape.generate_ops * steps);
  timed(generate, 0, (add_ns + 60'000'000) * steps);  // the ops and 60 ms of the method's own time per call
  timed(gen, 0, generate.metrics.wall_ns);

  Frame& ref = t.root().child(FrameKind::node, "ref");
  Frame& log_probs = timed(ref.child(FrameKind::method, "log_probs"), steps, 90'000'000 * steps);
  Frame& softmax =
      timed(log_probs.child(FrameKind::op, "aten::softmax"), shape.softmax_calls * steps, 20'000'000 * steps);
  softmax.add_shape(shape.softmax_shape, shape.softmax_calls * steps);
  softmax.metrics.self_bytes = 4096;
  timed(ref, 0, log_probs.metrics.wall_ns);

  Frame& update = t.root().child(FrameKind::node, "update");
  Frame& method = timed(update.child(FrameKind::method, "update"), steps, 240'000'000 * steps);
  Frame& linear = timed(method.child(FrameKind::op, "aten::linear"), 10 * steps, 100'000'000 * steps);
  timed(linear.child(FrameKind::op, "aten::mm"), 10 * steps,
        (100'000'000 - shape.copy_ns - 1'000'000) * steps);
  if (shape.copy_ns > 0) {
    Frame& contiguous =
        timed(linear.child(FrameKind::op, "aten::contiguous"), 10 * steps, shape.copy_ns * steps);
    timed(contiguous.child(FrameKind::op, "aten::copy_"), 10 * steps, shape.copy_ns * steps * 9 / 10);
  }
  if (shape.update_views > 0)
    timed(method.child(FrameKind::op, "aten::view"), shape.update_views * steps,
          shape.update_views * shape.view_ns * steps);
  if (shape.allreduce_ns > 0)
    timed(method.child(FrameKind::op, "c10d::allreduce"), steps, shape.allreduce_ns * steps);
  if (shape.recv_ns > 0) {  // a stage's receive inside autograd's backward, as the profiler nests it
    Frame& backward =
        timed(method.child(FrameKind::op, "autograd::engine::evaluate_function: SendToNextStage"), 4 * steps,
              shape.recv_ns * steps);
    timed(backward.child(FrameKind::op, "c10d::recv"), 4 * steps, shape.recv_ns * steps);
  }
  timed(update, 0, method.metrics.wall_ns);
  return t;
}

struct ProfileShape {
  StepShape step;
  TreeShape tree;
  int64_t steps = 4;
  int host_cores = 4;
  nlohmann::json pools = {{"main", {{"workers", 2}, {"device", "cpu"}}}};
  nlohmann::json models = {{"actor", {{"pool", "main"}, {"role", "actor"}, {"dp", 2}}},
                           {"reference", {{"pool", "main"}, {"role", "reference"}, {"dp", 2}}}};
  nlohmann::json rewards = {{"math", {{"type", "math"}}}};
  // Per worker: its memory limit and resident-set peak (1 GiB of 8 GiB on
  // the host: neither near the limit nor, with no micro-batch settings in
  // the models, headroom a rule can name a change for); allocator peak.
  int64_t memory_limit = int64_t{8} << 30, rss_peak = int64_t{512} << 20, peak = 1 << 20;
};

// `steps` steps one after another, two windows of half of them each for
// main/0 and main/1 (and ref/0 when the reference has a pool of its own).
inline RunProfile grpo_profile(const ProfileShape& shape = {}) {
  RunProfile p;
  p.meta.first_step = 1;
  p.meta.last_step = shape.steps;
  p.meta.window = std::max<int64_t>(1, shape.steps / 2);
  p.meta.host_cores = shape.host_cores;
  p.meta.pools = shape.pools;
  p.meta.models = shape.models;
  p.meta.rewards = shape.rewards;
  double at = 0;
  for (int64_t s = 1; s <= shape.steps; ++s) {
    p.steps.push_back(grpo_step(s, at, shape.step));
    at += p.steps.back().seconds + 0.01;
  }
  std::vector<std::string> workers = {"main/0", "main/1"};
  if (shape.step.ref_pool != "main") workers.push_back(shape.step.ref_pool + "/0");
  for (int64_t first = 1; first <= shape.steps; first += p.meta.window)
    for (const std::string& worker : workers) {
      WorkerWindow w;
      w.worker = worker;
      w.host = "host-a";
      w.pid = 100;
      w.first_step = first;
      w.last_step = std::min(shape.steps, first + p.meta.window - 1);
      w.intra_op_threads = shape.tree.threads;
      w.peak_bytes = shape.peak;
      w.memory_limit_bytes = shape.memory_limit;
      w.rss_peak_bytes = shape.rss_peak;
      w.tree = worker_tree(shape.tree, w.last_step - w.first_step + 1);
      p.workers.push_back(std::move(w));
    }
  return p;
}

// The profile as the controller stores it; returns `run` for chaining.
inline int64_t write_profile(TrackingWriter& db, int64_t run, const RunProfile& profile) {
  write_profile_meta(db, run, profile.meta);
  for (const StepTiming& step : profile.steps) write_step_timing(db, run, step);
  for (const WorkerWindow& window : profile.workers) write_worker_window(db, run, window);
  db.flush();
  return run;
}

}  // namespace rlwb::core::profile::fixtures
