// The analyzer's rules that read the workers' calling-context trees
// (analyzer_rules.h): softmax over a tiny last dimension, strided operands
// copied under a matrix product, many small operators per call of a
// generate method, a collective that waits after the compute instead of
// overlapping it, and pipeline stages waiting for each other.
#include "core/profile/analyzer_rules.h"
#include "core/profile/context_paths.h"
#include "core/profile/profile_units.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace rlwb::core::profile {

namespace {

bool is_op(const Frame* f) { return f->kind == FrameKind::op; }

bool named_one_of(const Frame* f, const std::set<std::string>& names) { return names.count(f->name) > 0; }

// The last dimension of the first tensor of a shape signature ("[8,32] [32,64]" -> 32); -1 when none.
int64_t first_last_dim(const std::string& signature) {
  const size_t open = signature.find('['), close = signature.find(']');
  if (open == std::string::npos || close == std::string::npos || close <= open + 1) return -1;
  const std::string dims = signature.substr(open + 1, close - open - 1);
  try {
    return std::stoll(dims.substr(dims.rfind(',') == std::string::npos ? 0 : dims.rfind(',') + 1));
  } catch (const std::exception&) {
    return -1;
  }
}

// The merged trees add up every rank: a node's ranks run side by side, so
// what one of them spends per step is the merged time over steps and ranks.
int64_t ranks_running(const RunProfile& profile, const std::string& node) {
  std::set<std::string> workers;
  for (const WorkerWindow& w : profile.workers)
    if (w.tree.root().find(FrameKind::node, node)) workers.insert(w.worker);
  return std::max<int64_t>(1, static_cast<int64_t>(workers.size()));
}

// Seconds per step on one rank of the path's node.
double per_rank_step(const AnalysisInput& in, const ContextPath& p, int64_t ns) {
  const int64_t steps = std::max<int64_t>(1, profiled_step_count(in.profile));
  return static_cast<double>(ns) * 1e-9 / static_cast<double>(steps * ranks_running(in.profile, p.node()));
}

// What shortening the node by `seconds` saves the step: only in the steps
// where it is on the critical path (all of them when the controller's
// timings do not name it).
double step_gain(const AnalysisInput& in, const ContextPath& p, double seconds) {
  for (const NodeSummary& n : in.nodes)
    if (n.node == p.node()) return seconds * n.critical_share;
  return seconds;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, value >= 100 ? "%.0f" : "%.1f", value);
  return text;
}

// The calling method's path ("gen/generate") for a change's location.
std::string method_of(const ContextPath& p) {
  std::vector<const Frame*> up_to_method;
  for (const Frame* f : p.frames) {
    up_to_method.push_back(f);
    if (f->kind == FrameKind::method) break;
  }
  return path_label(up_to_method);
}

const std::set<std::string> kSoftmaxOps = {"aten::softmax", "aten::_softmax", "aten::log_softmax",
                                           "aten::_log_softmax"};
const std::set<std::string> kMatmulOps = {"aten::mm",  "aten::matmul", "aten::linear",
                                          "aten::bmm", "aten::addmm",  "aten::baddbmm"};
const std::set<std::string> kCopyOps = {"aten::contiguous", "aten::clone", "aten::copy_"};

}  // namespace

// ---- op-small-softmax -----------------------------------------------------

namespace {

// A softmax row of 16 or fewer values is a few nanoseconds of arithmetic:
// its time is the per-call and per-row overhead of the kernel.
constexpr int64_t kTinyLastDim = 16;
constexpr double kMinTinyCallsPerStep = 100;  // fewer calls cost too little to matter
// Batched into one call over all rows (or fused with its neighbours), about
// this much of the time goes.
constexpr double kSoftmaxSavedShare = 0.8;

}  // namespace

