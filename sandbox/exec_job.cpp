#include "sandbox/exec_job.h"

#include "sandbox/sandbox_error.h"

namespace rlwb::sandbox {

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::none:
      return "none";
    case StopReason::wall:
      return "wall";
    case StopReason::cpu:
      return "cpu";
    case StopReason::memory:
      return "memory";
    case StopReason::output:
      return "output";
  }
  return "none";
}

namespace detail {
namespace {
StopReason parse_stop(const std::string& s) {
  for (StopReason r : {StopReason::wall, StopReason::cpu, StopReason::memory, StopReason::output})
    if (s == stop_reason_name(r)) return r;
  return StopReason::none;
}
}  // namespace

nlohmann::json job_header(const ExecJob& job) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : job.files) files.push_back({{"name", f.name}, {"executable", f.executable}});
  return {{"argv", job.argv},
          {"files", files},
          {"limits", limits_to_json(job.limits)},
          {"collect", job.collect},
          {"python_main", job.python_main}};
}

ExecJob job_from_message(Message&& m) {
  try {
    ExecJob job;
    job.argv = m.header.at("argv").get<std::vector<std::string>>();
    job.limits = limits_from_json(m.header.at("limits"), Limits{});
    job.collect = m.header.value("collect", "");
    job.python_main = m.header.value("python_main", false);
    const auto& files = m.header.at("files");
    if (m.blobs.size() != files.size() + 1) throw SandboxError("job: blob count does not match");
    job.stdin_data = std::move(m.blobs[0]);
    for (size_t i = 0; i < files.size(); ++i)
      job.files.push_back({files[i].at("name").get<std::string>(), std::move(m.blobs[i + 1]),
                           files[i].value("executable", false)});
    return job;
  } catch (const nlohmann::json::exception& e) {
    throw SandboxError(std::string("malformed job: ") + e.what());
  }
}

nlohmann::json result_header(const ExecResult& r) {
  return {{"started", r.started},
          {"sandbox_error", r.sandbox_error},
          {"exec_errno", r.exec_errno},
          {"exit_code", r.exit_code},
          {"signal", r.signal},
          {"stop", stop_reason_name(r.stop)},
          {"wall_ms", r.wall_ms},
          {"cpu_ms", r.cpu_ms},
          {"max_rss_kb", r.max_rss_kb},
          {"tree_peak_kb", r.tree_peak_kb},
          {"stdout_truncated", r.stdout_truncated},
          {"stderr_truncated", r.stderr_truncated},
          {"has_artifact", r.has_artifact},
          {"fallbacks", r.fallbacks}};
}

ExecResult result_from_message(Message&& m) {
  ExecResult r;
  const auto& h = m.header;
  r.started = h.value("started", false);
  r.sandbox_error = h.value("sandbox_error", "");
  r.exec_errno = h.value("exec_errno", 0);
  r.exit_code = h.value("exit_code", -1);
  r.signal = h.value("signal", 0);
  r.stop = parse_stop(h.value("stop", "none"));
  r.wall_ms = h.value("wall_ms", 0.0);
  r.cpu_ms = h.value("cpu_ms", 0.0);
  r.max_rss_kb = h.value("max_rss_kb", int64_t(0));
  r.tree_peak_kb = h.value("tree_peak_kb", int64_t(0));
  r.stdout_truncated = h.value("stdout_truncated", false);
  r.stderr_truncated = h.value("stderr_truncated", false);
  r.has_artifact = h.value("has_artifact", false);
  if (h.contains("fallbacks")) r.fallbacks = h["fallbacks"].get<std::vector<std::string>>();
  if (m.blobs.size() >= 2) {
    r.stdout_data = std::move(m.blobs[0]);
    r.stderr_data = std::move(m.blobs[1]);
  }
  if (m.blobs.size() >= 3) r.artifact = std::move(m.blobs[2]);
  return r;
}

}  // namespace detail
}  // namespace rlwb::sandbox
