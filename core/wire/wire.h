// Wire codec: turns a message (header JSON + Batch) into ZeroMQ multipart
// frames and back, without copying tensor memory. Used by the RPC layer on
// both the controller (core/rpc) and the worker (workers/) side.
//
// Frames of one message, after any ROUTER identity frames:
//   frame 0   header: JSON text (UTF-8) with the caller's fields (kind,
//             request id, method, status, ...) plus "columns": [{name,
//             dtype, shape, bytes, transport}], "objects": {name: [values]},
//             "meta": {...}
//   frame 1.. one frame per tensor column, in the order of "columns".
// transport "inline": the frame holds the raw contiguous bytes (host byte
// order); sending hands the tensor's storage to zmq_msg_init_data with a
// deleter that keeps the tensor alive; receiving wraps the frame with
// from_blob and a deleter that owns the zmq message. (A frame whose address
// is not aligned to the element size is copied once: ZeroMQ promises no
// alignment. Large frames are malloc'ed by ZeroMQ and are aligned.)
// transport "shm" (same host, large tensors): the bytes live in a POSIX
// shared-memory segment (core/wire/shm_segment.h, which also says who
// unlinks what) and the frame carries {"name", "id", "gen"}; the receiver
// maps it without copying. Such a message can be decoded once: encode once
// per receiver (inline-only frames may be copied and sent to many).
//
// dtypes: every LibTorch dtype except the quantized ones, by their torch
// Python names ("float32", "bfloat16", "float8_e4m3fn", "uint1", ...).
// Shapes: any with at least one dim, dim 0 = rows (so {0, 5} travels as 0
// rows of 5). 0-dim tensors are not columns (Batch refuses them): scalars
// travel in meta.
// Non-contiguous tensors are made contiguous once (inline) or copied
// strided straight into shared memory; CUDA tensors are copied to the host.
// After sending, do not modify a tensor in place until ZeroMQ has sent it:
// the frame points into its memory.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <vector>
#include <zmq.hpp>

#include "core/batch/batch.h"

namespace rlwb::core {

// Thrown for any malformed, truncated or inconsistent message. The RPC layer
// turns it into an error reply; it never kills the process.
class WireError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct WireOptions {
  // Tensors of at least this many bytes go through shared memory; use it
  // only when the peer is on the same host. 0 disables shared memory
  // (tcp:// between hosts). 1 MiB is a good value on one host.
  size_t shm_threshold_bytes = 0;
};

struct Message {
  nlohmann::json header = nlohmann::json::object();  // caller's fields only
  Batch batch;
};

// Appends the frames of (header, batch) to `out` (nothing on error).
// Header keys "columns", "objects" and "meta" are reserved for the codec.
// Throws WireError for a reserved key, a quantized dtype, a string that is
// not UTF-8, or shared memory that cannot be had.
void encode_message(const nlohmann::json& header, const Batch& batch, std::vector<zmq::message_t>& out,
                    const WireOptions& options = {});

// Decodes frames[first..] (consumed: tensors keep the frames alive).
// Throws WireError naming what is wrong: bad JSON, missing or extra frames,
// byte counts that disagree with shape and dtype, unknown dtypes, negative
// or overflowing dimensions, a missing or reused shared-memory segment.
// Every field is checked before any tensor is built, and sizes are checked
// against the bytes actually received, so a lying header allocates nothing.
Message decode_message(std::vector<zmq::message_t>& frames, size_t first = 0);

// The dtype's wire name ("float32", "bfloat16", "bool", ...) and back.
std::string dtype_name(torch::ScalarType type);
torch::ScalarType dtype_from_name(const std::string& name);  // throws WireError

}  // namespace rlwb::core