void find_small_softmax(const AnalysisInput& in, std::vector<Finding>& out) {
  const int64_t steps = profiled_step_count(in.profile);
  for (const ContextPath& p : in.paths) {
    if (!is_op(&p.leaf()) || !named_one_of(&p.leaf(), kSoftmaxOps)) continue;
    // aten::_softmax under aten::softmax is the same call: count the outermost.
    if (std::any_of(p.frames.begin(), p.frames.end() - 1,
                    [](const Frame* f) { return named_one_of(f, kSoftmaxOps); }))
      continue;
    int64_t tiny_calls = 0, last_dim = 0;
    for (auto& [signature, calls] : p.leaf().shapes) {
      const int64_t dim = first_last_dim(signature);
      if (dim > 0 && dim <= kTinyLastDim) tiny_calls += calls, last_dim = std::max(last_dim, dim);
    }
    const double tiny_per_step =
        static_cast<double>(tiny_calls) / static_cast<double>(std::max<int64_t>(1, steps));
    if (tiny_calls == 0 || tiny_per_step < kMinTinyCallsPerStep) continue;
    const double tiny_share =
        static_cast<double>(tiny_calls) / static_cast<double>(std::max<int64_t>(1, p.calls));
    const double time_s = per_rank_step(in, p, p.total_ns) * tiny_share;
    Finding f;
    f.rule = "op-small-softmax";
    f.title = p.leaf().name + " over a last dimension of at most " + std::to_string(last_dim) + " under '" +
              method_of(p) + "'";
    f.evidence =
        p.label() + ": " + number(tiny_per_step) +
        " calls per step (all ranks) with a last dimension <= " + std::to_string(kTinyLastDim) + " (" +
        format_percent(tiny_share) + " of its calls), " + format_seconds(time_s) + " per step and rank, " +
        format_seconds(static_cast<double>(p.total_ns) * 1e-9 / std::max<int64_t>(1, p.calls)) + " a call";
    f.change = "one " + p.leaf().name + " over all rows instead of one per row or head, under " +
               method_of(p) +
               " (workers/model/layers.cpp for attention, workers/model/sampling.cpp for sampling)";
    f.gain_s = step_gain(in, p, kSoftmaxSavedShare * time_s);
    out.push_back(std::move(f));
  }
}

// ---- op-strided-copy ------------------------------------------------------

namespace {

// A tenth of a matrix product's time spent copying its operands: the
// operand's layout, not the product, is the cost.
constexpr double kCopyShareOfMatmul = 0.1;

}  // namespace

void find_copies_under_matmul(const AnalysisInput& in, std::vector<Finding>& out) {
  for (const ContextPath& p : in.paths) {
    if (!is_op(&p.leaf()) || !named_one_of(&p.leaf(), kMatmulOps)) continue;
    // The copies below this product, outermost only (copy_ under contiguous is one copy).
    int64_t copy_ns = 0, copy_calls = 0;
    std::set<std::string> copy_names;
    const Frame& product = p.leaf();
    std::vector<const Frame*> stack(1, &product);
    while (!stack.empty()) {
      const Frame* f = stack.back();
      stack.pop_back();
      for (const auto& child : f->children) {
        if (named_one_of(child.get(), kCopyOps)) {
          copy_ns += child->metrics.wall_ns;
          copy_calls += child->metrics.calls;
          copy_names.insert(child->name);
        } else if (!named_one_of(child.get(), kMatmulOps)) {  // a nested product is its own context
          stack.push_back(child.get());
        }
      }
    }
    if (copy_ns == 0 || copy_ns < kCopyShareOfMatmul * static_cast<double>(p.total_ns)) continue;
    std::string names;
    for (const std::string& n : copy_names) names += (names.empty() ? "" : ", ") + n;
    Finding f;
    f.rule = "op-strided-copy";
    f.title = "operands of " + product.name + " copied under '" + method_of(p) + "'";
    f.evidence =
        p.label() + ": " + names + " take " + format_seconds(per_rank_step(in, p, copy_ns)) +
        " per step and rank (" + format_percent(static_cast<double>(copy_ns) / p.total_ns) +
        " of the product's " + format_seconds(per_rank_step(in, p, p.total_ns)) + "), " +
        std::to_string(copy_calls) +
        " copies: an operand is strided (a transposed or sliced view) and is made contiguous per call";
    f.change =
        "keep the operand in the layout the kernel reads, once, rather than per call: the weight "
        "pre-transposed and contiguous (workers/model/linear.cpp, dense_for_onednn), the activation "
        "contiguous where it is made (the caller in " +
        method_of(p) + ")";
    f.gain_s = step_gain(in, p, per_rank_step(in, p, copy_ns));  // the copies go entirely
    out.push_back(std::move(f));
  }
}

// ---- op-many-small-ops ----------------------------------------------------

namespace {

// Thousands of operators per generate call, each a few microseconds: the
// per-operator overhead (dispatch, allocation, launch) is the time.
constexpr double kManyOpsPerCall = 1000;
constexpr double kSmallOpSeconds = 20e-6;
// Fused or captured (fewer, larger operators per token), about half of it goes.
constexpr double kSmallOpsSavedShare = 0.5;

}  // namespace

