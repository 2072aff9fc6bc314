#include "ui/graph/node_geometry.h"

#include <algorithm>
#include <cmath>

namespace rlwb::ui {

std::vector<std::string> info_lines(const core::Experiment& exp, const core::NodeSpec& node) {
  if (node.target == "builtin") return {"controller builtin"};
  if (auto m = exp.models.find(node.target); m != exp.models.end()) {
    const core::ModelSpec& model = m->second;
    std::string pool = "pool " + (model.pool.empty() ? std::string("?") : model.pool);
    if (auto p = exp.pools.find(model.pool); p != exp.pools.end())
      pool += ": " + std::to_string(p->second.workers) + "x " + p->second.device;
    return {pool, "role " + model.role + "  dp" + std::to_string(model.parallel.dp) + " tp" +
                      std::to_string(model.parallel.tp) + " pp" + std::to_string(model.parallel.pp)};
  }
  if (auto r = exp.rewards.find(node.target); r != exp.rewards.end())
    return {"reward module: " + r->second.type};
  return {"unknown target '" + node.target + "'"};
}

float pins_top(const core::Experiment& exp, const core::NodeSpec& node) {
  return kNodeHeader + kNodeInfoLine * static_cast<float>(info_lines(exp, node).size()) + 4;
}

std::string pin_label(const std::string& port, const std::string& column) {
  return port == column ? column : port + ": " + column;
}

float pin_label_width(const std::string& label) {
  return kPinLabelCharWidth * static_cast<float>(label.size());
}

Vec2 node_size(const core::Experiment& exp, const core::NodeSpec& node) {
  const size_t rows = std::max(node.in.size() + 1, std::max<size_t>(node.out.size(), 1));
  // The widest input beside the widest output: pins are drawn in the rows
  // that cut crossings (pin_order.h), so any two may share a row.
  float in = 0, out = 0;
  for (size_t i = 0; i < node.in.size(); ++i)
    in = std::max(in, pin_label_width(pin_label(node.in_port(i), node.in[i])));
  for (size_t i = 0; i < node.out.size(); ++i)
    out = std::max(out, pin_label_width(pin_label(node.out_port(i), node.out[i])));
  const float width = std::max(kNodeWidth, 2 * kPinLabelInset + in + kPinLabelGap + out);
  return {std::ceil(width), pins_top(exp, node) + kPinRow * static_cast<float>(rows) + 4};
}

}  // namespace rlwb::ui
