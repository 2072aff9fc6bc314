#include "workers/spmd_group.h"

#include "workers/spmd_nccl.h"

#include <ATen/record_function.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <exception>
#include <iostream>
#include <mutex>
#include <set>
#include <stdexcept>

namespace rlwb::workers {
namespace {

// This host's address on the route to `host` (a UDP connect sends
// nothing; it only picks the route), or "" when it cannot be told.
std::string local_address_towards(const std::string& host) {
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  if (getaddrinfo(host.c_str(), "9", &hints, &found) != 0 || !found) return "";
  std::string address;
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in own{};
  socklen_t len = sizeof own;
  char text[INET_ADDRSTRLEN] = {};
  if (fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&own), &len) == 0 &&
      inet_ntop(AF_INET, &own.sin_addr, text, sizeof text))
    address = text;
  if (fd >= 0) close(fd);
  freeaddrinfo(found);
  return address;
}

// Gloo's options: its device on the interface that reaches the store's
// host when that is another machine; torch's default (the hostname's
// address) otherwise, as before.
c10::intrusive_ptr<c10d::ProcessGroupGloo::Options> gloo_options_for(const SpmdOptions& o) {
  auto options = c10d::ProcessGroupGloo::Options::create_default(o.timeout);
  const bool loopback = o.store_host == "localhost" || o.store_host.rfind("127.", 0) == 0;
  if (!loopback) {
    if (std::string own = local_address_towards(o.store_host); !own.empty())
      options->devices = {c10d::ProcessGroupGloo::createDeviceForHostname(own)};
  }
  return options;
}

// Waits until every member of a just-made Gloo group has finished
// connecting to the others. Gloo's connectFullMesh can return on one rank
// while a peer is still reading its side of the handshake; a rank that then
// destroys the group at once (a refusal right after joining) made that peer
// fail with "Connection closed by peer". After a barrier, no member is
// still connecting.
void settle(c10d::Backend& gloo, int world, std::chrono::milliseconds timeout) {
  if (world > 1) gloo.barrier()->wait(timeout);
}

// Whether two ranks of the group compute on one GPU: each writes its host
// and device index into the group's store and reads everyone's (the
// store's get waits, bounded by its timeout, for a rank not there yet).
bool devices_shared(c10d::Store& store, int rank, int world, int device) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string mine = std::string(host) + "/" + std::to_string(device);
  store.set("cuda_device/" + std::to_string(rank), std::vector<uint8_t>(mine.begin(), mine.end()));
  std::set<std::string> seen;
  for (int r = 0; r < world; ++r) {
    const std::vector<uint8_t> theirs = store.get("cuda_device/" + std::to_string(r));
    if (!seen.insert(std::string(theirs.begin(), theirs.end())).second) return true;
  }
  return false;
}

}  // namespace

struct SpmdGroup::Impl {
  SpmdOptions options;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> gloo;
  c10::intrusive_ptr<c10d::Backend> nccl;  // created on the first CUDA collective
  std::mutex background_mutex;             // a backward pass may send from another thread
  std::vector<c10::intrusive_ptr<c10d::Work>> background_sends;
  // CUDA tensors' path, settled by the first CUDA collective: NCCL, or --
  // where two ranks share a GPU, which NCCL refuses -- a host copy over Gloo.
  enum class CudaPath { kUndecided, kNccl, kHost };
  CudaPath cuda_path = CudaPath::kUndecided;
  std::mutex cuda_mutex;

  // Whether a collective of `t` goes through the host (a CUDA tensor whose
  // ranks share a GPU). Every rank's first CUDA collective settles it.
  bool via_host(const torch::Tensor& t) {
    if (!t.is_cuda()) return false;
    std::lock_guard<std::mutex> lock(cuda_mutex);
    if (cuda_path == CudaPath::kUndecided)
      cuda_path = options.world > 1 && devices_shared(*store, options.rank, options.world, t.device().index())
                      ? CudaPath::kHost
                      : CudaPath::kNccl;
    return cuda_path == CudaPath::kHost;
  }

  // Gloo for CPU tensors, NCCL for CUDA ones (callers send a CUDA tensor
  // of a host-path group through the host first).
  c10d::Backend& backend_for(const torch::Tensor& t) {
    if (!t.is_cuda()) return *gloo;
    std::lock_guard<std::mutex> lock(cuda_mutex);
    if (!nccl) nccl = make_nccl_backend(store, options.rank, options.world, options.timeout);
    return *nccl;
  }
};