void find_many_small_ops_in_generate(const AnalysisInput& in, std::vector<Finding>& out) {
  for (const ContextPath& p : in.paths) {
    const Frame& method = p.leaf();
    if (method.kind != FrameKind::method || method.name.find("generate") == std::string::npos ||
        method.metrics.calls == 0)
      continue;
    int64_t op_calls = 0, op_ns = 0;
    for (const auto& child : method.children)  // the outermost operators: nested ones are inside their time
      if (is_op(child.get())) op_calls += child->metrics.calls, op_ns += child->metrics.wall_ns;
    if (op_calls == 0) continue;
    const double ops_per_call = static_cast<double>(op_calls) / static_cast<double>(method.metrics.calls);
    const double mean_op_s = static_cast<double>(op_ns) * 1e-9 / static_cast<double>(op_calls);
    if (ops_per_call < kManyOpsPerCall || mean_op_s > kSmallOpSeconds) continue;
    Finding f;
    f.rule = "op-many-small-ops";
    f.title = "'" + p.label() + "' runs " + number(ops_per_call) + " small operators per call";
    f.evidence =
        number(ops_per_call) + " operators per call of " + p.label() + ", " + format_seconds(mean_op_s) +
        " each on average; " + format_seconds(per_rank_step(in, p, op_ns)) + " per step and rank in them (" +
        format_percent(method.metrics.wall_ns > 0 ? static_cast<double>(op_ns) / method.metrics.wall_ns : 0) +
        " of the method)";
    f.change =
        "fewer, larger operators per generated token in workers/model/generation.cpp (batch the "
        "sampling steps, fuse the per-token updates; on CUDA capture the decode step as a graph)";
    f.gain_s = step_gain(in, p, kSmallOpsSavedShare * per_rank_step(in, p, op_ns));
    out.push_back(std::move(f));
  }
}

// ---- collective-not-overlapped -------------------------------------------

namespace {

// workers/spmd_group.cpp wraps each collective in a user scope of this name,
// so its wait (for the data and for the slowest rank) is a frame.
constexpr const char* kAllReduceScope = "c10d::allreduce";
// A tenth of the method in a blocking all-reduce is worth overlapping; below
// a millisecond per step the bucketing's own cost would eat the gain.
constexpr double kCollectiveShareOfMethod = 0.10;
constexpr double kMinCollectiveSeconds = 1e-3;
// Bucketed reduction hides at most the backward it runs beside; half is
// what DDP-style overlap typically recovers when backward and reduction
// share the cores.
constexpr double kCollectiveSavedShare = 0.5;

// Whether a sum overlapped with backward has something to run on -- the
// condition TrainState overlaps under (workers/roles/model_setup.cpp): NCCL
// beside a GPU's kernels, or a core of the host beyond the compute threads
// of the pool's workers for Gloo's threads. Without one, overlapping made
// the default experiment's update slower (bench/RESULTS.md, session 11),
// so the wait is no finding there.
bool overlap_can_pay(const AnalysisInput& in, const std::string& node) {
  std::string pool;
  for (const NodeSummary& n : in.nodes)
    if (n.node == node) pool = n.pool;
  if (settings_of(in.profile.meta.pools, pool).value("device", std::string()).rfind("cuda", 0) == 0)
    return true;
  int threads = 0;
  for (const WorkerWindow& w : in.profile.workers)
    if (worker_matches(w.worker, pool)) threads = std::max(threads, w.intra_op_threads);
  return in.profile.meta.host_cores > in.pool_workers(pool) * std::max(1, threads);
}

}  // namespace

