// check_math_answer: extraction -> normalisation -> parsing -> comparison (see math_check.h).
#include "rewards/math/math_check.h"

#include <exception>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "rewards/math/compare.h"
#include "rewards/math/compat_extract.h"
#include "rewards/math/extract.h"
#include "rewards/math/infix.h"
#include "rewards/math/latex_parser.h"
#include "rewards/math/normalize.h"

namespace rlwb::rewards {
namespace {

std::string without_spaces(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != ' ') out += c;
  return out;
}

// A number written plainly (12, -0.5, 3/4 in lowest terms) is never "copied
// from the question": questions are full of numbers.
bool plain_number(const MathValue& v) {
  if (v.kind != MathValue::Kind::kExpr) return false;
  const Expr* e = &v.expr;
  if (e->kind == Expr::Kind::kNegate) e = &e->args[0];
  if (e->kind == Expr::Kind::kNumber) return true;
  if (e->kind != Expr::Kind::kQuotient) return false;
  const Expr& n = e->args[0];
  const Expr& d = e->args[1];
  if (n.kind != Expr::Kind::kNumber || d.kind != Expr::Kind::kNumber || n.decimal || d.decimal) return false;
  auto reduced = divide(n.number, d.number);
  return reduced && reduced->num() == n.number.num() && reduced->den() == d.number.num();
}

bool restates_question(const std::string& prediction, const MathValue& parsed, const std::string& reference,
                       std::string_view question) {
  std::string p = without_spaces(prediction);
  if (p.size() < 3 || p == without_spaces(reference) || plain_number(parsed)) return false;
  return without_spaces(normalize_answer(question)).find(p) != std::string::npos;
}

// What the math-verify mode sets (math_check.h, CompatMode::kMathVerify).
MathCheckOptions effective_options(const MathCheckOptions& options) {
  if (options.compat != CompatMode::kMathVerify) return options;
  MathCheckOptions o = options;
  o.last_number_fallback = true;
  o.percent = PercentRule::kEither;
  o.require_final_form = false;
  o.float_rounding_places = 6;
  return o;
}

bool symbols_only(const MathValue& v) {
  if (v.kind == MathValue::Kind::kExpr) return v.expr.kind == Expr::Kind::kSymbol;
  if (v.kind != MathValue::Kind::kTuple) return false;
  for (const MathValue& item : v.items)
    if (!symbols_only(item)) return false;
  return !v.items.empty();
}

// "(x, y) = (1, 2)" is the tuple (1, 2) in the math-verify mode, as there.
void drop_assigned_names(MathValue* v) {
  if (v->kind == MathValue::Kind::kRelation && v->relations.size() == 1 &&
      v->relations[0] == Relation::kEqual && v->items[0].kind == MathValue::Kind::kTuple &&
      symbols_only(v->items[0]) && v->items[1].kind == MathValue::Kind::kTuple) {
    MathValue value = std::move(v->items[1]);
    *v = std::move(value);
  }
}

// The reference's side of a check, the same for every response checked
// against it: a batch prepares each distinct reference once (a GRPO step
// checks every sample of a prompt against the prompt's one answer). An
// exception on the way is kept and rethrown where check() would have met it,
// so a verdict does not depend on whether its reference was shared.
struct PreparedReference {
  ExtractedAnswer extracted;
  std::string normalized;
  ParsedAnswer parsed;
  std::string infix;
  std::exception_ptr extract_error;  // from extracting the answer
  std::exception_ptr read_error;     // from normalising or parsing it
};

PreparedReference prepare_reference(std::string_view reference) {
  PreparedReference ref;
  try {
    ref.extracted = extract_answer(reference, {.whole_text_always = true});
  } catch (...) {
    ref.extract_error = std::current_exception();
    return ref;
  }
  if (ref.extracted.text.empty()) return ref;
  try {
    ref.normalized = normalize_answer(ref.extracted.text);
    ref.parsed = parse_answer(ref.normalized);
    ref.infix = to_infix(ref.parsed.value);
  } catch (...) {
    ref.read_error = std::current_exception();
  }
  return ref;
}

MathVerdict check(std::string_view response, const PreparedReference& ref, const MathCheckOptions& given,
                  std::string_view question) {
  const MathCheckOptions options = effective_options(given);
  const bool math_verify = options.compat == CompatMode::kMathVerify;
  MathVerdict v;
  if (ref.extract_error) std::rethrow_exception(ref.extract_error);
  ExtractedAnswer pred =
      math_verify ? extract_answer_math_verify_style(response)
                  : extract_answer(response, {.last_number_fallback = options.last_number_fallback});
  v.extracted = pred.text;
  v.extracted_from = answer_source_name(pred.source);
  v.reference_answer = ref.extracted.text;
  if (ref.extracted.text.empty()) {
    v.reason = "the reference is empty";
    return v;
  }
  if (ref.read_error) std::rethrow_exception(ref.read_error);
  v.normalized_reference = ref.normalized;
  const ParsedAnswer& r = ref.parsed;
  v.parsed_reference = ref.infix;
  if (pred.source == AnswerSource::kNone) {
    v.reason = math_verify ? "no answer in the response: no \\boxed{}, LaTeX expression or number"
               : options.last_number_fallback
                   ? "no answer in the response: no \\boxed{}, '####', 'Answer:' or number"
                   : "no answer in the response: no \\boxed{}, '####' or 'Answer:' (the last-number "
                     "fallback is off)";
    return v;
  }
  v.normalized_prediction = normalize_answer(pred.text);
  ParsedAnswer p = parse_answer(v.normalized_prediction);
  if (math_verify) drop_assigned_names(&p.value);
  v.parsed_prediction = to_infix(p.value);
  if (v.normalized_prediction.empty()) {
    v.reason = "the extracted answer is empty";
    return v;
  }
  if (options.require_final_form && !question.empty() &&
      restates_question(v.normalized_prediction, p.value, v.normalized_reference, question)) {
    v.reason = "the prediction " + v.normalized_prediction +
               " restates an expression from the question instead of answering it";
    return v;
  }
  Comparison c = compare_answers(p.value, r.value, options);
  if (!c.equal && p.is_text_fallback && !r.is_text_fallback)
    c.reason += " (the prediction could not be read: " + p.error + ")";
  v.score = c.equal ? 1 : 0;
  v.method = c.method;
  v.reason = std::move(c.reason);
  return v;
}

}  // namespace

