#include "core/rpc/rpc_server.h"

#include "core/wire/host_identity.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace rlwb::core {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

namespace rpc_detail {

// One call's outcome; guarded by Endpoint::mu.
struct ReplyState {
  bool done = false;
  Batch value;
  std::exception_ptr error;
  std::function<void(bool ok)> on_done;  // ReplyFuture::on_ready's hook, run once at completion
};

}  // namespace rpc_detail

namespace {

struct PendingCall {
  std::string worker, model, method;
  std::shared_ptr<rpc_detail::ReplyState> state;
  Clock::time_point deadline;
};

struct WorkerState {
  WorkerInfo info;
  Clock::time_point last_seen;
  // Set when a send to the worker failed: its connection is gone. It is
  // declared dead kExitReportGrace later unless the launcher reports the
  // exit first (see Endpoint::note_disconnect_locked).
  std::optional<Clock::time_point> disconnected_at;
  std::string disconnect_reason;
};

// Longest a thread sleeps on the socket before it looks at deadlines and
// the stop flag again.
constexpr auto kPollSlice = std::chrono::milliseconds(50);
// How long the background thread leaves the socket to a caller that just
// sent a call (see Endpoint::run).
constexpr auto kCallerGrace = std::chrono::milliseconds(2);
// How long a worker whose connection broke waits for the launcher's report
// of its exit (reaped every 20 ms, later on a loaded machine) before the
// disconnect alone declares it dead.
constexpr auto kExitReportGrace = std::chrono::milliseconds(1500);

}  // namespace

namespace rpc_detail {

struct Endpoint {
  RpcOptions options;
  zmq::context_t context{1};
  zmq::socket_t router{context, zmq::socket_type::router};
  std::string address;
  int wake_fd = -1;         // wakes the background thread
  int reader_wake_fd = -1;  // wakes the caller reading the socket (see drain_socket_locked)
  int socket_fd = -1;       // ZMQ_FD: readable when the socket may have input

  // Whoever holds socket_mu may use `router`. Taken before `mu`, never after.
  std::mutex socket_mu;

  mutable std::mutex mu;  // guards everything below
  // Welcomes and heartbeats, queued by whichever thread read or decided them
  // and sent by the background thread (within its poll slice).
  std::deque<std::vector<zmq::message_t>> outbox;
  std::map<uint64_t, PendingCall> pending;
  std::map<std::string, WorkerState> workers;
  std::condition_variable registered_cv;
  std::condition_variable reply_cv;             // a reply arrived, or the reader left
  bool reader_waiting = false;                  // a caller is reading the socket for its reply
  std::thread::id reader;                       // which one
  std::atomic<Clock::rep> last_caller_send{0};  // when a caller last sent (steady clock ticks)
  std::atomic<uint64_t> next_id{1};

  std::atomic<bool> stopping{false};
  std::thread io_thread;

  ~Endpoint() {
    if (wake_fd >= 0) close(wake_fd);
    if (reader_wake_fd >= 0) close(reader_wake_fd);
  }

  static void signal(int fd) {
    uint64_t one = 1;
    [[maybe_unused]] auto n = write(fd, &one, sizeof one);
  }
  void wake() { signal(wake_fd); }

  void complete_locked(PendingCall& call, Batch value, std::exception_ptr error) {
    call.state->done = true;
    call.state->value = std::move(value);
    call.state->error = std::move(error);
    reply_cv.notify_all();
    if (call.state->on_done) std::exchange(call.state->on_done, nullptr)(call.state->error == nullptr);
  }

  // Fails a pending call with an error attributed to its worker. Caller holds mu.
  void fail_locked(uint64_t id, const std::string& message) {
    auto it = pending.find(id);
    if (it == pending.end()) return;
    RemoteErrorInfo info;
    auto w = workers.find(it->second.worker);
    if (w != workers.end()) {
      info.group = w->second.info.group;
      info.rank = w->second.info.rank;
      info.host = w->second.info.host;
      info.pid = w->second.info.pid;
    } else {
      info.group = it->second.worker;
    }
    info.model = it->second.model;
    info.method = it->second.method;
    info.message = message;
    complete_locked(it->second, Batch{}, std::make_exception_ptr(RemoteError(info)));
    pending.erase(it);
  }

