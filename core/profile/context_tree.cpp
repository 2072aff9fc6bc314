#include "core/profile/context_tree.h"

#include <stdexcept>

namespace rlwb::core::profile {

namespace {
constexpr const char* kKindNames[] = {"root", "node", "method", "op", "native", "kernel"};
}

const char* frame_kind_name(FrameKind kind) { return kKindNames[static_cast<int>(kind)]; }

FrameKind frame_kind_from_name(const std::string& name) {
  for (int i = 0; i < 6; ++i)
    if (name == kKindNames[i]) return static_cast<FrameKind>(i);
  throw std::invalid_argument("unknown frame kind '" + name + "'");
}

void FrameMetrics::add(const FrameMetrics& o) {
  calls += o.calls;
  wall_ns += o.wall_ns;
  cpu_ns += o.cpu_ns;
  self_bytes += o.self_bytes;
  // A counter stays "not measured" only when neither side measured it.
  if (o.cycles >= 0) cycles = std::max<int64_t>(cycles, 0) + o.cycles;
  if (o.instructions >= 0) instructions = std::max<int64_t>(instructions, 0) + o.instructions;
  kernel_ns += o.kernel_ns;
  kernels += o.kernels;
  memcpy_bytes += o.memcpy_bytes;
  sync_ns += o.sync_ns;
}

Frame* Frame::find(FrameKind k, const std::string& n) const {
  for (auto& c : children)
    if (c->kind == k && c->name == n) return c.get();
  return nullptr;
}

Frame& Frame::child(FrameKind k, const std::string& n) {
  if (Frame* found = find(k, n)) return *found;
  auto made = std::make_unique<Frame>();
  made->kind = k;
  made->name = n;
  children.push_back(std::move(made));
  return *children.back();
}

void Frame::add_shape(const std::string& signature, int64_t n) {
  auto it = shapes.find(signature);
  if (it != shapes.end()) {
    it->second += n;
  } else if (shapes.size() < kMaxShapes || signature == "other") {
    shapes[signature] = n;
  } else {
    shapes["other"] += n;  // "other" may push the map to kMaxShapes + 1; it is the overflow
  }
}

int64_t Frame::self_wall_ns() const {
  int64_t own = metrics.wall_ns;
  for (auto& c : children) own -= c->metrics.wall_ns;
  return std::max<int64_t>(own, 0);  // clocks read on different sides of a callback may cross by a few ns
}

int64_t Frame::bytes() const {
  int64_t total = metrics.self_bytes;
  for (auto& c : children) total += c->bytes();
  return total;
}

ContextTree::ContextTree() : root_(std::make_unique<Frame>()) {}

namespace {

void merge_into(Frame& into, const Frame& from) {
  into.metrics.add(from.metrics);
  for (auto& [sig, n] : from.shapes) into.add_shape(sig, n);
  for (auto& c : from.children) merge_into(into.child(c->kind, c->name), *c);
}

size_t count(const Frame& f) {
  size_t n = 1;
  for (auto& c : f.children) n += count(*c);
  return n;
}

void walk_from(const Frame& f, std::vector<const Frame*>& path,
               const std::function<void(const std::vector<const Frame*>&)>& visit) {
  for (auto& c : f.children) {
    path.push_back(c.get());
    visit(path);
    walk_from(*c, path, visit);
    path.pop_back();
  }
}

nlohmann::json frame_json(const Frame& f) {
  const FrameMetrics& m = f.metrics;
  nlohmann::json j = {{"k", frame_kind_name(f.kind)},
                      {"n", f.name},
                      {"m",
                       {m.calls, m.wall_ns, m.cpu_ns, m.self_bytes, m.cycles, m.instructions, m.kernel_ns,
                        m.kernels, m.memcpy_bytes, m.sync_ns}}};
  if (!f.shapes.empty()) j["s"] = f.shapes;
  if (!f.children.empty()) {
    auto& c = j["c"] = nlohmann::json::array();
    for (auto& child : f.children) c.push_back(frame_json(*child));
  }
  return j;
}

void frame_from_json(Frame& f, const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("k") || !j.contains("n") || !j.contains("m"))
    throw std::runtime_error("profile tree: frame at " + where + " needs k, n and m");
  try {
    f.kind = frame_kind_from_name(j["k"].get<std::string>());
    f.name = j["n"].get<std::string>();
    const auto& m = j["m"];
    if (!m.is_array() || m.size() != 10)
      throw std::runtime_error("profile tree: frame at " + where + ": m must be a list of 10 numbers");
    FrameMetrics& x = f.metrics;
    int64_t* fields[] = {&x.calls,        &x.wall_ns,   &x.cpu_ns,  &x.self_bytes,   &x.cycles,
                         &x.instructions, &x.kernel_ns, &x.kernels, &x.memcpy_bytes, &x.sync_ns};
    for (size_t i = 0; i < 10; ++i) *fields[i] = m[i].get<int64_t>();
    if (j.contains("s"))
      for (auto& [sig, n] : j["s"].items()) f.shapes[sig] = n.get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("profile tree: frame at " + where + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error("profile tree: frame at " + where + ": " + e.what());
  }
  if (j.contains("c")) {
    if (!j["c"].is_array())
      throw std::runtime_error("profile tree: frame at " + where + ": c must be a list");
    for (auto& cj : j["c"]) {
      auto child = std::make_unique<Frame>();
      frame_from_json(*child, cj, where + "/" + cj.value("n", std::string("?")));
      f.children.push_back(std::move(child));
    }
  }
}

}  // namespace

ContextTree ContextTree::clone() const {
  ContextTree copy;
  merge_into(*copy.root_, *root_);
  copy.root_->kind = root_->kind;
  copy.root_->name = root_->name;
  return copy;
}

size_t ContextTree::frame_count() const { return count(*root_); }

void ContextTree::merge(const ContextTree& other) { merge_into(*root_, *other.root_); }

void ContextTree::walk(const std::function<void(const std::vector<const Frame*>& path)>& visit) const {
  std::vector<const Frame*> path;
  walk_from(*root_, path, visit);
}

nlohmann::json ContextTree::to_json() const { return frame_json(*root_); }

ContextTree ContextTree::from_json(const nlohmann::json& j) {
  ContextTree tree;
  frame_from_json(*tree.root_, j, "root");
  if (tree.root_->kind != FrameKind::root)
    throw std::runtime_error("profile tree: the top frame is not a root");
  return tree;
}

std::string path_label(const std::vector<const Frame*>& path, const char* separator) {
  std::string label;
  for (const Frame* f : path) label += (label.empty() ? "" : separator) + f->name;
  return label;
}

}  // namespace rlwb::core::profile
