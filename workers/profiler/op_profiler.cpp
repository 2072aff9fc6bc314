#include "workers/profiler/op_profiler.h"

#include "core/profile/context_tree.h"
#include "workers/profiler/cupti_kernels.h"
#include "workers/profiler/hardware_counters.h"
#include "workers/profiler/memory_limits.h"
#include "workers/profiler/native_frames.h"

#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/cuda.h>

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace rlwb::workers::profiler {

using core::profile::ContextTree;
using core::profile::Frame;
using core::profile::FrameKind;

namespace {

constexpr const char* kScopePrefix = "rlwb/";  // the call scopes' own user-scope names
constexpr size_t kMaxTraceEvents = 2'000'000;
constexpr double kShapeSampling = 1.0 / 16;  // input shapes of one operator call in 16

int64_t now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

int64_t thread_cpu_ns() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

struct OpenFrame {
  Frame* frame;
  int64_t start_ns;
  const char* name;  // the RecordFunction's name pointer, to pair its end with its start
};

struct CacheKey {
  Frame* parent;
  const char* name;
  bool operator==(const CacheKey&) const = default;
};
struct CacheKeyHash {
  size_t operator()(const CacheKey& k) const {
    return std::hash<const void*>()(k.parent) * 31 + std::hash<const void*>()(k.name);
  }
};

// Per thread: the frames open on it, and a cache of (parent, name) -> child
// so that an operator seen before costs one hash lookup, not a scan.
struct ThreadState {
  std::vector<OpenFrame> open;
  size_t base = 0;  // open[base - 1] is the active call's method frame
  bool in_call = false;
  uint64_t generation = 0;  // the tree the cache points into
  std::unordered_map<CacheKey, Frame*, CacheKeyHash> children;
  HardwareCounters counters;
};

thread_local ThreadState tls;

struct TraceEvent {
  Frame* frame;
  int64_t start_ns, duration_ns;
  int depth;
};

}  // namespace

// c10's allocators report every allocation while a reporter with
// memoryProfilingEnabled() is the thread's PROFILER_STATE debug info.
struct MemoryReporter : c10::MemoryReportingInfoBase {
  std::atomic<int64_t> peak{0};
  void reportMemoryUsage(void*, int64_t alloc_size, size_t total_allocated, size_t, c10::Device) override {
    ThreadState& t = tls;
    if (alloc_size > 0 && t.in_call && !t.open.empty()) t.open.back().frame->metrics.self_bytes += alloc_size;
    int64_t total = static_cast<int64_t>(total_allocated);
    int64_t seen = peak.load(std::memory_order_relaxed);
    while (total > seen && !peak.compare_exchange_weak(seen, total)) {
    }
  }
  bool memoryProfilingEnabled() const override { return true; }
};

struct OpProfiler::Impl {
  ProfilerSettings settings;
  bool configured = false;
  ContextTree tree;
  std::atomic<uint64_t> generation{1};
  std::atomic<int> calls_active{0};
  std::atomic<int64_t> other_thread_ops{0};
  std::shared_ptr<MemoryReporter> memory = std::make_shared<MemoryReporter>();
  std::vector<TraceEvent> trace;
  int64_t trace_dropped = 0;
  NativeFrames native;
  std::string counters_note;      // why hardware counters are missing, once
  CuptiKernels* cupti = nullptr;  // on a CUDA worker where CUPTI started
  std::string cupti_note;         // why a CUDA worker's kernels are missing

  Frame* child_of(ThreadState& t, Frame* parent, FrameKind kind, const char* name) {
    CacheKey key{parent, name};
    if (auto it = t.children.find(key); it != t.children.end() && it->second->name == name) return it->second;
    Frame* f = &parent->child(kind, name);
    t.children[key] = f;
    return f;
  }
};

namespace {

OpProfiler::Impl* g_impl = nullptr;  // set once, when the profiler is made, before any callback runs

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction& fn) {
  ThreadState& t = tls;
  if (!t.in_call) {
    if (g_impl->calls_active.load(std::memory_order_relaxed) > 0)
      g_impl->other_thread_ops.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  const char* name = fn.name();  // not free: read once
  if (fn.scope() == at::RecordScope::USER_SCOPE && std::strncmp(name, kScopePrefix, 5) == 0) return nullptr;
  Frame* parent = t.open.back().frame;
  if (g_impl->settings.native_stacks && parent->kind != FrameKind::op)
    parent = g_impl->native.attach(parent, [&](Frame* p, const char* native) {
      return g_impl->child_of(t, p, FrameKind::native, native);
    });
  Frame* frame = g_impl->child_of(t, parent, FrameKind::op, name);
  t.open.push_back({frame, now_ns(), name});
  if (g_impl->cupti) g_impl->cupti->enter(frame);
  return nullptr;
}

void on_op_end(const at::RecordFunction& fn, at::ObserverContext*) {
  ThreadState& t = tls;
  if (!t.in_call || t.open.size() <= t.base) return;
  OpenFrame open = t.open.back();
  if (open.name != fn.name()) return;  // an operator that began before the call did
  t.open.pop_back();
  if (g_impl->cupti) g_impl->cupti->leave();
  const int64_t duration = now_ns() - open.start_ns;
  open.frame->metrics.calls += 1;
  open.frame->metrics.wall_ns += duration;
  if (g_impl->settings.trace) {
    if (g_impl->trace.size() < kMaxTraceEvents)
      g_impl->trace.push_back(
          {open.frame, open.start_ns, duration, static_cast<int>(t.open.size() - t.base)});
    else
      ++g_impl->trace_dropped;
  }
}

// Sampled, and registered after on_op_start: the operator's frame is on top.
std::unique_ptr<at::ObserverContext> on_shape_start(const at::RecordFunction& fn) {
  ThreadState& t = tls;
  if (!t.in_call || t.open.size() <= t.base || t.open.back().name != fn.name()) return nullptr;
  std::string signature;
  for (const c10::IValue& input : fn.inputs()) {
    if (!input.isTensor()) continue;
    const at::Tensor& tensor = input.toTensor();
    if (!tensor.defined()) continue;
    if (!signature.empty()) signature += ' ';
    signature += '[';
    for (int64_t d = 0; d < tensor.dim(); ++d) signature += (d ? "," : "") + std::to_string(tensor.size(d));
    signature += ']';
    if (!tensor.is_contiguous()) signature += 's';  // strided: the analyzer looks for copies of these
  }
  if (!signature.empty()) t.open.back().frame->add_shape(signature);
  return nullptr;
}

}  // namespace

ProfilerSettings ProfilerSettings::from_json(const nlohmann::json& j) {
  ProfilerSettings s;
  s.shapes = j.value("shapes", s.shapes);
  s.native_stacks = j.value("native_stacks", s.native_stacks);
  s.trace = j.value("trace", s.trace);
  s.hardware_counters = j.value("hardware_counters", s.hardware_counters);
  return s;
}

OpProfiler& OpProfiler::instance() {
  static OpProfiler profiler;
  return profiler;
}

OpProfiler::OpProfiler() : impl_(std::make_unique<Impl>()) { g_impl = impl_.get(); }

OpProfiler::~OpProfiler() = default;

bool OpProfiler::configured() const { return impl_->configured; }

void OpProfiler::configure(const ProfilerSettings& settings) {
  impl_->settings = settings;
  impl_->configured = true;
  impl_->cupti = nullptr;
  impl_->cupti_note.clear();
  if (settings.device.rfind("cuda", 0) != 0) return;
  CuptiKernels& cupti = CuptiKernels::instance();
  if (!torch::cuda::is_available())
    impl_->cupti_note = "CUDA kernels not collected: the worker's device is " + settings.device +
                        " but CUDA is not available in this process";
  else if (!cupti.start())
    impl_->cupti_note = "CUDA kernels not collected: " + cupti.why_unavailable();
  else
    impl_->cupti = &cupti;
}

namespace {

// The callbacks live only while a call is profiled, and only on its
// thread: operators outside profiled calls (other steps, other threads)
// pay nothing, not even RecordFunction's own set-up.
std::vector<at::CallbackHandle> add_call_callbacks(const ProfilerSettings& settings) {
  std::vector<at::CallbackHandle> handles;
  handles.push_back(
      at::addThreadLocalCallback(at::RecordFunctionCallback(on_op_start, on_op_end)
                                     .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
                                              at::RecordScope::USER_SCOPE})));
  if (settings.shapes)
    handles.push_back(at::addThreadLocalCallback(at::RecordFunctionCallback(on_shape_start)
                                                     .needsInputs(true)
                                                     .samplingProb(kShapeSampling)
                                                     .scopes({at::RecordScope::FUNCTION})));
  return handles;
}

}  // namespace

