#include "workers/model/shared_prompts.h"

#include <torch/torch.h>

namespace rlwb::workers::model {

DistinctPrompts distinct_prompts(const torch::Tensor& prompt_ids, const torch::Tensor& prompt_mask) {
  const int64_t p = prompt_ids.size(1);
  auto [rows, prompt_of, counts] =
      at::unique_dim(torch::cat({prompt_ids, prompt_mask.to(prompt_ids.dtype())}, 1), 0,
                     /*sorted=*/true, /*return_inverse=*/true);
  return {rows.narrow(1, 0, p), rows.narrow(1, p, p).to(prompt_mask.dtype()), prompt_of};
}

std::optional<DistinctPrompts> prompts_worth_sharing(const torch::Tensor& prompt_ids,
                                                     const torch::Tensor& prompt_mask) {
  const int64_t rows = prompt_ids.size(0);
  if (rows < 2) return std::nullopt;
  DistinctPrompts prompts = distinct_prompts(prompt_ids, prompt_mask);
  if (2 * prompts.count() > rows) return std::nullopt;
  return prompts;
}

}  // namespace rlwb::workers::model
