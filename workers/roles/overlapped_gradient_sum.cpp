#include "workers/roles/overlapped_gradient_sum.h"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>

namespace rlwb::workers::roles {

namespace {

// DDP's default bucket is 25 MiB; the models trained here are about a
// megabyte, so a quarter of the buffer gives backward something to overlap
// with, and 256 KiB keeps each collective's fixed cost (a round trip per
// rank) small against its bytes.
constexpr int64_t kMinBucketBytes = 256 << 10;
constexpr int64_t kMaxBucketBytes = 25 << 20;
constexpr int64_t kBucketsWhenUnsized = 4;

}  // namespace

struct OverlappedGradientSum::State {
  model::FlatAdamW* optimizer = nullptr;
  SpmdGroup* group = nullptr;
  std::vector<std::pair<int64_t, int64_t>> ranges;  // per bucket, end of the buffer first
  std::vector<int> bucket_of;                       // per parameter
  std::vector<int> params_in;                       // per bucket
  // The accumulators the hooks sit on; held so that autograd keeps using
  // them (it only keeps a weak reference of its own).
  std::vector<c10::intrusive_ptr<torch::autograd::Node>> accumulators;

  // One armed backward.
  bool armed = false;
  std::vector<bool> final_grad;          // per parameter: accumulated in this backward
  std::vector<int> waiting;              // per bucket: parameters still to come
  size_t next_bucket = 0;                // buckets start in order: this one is next
  std::vector<torch::Tensor> in_flight;  // the tensors being summed, kept alive
  std::vector<PendingCollective> sums;
  torch::Tensor ride_along;

  // The parameter's gradient is the flat buffer's view; something that
  // replaced it (backward assigning a fresh tensor) is copied back in.
  void adopt_gradient(size_t i) {
    const torch::Tensor& p = optimizer->parameters()[i];
    torch::Tensor view =
        optimizer->gradient_buffer().narrow(0, optimizer->offsets()[i], p.numel()).view(p.sizes());
    const torch::Tensor& grad = p.grad();
    if (grad.defined() && grad.data_ptr() == view.data_ptr()) return;
    torch::NoGradGuard no_grad;
    if (grad.defined())
      view.copy_(grad);
    else
      view.zero_();
    const_cast<torch::Tensor&>(p).mutable_grad() = view;
  }

  void start(size_t bucket) {
    auto [begin, end] = ranges[bucket];
    in_flight.push_back(optimizer->gradient_buffer().narrow(0, begin, end - begin));
    sums.push_back(group->start_all_reduce_sum(in_flight.back()));
  }

  void on_gradient_final(size_t i) {
    if (!armed || final_grad[i]) return;
    adopt_gradient(i);
    final_grad[i] = true;
    --waiting[bucket_of[i]];
    while (next_bucket < ranges.size() && waiting[next_bucket] == 0) start(next_bucket++);
  }

  void disarm() {
    armed = false;
    in_flight.clear();
    sums.clear();
    ride_along = torch::Tensor();
  }
};

OverlappedGradientSum::OverlappedGradientSum(model::FlatAdamW& optimizer, SpmdGroup& group,
                                             int64_t bucket_bytes)
    : state_(std::make_shared<State>()) {
  State& s = *state_;
  s.optimizer = &optimizer;
  s.group = &group;
  const auto& params = optimizer.parameters();
  const auto& offsets = optimizer.offsets();
  int64_t total_bytes = 0;
  for (const auto& p : params) total_bytes += p.numel() * static_cast<int64_t>(p.element_size());
  if (bucket_bytes <= 0)
    bucket_bytes = std::clamp(total_bytes / kBucketsWhenUnsized, kMinBucketBytes, kMaxBucketBytes);
  s.bucket_of.assign(params.size(), 0);
  int64_t bytes = 0, end = 0;
  for (size_t k = params.size(); k-- > 0;) {
    if (bytes == 0) end = offsets[k] + params[k].numel();
    s.bucket_of[k] = static_cast<int>(s.ranges.size());
    bytes += params[k].numel() * static_cast<int64_t>(params[k].element_size());
    if (bytes >= bucket_bytes || k == 0) {
      s.ranges.emplace_back(offsets[k], end);
      bytes = 0;
    }
  }
  s.params_in.assign(s.ranges.size(), 0);
  for (int b : s.bucket_of) ++s.params_in[static_cast<size_t>(b)];
  s.accumulators.resize(params.size());
}

OverlappedGradientSum::~OverlappedGradientSum() {
  // The hooks hold the state weakly: they find it gone and do nothing.
  // Collectives still running keep their own references to their tensors.
  state_->disarm();
}

void OverlappedGradientSum::hook_accumulators() {
  State& s = *state_;
  const auto& params = s.optimizer->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    auto accumulator = torch::autograd::impl::grad_accumulator(params[i]);
    if (!accumulator || accumulator == s.accumulators[i]) continue;
    // New, or replaced since the last step (autograd drops an accumulator
    // when a parameter's data changes type or device).
    std::weak_ptr<State> weak = state_;
    accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [weak, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          if (auto state = weak.lock()) state->on_gradient_final(i);
          return outputs;
        }));
    s.accumulators[i] = std::move(accumulator);
  }
}

void OverlappedGradientSum::arm(const std::vector<double>& ride_along) {
  State& s = *state_;
  if (s.armed) throw std::logic_error("OverlappedGradientSum::arm: already armed; call finish() first");
  s.optimizer->flat_gradients();  // every gradient a view of the buffer before backward adds to it
  hook_accumulators();
  s.armed = true;
  s.final_grad.assign(s.optimizer->parameters().size(), false);
  s.waiting = s.params_in;
  s.next_bucket = 0;
  if (!ride_along.empty()) {
    s.ride_along = torch::tensor(ride_along, torch::kFloat64);
    s.sums.push_back(s.group->start_all_reduce_sum(s.ride_along));
  }
}

bool OverlappedGradientSum::armed() const { return state_->armed; }

std::vector<double> OverlappedGradientSum::finish() {
  State& s = *state_;
  if (!s.armed) throw std::logic_error("OverlappedGradientSum::finish: not armed");
  std::vector<double> ride_along;
  try {
    s.optimizer->flat_gradients();  // parameters that got no gradient count as zero
    while (s.next_bucket < s.ranges.size()) s.start(s.next_bucket++);
    for (PendingCollective& sum : s.sums) sum.wait();
    if (s.ride_along.defined()) {
      const double* values = s.ride_along.data_ptr<double>();
      ride_along.assign(values, values + s.ride_along.numel());
    }
  } catch (...) {
    s.disarm();
    throw;
  }
  s.disarm();
  return ride_along;
}

size_t OverlappedGradientSum::buckets_started() const { return state_->next_bucket; }

std::vector<std::pair<int64_t, int64_t>> OverlappedGradientSum::buckets() const { return state_->ranges; }

}  // namespace rlwb::workers::roles
