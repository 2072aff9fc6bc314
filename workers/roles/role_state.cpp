#include "workers/roles/role_state.h"

#include "core/common/durable_file.h"
#include "workers/model/hf_checkpoint.h"
#include "workers/model/pipeline_parallel.h"
#include "workers/model/tensor_parallel.h"
#include "workers/model/transformer_config.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

namespace rlwb::workers::roles {
namespace {

const char* const kStateKeys[] = {"exp_avg", "exp_avg_sq", "adam_steps", "schedule_steps"};
const char* const kConfigFile = "config.json";
const char* const kTokenizerNote = "rlwb_tokenizer.json";

// With pipeline stages: which share of the vocabulary's rows this rank's
// embedding and head hold, [share, shares] (model/pipeline_parallel.h).
const char* const kVocabShareKey = "vocab/share";

torch::Tensor vocab_share_of(const model::TransformerImpl& net) {
  const model::TensorParallel& vocab = net.vocab_parallel();
  return torch::tensor({int64_t{vocab.rank}, int64_t{vocab.size}}, torch::kInt64);
}

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
  if (role.net->pipeline_parallel().active()) archive.write(kVocabShareKey, vocab_share_of(*role.net));
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
  if (env.rank == 0) {
    namespace fs = std::filesystem;
    core::write_file_durably((fs::path(dir) / kConfigFile).string(),
                             model::hf_config_json(role.net->config()));
    core::write_file_durably((fs::path(dir) / kTokenizerNote).string(),
                             role.options.tokenizer.as_written.dump(2) + "\n");
  }
  core::fsync_directory(dir);
}

void load_role_state(ModelRole& role, const std::vector<TrainStateSlot>& slots, const std::string& dir,
                     WorkerEnv& env) {
  const std::string file = role_state_file(dir, env);
  torch::serialize::InputArchive archive;
  archive.load_from(file);
  const std::string where = "models." + env.model + " rank " + std::to_string(env.rank) + ": " + file;
  if (role.net->pipeline_parallel().active()) {
    torch::Tensor saved;
    const torch::Tensor now = vocab_share_of(*role.net);
    if (!archive.try_read(kVocabShareKey, saved) || !torch::equal(saved, now))
      throw std::runtime_error(
          where + " holds " +
          (saved.defined() ? "vocabulary share " + std::to_string(saved[0].item<int64_t>()) + " of " +
                                 std::to_string(saved[1].item<int64_t>())
                           : std::string("no vocabulary share (an older checkpoint: the embedding whole on "
                                         "every stage)")) +
          " but this rank holds share " + std::to_string(now[0].item<int64_t>()) + " of " +
          std::to_string(now[1].item<int64_t>()) +
          "; resume with the graph file the run was started with (parallel and parallel.generate)");
  }
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
    *slot.state = role.make_train_state(slot.settings);
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

namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error(path.string() +
                             ": missing; the checkpoint was written by an rlwb without export support, or is "
                             "incomplete");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

void export_role_state(const std::string& dir, int tp, int pp, const std::string& out, torch::Dtype dtype) {
  namespace fs = std::filesystem;
  const fs::path config_path = fs::path(dir) / kConfigFile;
  const model::TransformerConfig config =
      model::parse_hf_config(read_text(config_path), config_path.string());
  if (pp > config.num_layers)
    throw std::runtime_error(dir + ": pp = " + std::to_string(pp) + " stages but " + config_path.string() +
                             " has " + std::to_string(config.num_layers) + " layers");
  const std::string tokenizer_note = read_text(fs::path(dir) / kTokenizerNote);
  const int ranks = tp * pp;
  std::vector<torch::serialize::InputArchive> shards(static_cast<size_t>(ranks));
  std::vector<std::string> files;
  for (int r = 0; r < ranks; ++r) {
    files.push_back((fs::path(dir) / ("rank-" + std::to_string(r) + ".pt")).string());
    if (!fs::exists(files.back()))
      throw std::runtime_error(files.back() + ": missing; " + std::to_string(pp) + " pipeline stage(s) of " +
                               std::to_string(tp) + " tensor-parallel shard(s) need rank-0 .. rank-" +
                               std::to_string(ranks - 1));
    shards[r].load_from(files.back());
  }
  // The weights drawn at construction are all overwritten: leave torch's
  // generator as it was.
  at::Generator cpu = at::globalContext().defaultGenerator(torch::kCPU);
  const at::Tensor generator_state = cpu.get_state();
  model::Transformer whole(config);
  cpu.set_state(generator_state);
  {
    torch::NoGradGuard no_grad;
    // With stages the embedding's and the head's rows are split over every
    // rank file, each saying which share it holds.
    std::vector<int> by_share;
    if (pp > 1) {
      by_share.assign(static_cast<size_t>(ranks), -1);
      for (int r = 0; r < ranks; ++r) {
        torch::Tensor share;
        if (!shards[r].try_read(kVocabShareKey, share)) {
          by_share.clear();  // an older checkpoint: the embedding whole on every stage
          break;
        }
        const int64_t index = share[0].item<int64_t>();
        if (share[1].item<int64_t>() != ranks || index < 0 || index >= ranks || by_share[index] >= 0)
          throw std::runtime_error(files[r] + ": vocabulary share " + std::to_string(index) + " of " +
                                   std::to_string(share[1].item<int64_t>()) + " does not fit " +
                                   std::to_string(ranks) + " rank files, or another file holds it");
        by_share[index] = r;
      }
    }
    for (auto& p : whole->named_parameters()) {
      // The rank files that hold p's parts, in order, and the dimension
      // the parts join along (-1: one file holds it whole).
      std::vector<int> holders;
      int64_t dim = 0;
      std::string over;
      if (!by_share.empty() && model::is_vocab_parameter(p.key())) {
        holders = by_share;
        over = std::to_string(ranks) + " rank files";
      } else {
        dim = tp > 1 ? model::tensor_parallel_dim(p.key()) : -1;
        const int64_t layer = model::layer_of_parameter(p.key());
        const int stage = layer < 0 ? 0 : model::stage_of_layer(layer, config.num_layers, pp);
        for (int t = 0; t < (dim < 0 ? 1 : tp); ++t) holders.push_back(stage * tp + t);
        over = std::to_string(holders.size()) + " rank file(s) of stage " + std::to_string(stage);
      }
      std::vector<torch::Tensor> parts;
      for (int r : holders) {
        torch::Tensor part;
        if (!shards[r].try_read("param/" + p.key(), part))
          throw std::runtime_error(files[r] + " has no tensor '" + p.key() + "', which " +
                                   config_path.string() + " implies");
        parts.push_back(part);
      }
      torch::Tensor joined = dim < 0 ? parts[0] : torch::cat(parts, dim);
      if (joined.sizes() != p.value().sizes())
        throw std::runtime_error(dir + ": tensor '" + p.key() + "' is " + shape_text(joined) + " over " +
                                 over + " but " + shape_text(p.value()) + " by " + config_path.string());
      p.value().copy_(joined);
    }
  }
  model::SaveOptions save;
  save.dtype = dtype;
  model::save_hf_checkpoint(whole, out, save);
  std::ofstream note(fs::path(out) / kTokenizerNote, std::ios::trunc);
  note << tokenizer_note;
  if (!note) throw std::runtime_error((fs::path(out) / kTokenizerNote).string() + ": write failed");
}

}  // namespace rlwb::workers::roles
