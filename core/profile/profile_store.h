// Writing a run's profile into the tracking DB's `profiles` table and
// reading it back (row kinds in core/profile/run_profile.h). Reading
// checks what a user may get wrong -- an unknown run, a run that was not
// profiled, a step window outside the profiled steps, a profile of another
// schema version -- and throws ProfileError saying what to run instead.
#pragma once

#include "core/profile/run_profile.h"
#include "core/profile/step_range.h"
#include "core/tracking/tracking.h"

#include <optional>

namespace rlwb::core::profile {

void write_profile_meta(TrackingWriter& db, int64_t run, const ProfileMeta& meta);
void write_step_timing(TrackingWriter& db, int64_t run, const StepTiming& step);
void write_worker_window(TrackingWriter& db, int64_t run, const WorkerWindow& window);

// The run's profile; with `steps`, only the steps and the windows that
// overlap them (a window outside the profiled steps is an error).
RunProfile load_run_profile(TrackingReader& db, int64_t run, std::optional<StepRange> steps = std::nullopt);

}  // namespace rlwb::core::profile
