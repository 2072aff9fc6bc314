// The runner's side of named ports (core/graph/ports.h): before a call, the
// node's input columns are renamed to the callee's ports; after it, the
// output ports the callee returned are renamed to the node's columns. Every
// runner (the graph's steps, the trainer's phases) calls these, for every
// kind of node (worker method, builtin, reward module), so a callee sees
// only its own port names. Tensors are shared, not copied.
#pragma once

#include "core/batch/batch.h"
#include "core/graph/experiment.h"

namespace rlwb::core {

// The node's input columns of `state`, each named by its port (a column
// bound to two ports appears under both). Throws naming the column when
// `state` lacks one.
Batch port_inputs(const NodeSpec& node, const Batch& state);

// The output ports the node binds, for the callee's WantedPorts.
std::vector<std::string> wanted_out_ports(const NodeSpec& node);

// The callee's reply (keyed by output port) as the node's output columns;
// ports the node does not bind are dropped, meta is not kept. Throws naming
// the node, the port, its column and what the reply has when a bound port
// is missing.
Batch column_outputs(const NodeSpec& node, const Batch& reply);

}  // namespace rlwb::core
