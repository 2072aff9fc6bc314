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

// Column names: a graph node's in/out lists (sent in the call context) win
// over the method's defaults, so one method serves any column names.
std::string in_column(const CallContext& ctx, const char* fallback) {
  const auto& in = ctx.context.value("in", nlohmann::json::array());
  return in.empty() ? fallback : in[0].get<std::string>();
}
std::string out_column(const CallContext& ctx, const char* fallback) {
  const auto& out = ctx.context.value("out", nlohmann::json::array());
  return out.empty() ? fallback : out[0].get<std::string>();
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
      method<D>("square", DispatchMode::split_dp,
                [](D& r, const Batch& in, CallContext& ctx) {
                  simulate_work(r);
                  auto x = in.tensor(in_column(ctx, "x"));
                  Batch out;
                  out.set_tensor(out_column(ctx, "x_sq"), x * x * r.factor);
                  return out;
                }),
      method<D>("negate", DispatchMode::split_dp,
                [](D& r, const Batch& in, CallContext& ctx) {
                  simulate_work(r);
                  Batch out;
                  out.set_tensor(out_column(ctx, "x_neg"), -in.tensor(in_column(ctx, "x")) * r.factor);
                  return out;
                }),
      method<D>("tag_rank", DispatchMode::split_dp,
                [](D&, const Batch& in, CallContext& ctx) {
                  Batch out = in;
                  out.set_tensor("rank", rank_column(in.rows(), ctx.env.rank));
                  return out;
                }),
      method<D>("mesh_coords", DispatchMode::split_dp_mesh,
                [](D&, const Batch& in, CallContext& ctx) {
                  Batch out = in;
                  const auto& m = ctx.env.mesh;
                  out.set_tensor("rank", rank_column(in.rows(), ctx.env.rank));
                  out.set_tensor("dp", rank_column(in.rows(), m.dp_index(ctx.env.rank)));
                  out.set_tensor("tp", rank_column(in.rows(), m.tp_index(ctx.env.rank)));
                  out.set_tensor("pp", rank_column(in.rows(), m.pp_index(ctx.env.rank)));
                  return out;
                }),
      method<D>("first_rank", DispatchMode::rank0,
                [](D&, const Batch&, CallContext& ctx) {
                  Batch out;
                  out.set_tensor("rank", rank_column(1, ctx.env.rank));
                  return out;
                }),
      method<D>("everyone", DispatchMode::broadcast,
                [](D&, const Batch& in, CallContext& ctx) {
                  Batch out;
                  out.set_tensor("rank", rank_column(1, ctx.env.rank));
                  out.set_tensor("rows_seen", rank_column(1, static_cast<int>(in.rows())));
                  return out;
                }),
      method<D>("per_rank_echo", DispatchMode::all_to_all,
                [](D&, const Batch& in, CallContext& ctx) {
                  Batch out = in;
                  out.set_tensor("rank", rank_column(in.rows(), ctx.env.rank));
                  return out;
                }),
      method<D>("global_sum", DispatchMode::split_dp,
                [](D&, const Batch& in, CallContext& ctx) {
                  // Each rank sums its chunk; c10d all-reduce gives every rank the total.
                  auto total = in.tensor(in_column(ctx, "x")).to(torch::kFloat64).sum().reshape({1});
                  ctx.env.spmd().all_reduce_sum(total);
                  Batch out;
                  out.set_tensor(out_column(ctx, "total"), total.expand({in.rows()}).contiguous());
                  return out;
                }),
      method<D>("expand", DispatchMode::split_dp,
                [](D&, const Batch& in, CallContext&) { return in.select({"x"}).repeat(2, true); }),
      method<D>("fail", DispatchMode::broadcast,
                [](D& r, const Batch& in, CallContext& ctx) -> Batch {
                  if (ctx.context.value("step", int64_t{1}) < r.fail_from_step) return in.select({});
                  throw std::runtime_error(ctx.args.value("message", std::string("demo failure requested")));
                }),
      method<D>("crash", DispatchMode::rank0,
                [](D&, const Batch&, CallContext&) -> Batch {
                  std::abort();  // a worker dying in native code, as a segfault would
                }),
      method<D>("sleep", DispatchMode::broadcast,
                [](D&, const Batch& in, CallContext& ctx) {
                  std::this_thread::sleep_for(std::chrono::milliseconds(ctx.args.value("ms", 1000)));
                  return in;
                }),
  };
  registry.add(std::move(spec));
}

}  // namespace rlwb::workers
