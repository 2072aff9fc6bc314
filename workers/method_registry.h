// Roles and their methods, as the worker process hosts them. A role (actor,
// critic, reference, ...) is a class; each of its methods is registered
// together with its dispatch mode, so the rule for fanning a call out lives
// next to the method (the controller learns it at registration), and with
// its named ports (core/graph/ports.h). A method reads its inputs by port
// name (the controller has named the node's columns by port before the
// call) and returns its outputs by port name; it never sees the graph's
// column names. The same registry gives the graph validator its catalog of
// role methods and their ports (app/catalog.h). The build's registry is
// assembled in app/registries.h; this file knows no role.
#pragma once

#include "core/batch/batch.h"
#include "core/graph/ports.h"
#include "core/rpc/dispatch.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rlwb::workers {

class SpmdGroup;
struct MeshGroups;

// What a role instance knows about where it runs.
struct WorkerEnv {
  std::string group, host, model;
  int rank = 0, world = 1, pid = 0;
  core::Mesh mesh;
  // The mesh its split_generation_mesh methods run on, when the model
  // generates with another layout than it trains: the 3D-HybridEngine's
  // generation replicas (a folded Mesh). generation() is `mesh` otherwise.
  std::optional<core::Mesh> generation_mesh;
  const core::Mesh& generation() const { return generation_mesh ? *generation_mesh : mesh; }
  std::string device = "cpu";
  // The pool's c10d process group (created on first use, collectively).
  std::function<SpmdGroup&()> spmd;
  // This model's tp and dp sub-groups of it (mesh_groups.h), made by a
  // model role's init when the mesh has more than one dimension.
  std::shared_ptr<MeshGroups> mesh_groups;
};

class Role {
 public:
  virtual ~Role() = default;
};

struct CallContext {
  const nlohmann::json& args;     // per-call arguments from the controller
  const nlohmann::json& context;  // run, step, node (profiling context), out (wanted ports)
  WorkerEnv& env;
  // The output ports the node binds (context's "out"; every port when the
  // caller names none).
  core::WantedPorts out = core::WantedPorts::from_context(context);
};

using MethodFn = std::function<core::Batch(Role&, const core::Batch&, CallContext&)>;
using RoleFactory = std::function<std::unique_ptr<Role>(const nlohmann::json& config, WorkerEnv& env)>;

struct MethodSpec {
  std::string name;
  core::DispatchMode mode = core::DispatchMode::split_dp;
  MethodFn fn;
  core::CallPorts ports;
  // Returns one row per input row, in order (generate, log_prob): a call of
  // another method may then be sent right behind it and take its outputs
  // on each rank where they are (core/rpc/worker_group.h, call_after).
  bool keeps_rows = false;
};

// `spec`, declared to return one row per input row (MethodSpec::keeps_rows).
inline MethodSpec keeping_rows(MethodSpec spec) {
  spec.keeps_rows = true;
  return spec;
}

struct RoleSpec {
  std::string name;
  std::string description;
  RoleFactory create;
  std::vector<MethodSpec> methods;
};

class RoleRegistry {
 public:
  void add(RoleSpec spec);  // throws on a duplicate name
  const RoleSpec* find(const std::string& role) const;
  const MethodSpec* find_method(const std::string& role, const std::string& method) const;
  // {role: {method: {"mode": dispatch mode name, "keeps_rows": bool}}} --
  // sent in the register message.
  nlohmann::json describe() const;
  std::vector<std::string> role_names() const;
  const std::map<std::string, RoleSpec>& roles() const { return roles_; }

 private:
  std::map<std::string, RoleSpec> roles_;
};

// Typed helper: registers `fn` (a member-like lambda taking R&) as a
// method with its ports.
template <class R>
MethodSpec method(std::string name, core::DispatchMode mode, core::CallPorts ports,
                  std::function<core::Batch(R&, const core::Batch&, CallContext&)> fn) {
  return MethodSpec{std::move(name), mode,
                    [fn](Role& role, const core::Batch& in, CallContext& ctx) {
                      return fn(static_cast<R&>(role), in, ctx);
                    },
                    std::move(ports)};
}

}  // namespace rlwb::workers
