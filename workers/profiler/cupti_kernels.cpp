// CuptiKernels over CUPTI's activity API (cupti_kernels.h): CUPTI fills
// buffers this file hands it; each completed buffer is read at once into
// compact records (kernel name, time, copy bytes, wait time, keyed by the
// CUDA API call's correlation id); fold() maps them through the external
// correlation records to the frames enter() named. Built only where CMake
// found the wheel's cupti.h; cupti_kernels_unbuilt.cpp stands in elsewhere.
#include "workers/profiler/cupti_kernels.h"

#include "core/profile/context_tree.h"

#include <cupti.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <unordered_map>

namespace rlwb::workers::profiler {

using core::profile::ContextTree;
using core::profile::Frame;
using core::profile::FrameKind;
using core::profile::FrameMetrics;

namespace {

constexpr size_t kBufferBytes = 4 << 20;
constexpr size_t kBufferAlignment = 8;     // what CUPTI requires of a buffer
constexpr size_t kMaxRecords = 4'000'000;  // kernels, copies and waits held per fold
constexpr auto kCorrelationKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

// Whether the CUDA driver is there and sees a device, asked of the driver
// itself: the wheel's CUPTI must not be called without one (13.2's
// cuptiActivityRegisterCallbacks recurses until the stack overflows where
// there is no libcuda). Empty when there is; else why not.
std::string why_no_device() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) return std::string("no CUDA driver (") + dlerror() + ")";
  using Init = int (*)(unsigned);
  using DeviceCount = int (*)(int*);
  auto init = reinterpret_cast<Init>(dlsym(driver, "cuInit"));
  auto device_count = reinterpret_cast<DeviceCount>(dlsym(driver, "cuDeviceGetCount"));
  int devices = 0;
  if (!init || !device_count) return "the CUDA driver has no cuInit or cuDeviceGetCount";
  if (int r = init(0); r != 0)
    return "the CUDA driver did not initialise (CUresult " + std::to_string(r) + ")";
  if (device_count(&devices) != 0 || devices == 0) return "the CUDA driver sees no device";
  return "";  // the driver stays loaded: CUDA uses it
}

std::string result_text(CUptiResult r) {
  const char* text = nullptr;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text) return "CUPTI error " + std::to_string(r);
  return text;
}

}  // namespace

struct CuptiKernels::Records {
  struct Kernel {
    uint32_t correlation, name;
    int64_t ns;
  };
  struct Amount {  // a copy's bytes or a wait's nanoseconds
    uint32_t correlation;
    int64_t value;
  };

  std::mutex mu;                                    // CUPTI completes buffers on its own thread
  std::unordered_map<uint32_t, uint64_t> external;  // CUDA API correlation id -> frame id
  std::vector<Kernel> kernels;
  std::vector<Amount> copies, waits;
  std::vector<std::string> names;
  std::unordered_map<const char*, uint32_t> name_of_pointer;  // CUPTI shares one name per kernel
  std::unordered_map<std::string, uint32_t> name_index;
  int64_t dropped = 0, over_limit = 0;

  uint32_t intern(const char* name) {
    if (!name) name = "(unnamed kernel)";
    if (auto it = name_of_pointer.find(name); it != name_of_pointer.end()) return it->second;
    auto [it, added] = name_index.try_emplace(name, static_cast<uint32_t>(names.size()));
    if (added) names.push_back(it->first);
    name_of_pointer[name] = it->second;
    return it->second;
  }

  bool room() {
    if (kernels.size() + copies.size() + waits.size() < kMaxRecords) return true;
    ++over_limit;
    return false;
  }

  void read(const CUpti_Activity* record) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        auto* r = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        if (r->externalKind == kCorrelationKind) external[r->correlationId] = r->externalId;
        break;
      }
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        auto* r = reinterpret_cast<const CUpti_ActivityKernel11*>(record);
        if (room())
          kernels.push_back({r->correlationId, intern(r->name), static_cast<int64_t>(r->end - r->start)});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* r = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        if (room()) copies.push_back({r->correlationId, static_cast<int64_t>(r->bytes)});
        break;
      }
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        auto* r = reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
        if (room()) waits.push_back({r->correlationId, static_cast<int64_t>(r->end - r->start)});
        break;
      }
      default:  // runtime API records: only there so that external correlation records are made
        break;
    }
  }

  void clear() {
    external.clear();
    kernels.clear();
    copies.clear();
    waits.clear();
    dropped = over_limit = 0;
  }
};

namespace {

CuptiKernels::Records* g_records = nullptr;  // set before CUPTI may call back

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  {
    std::lock_guard<std::mutex> lock(g_records->mu);
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) g_records->read(record);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS)
      g_records->dropped += static_cast<int64_t>(dropped);
  }
  std::free(buffer);
}

// Runtime API records carry the external correlation; the rest is what is folded.
constexpr CUpti_ActivityKind kRequiredKinds[] = {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                                 CUPTI_ACTIVITY_KIND_RUNTIME,
                                                 CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
constexpr CUpti_ActivityKind kOptionalKinds[] = {CUPTI_ACTIVITY_KIND_MEMCPY,
                                                 CUPTI_ACTIVITY_KIND_SYNCHRONIZATION};

}  // namespace

