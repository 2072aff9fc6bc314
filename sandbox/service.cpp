#include "sandbox/service.h"

#include <signal.h>

#include <condition_variable>
#include <deque>
#include <fstream>
#include <mutex>
#include <ostream>
#include <thread>
#include <variant>
#include <zmq.hpp>

#include "sandbox/program_runner.h"
#include "sandbox/protocol.h"
#include "sandbox/sandbox_error.h"

namespace rlwb::sandbox {
namespace {

constexpr const char* kResultsEndpoint = "inproc://rlwb-sandbox-results";

int64_t self_rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  return 0;
}

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

struct Task {
  std::string identity;
  nlohmann::json id;
  std::variant<RunRequest, JudgeRequest> request;
  uint64_t bytes = 0;
};

}  // namespace

nlohmann::json ServiceStats::to_json() const {
  return {{"received", received},   {"answered", answered},
          {"rejected", rejected},   {"dropped_replies", dropped_replies},
          {"queued", queued},       {"running", running},
          {"executors", executors}, {"rss_kb", rss_kb}};
}

struct SandboxService::Impl {
  ServiceOptions opt;
  std::unique_ptr<ExecutorPool> pool;  // first: forks happen before ZeroMQ starts threads
  zmq::context_t ctx{1};
  zmq::socket_t router{ctx, zmq::socket_type::router};
  zmq::socket_t results{ctx, zmq::socket_type::pull};
  std::string endpoint;

  std::mutex mu;
  std::condition_variable cv;
  std::deque<Task> queue;
  uint64_t queued_bytes = 0;
  bool stopping = false;
  std::vector<std::thread> workers;

  std::atomic<uint64_t> received{0}, answered{0}, rejected{0}, dropped{0};
  std::atomic<size_t> running{0};
  std::deque<std::vector<zmq::message_t>> pending;  // replies the client's pipe could not take yet
  uint64_t pending_bytes = 0;