  void mark_dead_locked(const std::string& id, const std::string& reason) {
    auto w = workers.find(id);
    if (w != workers.end()) {
      if (!w->second.info.alive) return;
      w->second.info.alive = false;
      w->second.info.death_reason = reason;
    }
    std::vector<uint64_t> ids;
    for (auto& [rid, call] : pending)
      if (call.worker == id) ids.push_back(rid);
    for (auto rid : ids) fail_locked(rid, reason);
  }

  void handle_incoming(std::vector<zmq::message_t>& frames) {
    if (frames.size() < 2) return;  // identity + at least a header
    std::string from = frames[0].to_string();
    Message msg;
    try {
      msg = decode_message(frames, 1);
    } catch (const WireError& e) {
      // A reply we cannot read: fail whatever that worker was doing rather
      // than leave its caller waiting.
      std::lock_guard<std::mutex> lock(mu);
      std::vector<uint64_t> ids;
      for (auto& [rid, call] : pending)
        if (call.worker == from) ids.push_back(rid);
      for (auto rid : ids) fail_locked(rid, std::string("unreadable reply: ") + e.what());
      return;
    }
    const Json& h = msg.header;
    std::string kind = h.value("kind", "");
    std::lock_guard<std::mutex> lock(mu);
    auto now = Clock::now();
    if (kind == wire_kind::kRegister) {
      WorkerState& w = workers[from];
      w.info.id = from;
      w.info.group = h.value("group", "");
      w.info.rank = h.value("rank", 0);
      w.info.world = h.value("world", 1);
      w.info.host = h.value("host", "");
      w.info.host_id = h.value("host_id", "");
      w.info.pid = h.value("pid", 0);
      w.info.roles = h.value("roles", Json::object());
      w.info.devices = h.value("devices", Json::array());
      w.info.alive = true;
      w.info.death_reason.clear();
      w.disconnected_at.reset();
      w.last_seen = now;
      std::vector<zmq::message_t> welcome;
      welcome.emplace_back(from.data(), from.size());
      encode_message(Json{{"kind", wire_kind::kWelcome}, {"host_id", host_identity()}}, Batch{}, welcome);
      outbox.push_back(std::move(welcome));
      registered_cv.notify_all();
      return;
    }
    auto w = workers.find(from);
    if (w != workers.end()) w->second.last_seen = now;
    if (kind != wire_kind::kReply) return;  // heartbeat or unknown: liveness only
    uint64_t id = h.value("id", uint64_t{0});
    auto it = pending.find(id);
    if (it == pending.end()) return;  // late reply of a call already failed
    if (h.value("status", "") == "ok") {
      complete_locked(it->second, std::move(msg.batch), nullptr);
    } else {
      auto info = RemoteErrorInfo::from_json(h.value("error", Json::object()));
      complete_locked(it->second, Batch{}, std::make_exception_ptr(RemoteError(info)));
    }
    pending.erase(it);
  }

  // Reads every message the socket holds. Caller holds socket_mu. Must run
  // after any use of the socket: a send may consume the ZMQ_FD signal of a
  // message that arrived meanwhile, and nobody would wake for it.
  //
  // When a thread other than the waiting reader takes messages off the
  // socket, the reader's poll will not fire for them: its reply may be
  // among them, so it is woken through reader_wake_fd.
  void drain_socket_locked() {
    bool received = false;
    while (router.get(zmq::sockopt::events) & ZMQ_POLLIN) {
      received = true;
      std::vector<zmq::message_t> frames;
      zmq::message_t part;
      if (!router.recv(part, zmq::recv_flags::dontwait)) break;
      frames.push_back(std::move(part));
      while (frames.back().more()) {
        zmq::message_t next;
        if (!router.recv(next, zmq::recv_flags::none)) break;
        frames.push_back(std::move(next));
      }
      handle_incoming(frames);
    }
    if (!received) return;
    std::lock_guard<std::mutex> lock(mu);
    if (reader_waiting && reader != std::this_thread::get_id()) signal(reader_wake_fd);
  }