CuptiKernels& CuptiKernels::instance() {
  static CuptiKernels kernels;
  return kernels;
}

CuptiKernels::CuptiKernels() : records_(std::make_unique<Records>()) { g_records = records_.get(); }

CuptiKernels::~CuptiKernels() = default;  // the process is ending: CUPTI is left as it is

bool CuptiKernels::start() {
  if (started_) return active_;
  started_ = true;
  if (std::string why = why_no_device(); !why.empty()) {
    why_ = "CUPTI not started: " + why;
    return false;
  }
  if (CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
      r != CUPTI_SUCCESS) {
    why_ = "CUPTI refused its activity buffers: " + result_text(r);
    return false;
  }
  if (!enable()) {
    for (CUpti_ActivityKind kind : kRequiredKinds) cuptiActivityDisable(kind);
    return false;
  }
  active_ = true;
  return true;
}

bool CuptiKernels::enable() {
  for (CUpti_ActivityKind kind : kRequiredKinds)
    if (CUptiResult r = cuptiActivityEnable(kind); r != CUPTI_SUCCESS) {
      why_ = "CUPTI activity kind " + std::to_string(kind) + " could not be enabled: " + result_text(r);
      return false;
    }
  for (CUpti_ActivityKind kind : kOptionalKinds)
    if (CUptiResult r = cuptiActivityEnable(kind); r != CUPTI_SUCCESS && missing_.empty())
      missing_ = "CUPTI activity kind " + std::to_string(kind) + " not collected: " + result_text(r);
  enabled_ = true;
  return true;
}

void CuptiKernels::enter(Frame* frame) {
  if (!active_) return;
  if (!enabled_) enable();  // the first profiled operator after a fold
  auto [it, added] = ids_.try_emplace(frame, first_id_ + frames_.size());
  if (added) frames_.push_back(frame);
  cuptiActivityPushExternalCorrelationId(kCorrelationKind, it->second);
}

void CuptiKernels::leave() {
  if (!active_) return;
  uint64_t last = 0;
  cuptiActivityPopExternalCorrelationId(kCorrelationKind, &last);
}

std::vector<std::string> CuptiKernels::fold(ContextTree& tree) {
  std::vector<std::string> notes;
  if (!active_) return notes;
  if (!missing_.empty()) notes.push_back(missing_);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  // Off until the next profiled operator: no records pile up between windows.
  for (CUpti_ActivityKind kind : kRequiredKinds) cuptiActivityDisable(kind);
  for (CUpti_ActivityKind kind : kOptionalKinds) cuptiActivityDisable(kind);
  enabled_ = false;

  std::unordered_map<const Frame*, Frame*> parent;
  std::vector<Frame*> stack{&tree.root()};
  while (!stack.empty()) {
    Frame* f = stack.back();
    stack.pop_back();
    for (auto& c : f->children) {
      parent[c.get()] = f;
      stack.push_back(c.get());
    }
  }
  auto add_up = [&](Frame* from, auto&& add) {
    for (Frame* f = from; f && f->kind != FrameKind::root; f = parent[f]) add(f->metrics);
  };

  std::lock_guard<std::mutex> lock(records_->mu);
  Records& r = *records_;
  auto frame_of = [&](uint32_t correlation) -> Frame* {
    auto it = r.external.find(correlation);
    if (it == r.external.end() || it->second < first_id_ || it->second - first_id_ >= frames_.size())
      return nullptr;
    return frames_[it->second - first_id_];
  };
  int64_t outside = 0;
  for (const Records::Kernel& k : r.kernels) {
    Frame* op = frame_of(k.correlation);
    if (!op) {
      ++outside;
      continue;
    }
    Frame& kernel = op->child(FrameKind::kernel, r.names[k.name]);
    kernel.metrics.calls += 1;
    parent[&kernel] = op;
    add_up(&kernel, [&](FrameMetrics& m) {
      m.kernel_ns += k.ns;
      m.kernels += 1;
    });
  }
  for (const Records::Amount& c : r.copies)
    if (Frame* op = frame_of(c.correlation))
      add_up(op, [&](FrameMetrics& m) { m.memcpy_bytes += c.value; });
    else
      ++outside;
  for (const Records::Amount& w : r.waits)
    if (Frame* op = frame_of(w.correlation))
      add_up(op, [&](FrameMetrics& m) { m.sync_ns += w.value; });
    else
      ++outside;
  if (outside)
    notes.push_back(std::to_string(outside) +
                    " CUDA kernels, copies or waits ran outside profiled operators and are not in the tree");
  if (r.dropped) notes.push_back("CUPTI dropped " + std::to_string(r.dropped) + " activity records");
  if (r.over_limit)
    notes.push_back(std::to_string(r.over_limit) + " CUDA activity records beyond " +
                    std::to_string(kMaxRecords) + " were not kept");
  r.clear();
  first_id_ += frames_.size();
  frames_.clear();
  ids_.clear();
  return notes;
}

}  // namespace rlwb::workers::profiler
