// In-process access to the model roles for tests: create a role as a worker
// would (one rank, no c10d group) and call its methods without the RPC
// layer, as the controller does: inputs named by port, the wanted output
// ports in the context.
#pragma once

#include "core/batch/batch.h"
#include "workers/method_registry.h"
#include "workers/spmd_group.h"
#include "app/registries.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace rlwb::testing {

struct LocalRole {
  workers::WorkerEnv env;
  std::unique_ptr<workers::Role> role;
  std::string role_name;

  LocalRole(const std::string& role, const nlohmann::json& config, const std::string& model = "m",
            workers::WorkerEnv env_ = {})
      : env(std::move(env_)), role_name(role) {
    env.model = model;
    env.group = "local";
    role_ = app::worker_roles().find(role);
    if (!role_) throw std::runtime_error("no role " + role);
    this->role = role_->create(config, env);
  }

  // `in`'s columns are the method's input ports; `out_ports` the output
  // ports wanted (none named: every port).
  core::Batch call(const std::string& method, const core::Batch& in, std::vector<std::string> out_ports = {},
                   nlohmann::json args = nlohmann::json::object(), int64_t step = 1) {
    const auto* m = app::worker_roles().find_method(role_name, method);
    if (!m) throw std::runtime_error("no method " + method);
    nlohmann::json context = {{"step", step}};
    if (!out_ports.empty()) context["out"] = out_ports;
    workers::CallContext ctx{args, context, env};
    return m->fn(*role, in, ctx);
  }

 private:
  const workers::RoleSpec* role_ = nullptr;
};

// Every metric of `want` is in `got` within 1e-5 (but `per_rank`, which
// each rank computes over its own rows), and `got` has no other.
inline void expect_same_metrics(const nlohmann::json& got, const nlohmann::json& want,
                                const std::string& what, const std::string& per_rank = "") {
  for (auto& [key, value] : want.items()) {
    if (key == per_rank) continue;
    ASSERT_TRUE(got.contains(key)) << what << ": " << key;
    EXPECT_NEAR(got[key].get<double>(), value.get<double>(), 1e-5) << what << ": " << key;
  }
  EXPECT_EQ(got.size(), want.size()) << what;
}

// A tiny arithmetic actor config (char tokenizer).
inline nlohmann::json tiny_actor_config(double lr = 1e-2) {
  return {{"model",
           {{"architecture", "llama"},
            {"hidden_size", 32},
            {"intermediate_size", 64},
            {"num_layers", 1},
            {"num_heads", 2},
            {"num_kv_heads", 1},
            {"max_position_embeddings", 16}}},
          {"tokenizer", "char"},
          {"seed", 3},
          {"optim", {{"lr", lr}, {"grad_clip", 1.0}}},
          {"rollout", {{"temperature", 1.0}, {"max_new_tokens", 3}}},
          {"micro_batch_size", 16}};
}

// Two ranks of one role in threads over a real c10d group (the worker's
// SpmdGroup on a local port), as a pool with dp=2 runs them.
struct TwoRanks {
  std::vector<std::unique_ptr<LocalRole>> ranks;
  std::vector<std::unique_ptr<workers::SpmdGroup>> groups =
      std::vector<std::unique_ptr<workers::SpmdGroup>>(2);

  TwoRanks(const std::string& role, const nlohmann::json& config) {
    const int port = workers::free_loopback_ports(1).front();
    for (int rank = 0; rank < 2; ++rank) {
      ranks.push_back(std::make_unique<LocalRole>(role, config));
      ranks[rank]->env.rank = rank;
      ranks[rank]->env.world = 2;
      ranks[rank]->env.mesh = core::Mesh{2, 1, 1};
      ranks[rank]->env.spmd = [this, rank, port]() -> workers::SpmdGroup& {
        if (!groups[rank])
          groups[rank] = std::make_unique<workers::SpmdGroup>(
              workers::SpmdOptions{"127.0.0.1", port, rank, 2, std::chrono::milliseconds(30000)});
        return *groups[rank];
      };
    }
  }