void find_unoverlapped_collectives(const AnalysisInput& in, std::vector<Finding>& out) {
  for (const ContextPath& p : in.paths) {
    const Frame& method = p.leaf();
    if (method.kind != FrameKind::method || method.metrics.wall_ns <= 0) continue;
    if (!overlap_can_pay(in, p.node())) continue;
    const Frame* collective = method.find(FrameKind::op, kAllReduceScope);
    if (!collective || collective->metrics.calls == 0) continue;
    const double share = static_cast<double>(collective->metrics.wall_ns) / method.metrics.wall_ns;
    const double per_step = per_rank_step(in, p, collective->metrics.wall_ns);
    if (share < kCollectiveShareOfMethod || per_step < kMinCollectiveSeconds) continue;
    Finding f;
    f.rule = "collective-not-overlapped";
    f.title = "'" + p.label() + "' waits " + format_percent(share) + " of its time in the all-reduce";
    f.evidence = kAllReduceScope + std::string(" under ") + p.label() + ": " + format_seconds(per_step) +
                 " per step and rank over " + number(static_cast<double>(collective->metrics.calls)) +
                 " calls, after the backward has finished (it blocks: nothing runs beside it)";
    f.change =
        "overlap the gradient all-reduce with the backward: sum the gradients in buckets as they become "
        "final, as DDP does (workers/roles/overlapped_gradient_sum.h), which TrainState does on this "
        "layout (CUDA, or a core to spare); a build before it, or an update that calls step() without "
        "sum_during_next_backward(), blocks (workers/roles/model_setup.h)";
    f.gain_s = step_gain(in, p, kCollectiveSavedShare * per_step);
    out.push_back(std::move(f));
  }
}

// ---- pipeline-bubble --------------------------------------------------------

namespace {

// workers/spmd_group.cpp's scope of a point-to-point receive: a pipeline
// stage waiting for the stage before it (forward) or after it (backward).
constexpr const char* kRecvScope = "c10d::recv";
// A tenth of a method spent waiting for the other stages is worth more
// micro-batches; below a millisecond per step the extra parts' own
// operator calls would eat the gain.
constexpr double kBubbleShareOfMethod = 0.10;
constexpr double kMinBubbleSeconds = 1e-3;
// pipeline_micro_batches' default (core/config/model_options.h).
constexpr int64_t kDefaultPipelineMicroBatches = 4;

// The receives' wall time and calls anywhere under `f` (a receive inside
// autograd's backward sits under the backward's own frames).
void add_receives(const Frame& f, int64_t& wall_ns, int64_t& calls) {
  for (const auto& child : f.children) {
    if (child->kind == FrameKind::op && child->name == kRecvScope) {
      wall_ns += child->metrics.wall_ns;
      calls += child->metrics.calls;
    } else {
      add_receives(*child, wall_ns, calls);
    }
  }
}

}  // namespace

void find_pipeline_bubbles(const AnalysisInput& in, std::vector<Finding>& out) {
  for (const ContextPath& p : in.paths) {
    const Frame& method = p.leaf();
    if (method.kind != FrameKind::method || method.metrics.wall_ns <= 0) continue;
    std::string model;
    for (const NodeSummary& n : in.nodes)
      if (n.node == p.node()) model = n.callee();
    const nlohmann::json& settings = settings_of(in.profile.meta.models, model);
    const int stages = settings.value("pp", 1);
    if (stages <= 1) continue;
    int64_t wall_ns = 0, calls = 0;
    add_receives(method, wall_ns, calls);
    const double share = static_cast<double>(wall_ns) / static_cast<double>(method.metrics.wall_ns);
    const double per_step = per_rank_step(in, p, wall_ns);
    if (calls == 0 || share < kBubbleShareOfMethod || per_step < kMinBubbleSeconds) continue;
    const nlohmann::json& config = settings_of(settings, "config");
    const bool written = config.contains("pipeline_micro_batches");
    const int64_t parts = config.value("pipeline_micro_batches", kDefaultPipelineMicroBatches);
    Finding f;
    f.rule = "pipeline-bubble";
    f.title =
        "'" + p.label() + "' waits " + format_percent(share) + " of its time for the other pipeline stages";
    f.evidence = std::string(kRecvScope) + " under " + p.label() + ": " + format_seconds(per_step) +
                 " per step and rank in " + number(per_rank_step(in, p, calls) * 1e9) + " receives; " +
                 model + " runs " + std::to_string(stages) + " stages with " + std::to_string(parts) +
                 " pipeline micro-batches a pass";
    f.change = std::string(written ? "" : "++") + "models." + model +
               ".config.pipeline_micro_batches=" + std::to_string(2 * parts) +
               " (up to the rows of a pass; workers/model/pipeline_parallel.h), or fewer stages";
    // The stages wait (p - 1)/(m + p - 1) of a pass; twice the parts make it
    // (p - 1)/(2m + p - 1). The receives also wait for slower stages, which
    // more parts do not cut: an estimate from above.
    const double m = static_cast<double>(parts), p1 = static_cast<double>(stages - 1);
    f.gain_s = step_gain(in, p, per_step * (1.0 - (m + p1) / (2.0 * m + p1)));
    out.push_back(std::move(f));
  }
}

}  // namespace rlwb::core::profile