const char* compat_mode_name(CompatMode mode) {
  return mode == CompatMode::kMathVerify ? "math-verify" : "default";
}

const char* match_method_name(MatchMethod method) {
  switch (method) {
    case MatchMethod::kNone:
      return "none";
    case MatchMethod::kSameText:
      return "same_text";
    case MatchMethod::kExactRational:
      return "exact_rational";
    case MatchMethod::kNumeric:
      return "numeric";
    case MatchMethod::kSymbolic:
      return "symbolic";
    case MatchMethod::kNumericIdentity:
      return "numeric_identity";
    case MatchMethod::kText:
      return "text";
  }
  return "none";
}

namespace {

MathVerdict checked(std::string_view response, const PreparedReference& reference,
                    const MathCheckOptions& options, std::string_view question) {
  try {
    return check(response, reference, options, question);
  } catch (const std::exception& e) {
    // A reward must not take the training step down; say what happened instead.
    MathVerdict v;
    v.reason = std::string("internal error while checking: ") + e.what();
    return v;
  }
}

}  // namespace

MathVerdict check_math_answer(std::string_view response, std::string_view reference,
                              const MathCheckOptions& options, std::string_view question) {
  return checked(response, prepare_reference(reference), options, question);
}

std::vector<MathVerdict> check_math_answers(const std::vector<std::string>& responses,
                                            const std::vector<std::string>& references,
                                            const MathCheckOptions& options,
                                            const std::vector<std::string>& questions) {
  if (responses.size() != references.size())
    throw std::invalid_argument("check_math_answers: " + std::to_string(responses.size()) +
                                " responses but " + std::to_string(references.size()) +
                                " references; give one reference per response");
  if (!questions.empty() && questions.size() != responses.size())
    throw std::invalid_argument("check_math_answers: " + std::to_string(questions.size()) +
                                " questions for " + std::to_string(responses.size()) +
                                " responses; give one per response or none");
  // Each distinct reference is prepared once, and a row that repeats an
  // earlier row (the same response, reference and question: samples of one
  // prompt that agree) takes that row's verdict: a check depends on nothing
  // else (but the symbolic time bound, which a second try would meet too).
  std::unordered_map<std::string_view, PreparedReference> prepared;
  std::map<std::tuple<std::string_view, std::string_view, std::string_view>, size_t> first_row;
  std::vector<MathVerdict> out;
  out.reserve(responses.size());
  for (size_t i = 0; i < responses.size(); ++i) {
    const std::string_view question = questions.empty() ? std::string_view{} : questions[i];
    auto [seen, is_new] = first_row.try_emplace({responses[i], references[i], question}, i);
    if (!is_new) {
      out.push_back(out[seen->second]);
      continue;
    }
    auto ref = prepared.find(references[i]);
    if (ref == prepared.end()) ref = prepared.emplace(references[i], prepare_reference(references[i])).first;
    out.push_back(checked(responses[i], ref->second, options, question));
  }
  return out;
}

}  // namespace rlwb::rewards