  // Sends one message. Caller holds socket_mu. False when the peer is gone
  // (ROUTER_MANDATORY); the worker is then marked dead.
  bool send_locked(std::vector<zmq::message_t>& frames) {
    std::string to = frames[0].to_string();
    try {
      for (size_t i = 0; i < frames.size(); ++i)
        router.send(frames[i], i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
      return true;
    } catch (const zmq::error_t& e) {
      std::lock_guard<std::mutex> lock(mu);
      note_disconnect_locked(to, std::string("worker disconnected (is its process gone?): ") + e.what());
      return false;
    }
  }

  // A broken connection usually means the process is gone, but the
  // launcher's exit status ("killed by signal 6") says why, and it comes a
  // moment later. So the worker is declared dead only after
  // kExitReportGrace (check_deadlines), unless report_worker_death comes
  // first. Caller holds mu.
  void note_disconnect_locked(const std::string& id, const std::string& reason) {
    auto w = workers.find(id);
    if (w == workers.end()) {
      mark_dead_locked(id, reason);
      return;
    }
    if (!w->second.info.alive || w->second.disconnected_at) return;
    w->second.disconnected_at = Clock::now();
    w->second.disconnect_reason = reason;
  }

  void flush_outbox_locked() {
    std::deque<std::vector<zmq::message_t>> batch;
    {
      std::lock_guard<std::mutex> lock(mu);
      batch.swap(outbox);
    }
    for (auto& frames : batch) send_locked(frames);
  }

  // Sleeps until the socket may have input, `own_fd` fires, or `timeout`.
  void wait_readable(int own_fd, bool watch_socket, std::chrono::milliseconds timeout) {
    pollfd fds[2] = {{own_fd, POLLIN, 0}, {socket_fd, POLLIN, 0}};
    int n = ::poll(fds, watch_socket ? 2 : 1, static_cast<int>(std::max<int64_t>(0, timeout.count())));
    if (n > 0 && (fds[0].revents & POLLIN)) {
      uint64_t count;
      [[maybe_unused]] auto r = read(own_fd, &count, sizeof count);
    }
  }

  void check_deadlines(Clock::time_point& last_beat) {
    auto now = Clock::now();
    std::lock_guard<std::mutex> lock(mu);
    std::vector<uint64_t> expired;
    for (auto& [id, call] : pending)
      if (now > call.deadline) expired.push_back(id);
    for (auto id : expired) fail_locked(id, "no reply within the call's timeout");
    for (auto& [id, w] : workers) {
      if (!w.info.alive) continue;
      if (w.disconnected_at && now - *w.disconnected_at >= kExitReportGrace) {
        mark_dead_locked(id, w.disconnect_reason);
        continue;
      }
      double silent = seconds_between(w.last_seen, now);
      if (silent * 1000 > options.dead_after.count()) {
        char buf[128];
        snprintf(buf, sizeof buf, "worker stopped responding: no heartbeat for %.1f s", silent);
        mark_dead_locked(id, buf);
      }
    }
    if (now - last_beat >= options.heartbeat_interval) {
      last_beat = now;
      for (auto& [id, w] : workers) {
        if (!w.info.alive || w.disconnected_at) continue;
        std::vector<zmq::message_t> beat;
        beat.emplace_back(id.data(), id.size());
        encode_message(Json{{"kind", wire_kind::kHeartbeat}}, Batch{}, beat);
        outbox.push_back(std::move(beat));
      }
    }
  }

  // The background thread: reads the socket while no caller does, and
  // keeps heartbeats and deadlines going. Right after a caller sent, it
  // leaves the socket alone for kCallerGrace: the caller is about to wait
  // and read the reply itself, and two threads taking turns at the socket
  // cost more than either alone (most of all on a machine with few cores).
  void run() {
    auto last_beat = Clock::now();
    while (!stopping) {
      bool watch_socket;
      std::chrono::milliseconds timeout = kPollSlice;
      {
        std::lock_guard<std::mutex> lock(mu);
        const auto since_send = Clock::now() - Clock::time_point(Clock::duration(last_caller_send.load()));
        const bool caller_coming = !pending.empty() && since_send < kCallerGrace;
        watch_socket = !reader_waiting && !caller_coming;
        if (caller_coming) timeout = kCallerGrace;
      }
      wait_readable(wake_fd, watch_socket, timeout);
      std::lock_guard<std::mutex> socket_lock(socket_mu);
      drain_socket_locked();
      flush_outbox_locked();
      check_deadlines(last_beat);
      flush_outbox_locked();
      drain_socket_locked();
    }
  }

  // Waits for `state` until `deadline`, reading the socket itself when no
  // other caller is, otherwise sleeping until a reply lands. True when done.
  bool wait(const std::shared_ptr<ReplyState>& state, Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu);
    while (!state->done) {
      if (Clock::now() >= deadline) return false;
      if (reader_waiting || stopping) {  // when stopping, the destructor fails every call
        reply_cv.wait_for(lock, slice_until(deadline), [&] { return state->done || !reader_waiting; });
        continue;
      }
      // This thread reads the socket until its reply is in (or the deadline).
      reader_waiting = true;
      reader = std::this_thread::get_id();
      lock.unlock();
      while (true) {
        {
          std::lock_guard<std::mutex> socket_lock(socket_mu);
          drain_socket_locked();
        }
        {
          std::lock_guard<std::mutex> state_lock(mu);
          if (state->done || stopping) break;
        }
        if (Clock::now() >= deadline) break;
        wait_readable(reader_wake_fd, true, slice_until(deadline));
      }
      lock.lock();
      reader_waiting = false;
      reply_cv.notify_all();  // another waiter may take over reading
    }
    return true;
  }

