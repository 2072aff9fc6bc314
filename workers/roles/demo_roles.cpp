#include "workers/roles/demo_roles.h"

#include "core/config/model_options.h"

#include "workers/spmd_group.h"

#include <torch/torch.h>

#include <chrono>
#include <thread>

namespace rlwb::workers {
namespace {

using core::Batch;
using core::DispatchMode;

struct DemoRole : Role {
  int sleep_ms = 0;            // simulated work per call, to show overlap
  double factor = 1.0;         // multiplies outputs of square/negate
  int64_t fail_from_step = 1;  // `fail` throws from this step on (earlier steps pass)
};

void simulate_work(const DemoRole& role) {
  if (role.sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(role.sleep_ms));
}

torch::Tensor rank_column(int64_t rows, int rank) { return torch::full({rows}, rank, torch::kInt64); }

// Ports: `x` in, `out` out, or any input port with `any_in` (the methods
// that echo their input for the dispatch tests).
core::CallPorts x_to(const std::string& out) {
  return core::call_ports({core::required_port("x", "[B] numbers")}, {core::out_port(out, "[B]")});
}
core::CallPorts echo(std::vector<std::string> added) {
  std::vector<core::PortSpec> out;
  for (auto& name : added) out.push_back(core::out_port(name, "[B] the answering rank's coordinate"));
  core::CallPorts ports = core::call_ports({}, std::move(out));
  ports.any_in = true;
  return ports;
}

}  // namespace

void register_demo_roles(RoleRegistry& registry) {
  RoleSpec spec;
  spec.name = "demo";
  spec.description = "deterministic test/demo methods covering every dispatch mode";
  spec.create = [](const nlohmann::json& config, WorkerEnv& env) {
    auto role = std::make_unique<DemoRole>();
    const auto demo =
        core::config::parse_model_options("demo", config, "models." + env.model + ".config").demo;
    role->sleep_ms = demo.sleep_ms;
    role->factor = demo.factor;
    role->fail_from_step = demo.fail_from_step;
    return role;
  };
  using D = DemoRole;
  spec.methods = {
      keeping_rows(method<D>("square", DispatchMode::split_dp, x_to("x_sq"),
                             [](D& r, const Batch& in, CallContext&) {
                               simulate_work(r);
                               auto x = in.tensor("x");
                               Batch out;
                               out.set_tensor("x_sq", x * x * r.factor);
                               return out;
                             })),
      method<D>("negate", DispatchMode::split_dp, x_to("x_neg"),
                [](D& r, const Batch& in, CallContext&) {
                  simulate_work(r);
                  Batch out;
                  out.set_tensor("x_neg", -in.tensor("x") * r.factor);
                  return out;
                }),
      method<D>("tag_rank", DispatchMode::split_dp, echo({"rank"}),
                [](D&, const Batch& in, CallContext& ctx) {
                  Batch out = in;
                  out.set_tensor("rank", rank_column(in.rows(), ctx.env.rank));
                  return out;
                }),
      method<D>("mesh_coords", DispatchMode::split_dp_mesh, echo({"rank", "dp", "tp", "pp"}),
                [](D&, const Batch& in, CallContext& ctx) {
                  Batch out = in;
                  const auto& m = ctx.env.mesh;
                  out.set_tensor("rank", rank_column(in.rows(), ctx.env.rank));
                  out.set_tensor("dp", rank_column(in.rows(), m.dp_index(ctx.env.rank)));
                  out.set_tensor("tp", rank_column(in.rows(), m.tp_index(ctx.env.rank)));
                  out.set_tensor("pp", rank_column(in.rows(), m.pp_index(ctx.env.rank)));
                  return out;
                }),
      method<D>("generation_coords", DispatchMode::split_generation_mesh, echo({"rank", "dp", "tp"}),
                [](D&, const Batch& in, CallContext& ctx) {
                  Batch out = in;
                  const auto& m = ctx.env.generation();
                  out.set_tensor("rank", rank_column(in.rows(), ctx.env.rank));
                  out.set_tensor("dp", rank_column(in.rows(), m.dp_index(ctx.env.rank)));
                  out.set_tensor("tp", rank_column(in.rows(), m.tp_index(ctx.env.rank)));
                  return out;
                }),
      method<D>("first_rank", DispatchMode::rank0, echo({"rank"}),
                [](D&, const Batch&, CallContext& ctx) {
                  Batch out;
                  out.set_tensor("rank", rank_column(1, ctx.env.rank));
                  return out;
                }),
      method<D>("everyone", DispatchMode::broadcast, echo({"rank", "rows_seen"}),
                [](D&, const Batch& in, CallContext& ctx) {
                  Batch out;
                  out.set_tensor("rank", rank_column(1, ctx.env.rank));
                  out.set_tensor("rows_seen", rank_column(1, static_cast<int>(in.rows())));
                  return out;
                }),
      method<D>("per_rank_echo", DispatchMode::all_to_all, echo({"rank"}),
                [](D&, const Batch& in, CallContext& ctx) {
                  Batch out = in;
                  out.set_tensor("rank", rank_column(in.rows(), ctx.env.rank));
                  return out;
                }),
      method<D>("global_sum", DispatchMode::split_dp, x_to("total"),
                [](D&, const Batch& in, CallContext& ctx) {
                  // Each rank sums its chunk; c10d all-reduce gives every rank the total.
                  auto total = in.tensor("x").to(torch::kFloat64).sum().reshape({1});
                  ctx.env.spmd().all_reduce_sum(total);
                  Batch out;
                  out.set_tensor("total", total.expand({in.rows()}).contiguous());
                  return out;
                }),
      method<D>("expand", DispatchMode::split_dp, x_to("x"),
                [](D&, const Batch& in, CallContext&) { return in.select({"x"}).repeat(2, true); }),
      method<D>("fail", DispatchMode::broadcast, echo({}),
                [](D& r, const Batch& in, CallContext& ctx) -> Batch {
                  if (ctx.context.value("step", int64_t{1}) < r.fail_from_step) return in.select({});
                  throw std::runtime_error(ctx.args.value("message", std::string("demo failure requested")));
                }),
      method<D>("crash", DispatchMode::rank0, echo({}),
                [](D&, const Batch&, CallContext&) -> Batch {
                  std::abort();  // a worker dying in native code, as a segfault would
                }),
      method<D>("sleep", DispatchMode::broadcast, echo({}),
                [](D&, const Batch& in, CallContext& ctx) {
                  std::this_thread::sleep_for(std::chrono::milliseconds(ctx.args.value("ms", 1000)));
                  return in;
                }),
  };
  registry.add(std::move(spec));
}

}  // namespace rlwb::workers
