#include "ui/profile/icicle_layout.h"

#include <algorithm>
#include <cctype>

namespace rlwb::ui {

using core::profile::Frame;

namespace {

// The children of `frame`, longest first (ties keep the tree's order).
std::vector<const Frame*> by_wall(const Frame& frame) {
  std::vector<const Frame*> children;
  for (const auto& c : frame.children) children.push_back(c.get());
  std::stable_sort(children.begin(), children.end(),
                   [](const Frame* a, const Frame* b) { return frame_wall_ns(*a) > frame_wall_ns(*b); });
  return children;
}

const Frame* child_named(const Frame& frame, const std::string& name) {
  for (const auto& c : frame.children)
    if (c->name == name) return c.get();
  return nullptr;
}

struct Placer {
  double min_share;
  IcicleLayout& out;
  std::vector<const Frame*> stack;  // from the root's child down to the frame placed

  void children_of(const Frame& frame, int parent, double x0, double x1, int depth) {
    int64_t sum = 0;
    for (const auto& c : frame.children) sum += frame_wall_ns(*c);
    const double denominator = static_cast<double>(std::max(frame_wall_ns(frame), sum));
    if (denominator <= 0) return;
    double x = x0;
    for (const Frame* child : by_wall(frame)) {
      const double width = (x1 - x0) * static_cast<double>(frame_wall_ns(*child)) / denominator;
      if (width >= min_share) {
        stack.push_back(child);
        out.boxes.push_back({child, core::profile::path_label(stack), depth, x, x + width, false, parent});
        out.rows = std::max(out.rows, depth + 1);
        children_of(*child, static_cast<int>(out.boxes.size()) - 1, x, x + width, depth + 1);
        stack.pop_back();
      }
      x += width;
    }
  }
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

int64_t frame_wall_ns(const Frame& frame) {
  if (frame.kind != core::profile::FrameKind::root) return frame.metrics.wall_ns;
  int64_t sum = 0;
  for (const auto& c : frame.children) sum += c->metrics.wall_ns;
  return std::max(frame.metrics.wall_ns, sum);
}

std::vector<std::string> focus_of(const IcicleLayout& layout, size_t index) {
  std::vector<std::string> names;
  for (int i = static_cast<int>(index); i >= 0 && i < static_cast<int>(layout.boxes.size());
       i = layout.boxes[i].parent)
    if (layout.boxes[i].frame->kind != core::profile::FrameKind::root)
      names.push_back(layout.boxes[i].frame->name);
  std::reverse(names.begin(), names.end());
  return names;
}

const Frame* find_frame(const core::profile::ContextTree& tree, const std::vector<std::string>& path) {
  const Frame* frame = &tree.root();
  for (const std::string& name : path)
    if (!(frame = child_named(*frame, name))) return nullptr;
  return frame;
}

IcicleLayout layout_icicle(const core::profile::ContextTree& tree, const std::vector<std::string>& focus,
                           double min_share) {
  IcicleLayout out;
  std::vector<const Frame*> chain{&tree.root()};
  for (const std::string& name : focus) {
    const Frame* next = child_named(*chain.back(), name);
    if (!next) break;
    chain.push_back(next);
    out.focus_path.push_back(name);
  }
  Placer placer{min_share, out, {}};
  for (size_t depth = 0; depth < chain.size(); ++depth) {
    if (depth > 0) placer.stack.push_back(chain[depth]);
    out.boxes.push_back({chain[depth], core::profile::path_label(placer.stack), static_cast<int>(depth), 0, 1,
                         depth + 1 < chain.size(), static_cast<int>(depth) - 1});
  }
  out.focus = chain.back();
  out.rows = static_cast<int>(chain.size());
  placer.children_of(*out.focus, out.rows - 1, 0, 1, out.rows);
  return out;
}

bool frame_matches(const Frame& frame, const std::string& query) {
  if (query.empty()) return false;
  return lower(frame.name).find(lower(query)) != std::string::npos;
}

SearchHits search_frames(const IcicleLayout& layout, const std::string& query) {
  SearchHits hits;
  if (!layout.focus || query.empty()) return hits;
  const std::string q = lower(query);
  std::vector<const Frame*> stack;
  // The focus's own path, so that hits are named from the dataflow node down.
  const Frame* frame = layout.focus;
  for (const IcicleBox& box : layout.boxes)
    if (box.frame != layout.focus && box.ancestor && box.depth > 0) stack.push_back(box.frame);
  if (frame->kind != core::profile::FrameKind::root) stack.push_back(frame);
  auto visit = [&](auto& self, const Frame& f, bool inside_match) -> void {
    const bool match = f.kind != core::profile::FrameKind::root && lower(f.name).find(q) != std::string::npos;
    if (match) {
      ++hits.frames;
      if (!inside_match) hits.wall_ns += f.metrics.wall_ns;
      if (hits.paths.size() < SearchHits::kMaxPaths) hits.paths.push_back(core::profile::path_label(stack));
    }
    for (const auto& c : f.children) {
      stack.push_back(c.get());
      self(self, *c, inside_match || match);
      stack.pop_back();
    }
  };
  visit(visit, *frame, false);
  const int64_t focus_wall = frame_wall_ns(*frame);
  hits.share = focus_wall > 0 ? static_cast<double>(hits.wall_ns) / static_cast<double>(focus_wall) : 0;
  return hits;
}

}  // namespace rlwb::ui