  static std::chrono::milliseconds slice_until(Clock::time_point deadline) {
    return std::min(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()) +
                        std::chrono::milliseconds(1),
                    std::chrono::milliseconds(kPollSlice));
  }
};

}  // namespace rpc_detail

Batch ReplyFuture::get() {
  if (!state_) throw std::logic_error("ReplyFuture::get on an empty future");
  endpoint_->wait(state_, Clock::time_point::max());
  auto state = std::move(state_);
  endpoint_.reset();  // the state is done: nobody writes it any more
  if (state->error) std::rethrow_exception(state->error);
  return std::move(state->value);
}

bool ReplyFuture::wait_for(std::chrono::milliseconds timeout) {
  if (!state_) throw std::logic_error("ReplyFuture::wait_for on an empty future");
  return endpoint_->wait(state_, Clock::now() + timeout);
}

void ReplyFuture::on_ready(std::function<void(bool ok)> hook) {
  if (!state_) throw std::logic_error("ReplyFuture::on_ready on an empty future");
  {
    std::lock_guard<std::mutex> lock(endpoint_->mu);
    if (!state_->done) {
      state_->on_done = std::move(hook);
      return;
    }
  }
  hook(state_->error == nullptr);
}

RpcServer::RpcServer(const std::string& bind_address, RpcOptions options)
    : impl_(std::make_shared<rpc_detail::Endpoint>()) {
  impl_->options = options;
  impl_->router.set(zmq::sockopt::router_mandatory, 1);
  impl_->router.set(zmq::sockopt::linger, 0);
  impl_->router.set(zmq::sockopt::router_handover, 1);  // a restarted worker takes its id back
  try {
    impl_->router.bind(bind_address);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("rpc: cannot bind controller socket to '" + bind_address + "': " + e.what() +
                             " (is another run using it? pick another address)");
  }
  impl_->address = impl_->router.get(zmq::sockopt::last_endpoint);
  impl_->socket_fd = impl_->router.get(zmq::sockopt::fd);
  impl_->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  impl_->reader_wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  impl_->io_thread = std::thread([endpoint = impl_.get()] { endpoint->run(); });
}

