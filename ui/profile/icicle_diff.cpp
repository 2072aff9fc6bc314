#include "ui/profile/icicle_diff.h"

#include <algorithm>
#include <cmath>

#include "core/profile/context_paths.h"

namespace rlwb::ui {

namespace profile = core::profile;

profile::RunProfile with_workers(const profile::RunProfile& p, const std::string& worker) {
  profile::RunProfile out;
  out.run = p.run;
  out.meta = p.meta;
  out.steps = p.steps;
  for (const profile::WorkerWindow& w : p.workers) {
    if (!worker.empty() && !profile::worker_matches(w.worker, worker)) continue;
    profile::WorkerWindow copy;
    copy.worker = w.worker;
    copy.host = w.host;
    copy.pid = w.pid;
    copy.first_step = w.first_step;
    copy.last_step = w.last_step;
    copy.intra_op_threads = w.intra_op_threads;
    copy.peak_bytes = w.peak_bytes;
    copy.notes = w.notes;
    copy.tree = w.tree.clone();
    out.workers.push_back(std::move(copy));
  }
  return out;
}

IcicleDiff::IcicleDiff(const profile::RunProfile& a, const profile::RunProfile& b, const std::string& worker)
    : run_a_(a.run), run_b_(b.run) {
  // B first: the baseline, so that diff's "added" (only in its second run) is only in A.
  const profile::ProfileDiff d =
      worker.empty() ? profile::diff(b, a) : profile::diff(with_workers(b, worker), with_workers(a, worker));
  steps_a_ = std::max<int64_t>(1, d.steps_b);
  total_a_ = d.total_b_s;
  total_b_ = d.total_a_s;
  for (const profile::ContextChange& c : d.changes) {
    if (c.presence == profile::ContextChange::Presence::removed) {
      ++only_in_b_;
      continue;
    }
    changes_[c.path] = {c.b_s, c.a_s, c.presence == profile::ContextChange::Presence::added};
  }
}

PathChange IcicleDiff::at(const std::string& path, double self_per_step_s) const {
  auto it = changes_.find(path);
  if (it != changes_.end()) return it->second;
  return {self_per_step_s, self_per_step_s, false};
}

double diff_shade(const PathChange& c) {
  if (c.only_in_a) return c.a_s > 0 ? 1.0 : 0.0;
  const double larger = std::max(std::fabs(c.a_s), std::fabs(c.b_s));
  const double change = c.change();
  if (larger <= 0 || std::fabs(change) < kUnchangedSeconds || std::fabs(change) < kUnchangedShare * larger)
    return 0;
  return std::clamp(change / larger, -1.0, 1.0);
}

}  // namespace rlwb::ui
