#include "workers/worker_server.h"

#include "core/rpc/protocol.h"

#include <unistd.h>

#include <chrono>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
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

bool recv_frames(zmq::socket_t& socket, Frames& frames) {
  zmq::message_t part;
  if (!socket.recv(part, zmq::recv_flags::dontwait)) return false;
  frames.push_back(std::move(part));
  while (frames.back().more()) {
    zmq::message_t next;
    if (!socket.recv(next, zmq::recv_flags::none)) break;
    frames.push_back(std::move(next));
  }
  return true;
}

class Worker {
 public:
  Worker(const WorkerOptions& options, const RoleRegistry& registry) : options_(options), registry_(registry) {
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
    dealer_.connect(options_.controller);
    to_io_.set(zmq::sockopt::linger, 0);
    from_executor_.set(zmq::sockopt::linger, 0);
    std::string inproc = "inproc://replies";
    from_executor_.bind(inproc);
    to_io_.connect(inproc);

    Json hello = {{"kind", core::wire_kind::kRegister},
                  {"group", options_.group},
                  {"rank", options_.rank},
                  {"world", options_.world},
                  {"host", env_.host},
                  {"pid", env_.pid},
                  {"devices", Json::array({options_.device})},
                  {"roles", registry_.describe()}};
    send_control(hello);

    std::thread executor([this] { execute_loop(); });
    int code = io_loop();
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (busy_) {
      // A method is still running and cannot be interrupted safely: leave now.
      std::fflush(nullptr);
      _exit(code);
    }
    executor.join();
    return code;
  }

 private:
  void send_control(const Json& header) {
    Frames frames;
    core::encode_message(header, core::Batch{}, frames);
    send_frames(dealer_, frames);
  }

  int io_loop() {
    auto last_beat = Clock::now();
    auto last_heard = Clock::now();
    std::vector<zmq::pollitem_t> items = {{dealer_.handle(), 0, ZMQ_POLLIN, 0},
                                          {from_executor_.handle(), 0, ZMQ_POLLIN, 0}};
    while (true) {
      zmq::poll(items, std::chrono::milliseconds(50));
      Frames in;
      while (recv_frames(dealer_, in)) {
        last_heard = Clock::now();
        std::string kind;
        try {
          kind = Json::parse(in[0].to_string_view()).value("kind", "");
        } catch (...) {
          kind = "";  // unreadable header: the executor answers with an error
        }
        if (kind == core::wire_kind::kShutdown) return 0;
        if (kind != core::wire_kind::kHeartbeat && kind != core::wire_kind::kWelcome) {
          {
            std::lock_guard<std::mutex> lock(mu_);
            calls_.push_back(std::move(in));
          }
          cv_.notify_one();
        }
        in.clear();
      }
      Frames reply;
      while (recv_frames(from_executor_, reply)) {
        send_frames(dealer_, reply);
        reply.clear();
      }
      auto now = Clock::now();
      if (now - last_beat >= options_.heartbeat_interval) {
        last_beat = now;
        send_control(Json{{"kind", core::wire_kind::kHeartbeat}});
      }
      if (now - last_heard > options_.controller_timeout) {
        std::cerr << "rlwb-worker " << options_.group << "/" << options_.rank
                  << ": controller silent for " << options_.controller_timeout.count() / 1000.0
                  << " s; exiting\n";
        return 3;
      }
    }
  }

  void execute_loop() {
    while (true) {
      Frames call;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || !calls_.empty(); });
        if (stopping_) return;
        call = std::move(calls_.front());
        calls_.pop_front();
        busy_ = true;
      }
      Frames reply = execute(call);
      send_frames(to_io_, reply);
      busy_ = false;
    }
  }

  Frames error_reply(uint64_t id, const std::string& model, const std::string& method, const std::string& message) {
    core::RemoteErrorInfo info{options_.group, env_.host, model, method, message, options_.rank, env_.pid};
    Frames frames;
    core::encode_message(Json{{"kind", core::wire_kind::kReply}, {"id", id}, {"status", "error"},
                              {"error", info.to_json()}},
                         core::Batch{}, frames);
    return frames;
  }

  Frames execute(Frames& frames) {
    uint64_t id = 0;
    std::string model, method;
    core::Message msg;
    try {
      // Read the id first so even a message whose body is broken gets its reply.
      auto header = Json::parse(frames.at(0).to_string_view());
      id = header.value("id", uint64_t{0});
      model = header.value("model", "");
      method = header.value("method", "");
      msg = core::decode_message(frames, 0);
      if (msg.header.value("kind", "") != core::wire_kind::kCall)
        throw core::WireError("unexpected message kind '" + msg.header.value("kind", "") + "'");
    } catch (const std::exception& e) {
      return error_reply(id, model, method, std::string("malformed request: ") + e.what());
    }
    try {
      core::Batch out = dispatch(model, method, msg);
      Frames reply;
      core::encode_message(Json{{"kind", core::wire_kind::kReply}, {"id", id}, {"status", "ok"}}, out, reply,
                           options_.wire);
      return reply;
    } catch (const std::exception& e) {
      return error_reply(id, model, method, e.what());
    }
  }

  core::Batch dispatch(const std::string& model, const std::string& method, core::Message& msg) {
    const Json args = msg.header.value("args", Json::object());
    const Json context = msg.header.value("context", Json::object());
    if (method == core::kPingMethod) return std::move(msg.batch);
    if (method == core::kInitModelMethod) {
      std::string role = args.value("role", "");
      const RoleSpec* spec = registry_.find(role);
      if (!spec) throw std::runtime_error("unknown role '" + role + "'");
      WorkerEnv env = env_;
      env.model = model;
      auto mesh = args.value("mesh", Json::object());
      env.mesh = core::Mesh{mesh.value("dp", 1), mesh.value("pp", 1), mesh.value("tp", 1)};
      model_envs_[model] = env;
      models_[model] = {role, spec->create(args.value("config", Json::object()), model_envs_[model])};
      return {};
    }
    auto it = models_.find(model);
    if (it == models_.end())
      throw std::runtime_error("model '" + model + "' is not initialised on this worker");
    const MethodSpec* spec = registry_.find_method(it->second.role, method);
    if (!spec) throw std::runtime_error("role '" + it->second.role + "' has no method '" + method + "'");
    CallContext ctx{args, context, model_envs_[model]};
    auto start = std::chrono::steady_clock::now();
    core::Batch out = spec->fn(*it->second.instance, msg.batch, ctx);
    // The method's own time, so the controller can tell compute from
    // orchestration (bench_orchestration, timing_s vs compute_s).
    if (!out.meta().is_object()) out.meta() = Json::object();
    out.meta()["compute_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  }

  struct Hosted {
    std::string role;
    std::unique_ptr<Role> instance;
  };

  const WorkerOptions& options_;
  const RoleRegistry& registry_;
  WorkerEnv env_;
  std::unique_ptr<SpmdGroup> spmd_;
  std::map<std::string, Hosted> models_;
  std::map<std::string, WorkerEnv> model_envs_;

  zmq::context_t context_{1};
  zmq::socket_t dealer_{context_, zmq::socket_type::dealer};
  zmq::socket_t to_io_{context_, zmq::socket_type::pair};
  zmq::socket_t from_executor_{context_, zmq::socket_type::pair};

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Frames> calls_;
  bool stopping_ = false;
  std::atomic<bool> busy_{false};
};

}  // namespace

int run_worker(const WorkerOptions& options, const RoleRegistry& registry) {
  Worker worker(options, registry);
  return worker.run();
}

}  // namespace rlwb::workers