ContextUserScope::ContextUserScope(const std::string& node, const std::string& method)
    : label_(kScopePrefix + node + "/" + method),
      scope_(std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE)) {
  if (scope_->isActive()) scope_->before(label_.c_str());
}

ContextUserScope::~ContextUserScope() = default;  // the RecordFunction's end ends the scope

struct OpProfiler::CallScope::State {
  Impl* impl;
  Frame* node;
  Frame* method;
  int64_t start_ns, start_cpu_ns;
  CounterValues start_counters;
  std::vector<at::CallbackHandle> callbacks;
  std::unique_ptr<c10::DebugInfoGuard> memory_guard;
  std::unique_ptr<ContextUserScope> user_scope;
};

OpProfiler::CallScope::CallScope(OpProfiler& profiler, const std::string& node, const std::string& method)
    : state_(std::make_unique<State>()) {
  Impl* impl = state_->impl = profiler.impl_.get();
  ThreadState& t = tls;
  if (t.in_call) {  // a nested call is attributed to the outer one
    state_->impl = nullptr;
    return;
  }
  if (t.generation != impl->generation) {
    t.children.clear();
    t.generation = impl->generation;
  }
  state_->node = &impl->tree.root().child(FrameKind::node, node);
  state_->method = &state_->node->child(FrameKind::method, method);
  state_->start_ns = now_ns();
  state_->start_cpu_ns = thread_cpu_ns();
  if (impl->settings.hardware_counters) {
    if (auto values = t.counters.read())
      state_->start_counters = *values;
    else if (impl->counters_note.empty())
      impl->counters_note = t.counters.why_unavailable();
  }
  t.open.push_back({state_->node, state_->start_ns, nullptr});
  t.open.push_back({state_->method, state_->start_ns, nullptr});
  t.base = t.open.size();
  t.in_call = true;
  impl->calls_active.fetch_add(1);
  if (impl->settings.native_stacks) impl->native.enter_call();
  if (impl->cupti) impl->cupti->enter(state_->method);
  state_->callbacks = add_call_callbacks(impl->settings);
  state_->memory_guard =
      std::make_unique<c10::DebugInfoGuard>(c10::DebugInfoKind::PROFILER_STATE, impl->memory);
  state_->user_scope = std::make_unique<ContextUserScope>(node, method);
}

