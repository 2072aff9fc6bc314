#include "core/config/profile_options.h"

namespace rlwb::core::config {

ProfileOptions parse_profile_options(const nlohmann::json& profile, ParseContext& ctx) {
  ProfileOptions o;
  Section s(&profile, "profile", ctx);
  s.flag("enabled", o.enabled, "record a profile of the run (docs/profiler.md)")
      .choice("engine", o.engine,
              EnumNames<ProfileEngine>{{"rlwb", ProfileEngine::rlwb}, {"kineto", ProfileEngine::kineto}},
              "rlwb: the context tree; kineto: torch's profiler, a Chrome trace per worker and window")
      .integer("every", o.every,
               "profile one RL step in this many: the range's first, then every N-th (1: every step)",
               above(0))
      .integer("window", o.window, "profiled steps per stored context tree; 0: one tree for all of them",
               at_least(0))
      .flag("shapes", o.shapes, "record the input shapes of operators")
      .flag("native_stacks", o.native_stacks,
            "record the native frames between a method and its operators (costs more)")
      .flag("trace", o.trace,
            "also keep every operator call as an event, for `rlwb profile export --format chrome`")
      .flag("hardware_counters", o.hardware_counters,
            "cycles and instructions per method through perf_event_open, where the machine allows");
  // A lone step reads as a number from the file or an override (steps=7).
  if (const nlohmann::json* steps =
          s.raw("steps", "text: A-B, A- or A",
                "the RL steps to profile (A- : from A to the end); absent: every step")) {
    if (steps->is_number_integer())
      o.steps = std::to_string(steps->get<int64_t>());
    else if (steps->is_string())
      o.steps = steps->get<std::string>();
    else if (!steps->is_null())
      s.fail("steps", show_value(*steps) + " is not a step range",
             "write A-B, A- or A, e.g. profile.steps=10-20");
  }
  if (!o.steps.empty()) {
    try {
      o.step_range = profile::parse_step_range(o.steps);
    } catch (const std::invalid_argument& e) {
      s.fail("steps", e.what(), "for example profile.steps=10-20");
    }
  }
  return o;
}

}  // namespace rlwb::core::config
