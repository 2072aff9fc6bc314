// JSON Lines for the math checker (see math_jsonl.h).
#include "rewards/math/math_jsonl.h"

#include <istream>
#include <ostream>

namespace rlwb::rewards {
namespace {

const char* kLineShape =
    "each line must be one JSON object such as "
    "{\"response\": \"... \\\\boxed{5}\", \"reference\": \"5\"}";

std::string where(std::string_view source, size_t line) {
  return std::string(source) + ":" + std::to_string(line) + ": ";
}

std::string progress(size_t line) {
  if (line <= 1) return " Nothing was written; fix line 1 and run again.";
  return " Lines before " + std::to_string(line) + " were checked and written; fix line " +
         std::to_string(line) + " and run again.";
}

using Json = nlohmann::ordered_json;

bool get_bool(const Json& v, const std::string& key) {
  if (!v.is_boolean()) throw std::invalid_argument("option '" + key + "' must be true or false");
  return v.get<bool>();
}

}  // namespace

PercentRule parse_percent_rule(std::string_view name) {
  if (name == "drop_sign") return PercentRule::kDropSign;
  if (name == "fraction") return PercentRule::kFraction;
  if (name == "either") return PercentRule::kEither;
  throw std::invalid_argument("percent must be drop_sign, fraction or either, not '" + std::string(name) +
                              "'");
}

const char* percent_rule_name(PercentRule rule) {
  switch (rule) {
    case PercentRule::kDropSign:
      return "drop_sign";
    case PercentRule::kFraction:
      return "fraction";
    case PercentRule::kEither:
      return "either";
  }
  return "drop_sign";
}

CompatMode parse_compat_mode(std::string_view name) {
  if (name == "default") return CompatMode::kDefault;
  if (name == "math-verify") return CompatMode::kMathVerify;
  throw std::invalid_argument("compat must be default or math-verify, not '" + std::string(name) + "'");
}

MathCheckOptions math_options_from_json(const Json& object, MathCheckOptions base) {
  if (!object.is_object()) throw std::invalid_argument("\"options\" must be a JSON object");
  for (auto& [key, v] : object.items()) {
    if (key == "compat") {
      if (!v.is_string()) throw std::invalid_argument("option 'compat' must be a string");
      base.compat = parse_compat_mode(v.get<std::string>());
    } else if (key == "last_number_fallback") {
      base.last_number_fallback = get_bool(v, key);
    } else if (key == "percent") {
      if (!v.is_string()) throw std::invalid_argument("option 'percent' must be a string");
      base.percent = parse_percent_rule(v.get<std::string>());
    } else if (key == "relative_tolerance") {
      if (!v.is_number() || v.get<double>() < 0)
        throw std::invalid_argument("option 'relative_tolerance' must be a number >= 0");
      base.relative_tolerance = v.get<double>();
    } else if (key == "rounding_min_places") {
      if (!v.is_number_integer() || v.get<long long>() < 0)
        throw std::invalid_argument("option 'rounding_min_places' must be an integer >= 0");
      base.rounding_min_places = v.get<int>();
    } else if (key == "require_final_form") {
      base.require_final_form = get_bool(v, key);
    } else if (key == "accept_numeric_identity") {
      base.accept_numeric_identity = get_bool(v, key);
    } else if (key == "symbolic_timeout_ms") {
      if (!v.is_number_integer() || v.get<long long>() <= 0)
        throw std::invalid_argument("option 'symbolic_timeout_ms' must be a positive integer");
      base.symbolic_timeout = std::chrono::milliseconds(v.get<long long>());
    } else {
      throw std::invalid_argument(
          "unknown option '" + key +
          "' (known: compat, last_number_fallback, percent, relative_tolerance, rounding_min_places, "
          "require_final_form, accept_numeric_identity, symbolic_timeout_ms)");
    }
  }
  return base;
}

MathCase parse_math_case(std::string_view text, size_t line, std::string_view source,
                         const MathCheckOptions& defaults) {
  MathCase c;
  c.line = line;
  try {
    c.object = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw MathJsonlError(
        where(source, line) + "not valid JSON (" + e.what() + "); " + kLineShape + "." + progress(line),
        line);
  }
  if (!c.object.is_object())
    throw MathJsonlError(where(source, line) + "a JSON " + c.object.type_name() + ", not an object; " +
                             kLineShape + "." + progress(line),
                         line);
  for (const char* key : {"response", "reference"}) {
    auto it = c.object.find(key);
    if (it == c.object.end())
      throw MathJsonlError(
          where(source, line) + "no \"" + key + "\" field; " + kLineShape + "." + progress(line), line);
    if (!it->is_string())
      throw MathJsonlError(where(source, line) + "\"" + key + "\" must be a string, not a " +
                               it->type_name() + " (quote numbers: \"" + key + "\": \"5\")." + progress(line),
                           line);
  }
  c.response = c.object["response"].get<std::string>();
  c.reference = c.object["reference"].get<std::string>();
  if (auto q = c.object.find("question"); q != c.object.end()) {
    if (!q->is_string())
      throw MathJsonlError(where(source, line) + "\"question\" must be a string." + progress(line), line);
    c.question = q->get<std::string>();
  }
  c.options = defaults;
  if (auto o = c.object.find("options"); o != c.object.end()) {
    try {
      c.options = math_options_from_json(*o, defaults);
    } catch (const std::invalid_argument& e) {
      throw MathJsonlError(where(source, line) + e.what() + "." + progress(line), line);
    }
  }
  return c;
}

Json verdict_to_json(const MathVerdict& v) {
  return {{"score", v.score},
          {"extracted", v.extracted},
          {"extracted_from", v.extracted_from},
          {"normalized", v.normalized_prediction},
          {"reference_normalized", v.normalized_reference},
          {"method", match_method_name(v.method)},
          {"reason", v.reason}};
}

MathJsonlSummary score_math_jsonl(std::istream& in, std::ostream& out, std::string_view source,
                                  const MathCheckOptions& defaults) {
  MathJsonlSummary summary;
  std::string text;
  size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    MathCase c = parse_math_case(text, line, source, defaults);
    MathVerdict v = check_math_answer(c.response, c.reference, c.options, c.question);
    Json result = {{"line", line}};
    if (auto id = c.object.find("id"); id != c.object.end()) result["id"] = *id;
    Json verdict = verdict_to_json(v);
    for (auto& [key, value] : verdict.items()) result[key] = value;
    // Invalid UTF-8 in the input must not stop the output: replace it.
    out << result.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
    out.flush();
    ++summary.checked;
    summary.correct += static_cast<size_t>(v.score);
  }
  if (in.bad())
    throw MathJsonlError(
        where(source, line + 1) + "read error after line " + std::to_string(line) + "." + progress(line + 1),
        line + 1);
  return summary;
}

}  // namespace rlwb::rewards
