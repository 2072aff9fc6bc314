// rlwb reward math ...: the math answer checker (rewards/math/math_check.h) on
// one response or on a JSON Lines file. Argument parsing only.
//   rlwb reward math --response TEXT --reference TEXT [--question TEXT] [--format text|json]
//   rlwb reward math --file IN.jsonl [--out OUT.jsonl]
//   options: --percent drop_sign|fraction|either  --last-number yes|no
//            --tolerance X  --rounding-places N  --final-form yes|no
//            --numeric-identity yes|no  --timeout-ms N
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>

#include "app/commands.h"
#include "rewards/math/math_check.h"
#include "rewards/math/math_jsonl.h"

namespace rlwb::app {
namespace {

constexpr const char* kRewardUsage = R"(usage:
  rlwb reward math --response TEXT --reference TEXT [--question TEXT] [--format text|json]
      check one response against a reference answer; prints the verdict (exit 0 either way)
  rlwb reward math --file IN.jsonl [--out OUT.jsonl]
      one {"response": ..., "reference": ...} object a line (optional "question", "options", "id");
      writes one JSON verdict a line, in order, with "score" (0 or 1) and "extracted"
  options (defaults in brackets):
      --percent drop_sign|fraction|either   what 50\% equals: 50, 0.5, or both [drop_sign]
      --last-number yes|no                  fall back to the last number in the text [no]
      --tolerance X                         relative tolerance for irrational numbers [1e-9]
      --rounding-places N                   decimals with >= N places may be rounded values [6]
      --final-form yes|no                   reject unevaluated or restated answers [yes]
      --numeric-identity yes|no             accept identities GiNaC cannot prove [yes]
      --timeout-ms N                        time bound for one GiNaC simplification [500]
)";

class RewardUsage : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

bool yes_no(const std::string& flag, const std::string& value) {
  if (value == "yes" || value == "true") return true;
  if (value == "no" || value == "false") return false;
  throw RewardUsage("--" + flag + " takes yes or no, not '" + value + "'");
}

double number(const std::string& flag, const std::string& value) {
  try {
    size_t used = 0;
    double v = std::stod(value, &used);
    if (used == value.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  throw RewardUsage("--" + flag + " takes a number >= 0, not '" + value + "'");
}

rewards::MathCheckOptions options_from(const CommandLine& cl) {
  static const std::set<std::string> kKnown = {
      "response",   "reference",        "question",    "format",    "file",
      "out",        "percent",          "last-number", "tolerance", "rounding-places",
      "final-form", "numeric-identity", "timeout-ms"};
  for (auto& [name, value] : cl.flags)
    if (!kKnown.count(name)) throw RewardUsage("unknown option --" + name);
  rewards::MathCheckOptions o;
  if (cl.flags.count("percent")) {
    try {
      o.percent = rewards::parse_percent_rule(cl.flags.at("percent"));
    } catch (const std::invalid_argument& e) {
      throw RewardUsage(std::string("--") + e.what());
    }
  }
  if (cl.flags.count("last-number"))
    o.last_number_fallback = yes_no("last-number", cl.flags.at("last-number"));
  if (cl.flags.count("tolerance"))
    o.relative_tolerance = number("tolerance", cl.flags.at("tolerance"));
  if (cl.flags.count("rounding-places"))
    o.rounding_min_places =
        static_cast<int>(number("rounding-places", cl.flags.at("rounding-places")));
  if (cl.flags.count("final-form"))
    o.require_final_form = yes_no("final-form", cl.flags.at("final-form"));
  if (cl.flags.count("numeric-identity"))
    o.accept_numeric_identity = yes_no("numeric-identity", cl.flags.at("numeric-identity"));
  if (cl.flags.count("timeout-ms")) {
    double ms = number("timeout-ms", cl.flags.at("timeout-ms"));
    if (ms < 1) throw RewardUsage("--timeout-ms takes a number of milliseconds >= 1");
    o.symbolic_timeout = std::chrono::milliseconds(static_cast<long long>(ms));
  }
  return o;
}

int check_one(const CommandLine& cl, const rewards::MathCheckOptions& options) {
  if (!cl.flags.count("reference")) throw RewardUsage("--response needs --reference TEXT too");
  std::string format = cl.flag("format", "text");
  if (format != "text" && format != "json") throw RewardUsage("--format takes text or json");
  rewards::MathVerdict v = rewards::check_math_answer(
      cl.flags.at("response"), cl.flags.at("reference"), options, cl.flag("question", ""));
  if (format == "json") {
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
            << "normalized: " << v.normalized_prediction << "  |  " << v.normalized_reference
            << "\n"
            << "parsed: " << v.parsed_prediction << "  |  " << v.parsed_reference << "\n"
            << "method: " << rewards::match_method_name(v.method) << "\n"
            << "reason: " << v.reason << "\n";
  return 0;
}

int check_file(const CommandLine& cl, const rewards::MathCheckOptions& options) {
  std::string path = cl.flags.at("file");
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
  if (cl.flags.count("out")) {
    out_file.open(cl.flags.at("out"));
    if (!out_file) {
      std::cerr << "rlwb reward math: cannot write " << cl.flags.at("out") << " ("
                << std::strerror(errno) << ")\n";
      return 1;
    }
    out = &out_file;
  }
  try {
    rewards::MathJsonlSummary s =
        rewards::score_math_jsonl(*in, *out, path == "-" ? "<stdin>" : path, options);
    std::cerr << "rlwb reward math: " << s.checked << " lines checked, " << s.correct
              << " scored 1\n";
    return 0;
  } catch (const rewards::MathJsonlError& e) {
    out->flush();
    std::cerr << "rlwb reward math: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

int cmd_reward(const CommandLine& cl) {
  try {
    if (cl.positional.empty() || cl.positional[0] != "math")
      throw RewardUsage(cl.positional.empty()
                            ? "which reward? rlwb reward math ..."
                            : "unknown reward '" + cl.positional[0] + "' (there is: math)");
    if (cl.positional.size() > 1 || !cl.overrides.empty())
      throw RewardUsage("unexpected argument '" +
                        (cl.positional.size() > 1 ? cl.positional[1] : cl.overrides[0]) +
                        "' (quote the text and pass it with --response / --reference)");
    rewards::MathCheckOptions options = options_from(cl);
    bool one = cl.flags.count("response") > 0, file = cl.flags.count("file") > 0;
    if (one == file)
      throw RewardUsage("give either --response TEXT --reference TEXT or --file IN.jsonl");
    if (file && (cl.flags.count("reference") || cl.flags.count("question")))
      throw RewardUsage(
          "--file takes references and questions from its lines, not from --reference/--question");
    return one ? check_one(cl, options) : check_file(cl, options);
  } catch (const RewardUsage& e) {
    std::cerr << "rlwb reward: " << e.what() << "\n" << kRewardUsage;
    return 2;
  }
}

}  // namespace rlwb::app
