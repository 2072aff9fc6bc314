// The rlwb subcommands. Each add_*_command registers one command, or a family
// of them (runs list/show/compare/export), on the rlwb CLI::App with its typed
// flags, and returns each leaf with the function that does its work
// (core::Subcommand, core/common/command_line.h). rlwb_main.cpp assembles
// them; the work itself is in core/, workers/, rewards/ and sandbox/.
#pragma once

#include <string>
#include <vector>

#include "core/common/command_line.h"
#include "core/tracking/tracking.h"

namespace rlwb::app {

// The tracking database the run and runs commands use unless --db says.
inline constexpr const char* kDefaultTrackingDb = "runs/rlwb.db";

// Adds `--db PATH` (default kDefaultTrackingDb) to `command`.
void add_db_option(CLI::App& command, std::string& db);
// The tracking database at `db` for reading; a missing file is an error
// that says how to get one (rather than an empty database made on the spot).
core::TrackingReader open_tracking_reader(const std::string& db);

// rlwb-worker's path: $RLWB_WORKER, else next to this program or in
// ../workers (the build tree); `argv0` when /proc is missing.
std::string find_worker_binary(const std::string& argv0);

// app/commands.cpp: rlwb run FILE [key.path=value ...] and rlwb validate FILE
// [key.path=value ...]. `argv0` helps find rlwb-worker when /proc is missing.
core::Subcommand add_run_command(CLI::App& rlwb, std::string argv0);
core::Subcommand add_validate_command(CLI::App& rlwb);
// rlwb settings: the settings reference (docs/settings.md), from core/config.
core::Subcommand add_settings_command(CLI::App& rlwb);

// app/cmd_plan.cpp: rlwb plan FILE --devices N ... and rlwb plan --calibrate
// (core/planner, workers/calibration)
core::Subcommand add_plan_command(CLI::App& rlwb);

// app/cmd_runs.cpp: rlwb runs list | show ID | compare ID ID... | export ID
// | follow RUN
std::vector<core::Subcommand> add_runs_commands(CLI::App& rlwb);
// app/cmd_runs_follow.cpp: rlwb runs follow RUN (a run's rows as JSON lines)
core::Subcommand add_runs_follow_command(CLI::App& runs);

// app/cmd_profile.cpp: rlwb profile show | export | diff, and rlwb analyze
// (a stored profile read back: core/profile)
std::vector<core::Subcommand> add_profile_commands(CLI::App& rlwb);

// app/cmd_reward.cpp: rlwb reward math ...
std::vector<core::Subcommand> add_reward_commands(CLI::App& rlwb);

// app/cmd_export.cpp: rlwb export RUN --out DIR (a checkpoint's model in
// the Hugging Face layout)
std::vector<core::Subcommand> add_export_commands(CLI::App& rlwb);

// app/cmd_sandbox.cpp: rlwb sandbox run | serve (sandbox/cli.h)
std::vector<core::Subcommand> add_sandbox_commands(CLI::App& rlwb);

}  // namespace rlwb::app