RpcServer::~RpcServer() {
  impl_->stopping = true;
  impl_->wake();
  if (impl_->io_thread.joinable()) impl_->io_thread.join();
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<uint64_t> ids;
  for (auto& [id, call] : impl_->pending) ids.push_back(id);
  for (auto id : ids) impl_->fail_locked(id, "controller endpoint shut down");
  rpc_detail::Endpoint::signal(impl_->reader_wake_fd);  // a caller reading the socket sees it at once
}

const std::string& RpcServer::address() const { return impl_->address; }

void RpcServer::wait_for_workers(const std::vector<std::string>& ids, std::chrono::milliseconds timeout,
                                 const std::function<std::string()>& abort_check) {
  auto deadline = Clock::now() + timeout;
  std::unique_lock<std::mutex> lock(impl_->mu);
  while (true) {
    std::vector<std::string> missing;
    for (auto& id : ids) {
      auto it = impl_->workers.find(id);
      if (it == impl_->workers.end() || !it->second.info.alive) missing.push_back(id);
    }
    if (missing.empty()) return;
    if (abort_check) {
      lock.unlock();
      std::string reason = abort_check();
      lock.lock();
      if (!reason.empty()) throw std::runtime_error(reason);
    }
    if (Clock::now() > deadline) {
      std::string names;
      for (auto& m : missing) names += (names.empty() ? "" : ", ") + m;
      throw std::runtime_error("workers did not register within " +
                               std::to_string(timeout.count() / 1000.0).substr(0, 4) + " s: " + names +
                               " (see their logs)");
    }
    impl_->registered_cv.wait_for(lock, std::chrono::milliseconds(50));
  }
}

namespace rpc_detail {
struct PreparedCall {
  std::vector<zmq::message_t> frames;  // empty: nothing to send
};
}  // namespace rpc_detail

ReplyFuture RpcServer::prepare(const std::string& worker, const std::string& model, const std::string& method,
                               const Batch& input, const Json& args, const Json& context,
                               std::chrono::milliseconds timeout, rpc_detail::PreparedCall& out) {
  if (timeout.count() <= 0) timeout = impl_->options.call_timeout;
  const uint64_t id = impl_->next_id.fetch_add(1);
  // Encode before taking any lock: copying a large tensor into shared
  // memory must not stall other callers.
  std::vector<zmq::message_t> frames;
  frames.emplace_back(worker.data(), worker.size());
  std::string encode_error;
  // Through shared memory only to a worker on this host.
  WireOptions wire = impl_->options.wire;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto w = impl_->workers.find(worker);
    if (w != impl_->workers.end() && w->second.info.host_id != host_identity()) wire.shm_threshold_bytes = 0;
  }
  try {
    Json header = {{"kind", wire_kind::kCall}, {"id", id},     {"model", model},
                   {"method", method},         {"args", args}, {"context", context}};
    encode_message(header, input, frames, wire);
  } catch (const std::exception& e) {
    encode_error = std::string("cannot encode the call's input: ") + e.what();
  }
  auto state = std::make_shared<rpc_detail::ReplyState>();
  ReplyFuture future(impl_, state);
  std::lock_guard<std::mutex> lock(impl_->mu);
  PendingCall& call = impl_->pending[id];
  call.worker = worker;
  call.model = model;
  call.method = method;
  call.deadline = Clock::now() + timeout;
  call.state = state;
  auto w = impl_->workers.find(worker);
  if (w == impl_->workers.end() || !w->second.info.alive) {
    impl_->fail_locked(id, w == impl_->workers.end() ? "worker is not registered"
                                                     : "worker is dead: " + w->second.info.death_reason);
    return future;
  }
  if (!encode_error.empty()) {
    impl_->fail_locked(id, encode_error);
    return future;
  }
  out.frames = std::move(frames);
  return future;
}

