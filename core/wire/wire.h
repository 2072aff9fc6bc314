// Wire codec: turns a message (header JSON + Batch) into ZeroMQ multipart
// frames and back, without copying tensor memory. Used by the RPC layer on
// both the controller (core/rpc) and the worker (workers/) side.
//
// Frames of one message, after any ROUTER identity frames:
//   frame 0   header: JSON text with the caller's fields (kind, request id,
//             method, status, ...) plus "columns": [{name, dtype, shape,
//             bytes, transport}], "objects": {name: [values]}, "meta": {...}
//   frame 1.. one frame per tensor column, in the order of "columns".
// transport "inline": the frame holds the raw contiguous bytes; sending hands
// the tensor's storage to zmq_msg_init_data with a deleter that keeps the
// tensor alive; receiving wraps the frame with from_blob and a deleter that
// owns the zmq message. transport "shm" (same host, large tensors): the
// bytes live in a POSIX shared-memory segment and the frame carries only its
// name; the receiver maps it without copying. Non-contiguous tensors are made
// contiguous once; CUDA tensors are moved to the CPU for the wire.
#pragma once

#include "core/batch/batch.h"

#include <zmq.hpp>

#include <cstddef>
#include <stdexcept>
#include <vector>

namespace rlwb::core {

// Thrown for any malformed, truncated or inconsistent message. The RPC layer
// turns it into an error reply; it never kills the process.
class WireError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct WireOptions {
  // Tensors at least this large go through shared memory when the peer is on
  // the same host; 0 disables shared memory (tcp:// between hosts).
  size_t shm_threshold_bytes = 0;
};

struct Message {
  nlohmann::json header = nlohmann::json::object();  // caller's fields only
  Batch batch;
};

// Appends the frames of (header, batch) to `out`. Header keys "columns",
// "objects" and "meta" are reserved for the codec.
void encode_message(const nlohmann::json& header, const Batch& batch,
                    std::vector<zmq::message_t>& out, const WireOptions& options = {});

// Decodes frames[first..] (consumed: tensors keep the frames alive).
// Throws WireError naming what is wrong.
Message decode_message(std::vector<zmq::message_t>& frames, size_t first = 0);

// The dtype's wire name ("float32", "bfloat16", "bool", ...) and back.
std::string dtype_name(torch::ScalarType type);
torch::ScalarType dtype_from_name(const std::string& name);  // throws WireError

}  // namespace rlwb::core