std::vector<int> free_loopback_ports(int count) {
  std::vector<int> fds, ports;
  for (int i = 0; i < count; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0) fds.push_back(fd);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      for (int open : fds) ::close(open);
      throw std::runtime_error(
          "no free TCP port on 127.0.0.1 for a c10d store: is the loopback interface up?");
    }
    ports.push_back(ntohs(address.sin_port));
  }
  for (int fd : fds) ::close(fd);
  return ports;
}

SpmdGroup::SpmdGroup(SpmdOptions options) : impl_(new Impl) {
  impl_->options = options;
  if (options.world < 1 || options.rank < 0 || options.rank >= options.world)
    throw std::invalid_argument("spmd: rank " + std::to_string(options.rank) + " outside world " +
                                std::to_string(options.world));
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(options.store_port);
  store_options.isServer = options.serve_store && options.rank == 0;
  store_options.numWorkers = options.world;
  store_options.waitWorkers = false;
  store_options.timeout = options.timeout;
  try {
    impl_->store = c10::make_intrusive<c10d::TCPStore>(options.store_host, store_options);
    impl_->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, options.rank, options.world,
                                                              gloo_options_for(options));
    settle(*impl_->gloo, options.world, options.timeout);
  } catch (const std::exception& e) {
    throw std::runtime_error("spmd: rank " + std::to_string(options.rank) + "/" +
                             std::to_string(options.world) + " could not join the process group at " +
                             options.store_host + ":" + std::to_string(options.store_port) + ": " + e.what());
  }
}

SpmdGroup::SpmdGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SpmdGroup::~SpmdGroup() {
  try {
    wait_background_sends();
  } catch (const std::exception& e) {
    std::cerr << "spmd: rank " << rank() << ": a send left running failed: " << e.what() << "\n";
  }
}

std::unique_ptr<SpmdGroup> SpmdGroup::subgroup(const std::string& name, const std::vector<int>& members) {
  int own = -1;
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i] < 0 || members[i] >= world())
      throw std::invalid_argument("spmd: sub-group '" + name + "' names rank " + std::to_string(members[i]) +
                                  " outside world " + std::to_string(world()));
    if (members[i] == rank()) own = static_cast<int>(i);
  }
  if (own < 0)
    throw std::invalid_argument("spmd: rank " + std::to_string(rank()) + " is not a member of sub-group '" +
                                name + "'");
  auto impl = std::make_unique<Impl>();
  impl->options = impl_->options;
  impl->options.rank = own;
  impl->options.world = static_cast<int>(members.size());
  impl->store = c10::make_intrusive<c10d::PrefixStore>("subgroup/" + name, impl_->store);
  try {
    impl->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(impl->store, own, impl->options.world,
                                                             gloo_options_for(impl->options));
    settle(*impl->gloo, impl->options.world, impl->options.timeout);
  } catch (const std::exception& e) {
    throw std::runtime_error("spmd: rank " + std::to_string(rank()) + " could not join sub-group '" + name +
                             "': " + e.what());
  }
  return std::unique_ptr<SpmdGroup>(new SpmdGroup(std::move(impl)));
}

bool SpmdGroup::ranks_share_a_gpu(int device_index) {
  return devices_shared(*impl_->store, rank(), world(), device_index);
}

int SpmdGroup::rank() const { return impl_->options.rank; }
int SpmdGroup::world() const { return impl_->options.world; }

// Each collective is a user scope (c10d::<name>), so a profiled call's tree
// shows its wait -- for the data and for the slowest rank -- as a frame
// (the analyzer's collective-not-overlapped rule reads c10d::allreduce).
// A CUDA tensor of a group whose ranks share a GPU takes each collective
// as a host copy (the copies show as their own operators in a profile).
void SpmdGroup::all_reduce_sum(torch::Tensor& tensor) {
  if (impl_->via_host(tensor)) {
    torch::Tensor host = tensor.cpu();
    all_reduce_sum(host);
    tensor.copy_(host);
    return;
  }
  RECORD_USER_SCOPE("c10d::allreduce");
  std::vector<at::Tensor> tensors{tensor};
  impl_->backend_for(tensor).allreduce(tensors)->wait(impl_->options.timeout);
}

void SpmdGroup::all_reduce_max(torch::Tensor& tensor) {
  if (impl_->via_host(tensor)) {
    torch::Tensor host = tensor.cpu();
    all_reduce_max(host);
    tensor.copy_(host);
    return;
  }
  RECORD_USER_SCOPE("c10d::allreduce");
  std::vector<at::Tensor> tensors{tensor};
  c10d::AllreduceOptions opts;
  opts.reduceOp = c10d::ReduceOp::MAX;
  impl_->backend_for(tensor).allreduce(tensors, opts)->wait(impl_->options.timeout);
}