void RpcServer::send(std::vector<rpc_detail::PreparedCall>& calls) {
  // Send on this thread: handing the message to the background thread
  // would cost a wake-up and a context switch on every call.
  impl_->last_caller_send = Clock::now().time_since_epoch().count();
  std::lock_guard<std::mutex> socket_lock(impl_->socket_mu);
  for (auto& c : calls)
    if (!c.frames.empty()) impl_->send_locked(c.frames);
  // The send may have consumed the ZMQ_FD signal of a reply that arrived
  // meanwhile. A caller already waiting on the socket would then sleep
  // through it, so drain for it. With no waiter this is skipped: whoever
  // waits next drains before sleeping (and holds socket_mu to do so, so
  // it cannot start waiting between this check and the send), and the
  // background thread looks at the socket again within its poll slice.
  bool reader_sleeps;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    reader_sleeps = impl_->reader_waiting;
  }
  if (reader_sleeps) impl_->drain_socket_locked();
}

ReplyFuture RpcServer::call(const std::string& worker, const std::string& model, const std::string& method,
                            Batch input, Json args, Json context, std::chrono::milliseconds timeout) {
  std::vector<rpc_detail::PreparedCall> prepared(1);
  ReplyFuture future = prepare(worker, model, method, input, args, context, timeout, prepared[0]);
  send(prepared);
  return future;
}

std::vector<ReplyFuture> RpcServer::call_each(const std::vector<std::string>& workers,
                                              const std::string& model, const std::string& method,
                                              std::vector<Batch> inputs, const Json& args,
                                              const Json& context, std::chrono::milliseconds timeout) {
  if (workers.size() != inputs.size())
    throw std::invalid_argument("RpcServer::call_each: " + std::to_string(workers.size()) + " workers but " +
                                std::to_string(inputs.size()) + " inputs");
  std::vector<rpc_detail::PreparedCall> prepared(workers.size());
  std::vector<ReplyFuture> futures;
  futures.reserve(workers.size());
  for (size_t i = 0; i < workers.size(); ++i) {
    futures.push_back(prepare(workers[i], model, method, inputs[i], args, context, timeout, prepared[i]));
    inputs[i] = Batch{};  // the frames hold what the wire needs
  }
  send(prepared);
  return futures;
}

void RpcServer::report_worker_death(const std::string& worker, const std::string& reason) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->mark_dead_locked(worker, reason);
}

std::vector<WorkerInfo> RpcServer::workers() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<WorkerInfo> out;
  auto now = Clock::now();
  for (auto& [id, w] : impl_->workers) {
    out.push_back(w.info);
    out.back().seconds_since_heartbeat = seconds_between(w.last_seen, now);
  }
  return out;
}

std::optional<WorkerInfo> RpcServer::worker(const std::string& id) const {
  for (auto& w : workers())
    if (w.id == id) return w;
  return std::nullopt;
}

void RpcServer::shutdown_workers() {
  std::vector<std::string> ids;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    for (auto& [id, w] : impl_->workers)
      if (w.info.alive) ids.push_back(id);
  }
  std::lock_guard<std::mutex> socket_lock(impl_->socket_mu);
  for (auto& id : ids) {
    std::vector<zmq::message_t> frames;
    frames.emplace_back(id.data(), id.size());
    encode_message(Json{{"kind", wire_kind::kShutdown}}, Batch{}, frames);
    impl_->send_locked(frames);
  }
  impl_->drain_socket_locked();
}

}  // namespace rlwb::core