OpProfiler::CallScope::~CallScope() {
  Impl* impl = state_->impl;
  if (!impl) return;
  state_->user_scope.reset();  // ends the user scope
  for (at::CallbackHandle h : state_->callbacks) at::removeCallback(h);
  state_->memory_guard.reset();
  ThreadState& t = tls;
  if (impl->cupti)  // the operators left open by an exception, then the method
    for (size_t i = t.base; i <= t.open.size(); ++i) impl->cupti->leave();
  const int64_t wall = now_ns() - state_->start_ns;
  const int64_t cpu = thread_cpu_ns() - state_->start_cpu_ns;
  for (Frame* f : {state_->node, state_->method}) {
    f->metrics.calls += 1;
    f->metrics.wall_ns += wall;
    f->metrics.cpu_ns += cpu;
  }
  if (impl->settings.hardware_counters && state_->start_counters.valid)
    if (auto end = t.counters.read()) {
      const int64_t cycles = end->cycles - state_->start_counters.cycles;
      const int64_t instructions = end->instructions - state_->start_counters.instructions;
      for (Frame* f : {state_->node, state_->method}) {
        f->metrics.cycles = std::max<int64_t>(f->metrics.cycles, 0) + cycles;
        f->metrics.instructions = std::max<int64_t>(f->metrics.instructions, 0) + instructions;
      }
    }
  t.open.clear();  // operators left open by an exception end with the call
  t.base = 0;
  t.in_call = false;
  impl->calls_active.fetch_sub(1);
}

