// The rlwb-sandbox wire protocol (ZeroMQ, DEALER client -> ROUTER service).
// A request is multipart: frame 0 a JSON object, optional further frames
// holding raw bytes that the JSON refers to as {"frame": k} (any text field
// may be given either way; JSON strings must be UTF-8, frames need not be).
//   {"id": "any string", "kind": "run", "lang": "python3", "program": "...",
//    "stdin": "...", "limits": {...}, "compile_limits": {...}}
//   {"id": ..., "kind": "judge", "lang": ..., "program": ...,
//    "tests": [{"stdin": "...", "expected": "..."} | {"assert": "..."}],
//    "options": {"comparison": "exact|lines|tokens",
//                "scoring": "pass_rate|all_or_nothing",
//                "stop_at_first_failure": bool, "limits": {...}, "compile_limits": {...}}}
//   {"id": ..., "kind": "ping"}    {"id": ..., "kind": "stats"}
// Every request gets exactly one reply, frame 0 a JSON object with the same id:
//   {"id", "ok": true, "verdict": {...}} + frames 1, 2: raw stdout, stderr (run)
//   {"id", "ok": true, "result": {...}}                                   (judge)
//   {"id", "ok": true, "pong": true, "executors": N, "fallbacks": [...]}  (ping)
//   {"id", "ok": true, "stats": {...}}                                    (stats)
//   {"id", "ok": false, "error": "what was wrong and what to do"}         (bad request)
// Limits keys are those of limits.h; omitted keys keep their defaults.
// Used by service.cpp and client.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "sandbox/requests.h"

namespace rlwb::sandbox::protocol {

// Requests: to JSON (bytes that are not valid UTF-8 go to `frames`, which
// the caller sends after the JSON), and back (throws SandboxError).
nlohmann::json run_to_json(const RunRequest& r, std::vector<std::string>& frames);
nlohmann::json judge_to_json(const JudgeRequest& r, std::vector<std::string>& frames);
RunRequest run_from_json(const nlohmann::json& j, const std::vector<std::string>& frames);
JudgeRequest judge_from_json(const nlohmann::json& j, const std::vector<std::string>& frames);

nlohmann::json judge_result_to_json(const JudgeResult& r);
JudgeResult judge_result_from_json(const nlohmann::json& j);  // throws SandboxError

bool is_utf8(const std::string& s);

}  // namespace rlwb::sandbox::protocol
