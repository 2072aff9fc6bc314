#include "workers/roles/role_state.h"

#include "core/common/durable_file.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <filesystem>
#include <mutex>
#include <sstream>

namespace rlwb::workers::roles {
namespace {

const char* const kStateKeys[] = {"exp_avg", "exp_avg_sq", "adam_steps", "schedule_steps"};

std::string shape_text(const torch::Tensor& t) {
  std::string text = "[";
  for (int64_t i = 0; i < t.dim(); ++i) text += (i ? ", " : "") + std::to_string(t.size(i));
  return text + "]";
}

}  // namespace

std::string role_state_file(const std::string& dir, const WorkerEnv& env) {
  return (std::filesystem::path(dir) / ("rank-" + std::to_string(env.rank) + ".pt")).string();
}

void save_role_state(ModelRole& role, const std::vector<TrainStateSlot>& slots, const std::string& dir,
                     WorkerEnv& env) {
  std::error_code ec;  // the ranks make the folder at once
  std::filesystem::create_directories(dir, ec);
  torch::serialize::OutputArchive archive;
  for (const auto& p : role.net->named_parameters())
    archive.write("param/" + p.key(), p.value().detach().to(torch::kCPU));
  for (const auto& slot : slots) {
    if (!*slot.state) continue;
    for (auto& [key, value] : (*slot.state)->state())
      archive.write("optim/" + slot.name + "/" + key, value.to(torch::kCPU));
  }
  {
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    archive.write("rng/cpu", generator.get_state());
  }
  std::ostringstream bytes;
  archive.save_to(bytes);
  const std::string file = role_state_file(dir, env);
  core::write_file_durably(file, bytes.str());
  core::fsync_directory(dir);
}

void load_role_state(ModelRole& role, const std::vector<TrainStateSlot>& slots, const std::string& dir,
                     WorkerEnv& env) {
  const std::string file = role_state_file(dir, env);
  torch::serialize::InputArchive archive;
  archive.load_from(file);
  const std::string where = "models." + env.model + " rank " + std::to_string(env.rank) + ": " + file;
  {
    torch::NoGradGuard no_grad;
    for (auto& p : role.net->named_parameters()) {
      torch::Tensor saved;
      if (!archive.try_read("param/" + p.key(), saved))
        throw std::runtime_error(where + " has no tensor '" + p.key() +
                                 "': the model changed since the checkpoint was written; resume with the "
                                 "graph file the run was started with");
      if (saved.sizes() != p.value().sizes())
        throw std::runtime_error(where + ": tensor '" + p.key() + "' is " + shape_text(saved) +
                                 " in the checkpoint but " + shape_text(p.value()) +
                                 " in the model now; resume with the graph file the run was started with");
      p.value().copy_(saved);
    }
  }
  for (const auto& slot : slots) {
    std::map<std::string, torch::Tensor> state;
    for (const char* key : kStateKeys) {
      torch::Tensor value;
      if (archive.try_read("optim/" + slot.name + "/" + key, value)) state[key] = value;
    }
    slot.state->reset();
    if (state.empty()) continue;  // this optimizer had not stepped yet when the state was saved
    if (state.size() != std::size(kStateKeys))
      throw std::runtime_error(where + ": optimizer '" + slot.name + "' is incomplete in the checkpoint");
    *slot.state = std::make_unique<TrainState>(role.net, slot.settings);
    try {
      (*slot.state)->restore(state);
    } catch (const std::exception& e) {
      throw std::runtime_error(where + ": optimizer '" + slot.name + "': " + e.what());
    }
  }
  torch::Tensor rng;
  if (archive.try_read("rng/cpu", rng)) {
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(rng);
  }
}

}  // namespace rlwb::workers::roles
