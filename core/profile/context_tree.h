// The calling-context tree of the profiler (docs/profiler.md): one tree per
// worker and step window, rooted at the worker, whose paths run dataflow
// node -> method -> operator (nested operators as children) -> native
// frames and, on CUDA, kernels. Each frame carries the metrics of every
// call that reached it along that path. Trees from several windows or
// ranks merge by path. This file is the profile's data model and its JSON
// form (what the tracking DB stores); no LibTorch here, so the CLI and the
// GUI read profiles without it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rlwb::core::profile {

enum class FrameKind { root, node, method, op, native, kernel };
const char* frame_kind_name(FrameKind kind);
FrameKind frame_kind_from_name(const std::string& name);  // throws std::invalid_argument

// Inclusive of the frame's children unless named `self_`.
struct FrameMetrics {
  int64_t calls = 0;
  int64_t wall_ns = 0;     // wall time inside the frame
  int64_t cpu_ns = 0;      // the thread's CPU time inside it (0 where not measured)
  int64_t self_bytes = 0;  // bytes allocated while this frame was the innermost one
  // Hardware counters (perf_event_open), where the machine allows them; -1: not measured.
  int64_t cycles = -1, instructions = -1;
  // CUDA, from CUPTI: kernel time and launches, memcpy bytes, synchronisation waits.
  int64_t kernel_ns = 0, kernels = 0, memcpy_bytes = 0, sync_ns = 0;
  void add(const FrameMetrics& other);
};

struct Frame {
  FrameKind kind = FrameKind::root;
  std::string name;
  FrameMetrics metrics;
  // Input shapes seen at this frame ("[8,32] [32,64]" -> calls), at most
  // kMaxShapes kept; the rest counted under "other".
  std::map<std::string, int64_t> shapes;
  std::vector<std::unique_ptr<Frame>> children;  // in first-seen order

  static constexpr size_t kMaxShapes = 8;

  Frame* find(FrameKind kind, const std::string& name) const;
  Frame& child(FrameKind kind, const std::string& name);  // found or added
  void add_shape(const std::string& signature, int64_t calls = 1);
  int64_t self_wall_ns() const;  // wall_ns less the children's
  int64_t bytes() const;         // self_bytes of the frame and every descendant
};

class ContextTree {
 public:
  ContextTree();
  ContextTree(ContextTree&&) noexcept = default;
  ContextTree& operator=(ContextTree&&) noexcept = default;
  ContextTree clone() const;

  Frame& root() { return *root_; }
  const Frame& root() const { return *root_; }
  bool empty() const { return root_->children.empty(); }
  size_t frame_count() const;

  // Adds `other` path by path (metrics summed, shapes merged).
  void merge(const ContextTree& other);
  // Visits every frame but the root, parents first; `path` holds the
  // frames from the root's child down to the visited one.
  void walk(const std::function<void(const std::vector<const Frame*>& path)>& visit) const;

  // Compact JSON: {"k":kind,"n":name,"m":[calls,wall,cpu,self_bytes,cycles,instr,
  // kernel_ns,kernels,memcpy_bytes,sync_ns],"s":{shape:calls},"c":[children]}.
  nlohmann::json to_json() const;
  static ContextTree from_json(const nlohmann::json& j);  // throws std::runtime_error naming what is wrong

 private:
  std::unique_ptr<Frame> root_;
};

// "node/method/aten::mm" for a path from walk().
std::string path_label(const std::vector<const Frame*>& path, const char* separator = "/");

}  // namespace rlwb::core::profile
