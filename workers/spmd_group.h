// The SPMD side of a worker group: the ranks of one resource pool form a
// torch c10d process group (Gloo for CPU tensors, NCCL for CUDA tensors --
// or, where two ranks of the group compute on one GPU, which NCCL refuses,
// a host copy of the CUDA tensor over Gloo, at the copies' cost: ranks
// sharing a GPU run, as in the one-GPU tests, though the validator still
// asks a cuda pool for a GPU per worker),
// rendezvousing through a c10d TCPStore (served by rank 0, or by the
// controller when serve_store is false). Gloo's sockets use the interface
// that routes to the store's host, so ranks on several hosts find each
// other without GLOO_SOCKET_IFNAME. Collectives go
// through torch's own distributed library; nothing here is hand-written
// over ZeroMQ. Used by roles for gradient all-reduce and weight gathers.
//
// A sub-group (subgroup()) is a group of some of the ranks -- one model's
// tensor-parallel or data-parallel ranks (core::Mesh) -- over the same
// store under a prefix of its own, so only its members take part in making
// it and in its collectives.
#pragma once

#include <torch/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace rlwb::workers {

// A collective in flight. wait() blocks until it has ended (bounded by the
// group's timeout) and rethrows its error; a collective never waited for
// still runs to its end.
class PendingCollective {
 public:
  PendingCollective();
  ~PendingCollective();
  PendingCollective(PendingCollective&&) noexcept;
  PendingCollective& operator=(PendingCollective&&) noexcept;
  void wait();

 private:
  friend class SpmdGroup;
  struct State;
  std::unique_ptr<State> state_;
};

// `count` distinct TCP ports on 127.0.0.1 that are free right now: the
// kernel picks each (all stay bound until every one is chosen, so none is
// handed out twice). For groups whose ranks all start in one process or
// from one launcher; a port computed by hand can meet another process's
// socket (ephemeral ports of Gloo pairs and ZeroMQ connections included).
std::vector<int> free_loopback_ports(int count);

struct SpmdOptions {
  std::string store_host = "127.0.0.1";
  int store_port = 0;  // chosen by the launcher
  int rank = 0, world = 1;
  std::chrono::milliseconds timeout{60000};  // every collective is bounded
  bool serve_store = true;  // rank 0 serves the store; false: it exists already (the controller's)
};

class SpmdGroup {
 public:
  explicit SpmdGroup(SpmdOptions options);
  ~SpmdGroup();

  int rank() const;
  int world() const;
  // The group of `members` (ranks of this group, this rank among them), in
  // their order: its rank i is members[i]. Every member must call it with
  // the same name and members; the name keeps its store keys apart from
  // other sub-groups'. Throws std::invalid_argument when this rank is not a
  // member or a member is out of range.
  std::unique_ptr<SpmdGroup> subgroup(const std::string& name, const std::vector<int>& members);

  // In place; tensors on CPU use Gloo, on CUDA use NCCL (or the host, above).
  void all_reduce_sum(torch::Tensor& tensor);
  void all_reduce_max(torch::Tensor& tensor);
  // The same, started and left running: the caller goes on (a backward
  // pass, say) and waits later. `tensor` must stay alive and untouched
  // until then. Every rank must start its collectives in the same order.
  PendingCollective start_all_reduce_sum(torch::Tensor& tensor);
  void broadcast(torch::Tensor& tensor, int root);
  // Point to point: `tensor` to rank `to`, or into `tensor` (allocated by
  // the caller, shaped as sent) from rank `from`. A send and its recv pair
  // up by `tag`, and in the order each rank calls them within a tag; both
  // wait for the transfer.
  void send(const torch::Tensor& tensor, int to, int tag = 0);
  void recv(torch::Tensor& tensor, int from, int tag = 0);
  // A send left running: the caller goes on at once (the next pipeline
  // micro-batch, say) while the transfer waits for its recv. The group
  // keeps `tensor` (which must not change until then) and the transfer,
  // and wait_background_sends() waits for all of them, bounded by the
  // group's timeout, rethrowing the first error; so does the destructor,
  // which only reports.
  void send_in_background(const torch::Tensor& tensor, int to, int tag = 0);
  void wait_background_sends();
  // Returns world() tensors shaped like `tensor`.
  std::vector<torch::Tensor> all_gather(const torch::Tensor& tensor);
  void barrier();

  // Whether two ranks compute on one GPU: each passes its device index
  // (host and index compared). Collective over the group's store, bounded
  // by its timeout; a group's first CUDA collective asks it, once, to
  // choose between NCCL and the host.
  bool ranks_share_a_gpu(int device_index);

 private:
  struct Impl;
  explicit SpmdGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rlwb::workers
