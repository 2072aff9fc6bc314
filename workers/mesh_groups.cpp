#include "workers/mesh_groups.h"

#include <stdexcept>

#include "workers/spmd_group.h"

namespace rlwb::workers {

std::vector<int> tensor_parallel_ranks(const core::Mesh& mesh, int rank) {
  std::vector<int> ranks;
  const int first = rank - mesh.tp_index(rank);
  for (int t = 0; t < mesh.tp; ++t) ranks.push_back(first + t);
  return ranks;
}

std::vector<int> pipeline_parallel_ranks(const core::Mesh& mesh, int rank) {
  std::vector<int> ranks;
  const int first = rank - mesh.pp_index(rank) * mesh.tp;
  for (int p = 0; p < mesh.pp; ++p) ranks.push_back(first + p * mesh.tp);
  return ranks;
}

std::vector<int> data_parallel_ranks(const core::Mesh& mesh, int rank) {
  std::vector<int> ranks;
  const int stride = mesh.pp * mesh.tp, offset = rank % stride;
  for (int d = 0; d < mesh.dp; ++d) ranks.push_back(d * stride + offset);
  return ranks;
}

model::TensorParallel MeshGroups::tensor_parallel(int rank) const {
  if (mesh.tp <= 1) return {};
  return {tp.get(), mesh.tp_index(rank), mesh.tp};
}

model::PipelineParallel MeshGroups::pipeline_parallel(int rank, int micro_batches) const {
  if (mesh.pp <= 1) return {};
  return {
      pp.get(), mesh.pp_index(rank), mesh.pp, micro_batches, {vocab.get(), vocab_index, mesh.pp * mesh.tp}};
}

int vocab_index(const core::Mesh& generation, int rank) {
  const int fold = generation.fold();
  return (generation.pp_index(rank) * generation.tp + generation.tp_index(rank)) * fold +
         generation.dp_index(rank) % fold;
}

std::vector<int> vocab_parallel_ranks(const core::Mesh& training, const core::Mesh& generation, int rank) {
  const int size = training.pp * training.tp, first = training.dp_index(rank) * size;
  std::vector<int> ranks(size);
  for (int r = first; r < first + size; ++r) ranks.at(vocab_index(generation, r)) = r;
  return ranks;
}

std::shared_ptr<MeshGroups> make_mesh_groups(SpmdGroup& pool, const core::Mesh& mesh,
                                             const std::string& model) {
  return make_mesh_groups(pool, mesh, model, mesh);
}

std::shared_ptr<MeshGroups> make_mesh_groups(SpmdGroup& pool, const core::Mesh& mesh,
                                             const std::string& model, const core::Mesh& generation) {
  if (mesh.folded())
    throw std::invalid_argument(
        "make_mesh_groups: model '" + model +
        "': a generation mesh (folded) has no training groups; pass the training mesh");
  auto groups = std::make_shared<MeshGroups>();
  groups->mesh = mesh;
  const int rank = pool.rank();
  // Every rank makes its tp group first, then its pp group, then its dp
  // group: the members of each meet in the same order.
  if (mesh.tp > 1)
    groups->tp = pool.subgroup(
        model + "/tp/" + std::to_string(mesh.dp_index(rank)) + "." + std::to_string(mesh.pp_index(rank)),
        tensor_parallel_ranks(mesh, rank));
  if (mesh.pp > 1)
    groups->pp = pool.subgroup(
        model + "/pp/" + std::to_string(mesh.dp_index(rank)) + "." + std::to_string(mesh.tp_index(rank)),
        pipeline_parallel_ranks(mesh, rank));
  if (mesh.dp > 1 && mesh.dp < pool.world())
    groups->dp = pool.subgroup(
        model + "/dp/" + std::to_string(mesh.pp_index(rank)) + "." + std::to_string(mesh.tp_index(rank)),
        data_parallel_ranks(mesh, rank));
  if (generation.world() != mesh.world())
    throw std::invalid_argument("make_mesh_groups: model '" + model + "': the generation mesh has " +
                                std::to_string(generation.world()) + " ranks, the training mesh " +
                                std::to_string(mesh.world()));
  if (mesh.pp > 1) {
    groups->vocab_index = vocab_index(generation, rank);
    groups->vocab = pool.subgroup(model + "/vocab/" + std::to_string(mesh.dp_index(rank)),
                                  vocab_parallel_ranks(mesh, generation, rank));
  }
  return groups;
}

}  // namespace rlwb::workers