  explicit Impl(ServiceOptions o) : opt(std::move(o)), pool(std::make_unique<ExecutorPool>(opt.pool)) {
    router.set(zmq::sockopt::router_mandatory, 1);
    router.set(zmq::sockopt::linger, 0);
    router.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(opt.max_request_bytes + 4096));
    try {
      router.bind(opt.endpoint);
    } catch (const zmq::error_t& e) {
      throw SandboxError("rlwb-sandbox: cannot bind " + opt.endpoint + ": " + e.what());
    }
    endpoint = router.get(zmq::sockopt::last_endpoint);
    results.bind(kResultsEndpoint);
    for (int i = 0; i < pool->size(); ++i) workers.emplace_back([this] { work(); });
  }

  ~Impl() { stop_workers(); }

  void stop_workers() {
    {
      std::lock_guard lock(mu);
      stopping = true;
    }
    cv.notify_all();
    for (auto& t : workers) t.join();
    workers.clear();
  }

  // ---- worker threads ----
  void work() {
    zmq::socket_t push(ctx, zmq::socket_type::push);
    push.set(zmq::sockopt::sndhwm, 0);
    push.set(zmq::sockopt::linger, 1000);
    push.connect(kResultsEndpoint);
    auto lease = pool->acquire(std::chrono::seconds(60));
    if (!lease) return;
    Executor* executor = lease.get();
    ExecFn exec = [executor](const ExecJob& j) { return executor->exec(j); };
    for (;;) {
      // Take work only once this executor's next sandbox is prepared, so that
      // requests go to executors that can start them at once.
      while (!executor->wait_ready(std::chrono::milliseconds(100))) {
        std::lock_guard lock(mu);
        if (stopping) return;
      }
      Task task;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return stopping || !queue.empty(); });
        if (stopping) return;
        task = std::move(queue.front());
        queue.pop_front();
        queued_bytes -= task.bytes;
      }
      ++running;
      std::vector<std::string> frames;
      nlohmann::json reply = {{"id", task.id}, {"ok", true}};
      try {
        if (auto* run = std::get_if<RunRequest>(&task.request)) {
          Verdict v = run_with(exec, *run);
          reply["verdict"] = verdict_to_json(v, false);
          frames = {std::move(v.stdout_data), std::move(v.stderr_data)};
        } else {
          reply["result"] =
              protocol::judge_result_to_json(judge_with(exec, std::get<JudgeRequest>(task.request)));
        }
      } catch (const std::exception& e) {
        reply = {{"id", task.id}, {"ok", false}, {"error", e.what()}};
        frames.clear();
      }
      push.send(zmq::buffer(task.identity), zmq::send_flags::sndmore);
      push.send(zmq::buffer(dump(reply)), frames.empty() ? zmq::send_flags::none : zmq::send_flags::sndmore);
      for (size_t i = 0; i < frames.size(); ++i)
        push.send(zmq::buffer(frames[i]),
                  i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
      --running;
    }
  }

  // ---- I/O thread ----
  void send_reply(std::vector<zmq::message_t> msg) {
    uint64_t size = 0;
    for (auto& m : msg) size += m.size();
    pending_bytes += size;
    pending.push_back(std::move(msg));
    while (pending_bytes > opt.max_pending_reply_bytes && pending.size() > 1) drop_front();
    flush();
  }

  void drop_front() {
    for (auto& m : pending.front()) pending_bytes -= m.size();
    pending.pop_front();
    ++dropped;
  }

  // Sends what the clients' pipes take now; keeps the rest, in order.
  void flush() {
    while (!pending.empty()) {
      auto& msg = pending.front();
      try {
        if (!router.send(msg[0], zmq::send_flags::sndmore | zmq::send_flags::dontwait)) return;  // pipe full
      } catch (const zmq::error_t&) {  // EHOSTUNREACH: the client is gone
        drop_front();
        continue;
      }
      for (size_t i = 1; i < msg.size(); ++i)
        router.send(msg[i], i + 1 < msg.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
      for (auto& m : msg) pending_bytes -= m.size();
      pending.pop_front();
      ++answered;
    }
  }

  void reply_json(const std::string& identity, const nlohmann::json& j) {
    std::vector<zmq::message_t> msg;
    msg.emplace_back(identity.data(), identity.size());
    std::string body = dump(j);
    msg.emplace_back(body.data(), body.size());
    send_reply(std::move(msg));
  }

  void reject(const std::string& identity, const nlohmann::json& id, const std::string& error) {
    ++rejected;
    reply_json(identity, {{"id", id}, {"ok", false}, {"error", error}});
  }

  void handle_request(std::vector<zmq::message_t>& frames) {
    ++received;
    std::string identity = frames[0].to_string();
    if (frames.size() < 2) return reject(identity, nullptr, "empty request: send a JSON object in frame 0");
    nlohmann::json j = nlohmann::json::parse(frames[1].to_string_view(), nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return reject(identity, nullptr,
                    "the request is not a JSON object (see docs/sandbox.md for the protocol)");
    nlohmann::json id = j.contains("id") ? j["id"] : nlohmann::json();
    std::string kind = j.contains("kind") && j["kind"].is_string() ? j["kind"].get<std::string>() : "";
    if (kind == "ping")
      return reply_json(identity, {{"id", id},
                                   {"ok", true},
                                   {"pong", true},
                                   {"executors", pool->size()},
                                   {"namespaces", pool->kernel_support().namespaces},
                                   {"fallbacks", pool->kernel_support().fallbacks}});
    if (kind == "stats")
      return reply_json(identity, {{"id", id}, {"ok", true}, {"stats", stats().to_json()}});
    if (kind != "run" && kind != "judge")
      return reject(identity, id, "unknown request kind '" + kind + "': use run, judge, ping or stats");
    uint64_t bytes = 0;
    for (auto& f : frames) bytes += f.size();
    std::vector<std::string> extra;
    for (size_t i = 2; i < frames.size(); ++i) extra.push_back(frames[i].to_string());
    Task task{identity, id, RunRequest{}, bytes};
    try {
      if (kind == "run") {
        task.request = protocol::run_from_json(j, extra);
        validate(std::get<RunRequest>(task.request));
      } else {
        task.request = protocol::judge_from_json(j, extra);
        validate(std::get<JudgeRequest>(task.request));
      }
    } catch (const std::exception& e) {
      return reject(identity, id, e.what());
    }
    std::unique_lock lock(mu);
    if (queue.size() >= opt.max_queued || queued_bytes + bytes > opt.max_queued_bytes) {
      size_t n = queue.size();
      lock.unlock();
      return reject(identity, id,
                    "service overloaded: " + std::to_string(n) + " requests are waiting; retry later");
    }
    queued_bytes += bytes;
    queue.push_back(std::move(task));
    lock.unlock();
    cv.notify_one();
  }

  static bool recv_multipart(zmq::socket_t& s, std::vector<zmq::message_t>& frames) {
    frames.clear();
    zmq::message_t part;
    if (!s.recv(part, zmq::recv_flags::dontwait)) return false;
    frames.push_back(std::move(part));
    while (frames.back().more()) {
      zmq::message_t next;
      if (!s.recv(next, zmq::recv_flags::none)) break;
      frames.push_back(std::move(next));
    }
    return true;
  }

  void forward_results() {
    std::vector<zmq::message_t> frames;
    while (recv_multipart(results, frames)) send_reply(std::move(frames));
  }

  void serve(const std::atomic<bool>& stop) {
    std::vector<zmq::message_t> frames;
    while (!stop.load()) {
      zmq::pollitem_t items[] = {{router.handle(), 0, ZMQ_POLLIN, 0}, {results.handle(), 0, ZMQ_POLLIN, 0}};
      try {
        zmq::poll(items, 2, std::chrono::milliseconds(pending.empty() ? 100 : 5));
      } catch (const zmq::error_t& e) {
        if (e.num() != EINTR) throw;
        continue;  // a signal: look at `stop`
      }
      if (items[1].revents & ZMQ_POLLIN) forward_results();
      for (int i = 0; i < 256 && recv_multipart(router, frames); ++i)
        if (!frames.empty()) handle_request(frames);
      flush();
    }
    stop_workers();  // each finishes the request it runs
    forward_results();
    std::deque<Task> left;
    {
      std::lock_guard lock(mu);
      left.swap(queue);
      queued_bytes = 0;
    }
    for (auto& t : left) reject(t.identity, t.id, "the sandbox service is shutting down");
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (!pending.empty() && std::chrono::steady_clock::now() < until) {
      flush();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  ServiceStats stats() {
    ServiceStats s;
    s.received = received;
    s.answered = answered;
    s.rejected = rejected;
    s.dropped_replies = dropped;
    {
      std::lock_guard lock(mu);
      s.queued = queue.size();
    }
    s.running = running;
    s.executors = pool->size();
    s.rss_kb = self_rss_kb();
    return s;
  }
};

SandboxService::SandboxService(ServiceOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
SandboxService::~SandboxService() = default;
const std::string& SandboxService::endpoint() const { return impl_->endpoint; }
void SandboxService::serve(const std::atomic<bool>& stop) { impl_->serve(stop); }
ServiceStats SandboxService::stats() const { return impl_->stats(); }
const KernelSupport& SandboxService::kernel_support() const { return impl_->pool->kernel_support(); }

namespace {
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }
}  // namespace

int serve_until_signal(const ServiceOptions& options, std::ostream& log) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  try {
    SandboxService service(options);
    const KernelSupport& k = service.kernel_support();
    log << "rlwb-sandbox: serving on " << service.endpoint() << " with " << service.stats().executors
        << " executors\nrlwb-sandbox: fresh namespaces per execution:";
    for (const auto& n : k.namespaces) log << " " << n;
    log << "; rlimits, no_new_privs, seccomp allowlist\n";
    for (const auto& f : k.fallbacks) log << "rlwb-sandbox: fallback: " << f << "\n";
    log << std::flush;
    service.serve(g_stop);
    log << "rlwb-sandbox: stopped" << std::endl;
    return 0;
  } catch (const std::exception& e) {
    log << "rlwb-sandbox: " << e.what() << std::endl;
    return 1;
  }
}

}  // namespace rlwb::sandbox
