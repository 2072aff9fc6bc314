#include "sandbox/limits.h"

#include <nlohmann/json.hpp>
#include <string>

#include "sandbox/sandbox_error.h"

namespace rlwb::sandbox {
namespace {

struct Field {
  const char* name;
  int64_t Limits::*wide = nullptr;
  int Limits::*narrow = nullptr;
  int64_t lo, hi;
};

const Field kFields[] = {
    {"wall_ms", nullptr, &Limits::wall_ms, 1, 600000},
    {"cpu_ms", nullptr, &Limits::cpu_ms, 1, 600000},
    {"memory_mb", nullptr, &Limits::memory_mb, 8, 65536},
    {"processes", nullptr, &Limits::processes, 1, 4096},
    {"file_size_mb", nullptr, &Limits::file_size_mb, 1, 16384},
    {"open_files", nullptr, &Limits::open_files, 8, 65536},
    {"work_dir_mb", nullptr, &Limits::work_dir_mb, 1, 16384},
    {"stdout_bytes", &Limits::stdout_bytes, nullptr, 0, int64_t(1) << 32},
    {"stderr_bytes", &Limits::stderr_bytes, nullptr, 0, int64_t(1) << 32},
};

int64_t get(const Limits& l, const Field& f) { return f.wide ? l.*f.wide : l.*f.narrow; }
void set(Limits& l, const Field& f, int64_t v) {
  if (f.wide)
    l.*f.wide = v;
  else
    l.*f.narrow = static_cast<int>(v);
}

}  // namespace

Limits default_run_limits() { return Limits{}; }

Limits default_compile_limits() {
  Limits l;
  l.wall_ms = 20000;
  l.cpu_ms = 20000;
  l.memory_mb = 1024;
  l.processes = 32;
  l.file_size_mb = 64;
  l.open_files = 128;
  l.work_dir_mb = 256;
  l.stdout_bytes = 64 << 10;
  l.stderr_bytes = 64 << 10;
  return l;
}

void validate_limits(const Limits& limits, const char* what) {
  for (const Field& f : kFields) {
    int64_t v = get(limits, f);
    if (v < f.lo || v > f.hi)
      throw SandboxError(std::string(what) + "." + f.name + " = " + std::to_string(v) + ": must be between " +
                         std::to_string(f.lo) + " and " + std::to_string(f.hi));
  }
}

nlohmann::json limits_to_json(const Limits& limits) {
  nlohmann::json j = nlohmann::json::object();
  for (const Field& f : kFields) j[f.name] = get(limits, f);
  return j;
}

Limits limits_from_json(const nlohmann::json& j, const Limits& base, const char* what) {
  if (!j.is_object()) throw SandboxError(std::string(what) + " must be a JSON object");
  Limits l = base;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const Field* field = nullptr;
    for (const Field& f : kFields)
      if (it.key() == f.name) field = &f;
    if (!field) {
      std::string known;
      for (const Field& f : kFields) known += std::string(known.empty() ? "" : ", ") + f.name;
      throw SandboxError(std::string(what) + ": unknown key '" + it.key() + "' (known: " + known + ")");
    }
    if (!it.value().is_number_integer())
      throw SandboxError(std::string(what) + "." + it.key() + " must be an integer");
    set(l, *field, it.value().get<int64_t>());
  }
  validate_limits(l, what);
  return l;
}

}  // namespace rlwb::sandbox