struct PendingCollective::State {
  c10::intrusive_ptr<c10d::Work> work;
  std::chrono::milliseconds timeout;
};

PendingCollective::PendingCollective() = default;
PendingCollective::~PendingCollective() = default;
PendingCollective::PendingCollective(PendingCollective&&) noexcept = default;
PendingCollective& PendingCollective::operator=(PendingCollective&&) noexcept = default;

// The wait is the scope: what the caller could not overlap is what a
// profile shows under c10d::allreduce.
void PendingCollective::wait() {
  if (!state_) return;
  RECORD_USER_SCOPE("c10d::allreduce");
  std::unique_ptr<State> state = std::move(state_);
  state->work->wait(state->timeout);
}

PendingCollective SpmdGroup::start_all_reduce_sum(torch::Tensor& tensor) {
  PendingCollective pending;
  if (impl_->via_host(tensor)) {  // done now: nothing left to wait for
    all_reduce_sum(tensor);
    return pending;
  }
  std::vector<at::Tensor> tensors{tensor};
  pending.state_ = std::make_unique<PendingCollective::State>(
      PendingCollective::State{impl_->backend_for(tensor).allreduce(tensors), impl_->options.timeout});
  return pending;
}

void SpmdGroup::broadcast(torch::Tensor& tensor, int root) {
  if (impl_->via_host(tensor)) {
    torch::Tensor host = tensor.cpu();
    broadcast(host, root);
    tensor.copy_(host);
    return;
  }
  RECORD_USER_SCOPE("c10d::broadcast");
  std::vector<at::Tensor> tensors{tensor};
  c10d::BroadcastOptions opts;
  opts.rootRank = root;
  impl_->backend_for(tensor).broadcast(tensors, opts)->wait(impl_->options.timeout);
}

void SpmdGroup::send(const torch::Tensor& tensor, int to, int tag) {
  if (impl_->via_host(tensor)) return send(tensor.cpu(), to, tag);
  RECORD_USER_SCOPE("c10d::send");
  std::vector<at::Tensor> tensors{tensor.contiguous()};
  impl_->backend_for(tensor).send(tensors, to, tag)->wait(impl_->options.timeout);
}

void SpmdGroup::recv(torch::Tensor& tensor, int from, int tag) {
  if (!tensor.is_contiguous()) throw std::invalid_argument("SpmdGroup::recv: the tensor must be contiguous");
  if (impl_->via_host(tensor)) {
    torch::Tensor host = torch::empty_like(tensor, torch::TensorOptions().device(torch::kCPU));
    recv(host, from, tag);
    tensor.copy_(host);
    return;
  }
  RECORD_USER_SCOPE("c10d::recv");
  std::vector<at::Tensor> tensors{tensor};
  impl_->backend_for(tensor).recv(tensors, from, tag)->wait(impl_->options.timeout);
}

// The work holds the tensor (c10d's send keeps it for the transfer).
void SpmdGroup::send_in_background(const torch::Tensor& tensor, int to, int tag) {
  if (impl_->via_host(tensor)) return send_in_background(tensor.cpu(), to, tag);  // the work keeps the copy
  std::vector<at::Tensor> tensors{tensor.contiguous()};
  c10::intrusive_ptr<c10d::Work> work = impl_->backend_for(tensor).send(tensors, to, tag);
  std::lock_guard<std::mutex> lock(impl_->background_mutex);
  impl_->background_sends.push_back(std::move(work));
}

void SpmdGroup::wait_background_sends() {
  std::vector<c10::intrusive_ptr<c10d::Work>> sends;
  {
    std::lock_guard<std::mutex> lock(impl_->background_mutex);
    sends.swap(impl_->background_sends);
  }
  if (sends.empty()) return;
  RECORD_USER_SCOPE("c10d::send");
  std::exception_ptr first;
  for (auto& work : sends) {
    try {
      work->wait(impl_->options.timeout);
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

std::vector<torch::Tensor> SpmdGroup::all_gather(const torch::Tensor& tensor) {
  if (impl_->via_host(tensor)) {
    std::vector<torch::Tensor> parts = all_gather(tensor.cpu());
    for (auto& part : parts) part = part.to(tensor.device());
    return parts;
  }
  RECORD_USER_SCOPE("c10d::allgather");
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int r = 0; r < world(); ++r) outputs[0].push_back(torch::empty_like(tensor));
  std::vector<at::Tensor> inputs{tensor.contiguous()};
  impl_->backend_for(tensor).allgather(outputs, inputs)->wait(impl_->options.timeout);
  return outputs[0];
}

void SpmdGroup::barrier() { impl_->gloo->barrier()->wait(impl_->options.timeout); }

}  // namespace rlwb::workers
