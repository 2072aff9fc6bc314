#include "core/profile/profile_store.h"

namespace rlwb::core::profile {

void write_profile_meta(TrackingWriter& db, int64_t run, const ProfileMeta& meta) {
  db.log_profile(run, 0, "", "meta", to_json(meta).dump());
}

void write_step_timing(TrackingWriter& db, int64_t run, const StepTiming& step) {
  db.log_profile(run, step.step, "", "step", to_json(step).dump());
}

void write_worker_window(TrackingWriter& db, int64_t run, const WorkerWindow& window) {
  db.log_profile(run, window.first_step, window.worker, "cct", to_json(window).dump());
}

RunProfile load_run_profile(TrackingReader& db, int64_t run, std::optional<StepRange> steps) {
  auto info = db.run(run);
  if (!info)
    throw ProfileError("no run " + std::to_string(run) + " in " + db.path() +
                       ": `rlwb runs list` shows the runs");
  RunProfile profile;
  profile.run = run;
  bool have_meta = false;
  for (auto& row : db.profiles(run)) {
    nlohmann::json data;
    try {
      data = nlohmann::json::parse(row.data);
    } catch (const nlohmann::json::exception& e) {
      throw ProfileError("run " + std::to_string(run) + ": a '" + row.kind + "' profile row is not JSON (" +
                         e.what() + ")");
    }
    if (row.kind == "meta") {
      profile.meta = profile_meta_from_json(data);
      if (profile.meta.schema != kProfileSchema)
        throw ProfileError("run " + std::to_string(run) + "'s profile was written with profile schema " +
                           std::to_string(profile.meta.schema) + "; this rlwb reads schema " +
                           std::to_string(kProfileSchema) +
                           ": read it with the rlwb that wrote it, or profile the run again");
      have_meta = true;
    } else if (!have_meta) {
      throw ProfileError("run " + std::to_string(run) + "'s profile rows have no settings row (kind 'meta')" +
                         ": it was written by another tool or another schema; profile the run again");
    } else if (row.kind == "step") {
      profile.steps.push_back(step_timing_from_json(data));
    } else if (row.kind == "cct") {
      profile.workers.push_back(worker_window_from_json(data));
    } else if (row.kind == "trace") {
      profile.traces.push_back(worker_trace_from_json(row.node, data));
    }
  }
  if (!have_meta)
    throw ProfileError("run " + std::to_string(run) + " (" + info->name +
                       ") was not profiled: run it again " +
                       "with `rlwb run FILE profile.enabled=true` (or `rlwb run --from-run " +
                       std::to_string(run) + " profile.enabled=true`)");
  if (steps) {
    const int64_t last = profile.steps.empty() ? profile.meta.first_step - 1 : profile.steps.back().step;
    const int64_t want_last = steps->last == 0 ? last : steps->last;
    if (steps->first > last || want_last < profile.meta.first_step)
      throw ProfileError("steps " + std::to_string(steps->first) + "-" + std::to_string(want_last) +
                         " are outside run " + std::to_string(run) + "'s profiled steps " +
                         std::to_string(profile.meta.first_step) + "-" + std::to_string(last));
    std::erase_if(profile.steps, [&](auto& s) { return s.step < steps->first || s.step > want_last; });
    std::erase_if(profile.workers,
                  [&](auto& w) { return w.last_step < steps->first || w.first_step > want_last; });
    std::erase_if(profile.traces,
                  [&](auto& t) { return t.last_step < steps->first || t.first_step > want_last; });
  }
  return profile;
}

}  // namespace rlwb::core::profile