  // Each rank calls `method` on its half of `in`'s rows (split_dp), at once.
  std::vector<core::Batch> call_split(const std::string& method, const core::Batch& in,
                                      const std::vector<std::string>& out_ports = {}) {
    const int64_t half = in.rows() / 2;
    std::vector<core::Batch> outs(2);
    std::vector<std::thread> threads;
    for (int rank = 0; rank < 2; ++rank)
      threads.emplace_back([&, rank] {
        core::Batch part = in.slice(rank * half, rank == 0 ? half : in.rows());
        outs[rank] = ranks[rank]->call(method, part, out_ports);
      });
    for (auto& t : threads) t.join();
    return outs;
  }
};

// The ranks of one role laid out as `mesh` (dp x pp x tp), in threads over
// a real c10d group, as a pool with that mesh runs them. The roles are
// created at once (their init is collective); call() dispatches as the
// controller does (core/rpc/dispatch.h) and returns the group's result.
struct MeshRanks {
  core::Mesh mesh, generation_mesh;
  std::vector<std::unique_ptr<LocalRole>> ranks;
  std::vector<std::unique_ptr<workers::SpmdGroup>> groups;

  // `generation`: the generation mesh of a model that generates with
  // another layout (core::WorkerGroup's).
  MeshRanks(const std::string& role, const nlohmann::json& config, core::Mesh mesh_,
            const std::string& device = "cpu", std::optional<core::Mesh> generation = std::nullopt)
      : mesh(mesh_),
        generation_mesh(generation.value_or(mesh_)),
        ranks(mesh_.world()),
        groups(mesh_.world()) {
    const int port = workers::free_loopback_ports(1).front();
    on_every_rank([&](int rank) {
      workers::WorkerEnv env;
      env.rank = rank;
      env.world = mesh.world();
      env.mesh = mesh;
      env.generation_mesh = generation;
      env.device = device;
      env.spmd = [this, rank, port]() -> workers::SpmdGroup& {
        if (!groups[rank])
          groups[rank] = std::make_unique<workers::SpmdGroup>(
              workers::SpmdOptions{"127.0.0.1", port, rank, mesh.world(), std::chrono::milliseconds(30000)});
        return *groups[rank];
      };
      ranks[rank] = std::make_unique<LocalRole>(role, config, "m", env);
    });
  }

  core::Batch call(const std::string& method, const core::Batch& in, std::vector<std::string> out_ports = {},
                   nlohmann::json args = nlohmann::json::object()) {
    const auto* spec = app::worker_roles().find_method(ranks[0]->role_name, method);
    if (!spec) throw std::runtime_error("no method " + method);
    const core::Mesh& on = spec->mode == core::DispatchMode::split_generation_mesh ? generation_mesh : mesh;
    core::DispatchPlan plan = core::plan_dispatch(spec->mode, on, in);
    std::vector<core::Batch> replies(mesh.world());
    on_every_rank([&](int rank) {
      if (plan.inputs[rank]) replies[rank] = ranks[rank]->call(method, *plan.inputs[rank], out_ports, args);
    });
    return core::collect_replies(spec->mode, on, plan, replies);
  }

  template <class F>
  void on_every_rank(F body) {
    std::vector<std::thread> threads;
    std::vector<std::string> errors(mesh.world());
    for (int rank = 0; rank < mesh.world(); ++rank)
      threads.emplace_back([&, rank] {
        try {
          body(rank);
        } catch (const std::exception& e) {
          errors[rank] = e.what();
        }
      });
    for (auto& t : threads) t.join();
    // Every rank's error: the first rank's is often only a timeout waiting
    // for another that failed first.
    std::string all;
    for (int rank = 0; rank < mesh.world(); ++rank)
      if (!errors[rank].empty())
        all += (all.empty() ? "" : "\n") + ("rank " + std::to_string(rank) + ": ") + errors[rank];
    if (!all.empty()) throw std::runtime_error(all);
  }
};

}  // namespace rlwb::testing
