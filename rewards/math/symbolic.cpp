// The GiNaC engine thread (see symbolic.h).
#include "rewards/math/symbolic.h"

#include <ginac/ginac.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

namespace rlwb::rewards {
namespace {

enum class Question { kDifferenceIsZero, kRatioIsConstant };

struct Job {
  Question question;
  std::string a, b;
  std::promise<SymbolicResult> result;
  std::atomic<bool> abandoned{false};
};

std::string print(const GiNaC::ex& e) {
  std::ostringstream out;
  out << e;
  std::string s = out.str();
  if (s.size() > 200) s = s.substr(0, 200) + "...";
  return s;
}

SymbolicResult answer(const Job& job) {
  using Outcome = SymbolicResult::Outcome;
  SymbolicResult r;
  try {
    GiNaC::symtab table;
    table["Pi"] = GiNaC::Pi;
    table["I"] = GiNaC::I;
    table["E"] = GiNaC::exp(GiNaC::ex(1));
    GiNaC::parser reader(table);
    GiNaC::ex a = reader(job.a);
    GiNaC::ex b = reader(job.b);
    if (job.question == Question::kDifferenceIsZero) {
      GiNaC::ex d = (a - b).normal();
      if (!d.is_zero()) d = d.expand().normal();
      r.outcome = d.is_zero() ? Outcome::kYes : Outcome::kNo;
      r.detail = print(d);
    } else {
      if (b.is_zero()) {
        r.outcome = Outcome::kNo;
        r.detail = "division by zero";
        return r;
      }
      GiNaC::ex q = (a / b).normal();
      if (GiNaC::is_a<GiNaC::numeric>(q) && !q.is_zero() && GiNaC::ex_to<GiNaC::numeric>(q).is_real()) {
        r.outcome = Outcome::kYes;
        r.ratio_sign = GiNaC::ex_to<GiNaC::numeric>(q).csgn();
      } else {
        r.outcome = Outcome::kNo;
      }
      r.detail = print(q);
    }
  } catch (const std::exception& e) {
    r.outcome = Outcome::kUnreadable;
    r.detail = e.what();
  }
  return r;
}

class Engine {
 public:
  static Engine& get() {
    // Leaked on purpose: at exit the thread may still be inside an abandoned
    // simplification, and joining it would hang the exit.
    static Engine* engine = new Engine();
    return *engine;
  }

  SymbolicResult ask(Question q, const std::string& a, const std::string& b,
                     std::chrono::milliseconds timeout) {
    auto job = std::make_shared<Job>();
    job->question = q;
    job->a = a;
    job->b = b;
    std::future<SymbolicResult> done = job->result.get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ensure_thread();
      if (busy_with_abandoned_) {
        SymbolicResult r;
        r.outcome = SymbolicResult::Outcome::kTimedOut;
        r.detail = "GiNaC is still busy with an earlier expression that ran past its time bound";
        return r;
      }
      queue_.push_back(job);
    }
    wake_.notify_one();
    if (done.wait_for(timeout) == std::future_status::ready) return done.get();
    job->abandoned = true;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (running_ == job) busy_with_abandoned_ = true;
    }
    SymbolicResult r;
    r.outcome = SymbolicResult::Outcome::kTimedOut;
    r.detail = "GiNaC took longer than " + std::to_string(timeout.count()) + " ms";
    return r;
  }

 private:
  Engine() = default;

  // (Re)starts the thread; a forked child has the state but not the thread.
  void ensure_thread() {
    if (started_ && owner_pid_ == getpid()) return;
    queue_.clear();
    running_.reset();
    busy_with_abandoned_ = false;
    owner_pid_ = getpid();
    started_ = true;
    std::thread([this] { loop(); }).detach();
  }

  void loop() {
    pid_t mine = getpid();
    while (true) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return !queue_.empty(); });
        if (owner_pid_ != mine) return;
        job = queue_.front();
        queue_.pop_front();
        if (job->abandoned) continue;
        running_ = job;
      }
      SymbolicResult r = answer(*job);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        running_.reset();
        busy_with_abandoned_ = false;
      }
      job->result.set_value(std::move(r));
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::shared_ptr<Job> running_;
  bool busy_with_abandoned_ = false;
  bool started_ = false;
  pid_t owner_pid_ = 0;
};

}  // namespace

SymbolicResult ginac_difference_is_zero(const std::string& a, const std::string& b,
                                        std::chrono::milliseconds timeout) {
  return Engine::get().ask(Question::kDifferenceIsZero, a, b, timeout);
}

SymbolicResult ginac_ratio_is_constant(const std::string& a, const std::string& b,
                                       std::chrono::milliseconds timeout) {
  return Engine::get().ask(Question::kRatioIsConstant, a, b, timeout);
}

}  // namespace rlwb::rewards
