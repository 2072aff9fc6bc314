#include "core/mesh/mesh.h"

namespace rlwb::core {

std::optional<Mesh> generation_mesh(const Mesh& training, int generate_pp, int generate_tp) {
  if (training.folded() || generate_pp < 1 || generate_tp < 1 || training.pp % generate_pp != 0 ||
      training.tp % generate_tp != 0)
    return std::nullopt;
  const int pp_fold = training.pp / generate_pp, tp_fold = training.tp / generate_tp;
  return Mesh{training.dp * pp_fold * tp_fold, generate_pp, generate_tp, pp_fold, tp_fold};
}

}  // namespace rlwb::core
