// Answer equivalence (see compare.h).
#include "rewards/math/compare.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "rewards/math/evaluate.h"
#include "rewards/math/infix.h"
#include "rewards/math/symbolic.h"

namespace rlwb::rewards {
namespace {

using VK = MathValue::Kind;
using EK = Expr::Kind;

Comparison yes(MatchMethod method, std::string reason) { return {true, method, std::move(reason)}; }
Comparison no(std::string reason) { return {false, MatchMethod::kNone, std::move(reason)}; }

// The weaker of two kinds of evidence, for an answer made of several parts.
MatchMethod weaker(MatchMethod a, MatchMethod b) {
  auto rank = [](MatchMethod m) {
    switch (m) {
      case MatchMethod::kNone:
        return 0;
      case MatchMethod::kSameText:
        return 1;
      case MatchMethod::kExactRational:
        return 2;
      case MatchMethod::kText:
        return 3;
      case MatchMethod::kNumeric:
        return 4;
      case MatchMethod::kSymbolic:
        return 5;
      case MatchMethod::kNumericIdentity:
        return 6;
    }
    return 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

std::string short_number(double v) {
  std::ostringstream out;
  out.precision(10);
  out << v;
  return out.str();
}

std::string short_number(std::complex<double> v) {
  if (std::abs(v.imag()) < 1e-12 * std::max(1.0, std::abs(v.real()))) return short_number(v.real());
  return short_number(v.real()) + (v.imag() < 0 ? "-" : "+") + short_number(std::abs(v.imag())) + "i";
}

const char* shape_name(VK k) {
  switch (k) {
    case VK::kExpr:
      return "a single value";
    case VK::kList:
      return "a list";
    case VK::kTuple:
      return "a tuple";
    case VK::kSet:
      return "a set";
    case VK::kInterval:
      return "an interval";
    case VK::kUnion:
      return "a union";
    case VK::kMatrix:
      return "a matrix";
    case VK::kRelation:
      return "an equation or inequality";
    case VK::kEmptySet:
      return "the empty set";
    case VK::kReals:
      return "all real numbers";
    case VK::kText:
      return "text";
  }
  return "?";
}

bool same_expr(const Expr& a, const Expr& b) {
  if (a.kind != b.kind || a.name != b.name || a.args.size() != b.args.size()) return false;
  if (a.kind == EK::kNumber && !(a.number == b.number)) return false;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (!same_expr(a.args[i], b.args[i])) return false;
  return true;
}

bool integer_number(const Expr& e) {
  if (e.kind == EK::kNegate)
    return e.args[0].kind == EK::kNumber && !e.args[0].decimal && e.args[0].number.is_integer();
  return e.kind == EK::kNumber && !e.decimal && e.number.is_integer();
}

bool power_of_ten(const Expr& e) {
  return e.kind == EK::kPower && e.args[0].kind == EK::kNumber && e.args[0].number == Rational::integer(10) &&
         integer_number(e.args[1]);
}

// A number as a final answer is written: 12, -0.5, \frac{3}{4}, 1.2 \times 10^{5},
// 10^{6}, 50\%.
bool is_numeral(const Expr& e) {
  switch (e.kind) {
    case EK::kNumber:
      return true;
    case EK::kPower:
      return power_of_ten(e);
    case EK::kNegate:
      return e.args[0].kind != EK::kNegate && is_numeral(e.args[0]);
    case EK::kQuotient:
      return integer_number(e.args[0]) && integer_number(e.args[1]);
    case EK::kPercent:
      return is_numeral(e.args[0]);
    case EK::kProduct:
      return e.args.size() == 2 && e.args[0].kind == EK::kNumber && power_of_ten(e.args[1]);
    default:
      return false;
  }
}

bool has_symbols(const Expr& e) {
  if (e.kind == EK::kSymbol) return true;
  for (const Expr& a : e.args)
    if (has_symbols(a)) return true;
  return false;
}

bool negative_exponent(const Expr& e) {
  return e.kind == EK::kNegate || (e.kind == EK::kNumber && e.number.sign() < 0);
}

bool has_variable_denominator(const Expr& e) {
  if (e.kind == EK::kQuotient && has_symbols(e.args[1])) return true;
  if (e.kind == EK::kPower && negative_exponent(e.args[1]) && has_symbols(e.args[0])) return true;
  for (const Expr& a : e.args)
    if (has_variable_denominator(a)) return true;
  return false;
}

bool small_numbers_for_ginac(const Expr& e, std::string* why);

// How many terms expanding e may produce (an upper bound), and its degree.
struct ExpansionSize {
  double terms = 1;
  double degree = 0;
};

double choose(double n, double k) {
  if (k < 0 || k > n) return 0;
  return std::exp(std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1));
}

ExpansionSize expansion_size(const Expr& e, int* atoms) {
  switch (e.kind) {
    case EK::kSymbol:
      return {1, 1};
    case EK::kSum:
    case EK::kProduct:
    case EK::kQuotient: {
      ExpansionSize total{e.kind == EK::kSum ? 0.0 : 1.0, 0};
      for (const Expr& a : e.args) {
        ExpansionSize s = expansion_size(a, atoms);
        if (e.kind == EK::kSum) {
          total.terms += s.terms;
          total.degree = std::max(total.degree, s.degree);
        } else {  // a quotient is brought to a common denominator: like a product
          total.terms *= s.terms;
          total.degree += s.degree;
        }
      }
      return total;
    }
    case EK::kNegate:
    case EK::kPercent:
    case EK::kPlusMinus:
      return expansion_size(e.args.back(), atoms);
    case EK::kPower: {
      ExpansionSize base = expansion_size(e.args[0], atoms);
      auto k = exact_value(e.args[1], PercentReading::kNumber);
      if (!k || !k->is_integer()) {
        ++*atoms;  // x^{1/2}, 2^n: one unexpandable atom
        return {1, 1};
      }
      double n = std::abs(k->to_double());
      // (t terms)^n has at most C(n + t - 1, t - 1) terms.
      return {choose(n + base.terms - 1, base.terms - 1), base.degree * n};
    }
    case EK::kFunction:
      ++*atoms;
      return {1, 1};
    default:
      return {1, 0};
  }
}

// What GiNaC is given must stay small: its expansions are not interruptible,
// and an abandoned one keeps the engine busy (symbolic.h). A few hundred
// milliseconds of work at most.
constexpr double kMaxExpansionTerms = 2000;

bool small_enough_for_ginac(const Expr& e, std::string* why) {
  int atoms = 0;
  ExpansionSize size = expansion_size(e, &atoms);
  std::set<std::string> symbols;
  collect_symbols(e, &symbols);
  double variables = static_cast<double>(symbols.size() + atoms);
  // A polynomial of degree d in v variables has at most C(d + v, v) monomials.
  double terms = std::min(size.terms, choose(size.degree + variables, variables));
  if (terms > kMaxExpansionTerms) {
    *why = "expanding it could give about " + short_number(terms) + " terms";
    return false;
  }
  return small_numbers_for_ginac(e, why);
}

// Numbers GiNaC would compute exactly (2^{100000}, 100000!) must stay small too.
bool small_numbers_for_ginac(const Expr& e, std::string* why) {
  if (e.kind == EK::kFunction && e.name == "factorial" && !has_symbols(e.args[0])) {
    auto n = exact_value(e.args[0], PercentReading::kNumber);
    if (!n || n->num() > 1000) {
      *why = "a factorial of a large number";
      return false;
    }
  }
  if (e.kind == EK::kPower) {
    auto k = exact_value(e.args[1], PercentReading::kNumber);
    if (k && (k->num() > 4096 || k->num() < -4096 || k->den() > 4096)) {
      *why = "a power with exponent " + k->to_string();
      return false;
    }
  }
  for (const Expr& a : e.args)
    if (!small_numbers_for_ginac(a, why)) return false;
  return true;
}

std::string canonical_text(std::string_view s) {
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const std::string* bound_variable(const MathValue& v) {
  if (v.kind != VK::kRelation || v.relations.size() != 1 || v.relations[0] != Relation::kEqual)
    return nullptr;
  const MathValue& lhs = v.items[0];
  if (lhs.kind != VK::kExpr || lhs.expr.kind != EK::kSymbol) return nullptr;
  return &lhs.expr.name;
}

bool all_bindings(const MathValue& v) {
  if (v.items.empty()) return false;
  for (const MathValue& item : v.items)
    if (!bound_variable(item)) return false;
  return true;
}

// "x = 1 or x = 2", "x = 1, x = 2" and "1 or 2" are the list 1, 2.
MathValue without_bindings(const MathValue& v) {
  if (bound_variable(v)) return without_bindings(v.items[1]);
  bool values_or_bindings = !v.items.empty();
  for (const MathValue& item : v.items)
    if (item.kind != VK::kExpr && !bound_variable(item)) values_or_bindings = false;
  if ((v.kind == VK::kList || v.kind == VK::kUnion) && values_or_bindings) {
    std::vector<MathValue> values;
    for (const MathValue& item : v.items)
      values.push_back(item.kind == VK::kExpr ? item : without_bindings(item.items[1]));
    return MathValue::of_items(VK::kList, std::move(values));
  }
  return v;
}

// Bindings of distinct variables ("x = 1, y = 2"), as a map; empty if not such a list.
std::map<std::string, const MathValue*> binding_map(const MathValue& v) {
  std::map<std::string, const MathValue*> out;
  if (v.kind != VK::kList || !all_bindings(v)) return out;
  for (const MathValue& item : v.items)
    if (!out.emplace(*bound_variable(item), &item.items[1]).second) return {};
  return out;
}

bool is_vector(const MathValue& m) { return m.kind == VK::kMatrix && (m.rows == 1 || m.cols == 1); }

// ---- sets of real numbers ---------------------------------------------------

struct Piece {
  const Expr* lo;  // nullptr: -infinity
  const Expr* hi;  // nullptr: +infinity
  bool lo_closed = false, hi_closed = false;
  double lo_v = 0, hi_v = 0;
};

struct RealSet {
  std::vector<Piece> pieces;
  std::string variable;  // for inequalities
};

std::optional<double> real_number(const Expr& e) {
  if (int s = infinity_sign(e)) return s * std::numeric_limits<double>::infinity();
  if (has_symbols(e) || contains_kind(e, EK::kInfinity)) return std::nullopt;
  NumericValue v = numeric_value(e, {}, PercentReading::kNumber);
  if (!v.ok() || std::abs(v.value.imag()) > 1e-12 * std::max(1.0, std::abs(v.value.real())))
    return std::nullopt;
  return v.value.real();
}

bool near(double a, double b) {
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::abs(a - b) <= 1e-12 * std::max({1.0, std::abs(a), std::abs(b)});
}

std::optional<Piece> piece(const Expr& lo, bool lo_closed, const Expr& hi, bool hi_closed) {
  auto l = real_number(lo), h = real_number(hi);
  if (!l || !h) return std::nullopt;
  Piece p;
  p.lo = std::isinf(*l) ? nullptr : &lo;
  p.hi = std::isinf(*h) ? nullptr : &hi;
  p.lo_v = *l;
  p.hi_v = *h;
  p.lo_closed = lo_closed && p.lo;
  p.hi_closed = hi_closed && p.hi;
  return p;
}

Piece unbounded_below(const Expr* hi, double hi_v, bool closed) {
  Piece p;
  p.lo = nullptr;
  p.lo_v = -std::numeric_limits<double>::infinity();
  p.hi = hi;
  p.hi_v = hi_v;
  p.hi_closed = closed;
  return p;
}

Piece unbounded_above(const Expr* lo, double lo_v, bool closed) {
  Piece p;
  p.lo = lo;
  p.lo_v = lo_v;
  p.lo_closed = closed;
  p.hi = nullptr;
  p.hi_v = std::numeric_limits<double>::infinity();
  return p;
}

bool lone_symbol(const MathValue& v, std::string* name) {
  if (v.kind != VK::kExpr || v.expr.kind != EK::kSymbol) return false;
  *name = v.expr.name;
  return true;
}

// x op c (or c op x) as pieces; nullopt when it is not that.
std::optional<RealSet> relation_set(const MathValue& v) {
  RealSet set;
  if (v.items.size() == 2) {
    Relation op = v.relations[0];
    size_t var_at;
    if (lone_symbol(v.items[0], &set.variable)) {
      var_at = 0;
    } else if (lone_symbol(v.items[1], &set.variable)) {
      var_at = 1;
      // c < x is x > c
      static const Relation kFlip[] = {Relation::kEqual,        Relation::kNotEqual, Relation::kGreater,
                                       Relation::kGreaterEqual, Relation::kLess,     Relation::kLessEqual};
      op = kFlip[static_cast<int>(op)];
    } else {
      return std::nullopt;
    }
    const MathValue& other = v.items[1 - var_at];
    if (other.kind != VK::kExpr) return std::nullopt;
    auto c = real_number(other.expr);
    if (!c || std::isinf(*c)) return std::nullopt;
    const Expr* e = &other.expr;
    switch (op) {
      case Relation::kLess:
        set.pieces.push_back(unbounded_below(e, *c, false));
        break;
      case Relation::kLessEqual:
        set.pieces.push_back(unbounded_below(e, *c, true));
        break;
      case Relation::kGreater:
        set.pieces.push_back(unbounded_above(e, *c, false));
        break;
      case Relation::kGreaterEqual:
        set.pieces.push_back(unbounded_above(e, *c, true));
        break;
      case Relation::kEqual: {
        Piece p{e, e, true, true, *c, *c};
        set.pieces.push_back(p);
        break;
      }
      case Relation::kNotEqual:
        set.pieces.push_back(unbounded_below(e, *c, false));
        set.pieces.push_back(unbounded_above(e, *c, false));
        break;
    }
    return set;
  }
  if (v.items.size() == 3 && lone_symbol(v.items[1], &set.variable)) {
    auto is_less = [](Relation r) { return r == Relation::kLess || r == Relation::kLessEqual; };
    auto is_greater = [](Relation r) { return r == Relation::kGreater || r == Relation::kGreaterEqual; };
    bool ascending = is_less(v.relations[0]) && is_less(v.relations[1]);
    bool descending = is_greater(v.relations[0]) && is_greater(v.relations[1]);
    if (!ascending && !descending) return std::nullopt;
    const MathValue& lo = ascending ? v.items[0] : v.items[2];
    const MathValue& hi = ascending ? v.items[2] : v.items[0];
    if (lo.kind != VK::kExpr || hi.kind != VK::kExpr) return std::nullopt;
    bool lo_closed = (ascending ? v.relations[0] : v.relations[1]) == Relation::kLessEqual ||
                     (ascending ? v.relations[0] : v.relations[1]) == Relation::kGreaterEqual;
    bool hi_closed = (ascending ? v.relations[1] : v.relations[0]) == Relation::kLessEqual ||
                     (ascending ? v.relations[1] : v.relations[0]) == Relation::kGreaterEqual;
    auto p = piece(lo.expr, lo_closed, hi.expr, hi_closed);
    if (!p) return std::nullopt;
    set.pieces.push_back(*p);
    return set;
  }
  return std::nullopt;
}

std::optional<RealSet> real_set(const MathValue& v, bool tuple_is_interval) {
  RealSet set;
  switch (v.kind) {
    case VK::kInterval: {
      if (v.items[0].kind != VK::kExpr || v.items[1].kind != VK::kExpr) return std::nullopt;
      auto p = piece(v.items[0].expr, v.left_closed, v.items[1].expr, v.right_closed);
      if (!p) return std::nullopt;
      set.pieces.push_back(*p);
      return set;
    }
    case VK::kTuple: {  // (a, b) read as an open interval
      if (!tuple_is_interval || v.items.size() != 2 || v.items[0].kind != VK::kExpr ||
          v.items[1].kind != VK::kExpr)
        return std::nullopt;
      auto p = piece(v.items[0].expr, false, v.items[1].expr, false);
      if (!p) return std::nullopt;
      set.pieces.push_back(*p);
      return set;
    }
    case VK::kReals:
      set.pieces.push_back(unbounded_below(nullptr, std::numeric_limits<double>::infinity(), false));
      return set;
    case VK::kEmptySet:
      return set;
    case VK::kSet:
      for (const MathValue& item : v.items) {
        if (item.kind != VK::kExpr) return std::nullopt;
        auto c = real_number(item.expr);
        if (!c || std::isinf(*c)) return std::nullopt;
        set.pieces.push_back(Piece{&item.expr, &item.expr, true, true, *c, *c});
      }
      return set;
    case VK::kUnion:
      for (const MathValue& part : v.items) {
        auto s = real_set(part, true);
        if (!s) return std::nullopt;
        if (!s->variable.empty()) {
          if (!set.variable.empty() && set.variable != s->variable) return std::nullopt;
          set.variable = s->variable;
        }
        set.pieces.insert(set.pieces.end(), s->pieces.begin(), s->pieces.end());
      }
      return set;
    case VK::kRelation:
      return relation_set(v);
    default:
      return std::nullopt;
  }
}

// Sorted, with empty pieces dropped and overlapping or touching ones merged.
void canonicalize(RealSet* set) {
  std::vector<Piece> kept;
  for (const Piece& p : set->pieces) {
    if (p.lo_v > p.hi_v && !near(p.lo_v, p.hi_v)) continue;
    if (near(p.lo_v, p.hi_v) && !(p.lo_closed && p.hi_closed)) continue;
    kept.push_back(p);
  }
  std::sort(kept.begin(), kept.end(), [](const Piece& a, const Piece& b) {
    if (!near(a.lo_v, b.lo_v)) return a.lo_v < b.lo_v;
    return a.lo_closed && !b.lo_closed;
  });
  std::vector<Piece> merged;
  for (const Piece& p : kept) {
    if (!merged.empty()) {
      Piece& last = merged.back();
      bool touching = near(p.lo_v, last.hi_v) && (p.lo_closed || last.hi_closed);
      if (p.lo_v < last.hi_v || touching) {
        if (near(p.hi_v, last.hi_v)) {
          last.hi_closed = last.hi_closed || p.hi_closed;
        } else if (p.hi_v > last.hi_v) {
          last.hi = p.hi;
          last.hi_v = p.hi_v;
          last.hi_closed = p.hi_closed;
        }
        continue;
      }
    }
    merged.push_back(p);
  }
  set->pieces = std::move(merged);
}

std::string describe(const RealSet& set) {
  if (set.pieces.empty()) return "{}";
  std::string out;
  for (const Piece& p : set.pieces) {
    if (!out.empty()) out += " U ";
    if (p.lo && p.hi && near(p.lo_v, p.hi_v)) {
      out += "{" + to_infix(*p.lo) + "}";
      continue;
    }
    out += p.lo_closed ? "[" : "(";
    out += p.lo ? to_infix(*p.lo) : "-oo";
    out += ", ";
    out += p.hi ? to_infix(*p.hi) : "oo";
    out += p.hi_closed ? "]" : ")";
  }
  return out;
}

// ---- the comparer -------------------------------------------------------------

const double kSamplePoints[] = {0.7318, -1.2913, 1.8477, -0.4391, 2.3561, 0.2719, -2.0837, 1.1173};
constexpr int kSampleCount = 6;

class Comparer {
 public:
  explicit Comparer(const MathCheckOptions& options) : o_(options) {}

  Comparison values(const MathValue& p_in, const MathValue& r_in) {
    // Bindings of several variables: compare variable by variable.
    auto pm = binding_map(p_in), rm = binding_map(r_in);
    if (!pm.empty() && !rm.empty()) return binding_maps(pm, rm);

    // "x = 3" is 3, unless the other side is an equation or inequality that is
    // no binding (then "y = 2x + 3" is compared with "2x - y + 3 = 0" as a relation).
    bool p_relation = p_in.kind == VK::kRelation && !bound_variable(p_in);
    bool r_relation = r_in.kind == VK::kRelation && !bound_variable(r_in);
    MathValue p = r_relation ? p_in : without_bindings(p_in);
    MathValue r = p_relation ? r_in : without_bindings(r_in);

    // One-element containers against a single value.
    if (p.kind == VK::kExpr && (r.kind == VK::kList || r.kind == VK::kSet) && r.items.size() == 1)
      return values(p, r.items[0]);
    if (r.kind == VK::kExpr && (p.kind == VK::kList || p.kind == VK::kSet) && p.items.size() == 1)
      return values(p.items[0], r);

    switch (r.kind) {
      case VK::kExpr:
        if (p.kind == VK::kExpr) return choice_letters_or_exprs(p.expr, r.expr);
        break;
      case VK::kText:
        if (p.kind == VK::kText) return texts(p.text, r.text);
        break;
      case VK::kList:
        if (p.kind == VK::kList || p.kind == VK::kSet) return unordered(p.items, r.items);
        if (p.kind == VK::kTuple) return ordered(p.items, r.items, "elements");
        break;
      case VK::kSet:
        if (p.kind == VK::kList || p.kind == VK::kSet) return unordered(p.items, r.items);
        if (p.kind == VK::kEmptySet && r.items.empty()) return yes(MatchMethod::kSameText, "both empty");
        break;
      case VK::kTuple:
        if (p.kind == VK::kTuple || p.kind == VK::kList) return ordered(p.items, r.items, "elements");
        if (is_vector(p)) return ordered(p.items, r.items, "entries");
        break;
      case VK::kMatrix:
        if (p.kind == VK::kMatrix) {
          if (p.rows != r.rows || p.cols != r.cols)
            return no("the matrices differ in size: " + std::to_string(p.rows) + "x" +
                      std::to_string(p.cols) + " vs " + std::to_string(r.rows) + "x" +
                      std::to_string(r.cols));
          return ordered(p.items, r.items, "entries");
        }
        if (p.kind == VK::kTuple && is_vector(r)) return ordered(p.items, r.items, "entries");
        break;
      default:
        break;
    }
    // Intervals, unions, inequalities and sets of numbers as sets of reals.
    bool r_settish = r.kind == VK::kInterval || r.kind == VK::kUnion || r.kind == VK::kReals ||
                     r.kind == VK::kEmptySet || r.kind == VK::kRelation || r.kind == VK::kSet;
    if (r_settish || r.kind == VK::kTuple) {
      // (a, b) is an open interval when the other side is a set of numbers.
      auto rs = real_set(r, true);
      auto ps = real_set(p, true);
      if (rs && ps) return real_sets(*ps, *rs);
    }
    if (r.kind == VK::kRelation && p.kind == VK::kRelation) {
      // Against a condition solved for one variable, the prediction must be solved too.
      if (o_.require_final_form && rs_solved(r) && !real_set(p, true))
        return no("the prediction " + to_infix(p) + " is not solved for the variable; the reference is " +
                  to_infix(r));
      return relations(p, r);
    }
    if (r.kind == p.kind && (r.kind == VK::kUnion)) return unordered(p.items, r.items);
    if (r.kind == p.kind && r.kind == VK::kInterval) {
      if (p.left_closed != r.left_closed || p.right_closed != r.right_closed)
        return no("the intervals differ in which ends are closed");
      return ordered(p.items, r.items, "endpoints");
    }
    if (r.kind == p.kind && (r.kind == VK::kEmptySet || r.kind == VK::kReals))
      return yes(MatchMethod::kSameText, "the same set");
    if (p.kind == VK::kText && r.kind != VK::kText)
      return no("the prediction is not readable as mathematics, the reference is " +
                std::string(shape_name(r.kind)));
    return no(std::string("the reference is ") + shape_name(r.kind) + ", the prediction is " +
              shape_name(p.kind));
  }

 private:
  const MathCheckOptions& o_;

  static bool rs_solved(const MathValue& v) { return real_set(v, true).has_value(); }

  Comparison binding_maps(const std::map<std::string, const MathValue*>& p,
                          const std::map<std::string, const MathValue*>& r) {
    MatchMethod method = MatchMethod::kSameText;
    for (auto& [name, value] : r) {
      auto it = p.find(name);
      if (it == p.end()) return no("the prediction gives no value for " + name);
      Comparison c = values(*it->second, *value);
      if (!c.equal) return no(name + ": " + c.reason);
      method = weaker(method, c.method);
    }
    if (p.size() != r.size()) return no("the prediction binds other variables too");
    return yes(method, "every variable has the reference's value");
  }

  Comparison texts(const std::string& p, const std::string& r) {
    if (canonical_text(p) == canonical_text(r) && !canonical_text(r).empty())
      return yes(MatchMethod::kText, "the same text");
    return no("different text: '" + p + "' vs '" + r + "'");
  }

  Comparison choice_letters_or_exprs(const Expr& p, const Expr& r) {
    // (C) and c name the same choice.
    if (p.kind == EK::kSymbol && r.kind == EK::kSymbol && p.name.size() == 1 && r.name.size() == 1 &&
        std::toupper(static_cast<unsigned char>(p.name[0])) ==
            std::toupper(static_cast<unsigned char>(r.name[0])))
      return yes(MatchMethod::kText, "the same letter");
    return exprs(p, r);
  }

  Comparison ordered(const std::vector<MathValue>& p, const std::vector<MathValue>& r, const char* what) {
    if (p.size() != r.size())
      return no("different numbers of " + std::string(what) + ": " + std::to_string(p.size()) + " vs " +
                std::to_string(r.size()));
    MatchMethod method = MatchMethod::kSameText;
    for (size_t i = 0; i < r.size(); ++i) {
      Comparison c = values(p[i], r[i]);
      if (!c.equal) return no(std::string(what) + " " + std::to_string(i + 1) + " differ: " + c.reason);
      method = weaker(method, c.method);
    }
    return yes(method, std::string("the same ") + what + " in the same order");
  }

  Comparison unordered(const std::vector<MathValue>& p, const std::vector<MathValue>& r) {
    if (p.size() != r.size())
      return no("different numbers of elements: " + std::to_string(p.size()) + " vs " +
                std::to_string(r.size()));
    std::vector<bool> used(p.size(), false);
    MatchMethod method = MatchMethod::kSameText;
    for (size_t j = 0; j < r.size(); ++j) {
      bool found = false;
      for (size_t i = 0; i < p.size() && !found; ++i) {
        if (used[i]) continue;
        Comparison c = values(p[i], r[j]);
        if (c.equal) {
          used[i] = found = true;
          method = weaker(method, c.method);
        }
      }
      if (!found) return no("nothing in the prediction matches the reference's " + to_infix(r[j]));
    }
    return yes(method, "the same elements");
  }

  Comparison real_sets(RealSet p, RealSet r) {
    if (!p.variable.empty() && !r.variable.empty() && p.variable != r.variable)
      return no("the condition is on " + p.variable + ", the reference's on " + r.variable);
    canonicalize(&p);
    canonicalize(&r);
    std::string sets = describe(p) + " vs " + describe(r);
    if (p.pieces.size() != r.pieces.size()) return no("different sets: " + sets);
    MatchMethod method = MatchMethod::kSameText;
    for (size_t i = 0; i < r.pieces.size(); ++i) {
      const Piece& a = p.pieces[i];
      const Piece& b = r.pieces[i];
      if (a.lo_closed != b.lo_closed || a.hi_closed != b.hi_closed || !near(a.lo_v, b.lo_v) ||
          !near(a.hi_v, b.hi_v))
        return no("different sets: " + sets);
      for (auto [x, y] : {std::pair{a.lo, b.lo}, std::pair{a.hi, b.hi}}) {
        if (!x || !y) continue;  // infinite ends
        Comparison c = exprs(*x, *y);
        if (!c.equal) return no("different endpoints: " + c.reason);
        method = weaker(method, c.method);
      }
    }
    return yes(method, "the same set of numbers: " + describe(r));
  }

  Comparison relations(const MathValue& p_in, const MathValue& r_in) {
    MathValue p = oriented(p_in), r = oriented(r_in);
    if (p.relations != r.relations || p.items.size() != r.items.size()) return no("different relations");
    for (const MathValue& side : p.items)
      if (side.kind != VK::kExpr) return no("a relation between non-values");
    for (const MathValue& side : r.items)
      if (side.kind != VK::kExpr) return no("a relation between non-values");
    if (p.items.size() > 2) return ordered(p.items, r.items, "sides");
    Comparison sides = ordered(p.items, r.items, "sides");
    if (sides.equal) return sides;
    // The same relation up to a factor: a - b = k (c - d).
    Expr dp = Expr::make(EK::kSum, {p.items[0].expr, Expr::make(EK::kNegate, {p.items[1].expr})});
    Expr dr = Expr::make(EK::kSum, {r.items[0].expr, Expr::make(EK::kNegate, {r.items[1].expr})});
    bool need_positive = r.relations[0] != Relation::kEqual && r.relations[0] != Relation::kNotEqual;
    return proportional(dp, dr, need_positive);
  }

  static MathValue oriented(const MathValue& v) {
    bool all_greater = !v.relations.empty();
    for (Relation op : v.relations)
      if (op != Relation::kGreater && op != Relation::kGreaterEqual) all_greater = false;
    if (!all_greater) return v;
    MathValue flipped = v;
    std::reverse(flipped.items.begin(), flipped.items.end());
    std::reverse(flipped.relations.begin(), flipped.relations.end());
    for (Relation& op : flipped.relations)
      op = op == Relation::kGreater ? Relation::kLess : Relation::kLessEqual;
    return flipped;
  }

  Comparison proportional(const Expr& p, const Expr& r, bool need_positive) {
    std::string why;
    if (!small_enough_for_ginac(p, &why) || !small_enough_for_ginac(r, &why))
      return no("too large for the symbolic check (" + why + "); counted as not equal");
    std::string ip = to_infix(p), ir = to_infix(r);
    SymbolicResult s = ginac_ratio_is_constant(ip, ir, o_.symbolic_timeout);
    if (s.outcome == SymbolicResult::Outcome::kYes && (!need_positive || s.ratio_sign > 0))
      return yes(MatchMethod::kSymbolic, "GiNaC: the same relation scaled by " + s.detail);
    if (s.outcome == SymbolicResult::Outcome::kYes)
      return no("the inequality is reversed (scaled by " + s.detail + ")");
    if (s.outcome == SymbolicResult::Outcome::kTimedOut) return no(s.detail + "; counted as not equal");
    return no("different relations (GiNaC: the ratio of the sides is " + s.detail + ")");
  }

  Comparison exprs(const Expr& p, const Expr& r) {
    if (same_expr(p, r)) return yes(MatchMethod::kSameText, "identical: " + to_infix(r));
    int ip = infinity_sign(p), ir = infinity_sign(r);
    if (ip != 0 || ir != 0 || contains_kind(p, EK::kInfinity) || contains_kind(r, EK::kInfinity)) {
      if (ip != 0 && ip == ir) return yes(MatchMethod::kSameText, "the same infinity");
      return no("infinity against " + to_infix(ip ? r : p));
    }
    if (o_.require_final_form && is_numeral(r) && !is_numeral(p))
      return no("the prediction " + to_infix(p) +
                " is not a number but an expression to evaluate; the reference is the number " + to_infix(r));
    bool percent = contains_kind(p, EK::kPercent) || contains_kind(r, EK::kPercent);
    if (!percent) return exprs_read_as(p, r, PercentReading::kNumber);
    if (o_.percent == PercentRule::kDropSign) return exprs_read_as(p, r, PercentReading::kNumber);
    if (o_.percent == PercentRule::kFraction) return exprs_read_as(p, r, PercentReading::kFraction);
    Comparison c = exprs_read_as(p, r, PercentReading::kNumber);
    if (c.equal) return c;
    return exprs_read_as(p, r, PercentReading::kFraction);
  }

  bool rounded_decimal_match(const Expr& p, double reference) const {
    if (o_.rounding_min_places <= 0) return false;
    const Expr& n = p.kind == EK::kNegate ? p.args[0] : p;
    if (n.kind != EK::kNumber || !n.decimal || n.decimals < o_.rounding_min_places) return false;
    double value = p.kind == EK::kNegate ? -n.number.to_double() : n.number.to_double();
    double half_unit = 0.5 * std::pow(10.0, -n.decimals);
    return std::abs(value - reference) <= half_unit * (1 + 1e-9);
  }

  static bool decimal_literal(const Expr& e) {
    const Expr& n = e.kind == EK::kNegate || e.kind == EK::kPercent ? e.args[0] : e;
    return n.kind == EK::kNumber && n.decimal;
  }

  // math-verify's rule: a decimal on either side, both rounded to N places.
  bool rounded_to_places_match(const Expr& p, const Expr& r, double vp, double vr) const {
    if (o_.float_rounding_places <= 0 || !(decimal_literal(p) || decimal_literal(r))) return false;
    double scale = std::pow(10.0, o_.float_rounding_places);
    return std::round(vp * scale) == std::round(vr * scale);
  }

  Comparison rounded_yes(double vr) const {
    return yes(MatchMethod::kNumeric, "equal rounded to " + std::to_string(o_.float_rounding_places) +
                                          " places: " + short_number(vr));
  }

  Comparison exprs_read_as(const Expr& p, const Expr& r, PercentReading reading) {
    auto ep = exact_value(p, reading), er = exact_value(r, reading);
    if (ep && er) {
      if (*ep == *er) return yes(MatchMethod::kExactRational, "equal as exact rationals: " + er->to_string());
      if (rounded_to_places_match(p, r, ep->to_double(), er->to_double()))
        return rounded_yes(er->to_double());
      if (rounded_decimal_match(p, er->to_double()))
        return yes(MatchMethod::kNumeric, "the reference " + er->to_string() + " rounds to the prediction");
      return no("different numbers: " + ep->to_string() + " vs " + er->to_string());
    }
    std::set<std::string> symbols;
    collect_symbols(p, &symbols);
    collect_symbols(r, &symbols);
    if (symbols.empty()) {
      NumericValue vp = numeric_value(p, {}, reading), vr = numeric_value(r, {}, reading);
      if (!vp.ok() || !vr.ok()) return no("cannot evaluate " + to_infix(vp.ok() ? r : p, reading));
      double scale = std::max(std::abs(vp.value), std::abs(vr.value));
      double distance = std::abs(vp.value - vr.value);
      if (distance <= o_.relative_tolerance * scale || distance <= 1e-12)
        return yes(MatchMethod::kNumeric, "equal numerically: " + short_number(vr.value));
      bool real = std::abs(vr.value.imag()) < 1e-12 && std::abs(vp.value.imag()) < 1e-12;
      if (real && rounded_to_places_match(p, r, vp.value.real(), vr.value.real()))
        return rounded_yes(vr.value.real());
      if (std::abs(vr.value.imag()) < 1e-12 && rounded_decimal_match(p, vr.value.real()))
        return yes(MatchMethod::kNumeric,
                   "the reference " + short_number(vr.value) + " rounds to the prediction");
      return no("different numbers: " + short_number(vp.value) + " vs " + short_number(vr.value));
    }
    if (o_.require_final_form && !has_variable_denominator(r) && has_variable_denominator(p))
      return no("the prediction " + to_infix(p, reading) +
                " is not simplified: it divides by an expression in the variables, the reference " +
                to_infix(r, reading) + " does not");
    return symbolic(p, r, reading, symbols);
  }

  Comparison symbolic(const Expr& p, const Expr& r, PercentReading reading,
                      const std::set<std::string>& symbols) {
    // Sample points: one difference is enough to say no.
    int agreeing = 0;
    for (int k = 0; k < kSampleCount; ++k) {
      SymbolValues at;
      int j = 0;
      for (const std::string& name : symbols) {
        at[name] = kSamplePoints[(k + 3 * j) % std::size(kSamplePoints)] + 0.0137 * j;
        ++j;
      }
      NumericValue vp = numeric_value(p, at, reading), vr = numeric_value(r, at, reading);
      if (!vp.ok() || !vr.ok()) continue;
      double distance = std::abs(vp.value - vr.value);
      double scale = std::max(std::abs(vp.value), std::abs(vr.value));
      double noise = 1e-13 * (vp.magnitude + vr.magnitude);
      if (distance > 1e-7 * scale + noise + 1e-300) {
        std::string where;
        for (auto& [name, value] : at)
          where += (where.empty() ? "" : ", ") + name + "=" + short_number(value);
        return no("different at " + where + ": " + short_number(vp.value) + " vs " + short_number(vr.value));
      }
      ++agreeing;
    }
    std::string why = "more than 400 parts";
    if (node_count(p) + node_count(r) > 400 || !small_enough_for_ginac(p, &why) ||
        !small_enough_for_ginac(r, &why))
      return no("too large for the symbolic check (" + why + "); counted as not equal");
    SymbolicResult s =
        ginac_difference_is_zero(to_infix(p, reading), to_infix(r, reading), o_.symbolic_timeout);
    using Outcome = SymbolicResult::Outcome;
    if (s.outcome == Outcome::kYes)
      return yes(MatchMethod::kSymbolic, "GiNaC: the difference simplifies to 0");
    if (s.outcome == Outcome::kTimedOut) return no(s.detail + "; counted as not equal");
    bool transcendental = contains_function(p) || contains_function(r);
    if (agreeing >= 3 && o_.accept_numeric_identity && (transcendental || s.outcome == Outcome::kUnreadable))
      return yes(MatchMethod::kNumericIdentity,
                 "equal at " + std::to_string(agreeing) +
                     " sample points; GiNaC could not reduce the difference (" + s.detail + ")");
    if (s.outcome == Outcome::kUnreadable) return no("GiNaC could not read it: " + s.detail);
    return no("GiNaC: the difference is " + s.detail + ", not 0");
  }
};

}  // namespace

Comparison compare_answers(const MathValue& prediction, const MathValue& reference,
                           const MathCheckOptions& options) {
  return Comparer(options).values(prediction, reference);
}

}  // namespace rlwb::rewards
