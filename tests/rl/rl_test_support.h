// In-process access to the model roles for tests: create a role as a worker
// would (one rank, no c10d group) and call its methods with a node's column
// lists, without the RPC layer.
#pragma once

#include "core/batch/batch.h"
#include "workers/method_registry.h"

#include <memory>
#include <string>
#include <vector>

namespace rlwb::testing {

struct LocalRole {
  workers::WorkerEnv env;
  std::unique_ptr<workers::Role> role;
  std::string role_name;

  LocalRole(const std::string& role, const nlohmann::json& config, const std::string& model = "m") : role_name(role) {
    env.model = model;
    env.group = "local";
    role_ = workers::builtin_roles().find(role);
    if (!role_) throw std::runtime_error("no role " + role);
    this->role = role_->create(config, env);
  }

  core::Batch call(const std::string& method, const core::Batch& in, std::vector<std::string> in_cols,
                   std::vector<std::string> out_cols, nlohmann::json args = nlohmann::json::object(), int64_t step = 1) {
    const auto* m = workers::builtin_roles().find_method(role_name, method);
    if (!m) throw std::runtime_error("no method " + method);
    nlohmann::json context = {{"step", step}, {"in", in_cols}, {"out", out_cols}};
    workers::CallContext ctx{args, context, env};
    return m->fn(*role, in, ctx);
  }

 private:
  const workers::RoleSpec* role_ = nullptr;
};

// A tiny arithmetic actor config (char tokenizer).
inline nlohmann::json tiny_actor_config(double lr = 1e-2) {
  return {{"model",
           {{"architecture", "llama"}, {"hidden_size", 32}, {"intermediate_size", 64}, {"num_layers", 1},
            {"num_heads", 2}, {"num_kv_heads", 1}, {"max_position_embeddings", 16}}},
          {"tokenizer", "char"},
          {"seed", 3},
          {"optim", {{"lr", lr}, {"grad_clip", 1.0}}},
          {"rollout", {{"temperature", 1.0}, {"max_new_tokens", 3}}},
          {"micro_batch_size", 16}};
}

}  // namespace rlwb::testing
