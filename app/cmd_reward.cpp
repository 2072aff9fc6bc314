// rlwb reward math ...: the math answer checker (rewards/math/math_check.h) on
// one response or on a JSON Lines file. Argument handling only:
//   rlwb reward math --response TEXT --reference TEXT [--question TEXT] [--format text|json]
//   rlwb reward math --file IN.jsonl [--out OUT.jsonl]
// and the checker's options (--compat, --percent, --last-number, --tolerance,
// --rounding-places, --final-form, --numeric-identity, --timeout-ms);
// `rlwb reward math --help` lists them with their defaults.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "rewards/math/math_check.h"
#include "rewards/math/math_jsonl.h"

namespace rlwb::app {
namespace {

struct MathArgs {
  std::string response, reference, question, format = "text";
  std::string file, out;
  rewards::MathCheckOptions options;
  // Read as text and a count, then set in `options` (its defaults shown).
  std::string percent = rewards::percent_rule_name(options.percent);
  std::string compat = rewards::compat_mode_name(options.compat);
  int64_t timeout_ms = options.symbolic_timeout.count();
};

// Accepts what parse_percent_rule accepts, with its message otherwise.
const CLI::Validator kPercentRule(
    [](std::string& name) -> std::string {
      try {
        rewards::parse_percent_rule(name);
        return "";
      } catch (const std::invalid_argument& e) {
        return e.what();
      }
    },
    "drop_sign|fraction|either");

int check_one(const MathArgs& args) {
  rewards::MathVerdict v =
      rewards::check_math_answer(args.response, args.reference, args.options, args.question);
  if (args.format == "json") {
    nlohmann::ordered_json j = rewards::verdict_to_json(v);
    j["parsed"] = v.parsed_prediction;
    j["reference_parsed"] = v.parsed_reference;
    std::cout << j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    return 0;
  }
  std::cout << "score: " << v.score << "\n"
            << "extracted: " << (v.extracted.empty() ? "(nothing)" : v.extracted) << " (from "
            << v.extracted_from << ")\n"
            << "reference: " << v.reference_answer << "\n"
            << "normalized: " << v.normalized_prediction << "  |  " << v.normalized_reference << "\n"
            << "parsed: " << v.parsed_prediction << "  |  " << v.parsed_reference << "\n"
            << "method: " << rewards::match_method_name(v.method) << "\n"
            << "reason: " << v.reason << "\n";
  return 0;
}

int check_file(const MathArgs& args) {
  const std::string& path = args.file;
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    file.open(path);
    if (!file) {
      std::cerr << "rlwb reward math: cannot read " << path << " (" << std::strerror(errno)
                << "); give a JSON Lines file with one {\"response\": ..., \"reference\": ...} "
                   "object a line, or - for standard input\n";
      return 1;
    }
    in = &file;
  }
  std::ofstream out_file;
  std::ostream* out = &std::cout;
  if (!args.out.empty()) {
    out_file.open(args.out);
    if (!out_file) {
      std::cerr << "rlwb reward math: cannot write " << args.out << " (" << std::strerror(errno) << ")\n";
      return 1;
    }
    out = &out_file;
  }
  try {
    rewards::MathJsonlSummary s =
        rewards::score_math_jsonl(*in, *out, path == "-" ? "<stdin>" : path, args.options);
    std::cerr << "rlwb reward math: " << s.checked << " lines checked, " << s.correct << " scored 1\n";
    return 0;
  } catch (const rewards::MathJsonlError& e) {
    out->flush();
    std::cerr << "rlwb reward math: " << e.what() << "\n";
    return 1;
  }
}

// "yes|no=no": the type and the default, for --help.
std::string yes_no(bool default_value) { return std::string("yes|no=") + (default_value ? "yes" : "no"); }

int check(MathArgs& args, bool one, bool file) {
  if (one == file) throw core::UsageError("give either --response TEXT --reference TEXT or --file IN.jsonl");
  args.options.percent = rewards::parse_percent_rule(args.percent);
  args.options.compat = rewards::parse_compat_mode(args.compat);
  args.options.symbolic_timeout = std::chrono::milliseconds(args.timeout_ms);
  return one ? check_one(args) : check_file(args);
}

}  // namespace

std::vector<core::Subcommand> add_reward_commands(CLI::App& rlwb) {
  CLI::App* reward = rlwb.add_subcommand("reward", "reward checkers, on one answer or a file");
  reward->require_subcommand(1);
  auto args = std::make_shared<MathArgs>();
  rewards::MathCheckOptions& o = args->options;
  CLI::App* math = reward->add_subcommand(
      "math", "the math answer checker: verdict and extracted answer, for one response or a file");
  math->footer(
      "--response TEXT --reference TEXT checks one response and prints the verdict (exit 0 "
      "either way). --file IN.jsonl takes one {\"response\": ..., \"reference\": ...} object a "
      "line (optional \"question\", \"options\", \"id\") and writes one JSON verdict a line, in "
      "order, with \"score\" (0 or 1) and \"extracted\".");
  math->option_defaults()->always_capture_default();
  CLI::Option* response = math->add_option("--response", args->response, "the answer to check");
  CLI::Option* reference = math->add_option("--reference", args->reference, "the correct answer");
  CLI::Option* question = math->add_option("--question", args->question,
                                           "the question, so that an answer copied from it does not count");
  math->add_option("--format", args->format, "how one verdict is printed")
      ->check(CLI::IsMember({"text", "json"}));
  CLI::Option* file = math->add_option("--file", args->file, "JSON Lines input, - for stdin");
  math->add_option("--out", args->out, "where --file's verdicts go (default stdout)")->needs(file);
  response->needs(reference);
  file->excludes(reference)->excludes(question);
  math->add_option("--compat", args->compat,
                   "whose conventions: default (RLWB's final-form rule) or math-verify "
                   "(docs/math-checker.md)")
      ->check(CLI::IsMember({"default", "math-verify"}));
  math->add_option("--percent", args->percent, "what 50\\% equals: 50, 0.5, or both")->check(kPercentRule);
  math->add_option("--last-number", o.last_number_fallback, "fall back to the last number in the text")
      ->option_text(yes_no(o.last_number_fallback));
  math->add_option("--tolerance", o.relative_tolerance, "relative tolerance for irrational numbers")
      ->check(CLI::NonNegativeNumber);
  math->add_option("--rounding-places", o.rounding_min_places,
                   "decimals with >= N places may be rounded values")
      ->check(CLI::NonNegativeNumber);
  math->add_option("--final-form", o.require_final_form, "reject unevaluated or restated answers")
      ->option_text(yes_no(o.require_final_form));
  math->add_option("--numeric-identity", o.accept_numeric_identity, "accept identities GiNaC cannot prove")
      ->option_text(yes_no(o.accept_numeric_identity));
  math->add_option("--timeout-ms", args->timeout_ms, "time bound for one GiNaC simplification, milliseconds")
      ->check(CLI::PositiveNumber);
  return {{math, [args, response, file] { return check(*args, response->count() > 0, file->count() > 0); }}};
}

}  // namespace rlwb::app
