#include "workers/spmd_group.h"

#include "workers/spmd_nccl.h"

#include <ATen/record_function.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <stdexcept>

namespace rlwb::workers {

struct SpmdGroup::Impl {
  SpmdOptions options;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> gloo;
  c10::intrusive_ptr<c10d::Backend> nccl;  // created on the first CUDA collective

  c10d::Backend& backend_for(const torch::Tensor& t) {
    if (!t.is_cuda()) return *gloo;
    if (!nccl) nccl = make_nccl_backend(store, options.rank, options.world, options.timeout);
    return *nccl;
  }
};

SpmdGroup::SpmdGroup(SpmdOptions options) : impl_(new Impl) {
  impl_->options = options;
  if (options.world < 1 || options.rank < 0 || options.rank >= options.world)
    throw std::invalid_argument("spmd: rank " + std::to_string(options.rank) + " outside world " +
                                std::to_string(options.world));
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(options.store_port);
  store_options.isServer = options.rank == 0;
  store_options.numWorkers = options.world;
  store_options.waitWorkers = false;
  store_options.timeout = options.timeout;
  try {
    impl_->store = c10::make_intrusive<c10d::TCPStore>(options.store_host, store_options);
    auto gloo_options = c10d::ProcessGroupGloo::Options::create_default(options.timeout);
    impl_->gloo =
        c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, options.rank, options.world, gloo_options);
  } catch (const std::exception& e) {
    throw std::runtime_error("spmd: rank " + std::to_string(options.rank) + "/" +
                             std::to_string(options.world) + " could not join the process group at " +
                             options.store_host + ":" + std::to_string(options.store_port) + ": " + e.what());
  }
}

SpmdGroup::SpmdGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SpmdGroup::~SpmdGroup() = default;

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
    auto gloo_options = c10d::ProcessGroupGloo::Options::create_default(impl->options.timeout);
    impl->gloo =
        c10::make_intrusive<c10d::ProcessGroupGloo>(impl->store, own, impl->options.world, gloo_options);
  } catch (const std::exception& e) {
    throw std::runtime_error("spmd: rank " + std::to_string(rank()) + " could not join sub-group '" + name +
                             "': " + e.what());
  }
  return std::unique_ptr<SpmdGroup>(new SpmdGroup(std::move(impl)));
}

int SpmdGroup::rank() const { return impl_->options.rank; }
int SpmdGroup::world() const { return impl_->options.world; }

// Each collective is a user scope (c10d::<name>), so a profiled call's tree
// shows its wait -- for the data and for the slowest rank -- as a frame
// (the analyzer's collective-not-overlapped rule reads c10d::allreduce).
void SpmdGroup::all_reduce_sum(torch::Tensor& tensor) {
  RECORD_USER_SCOPE("c10d::allreduce");
  std::vector<at::Tensor> tensors{tensor};
  impl_->backend_for(tensor).allreduce(tensors)->wait(impl_->options.timeout);
}

void SpmdGroup::all_reduce_max(torch::Tensor& tensor) {
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
  std::vector<at::Tensor> tensors{tensor};
  PendingCollective pending;
  pending.state_ = std::make_unique<PendingCollective::State>(
      PendingCollective::State{impl_->backend_for(tensor).allreduce(tensors), impl_->options.timeout});
  return pending;
}

void SpmdGroup::broadcast(torch::Tensor& tensor, int root) {
  RECORD_USER_SCOPE("c10d::broadcast");
  std::vector<at::Tensor> tensors{tensor};
  c10d::BroadcastOptions opts;
  opts.rootRank = root;
  impl_->backend_for(tensor).broadcast(tensors, opts)->wait(impl_->options.timeout);
}

std::vector<torch::Tensor> SpmdGroup::all_gather(const torch::Tensor& tensor) {
  RECORD_USER_SCOPE("c10d::allgather");
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int r = 0; r < world(); ++r) outputs[0].push_back(torch::empty_like(tensor));
  std::vector<at::Tensor> inputs{tensor.contiguous()};
  impl_->backend_for(tensor).allgather(outputs, inputs)->wait(impl_->options.timeout);
  return outputs[0];
}

void SpmdGroup::barrier() { impl_->gloo->barrier()->wait(impl_->options.timeout); }

}  // namespace rlwb::workers
