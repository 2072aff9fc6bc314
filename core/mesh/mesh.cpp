#include "core/mesh/mesh.h"

namespace rlwb::core {

std::optional<Mesh> generation_mesh(const Mesh& training, int generate_pp, int generate_tp) {
  if (generate_pp < 1 || generate_tp < 1 || training.pp % generate_pp != 0 || training.tp % generate_tp != 0)
    return std::nullopt;
  if (generate_pp != training.pp && generate_tp != 1) return std::nullopt;
  const int replicas = (training.pp * training.tp) / (generate_pp * generate_tp);
  return Mesh{training.dp * replicas, generate_pp, generate_tp, replicas};
}

}  // namespace rlwb::core
