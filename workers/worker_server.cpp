#include "workers/worker_server.h"

#include "core/rpc/protocol.h"
#include "core/wire/host_identity.h"
#include "workers/profiler/kineto_session.h"
#include "workers/profiler/op_profiler.h"

#include <unistd.h>

#include <chrono>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace rlwb::workers {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;
using Frames = std::vector<zmq::message_t>;

std::string host_name() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

void send_frames(zmq::socket_t& socket, Frames& frames) {
  for (size_t i = 0; i < frames.size(); ++i)
    socket.send(frames[i], i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
}

// One message; `first` says whether to wait (up to the socket's receive
// timeout) for its first frame.
bool recv_frames(zmq::socket_t& socket, Frames& frames, zmq::recv_flags first = zmq::recv_flags::dontwait) {
  zmq::message_t part;
  if (!socket.recv(part, first)) return false;
  frames.push_back(std::move(part));
  while (frames.back().more()) {
    zmq::message_t next;
    if (!socket.recv(next, zmq::recv_flags::none)) break;
    frames.push_back(std::move(next));
  }
  return true;
}

// A message from the controller, decoded once where it was received.
struct Incoming {
  std::string kind;
  uint64_t id = 0;
  std::string model, method;
  core::Message message;
  std::string error;  // non-empty when the message could not be read
};

Incoming read_incoming(Frames& frames) {
  Incoming in;
  try {
    in.message = core::decode_message(frames, 0);
    const Json& h = in.message.header;
    in.kind = h.value("kind", "");
    in.id = h.value("id", uint64_t{0});
    in.model = h.value("model", "");
    in.method = h.value("method", "");
  } catch (const std::exception& e) {
    in.kind = core::wire_kind::kCall;  // answered with an error, by id when the header says it
    in.error = std::string("malformed request: ") + e.what();
    try {
      auto header = Json::parse(frames.at(0).to_string_view());
      in.id = header.value("id", uint64_t{0});
      in.model = header.value("model", "");
      in.method = header.value("method", "");
    } catch (...) {
    }
  }
  return in;
}

class Worker {
 public:
  Worker(const WorkerOptions& options, const RoleRegistry& registry)
      : options_(options), registry_(registry) {
    env_.group = options.group;
    env_.rank = options.rank;
    env_.world = options.world;
    env_.host = host_name();
    env_.pid = getpid();
    env_.device = options.device;
    env_.spmd = [this]() -> SpmdGroup& {
      if (!spmd_) {
        SpmdOptions o = options_.spmd;
        o.rank = options_.rank;
        o.world = options_.world;
        spmd_ = std::make_unique<SpmdGroup>(o);
      }
      return *spmd_;
    };
  }

  int run() {
    dealer_.set(zmq::sockopt::routing_id, core::worker_id(options_.group, options_.rank));
    dealer_.set(zmq::sockopt::linger, 1000);
    dealer_.set(zmq::sockopt::rcvtimeo, 50);  // serve() looks at heartbeats at least this often
    dealer_.connect(options_.controller);
    Json hello = {{"kind", core::wire_kind::kRegister},
                  {"group", options_.group},
                  {"rank", options_.rank},
                  {"world", options_.world},
                  {"host", env_.host},
                  {"host_id", core::host_identity()},
                  {"pid", env_.pid},
                  {"devices", Json::array({options_.device})},
                  {"roles", registry_.describe()}};
    send_control(hello);
    last_beat_ = last_heard_ = Clock::now();

    std::thread guard([this] { guard_loop(); });
    int code = serve();
    {
      std::lock_guard<std::mutex> lock(guard_mu_);
      stopping_ = true;
    }
    guard_cv_.notify_all();
    guard.join();
    return code;
  }

 private:
  void send_control(const Json& header) {
    Frames frames;
    core::encode_message(header, core::Batch{}, frames);
    send_frames(dealer_, frames);
  }

  // Receives what the socket holds. Caller owns the socket. Calls are
  // queued; returns false when the controller said shutdown.
  bool receive_pending() {
    Frames frames;
    while (recv_frames(dealer_, frames)) {
      if (!take(frames)) return false;
      frames.clear();
    }
    return true;
  }

  // Queues a received call; false when it is the controller's shutdown.
  bool take(Frames& frames) {
    last_heard_ = Clock::now();
    Incoming in = read_incoming(frames);
    if (in.kind == core::wire_kind::kShutdown) return false;
    // The controller on another host cannot map our /dev/shm: reply inline.
    if (in.kind == core::wire_kind::kWelcome)
      controller_shares_host_ = in.message.header.value("host_id", "") == core::host_identity();
    if (in.kind != core::wire_kind::kHeartbeat && in.kind != core::wire_kind::kWelcome)
      calls_.push_back(std::move(in));
    return true;
  }

  // Sends a heartbeat when one is due. False when the controller has been
  // silent too long. Caller owns the socket.
  bool keep_alive() {
    auto now = Clock::now();
    if (now - last_beat_ >= options_.heartbeat_interval) {
      last_beat_ = now;
      send_control(Json{{"kind", core::wire_kind::kHeartbeat}});
    }
    if (now - last_heard_ > options_.controller_timeout) {
      std::cerr << "rlwb-worker " << options_.group << "/" << options_.rank << ": controller silent for "
                << options_.controller_timeout.count() / 1000.0 << " s; exiting\n";
      return false;
    }
    return true;
  }

  // The main thread owns the socket and runs every call itself, in arrival
  // order (SPMD ranks must run collectives in the same order). No hand-off
  // between threads on the way: that is most of an empty call's cost.
  int serve() {
    std::unique_lock<std::mutex> socket_lock(socket_mu_);
    while (true) {
      if (!calls_.empty()) {
        Incoming call = std::move(calls_.front());
        calls_.pop_front();
        executing_ = true;
        socket_lock.unlock();  // the guard thread keeps the socket alive meanwhile
        Frames reply = execute(call);
        socket_lock.lock();
        executing_ = false;
        send_frames(dealer_, reply);
        continue;
      }
      // A blocking receive (bounded by the socket's receive timeout) wakes
      // as directly as ZeroMQ allows; one message at a time keeps the order.
      Frames frames;
      if (recv_frames(dealer_, frames, zmq::recv_flags::none) && !take(frames)) return 0;
      if (!keep_alive()) return 3;
    }
  }

  // While a method runs, this thread takes the socket over: heartbeats go
  // on, calls that arrive are queued, and a shutdown or a silent controller
  // ends the process at once (a running method cannot be interrupted safely).
  void guard_loop() {
    auto period = std::max(options_.heartbeat_interval / 2, std::chrono::milliseconds(10));
    while (true) {
      {
        std::unique_lock<std::mutex> lock(guard_mu_);
        if (guard_cv_.wait_for(lock, period, [this] { return stopping_; })) return;
      }
      if (!executing_) continue;
      std::unique_lock<std::mutex> socket_lock(socket_mu_, std::try_to_lock);
      if (!socket_lock.owns_lock() || !executing_) continue;
      int exit_code = !receive_pending() ? 0 : !keep_alive() ? 3 : -1;
      if (exit_code >= 0) {
        std::fflush(nullptr);
        _exit(exit_code);
      }
    }
  }

  Frames error_reply(uint64_t id, const std::string& model, const std::string& method,
                     const std::string& message) {
    core::RemoteErrorInfo info{options_.group, env_.host, model, method, message, options_.rank, env_.pid};
    Frames frames;
    core::encode_message(
        Json{{"kind", core::wire_kind::kReply}, {"id", id}, {"status", "error"}, {"error", info.to_json()}},
        core::Batch{}, frames);
    return frames;
  }

  Frames execute(Incoming& call) {
    if (!call.error.empty()) return error_reply(call.id, call.model, call.method, call.error);
    if (call.kind != core::wire_kind::kCall)
      return error_reply(call.id, call.model, call.method,
                         "malformed request: unexpected message kind '" + call.kind + "'");
    try {
      core::Batch out = dispatch(call.model, call.method, call.message);
      Frames reply;
      core::WireOptions wire = options_.wire;
      if (!controller_shares_host_) wire.shm_threshold_bytes = 0;
      core::encode_message(Json{{"kind", core::wire_kind::kReply}, {"id", call.id}, {"status", "ok"}}, out,
                           reply, wire);
      return reply;
    } catch (const std::exception& e) {
      return error_reply(call.id, call.model, call.method, e.what());
    }
  }

  core::Batch dispatch(const std::string& model, const std::string& method, core::Message& msg) {
    if (method == core::kPingMethod) return std::move(msg.batch);  // liveness and RPC benchmarks: no copies
    const Json args = msg.header.value("args", Json::object());
    Json context = msg.header.value("context", Json::object());
    if (!context.is_object()) context = Json::object();  // a caller that passed {} sends null
    if (method == core::kProfileMethod) return profile_command(args);
    if (method == core::kInitModelMethod) {
      std::string role = args.value("role", "");
      const RoleSpec* spec = registry_.find(role);
      if (!spec) throw std::runtime_error("unknown role '" + role + "'");
      WorkerEnv env = env_;
      env.model = model;
      auto mesh = args.value("mesh", Json::object());
      env.mesh = core::Mesh{mesh.value("dp", 1), mesh.value("pp", 1), mesh.value("tp", 1)};
      auto generation = args.value("generation_mesh", Json::object());
      if (!generation.empty())
        env.generation_mesh =
            core::Mesh{generation.value("dp", 1), generation.value("pp", 1), generation.value("tp", 1),
                       generation.value("pp_fold", 1), generation.value("tp_fold", 1)};
      model_envs_[model] = env;
      models_[model] = {role, spec->create(args.value("config", Json::object()), model_envs_[model])};
      return {};
    }
    auto it = models_.find(model);
    if (it == models_.end())
      throw std::runtime_error("model '" + model + "' is not initialised on this worker");
    const MethodSpec* spec = registry_.find_method(it->second.role, method);
    if (!spec) throw std::runtime_error("role '" + it->second.role + "' has no method '" + method + "'");
    const std::optional<std::string> keep_as = take_kept_inputs(msg.batch, method);
    CallContext ctx{args, context, model_envs_[model]};
    auto start = std::chrono::steady_clock::now();
    std::optional<profiler::OpProfiler::CallScope> profiled;
    std::optional<profiler::ContextUserScope> for_kineto;
    if (context.value("profile", false)) {
      const std::string node = context.value("node", method);
      if (profiler::OpProfiler::instance().configured())
        profiled.emplace(profiler::OpProfiler::instance(), node, method);
      else
        for_kineto.emplace(node, method);
    }
    core::Batch out = spec->fn(*it->second.instance, msg.batch, ctx);
    profiled.reset();
    for_kineto.reset();
    if (keep_as) kept_ = KeptOutputs{*keep_as, model + "." + method, out, msg.batch.rows()};
    // The method's own time, so the controller can tell compute from
    // orchestration (bench_orchestration, timing_s vs compute_s).
    if (!out.meta().is_object()) out.meta() = Json::object();
    out.meta()["compute_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  }

  // The chaining keys of a call's meta (core/rpc/protocol.h), taken out
  // before the method sees it. A call behind another gets that call's kept
  // outputs as its input ports; a call marked to keep its outputs returns
  // the token to keep them under. A call that is neither drops what was
  // kept: the calls that could use it have run.
  std::optional<std::string> take_kept_inputs(core::Batch& input, const std::string& method) {
    Json& meta = input.meta();
    std::optional<std::string> keep_as;
    std::optional<Json> inputs_kept;
    if (meta.is_object()) {
      if (auto k = meta.find(core::kKeepOutputsKey); k != meta.end()) keep_as = k->get<std::string>();
      if (auto k = meta.find(core::kInputsKeptKey); k != meta.end()) inputs_kept = *k;
      meta.erase(core::kKeepOutputsKey);
      meta.erase(core::kInputsKeptKey);
    }
    if (!inputs_kept) {
      kept_.reset();
      return keep_as;
    }
    const std::string token = inputs_kept->value("token", "");
    if (!kept_ || kept_->token != token)
      throw std::runtime_error(method + ": its inputs were to come from the call before it on this worker (" +
                               token + "), which did not finish here");
    if (kept_->outputs.rows() != kept_->input_rows)
      throw std::runtime_error(method + ": its inputs were to come from " + kept_->call +
                               ", which returned " + std::to_string(kept_->outputs.rows()) + " rows for " +
                               std::to_string(kept_->input_rows) +
                               " although it declares one row per input row (keeping_rows)");
    const Json columns = inputs_kept->value("columns", Json::object());  // named: the loop reads it
    for (auto& [port, from] : columns.items())
      input.share_column(kept_->outputs, from.get<std::string>(), port);
    return keep_as;
  }

  // kProfileMethod: configure the profiler, or hand over what it recorded;
  // or start and stop torch's own profiler (profile.engine=kineto).
  core::Batch profile_command(const Json& args) {
    auto& p = profiler::OpProfiler::instance();
    const std::string action = args.value("action", "");
    core::Batch out;
    if (action == "kineto_start") {
      kineto_.start();
    } else if (action == "kineto_stop") {
      out.meta()["trace_bytes"] = kineto_.stop(args.at("path").get<std::string>());
    } else if (action == "configure") {
      auto settings = profiler::ProfilerSettings::from_json(args.value("options", Json::object()));
      settings.device = options_.device;  // CUDA workers collect kernels too
      p.configure(settings);
    } else if (action == "collect") {
      if (!p.configured()) throw std::runtime_error("the profiler was not configured on this worker");
      out.meta()["profile"] = p.collect();
    } else {
      throw std::runtime_error("__profile__: unknown action '" + action +
                               "' (configure, collect, kineto_start or kineto_stop)");
    }
    return out;
  }

  struct Hosted {
    std::string role;
    std::unique_ptr<Role> instance;
  };
  // The last call's outputs, kept for the calls sent right behind it
  // (WorkerGroup::call_after): shared with the reply, no copy.
  struct KeptOutputs {
    std::string token, call;  // call: "model.method", for errors
    core::Batch outputs;
    int64_t input_rows = 0;
  };

  const WorkerOptions& options_;
  // Set from the welcome (false until then: inline is always readable).
  std::atomic<bool> controller_shares_host_{false};
  const RoleRegistry& registry_;
  WorkerEnv env_;
  std::unique_ptr<SpmdGroup> spmd_;
  profiler::KinetoSession kineto_;
  std::map<std::string, Hosted> models_;
  std::optional<KeptOutputs> kept_;
  std::map<std::string, WorkerEnv> model_envs_;

  zmq::context_t context_{1};
  zmq::socket_t dealer_{context_, zmq::socket_type::dealer};

  // Whoever holds socket_mu_ owns dealer_, calls_, last_beat_, last_heard_.
  std::mutex socket_mu_;
  std::deque<Incoming> calls_;
  Clock::time_point last_beat_, last_heard_;
  std::atomic<bool> executing_{false};

  std::mutex guard_mu_;
  std::condition_variable guard_cv_;
  bool stopping_ = false;
};

}  // namespace

int run_worker(const WorkerOptions& options, const RoleRegistry& registry) {
  Worker worker(options, registry);
  return worker.run();
}

}  // namespace rlwb::workers