namespace {

// What the worker's allocations may grow to: its CUDA device's memory, else the host's (or its cgroup's).
MemoryReading memory_limit(const std::string& device) {
  if (device.rfind("cuda", 0) != 0) return host_memory_limit();
  if (!torch::cuda::is_available())
    return {0, "device memory limit not read: the worker's device is " + device +
                   " but CUDA is not available in this process"};
  const c10::Device d(device);
  return cuda_memory_limit(d.has_index() ? d.index() : at::detail::getCUDAHooks().current_device());
}

}  // namespace

nlohmann::json OpProfiler::collect() {
  Impl& impl = *impl_;
  nlohmann::json notes = nlohmann::json::array();
  if (!impl.counters_note.empty())
    notes.push_back("hardware counters (cycles, instructions) not measured: " + impl.counters_note);
  if (int64_t other = impl.other_thread_ops.exchange(0))
    notes.push_back(std::to_string(other) +
                    " operator calls ran on other threads during profiled calls and are not in the tree");
  if (impl.trace_dropped)
    notes.push_back("trace: " + std::to_string(impl.trace_dropped) + " events beyond " +
                    std::to_string(kMaxTraceEvents) + " were dropped");
  if (impl.cupti) {
    try {
      torch::cuda::synchronize();  // every kernel of the window has ended
    } catch (const std::exception& e) {
      notes.push_back(std::string("CUDA synchronize before collecting kernels failed: ") + e.what());
    }
    for (std::string& note : impl.cupti->fold(impl.tree)) notes.push_back(std::move(note));
  }
  if (!impl.cupti_note.empty()) notes.push_back(impl.cupti_note);
  if (impl.settings.native_stacks) impl.native.symbolize(impl.tree);
  const MemoryReading limit = memory_limit(impl.settings.device), rss = process_rss_peak();
  for (const MemoryReading* m : {&limit, &rss})
    if (!m->note.empty()) notes.push_back(m->note);
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  nlohmann::json out = {{"host", host},
                        {"pid", getpid()},
                        {"intra_op_threads", at::get_num_threads()},
                        {"peak_bytes", impl.memory->peak.exchange(0)},
                        {"memory_limit_bytes", limit.bytes},
                        {"rss_peak_bytes", rss.bytes},
                        {"notes", notes},
                        {"tree", impl.tree.to_json()}};
  if (impl.settings.trace) {
    // [name, start us on CLOCK_MONOTONIC, duration us, depth]: the trace export's operator
    // lanes. The controller's steady_clock is the same clock on this host, so
    // the export lines the operators up with the steps.
    nlohmann::json events = nlohmann::json::array();
    for (auto& e : impl.trace)
      events.push_back({e.frame->name, e.start_ns / 1000.0, e.duration_ns / 1000.0, e.depth});
    out["trace"] = std::move(events);
    impl.trace.clear();
    impl.trace_dropped = 0;
  }
  impl.tree = ContextTree();
  impl.generation.fetch_add(1);
  return out;
}

}  // namespace rlwb::workers::profiler
