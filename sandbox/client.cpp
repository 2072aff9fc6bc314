#include "sandbox/client.h"

#include <sys/random.h>

#include <map>
#include <optional>
#include <zmq.hpp>

#include "sandbox/program_runner.h"
#include "sandbox/protocol.h"

namespace rlwb::sandbox {
namespace {

struct Outgoing {
  nlohmann::json head;
  std::vector<std::string> frames;
};

struct Reply {
  nlohmann::json head;
  std::vector<std::string> frames;
};

std::string random_prefix() {
  unsigned char b[6] = {};
  (void)::getrandom(b, sizeof b, 0);
  char out[16];
  std::snprintf(out, sizeof out, "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5]);
  return out;
}

}  // namespace

struct SandboxClient::Impl {
  std::string endpoint;
  ClientOptions opt;
  zmq::context_t ctx{1};
  zmq::socket_t sock{ctx, zmq::socket_type::dealer};
  std::mutex mu;
  std::string prefix = random_prefix();
  uint64_t next_id = 0;

  Impl(std::string e, ClientOptions o) : endpoint(std::move(e)), opt(o) {
    sock.set(zmq::sockopt::linger, 0);
    sock.set(zmq::sockopt::rcvhwm, 0);
    sock.set(zmq::sockopt::sndhwm, 0);
    try {
      sock.connect(endpoint);
    } catch (const zmq::error_t& err) {
      throw SandboxError("sandbox client: cannot connect to " + endpoint + ": " + err.what());
    }
  }

  std::string no_reply(std::chrono::milliseconds waited) const {
    return "no reply from the sandbox service at " + endpoint + " within " + std::to_string(waited.count()) +
           " ms (is `rlwb sandbox serve` running there?)";
  }

  // Sends every request, then waits for their replies (any order) until the deadline.
  std::vector<std::optional<Reply>> call(std::vector<Outgoing>& reqs, std::chrono::milliseconds timeout) {
    std::lock_guard lock(mu);
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < reqs.size(); ++i) {
      uint64_t bytes = 0;
      for (auto& f : reqs[i].frames) bytes += f.size();
      std::string id = prefix + "-" + std::to_string(next_id++);
      reqs[i].head["id"] = id;
      std::string body = reqs[i].head.dump();
      if (bytes + body.size() > opt.max_request_bytes)
        throw SandboxError("sandbox request " + std::to_string(i) + " is " +
                           std::to_string(bytes + body.size()) + " bytes; the service accepts at most " +
                           std::to_string(opt.max_request_bytes));
      index[id] = i;
      sock.send(zmq::buffer(body), reqs[i].frames.empty() ? zmq::send_flags::none : zmq::send_flags::sndmore);
      for (size_t k = 0; k < reqs[i].frames.size(); ++k)
        sock.send(zmq::buffer(reqs[i].frames[k]),
                  k + 1 < reqs[i].frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
    }
    std::vector<std::optional<Reply>> replies(reqs.size());
    size_t left = reqs.size();
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (left > 0) {
      auto now = std::chrono::steady_clock::now();
      if (now >= deadline) break;
      zmq::pollitem_t item{sock.handle(), 0, ZMQ_POLLIN, 0};
      try {
        zmq::poll(&item, 1,
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) +
                      std::chrono::milliseconds(1));
      } catch (const zmq::error_t& e) {
        if (e.num() != EINTR) throw;
      }
      zmq::message_t part;
      while (sock.recv(part, zmq::recv_flags::dontwait)) {
        Reply r;
        r.head = nlohmann::json::parse(part.to_string_view(), nullptr, false);
        while (part.more()) {
          if (!sock.recv(part, zmq::recv_flags::none)) break;
          r.frames.push_back(part.to_string());
        }
        if (!r.head.is_object() || !r.head.contains("id") || !r.head["id"].is_string()) continue;
        auto it = index.find(r.head["id"].get<std::string>());
        if (it == index.end() || replies[it->second])
          continue;  // stale (an earlier call timed out) or duplicate
        replies[it->second] = std::move(r);
        --left;
      }
    }
    return replies;
  }

  nlohmann::json simple(const char* kind, std::chrono::milliseconds timeout) {
    std::vector<Outgoing> reqs(1);
    reqs[0].head = {{"kind", kind}};
    auto r = call(reqs, timeout);
    if (!r[0]) throw SandboxError(no_reply(timeout));
    return r[0]->head;
  }
};

SandboxClient::SandboxClient(std::string endpoint, ClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(endpoint), options)) {}
SandboxClient::~SandboxClient() = default;

std::vector<Verdict> SandboxClient::run_all(const std::vector<RunRequest>& requests) {
  std::vector<Outgoing> reqs(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    validate(requests[i]);
    reqs[i].head = protocol::run_to_json(requests[i], reqs[i].frames);
  }
  auto replies = impl_->call(reqs, impl_->opt.timeout);
  std::vector<Verdict> out(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    Verdict& v = out[i];
    if (!replies[i]) {
      v.detail = impl_->no_reply(impl_->opt.timeout);
    } else if (!replies[i]->head.value("ok", false)) {
      v.detail =
          "sandbox service: " + replies[i]->head.value("error", std::string("error without a message"));
    } else {
      try {
        v = verdict_from_json(replies[i]->head.at("verdict"));
        if (replies[i]->frames.size() >= 2) {
          v.stdout_data = std::move(replies[i]->frames[0]);
          v.stderr_data = std::move(replies[i]->frames[1]);
        }
      } catch (const std::exception& e) {
        v = Verdict{};
        v.detail = std::string("sandbox service sent a malformed reply: ") + e.what();
      }
    }
  }
  return out;
}

Verdict SandboxClient::run(const RunRequest& request) { return run_all({request}).at(0); }

std::vector<JudgeResult> SandboxClient::judge_all(const std::vector<JudgeRequest>& requests) {
  std::vector<Outgoing> reqs(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    validate(requests[i]);
    reqs[i].head = protocol::judge_to_json(requests[i], reqs[i].frames);
  }
  auto replies = impl_->call(reqs, impl_->opt.timeout);
  std::vector<JudgeResult> out(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    JudgeResult& r = out[i];
    r.total = static_cast<int>(requests[i].tests.size());
    if (!replies[i]) {
      r.detail = impl_->no_reply(impl_->opt.timeout);
    } else if (!replies[i]->head.value("ok", false)) {
      r.detail =
          "sandbox service: " + replies[i]->head.value("error", std::string("error without a message"));
    } else {
      try {
        r = protocol::judge_result_from_json(replies[i]->head.at("result"));
      } catch (const std::exception& e) {
        r = JudgeResult{};
        r.total = static_cast<int>(requests[i].tests.size());
        r.detail = std::string("sandbox service sent a malformed reply: ") + e.what();
      }
    }
  }
  return out;
}

JudgeResult SandboxClient::judge(const JudgeRequest& request) { return judge_all({request}).at(0); }

nlohmann::json SandboxClient::ping(std::chrono::milliseconds timeout) {
  return impl_->simple("ping", timeout);
}
nlohmann::json SandboxClient::stats(std::chrono::milliseconds timeout) {
  return impl_->simple("stats", timeout).value("stats", nlohmann::json::object());
}

}  // namespace rlwb::sandbox
