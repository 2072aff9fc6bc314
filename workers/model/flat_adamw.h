// FlatAdamW: AdamW (decoupled weight decay, bias-corrected moments, as
// torch.optim.AdamW) over one flat buffer that holds every parameter and
// one that holds every gradient.
//
// Why: the models trained here have tens of small parameter tensors. Per
// tensor, torch::optim::AdamW runs about ten kernels, gradient clipping two
// more, and a data-parallel gradient sum needs them concatenated and copied
// back. Over flat buffers each of these is one kernel: on the default
// experiment's actor (21 tensors, 0.3M parameters) that is a few hundred
// kernel launches less per optimizer step.
//
// How: the parameters become views into the flat parameter buffer (unless
// they must stay where they live: ParameterStorage::kInPlace) and
// their .grad views into the flat gradient buffer, so backward passes
// accumulate straight into it. flat_gradients() re-checks both on every
// call: a parameter or gradient that something else replaced (a checkpoint
// load, another optimizer over the same model, a zero_grad that set
// gradients to none) is copied back in and re-pointed, so the result is
// always right, only slower that once. On CPU in float32 the update is one
// pass over the buffers (the same arithmetic as torch's AdamW kernels, which
// take eight). After an update every parameter's
// version counter is bumped, so caches keyed on it (PackedLinear) see it.
#pragma once

#include <torch/types.h>

#include <vector>

namespace rlwb::workers::model {

struct AdamWSettings {
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
};

// Where the parameters' values live while this optimizer trains them.
enum class ParameterStorage {
  // Moved into one flat buffer (the parameters become views of it): the
  // update is one pass over it.
  kFlatBuffer,
  // Left where they are, each updated in place (one pass per tensor): for
  // parameters whose storage belongs to something else, as the
  // 3D-HybridEngine's generation buffers, in which each training shard must
  // stay so that the switch to generation gathers around it
  // (workers/hybrid_engine/hybrid_engine.h). Each must be contiguous.
  kInPlace,
};

class FlatAdamW {
 public:
  // params: float tensors that require grad, all on one device. Throws
  // std::invalid_argument when they are none, differ in dtype or device,
  // or (kInPlace) one is not contiguous.
  FlatAdamW(std::vector<torch::Tensor> params, AdamWSettings settings,
            ParameterStorage storage = ParameterStorage::kFlatBuffer);

  // The gradients of every parameter as one flat tensor (parameters that
  // got none count as zero). Writes into it (a data-parallel sum, clipping)
  // are what step() applies.
  torch::Tensor& flat_gradients();

  // Scales the gradients so their global L2 norm is at most max_norm;
  // returns the norm before scaling (as torch's clip_grad_norm_).
  double clip_gradients(double max_norm);
  // The same with the norm measured by the caller (over the shards of a
  // tensor-parallel model, say).
  double clip_gradients(double max_norm, double norm);

  // One AdamW update at learning rate lr from flat_gradients().
  void step(double lr);

  // Zeroes the gradients in place (they stay views of the flat buffer).
  void zero_grad();

  int64_t steps() const { return steps_; }
  // The moments and the update count: what a checkpoint keeps so that the
  // next step() is the one an uninterrupted run would take
  // (roles/role_state.h). restore() throws std::invalid_argument when the
  // moments' size differs from this optimizer's parameters.
  const torch::Tensor& exp_avg() const { return exp_avg_; }
  const torch::Tensor& exp_avg_sq() const { return exp_avg_sq_; }
  void restore(const torch::Tensor& exp_avg, const torch::Tensor& exp_avg_sq, int64_t steps);
  // The parameters in the order of the flat buffers, and where each one
  // starts in them (for a gradient sum that goes by parts of the buffer).
  const std::vector<torch::Tensor>& parameters() const { return params_; }
  const std::vector<int64_t>& offsets() const { return offsets_; }
  // The flat gradient buffer as it is, without flat_gradients()'s re-check
  // (for code that checks the one parameter it touches).
  const torch::Tensor& gradient_buffer() const { return gradients_; }

 private:
  void adopt();  // makes every gradient (and with kFlatBuffer every parameter) a view again

  std::vector<torch::Tensor> params_;
  std::vector<int64_t> offsets_;
  AdamWSettings settings_;
  ParameterStorage storage_;
  torch::Tensor values_;  // kFlatBuffer only
  torch::Tensor gradients_, exp_avg_, exp_avg_sq_;
  int64_t steps_ = 0;
};

}  // namespace rlwb::workers::model
