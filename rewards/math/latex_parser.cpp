// LaTeX answer parser (see latex_parser.h): structure first (unions, lists,
// relations, brackets, matrices), then a recursive-descent expression reader.
#include "rewards/math/latex_parser.h"

#include <algorithm>
#include <cctype>
#include <functional>

#include "rewards/math/latex_tokens.h"

namespace rlwb::rewards {
namespace {

using K = LatexToken::Kind;
using EK = Expr::Kind;

struct ParseFailure {
  std::string what;
};

[[noreturn]] void fail(std::string what) { throw ParseFailure{std::move(what)}; }

bool is_opener(const LatexToken& t) {
  return (t.kind == K::kPunct && (t.text == "(" || t.text == "[" || t.text == "{")) ||
         (t.kind == K::kCommand && (t.text == "{" || t.text == "langle"));
}
bool is_closer(const LatexToken& t) {
  return (t.kind == K::kPunct && (t.text == ")" || t.text == "]" || t.text == "}")) ||
         (t.kind == K::kCommand && (t.text == "}" || t.text == "rangle"));
}

bool is_function_name(std::string_view n) {
  static constexpr std::string_view kNames[] = {"sin",  "cos",    "tan",    "sec",    "csc",
                                                "cot",  "arcsin", "arccos", "arctan", "sinh",
                                                "cosh", "tanh",   "ln",     "log",    "exp"};
  return std::find(std::begin(kNames), std::end(kNames), n) != std::end(kNames);
}

bool is_greek(std::string_view n) {
  static constexpr std::string_view kNames[] = {
      "alpha",    "beta",    "gamma", "delta",  "epsilon", "varepsilon", "zeta",  "eta",   "theta",
      "vartheta", "iota",    "kappa", "lambda", "mu",      "nu",         "xi",    "rho",   "sigma",
      "tau",      "upsilon", "phi",   "varphi", "chi",     "psi",        "omega", "Gamma", "Delta",
      "Theta",    "Lambda",  "Xi",    "Sigma",  "Phi",     "Psi",        "Omega"};
  return std::find(std::begin(kNames), std::end(kNames), n) != std::end(kNames);
}

bool is_relation(const LatexToken& t) {
  if (t.kind == K::kPunct) return t.text == "=" || t.text == "<" || t.text == ">";
  if (t.kind == K::kCommand)
    return t.text == "le" || t.text == "ge" || t.text == "ne" || t.text == "in" || t.text == "approx";
  return false;
}

Relation relation_of(const LatexToken& t) {
  if (t.text == "<") return Relation::kLess;
  if (t.text == ">") return Relation::kGreater;
  if (t.text == "le") return Relation::kLessEqual;
  if (t.text == "ge") return Relation::kGreaterEqual;
  if (t.text == "ne") return Relation::kNotEqual;
  return Relation::kEqual;
}

bool is_word(const LatexToken& t, std::string_view w) {
  return (t.kind == K::kWord || t.kind == K::kText) && t.text == w;
}

Expr product_of(Expr a, Expr b) {
  if (a.kind == EK::kProduct) {
    a.args.push_back(std::move(b));
    return a;
  }
  return Expr::make(EK::kProduct, {std::move(a), std::move(b)});
}

bool integer_literal(const Expr& e) { return e.kind == EK::kNumber && !e.decimal && e.number.is_integer(); }

class Parser {
 public:
  explicit Parser(const std::vector<LatexToken>& tokens) : t_(tokens) {}

  MathValue value(size_t b, size_t e) {
    if (b >= e) fail("an empty part");
    using VK = MathValue::Kind;
    if (auto parts = split(b, e, [](const LatexToken& t) { return t.is(K::kCommand, "cup"); });
        parts.size() > 1)
      return items_of(VK::kUnion, parts);
    if (auto parts = split(b, e, [](const LatexToken& t) { return is_word(t, "or"); }); parts.size() > 1)
      return items_of(VK::kUnion, parts);
    if (auto parts = split(b, e,
                           [](const LatexToken& t) {
                             return t.is(K::kPunct, ",") || t.is(K::kPunct, ";") || is_word(t, "and");
                           });
        parts.size() > 1) {
      // "1, 2, and 3": the empty part between ", and" is no item
      std::erase_if(parts, [&](auto part) {
        return part.first == part.second && part.second < e && is_word(t_[part.second], "and");
      });
      return items_of(VK::kList, parts);
    }
    if (auto parts = split(b, e, is_relation); parts.size() > 1) return relation(b, e, parts);
    // a ratio 3:4 is the number 3/4
    if (auto parts = split(b, e, [](const LatexToken& t) { return t.is(K::kPunct, ":"); }); parts.size() == 2)
      return MathValue::of(Expr::make(EK::kQuotient, {expression(parts[0].first, parts[0].second),
                                                      expression(parts[1].first, parts[1].second)}));

    if (is_opener(t_[b]) && match(b, e) == e - 1) {
      if (auto v = bracketed(b, e)) return *v;
      // (\begin{matrix}...\end{matrix}): brackets around a structure
      if (e - b > 2 && t_[b + 1].kind == K::kEnvBegin && t_[e - 2].kind == K::kEnvEnd)
        return value(b + 1, e - 1);
    }
    if (t_[b].kind == K::kEnvBegin && t_[e - 1].kind == K::kEnvEnd) return matrix(b, e);
    if (e - b == 1) {
      const LatexToken& t = t_[b];
      if (t.is(K::kCommand, "emptyset")) return MathValue::of_items(VK::kEmptySet, {});
      if (t.is(K::kCommand, "mathbbR")) return MathValue::of_items(VK::kReals, {});
    }
    Expr x = expression(b, e);
    std::vector<Expr> variants = expand_plus_minus(x);
    if (variants.size() == 1) return MathValue::of(std::move(variants[0]));
    std::vector<MathValue> items;
    for (auto& v : variants) items.push_back(MathValue::of(std::move(v)));
    return MathValue::of_items(VK::kList, std::move(items));
  }

 private:
  const std::vector<LatexToken>& t_;
  size_t pos_ = 0;
  size_t end_ = 0;
  int abs_depth_ = 0;

  // ---- structure ----------------------------------------------------------

  // Index of the closer matching the opener at open (any bracket kind, so that
  // half-open intervals match), or npos.
  size_t match(size_t open, size_t e) const {
    int depth = 0;
    for (size_t i = open; i < e; ++i) {
      if (is_opener(t_[i])) ++depth;
      if (is_closer(t_[i]) && --depth == 0) return i;
    }
    return std::string::npos;
  }

  std::vector<std::pair<size_t, size_t>> split(size_t b, size_t e,
                                               const std::function<bool(const LatexToken&)>& at) const {
    std::vector<std::pair<size_t, size_t>> parts;
    int depth = 0;
    bool in_env = false;
    size_t start = b;
    for (size_t i = b; i < e; ++i) {
      const LatexToken& t = t_[i];
      if (t.kind == K::kEnvBegin) in_env = true;
      if (t.kind == K::kEnvEnd) in_env = false;
      if (is_opener(t)) ++depth;
      if (is_closer(t)) --depth;
      if (depth == 0 && !in_env && at(t)) {
        parts.emplace_back(start, i);
        start = i + 1;
      }
    }
    parts.emplace_back(start, e);
    return parts;
  }

  MathValue items_of(MathValue::Kind kind, const std::vector<std::pair<size_t, size_t>>& parts) {
    std::vector<MathValue> items;
    for (auto [pb, pe] : parts) {
      if (pb >= pe && kind == MathValue::Kind::kList) fail("an empty item in a list");
      items.push_back(value(pb, pe));
    }
    return MathValue::of_items(kind, std::move(items));
  }

  MathValue relation(size_t b, size_t e, const std::vector<std::pair<size_t, size_t>>& parts) {
    MathValue v;
    v.kind = MathValue::Kind::kRelation;
    for (size_t k = 0; k + 1 < parts.size(); ++k) {
      const LatexToken& op = t_[parts[k].second];
      if (op.is(K::kCommand, "in")) {
        // "x \in S": the answer is S
        if (parts.size() != 2) fail("\\in inside a chain of relations");
        return value(parts[1].first, parts[1].second);
      }
      v.relations.push_back(relation_of(op));
    }
    for (auto [pb, pe] : parts) v.items.push_back(value(pb, pe));
    return v;
  }

  std::optional<MathValue> bracketed(size_t b, size_t e) {
    using VK = MathValue::Kind;
    const LatexToken& open = t_[b];
    const LatexToken& close = t_[e - 1];
    bool set = open.is(K::kCommand, "{");
    if (set && !close.is(K::kCommand, "}")) fail("\\{ closed by something else");
    if (set && e - b == 2) return MathValue::of_items(VK::kEmptySet, {});
    auto parts = split(b + 1, e - 1, [](const LatexToken& t) { return t.is(K::kPunct, ","); });
    if (set) return items_of(VK::kSet, parts);
    if (open.is(K::kCommand, "langle")) return items_of(VK::kTuple, parts);
    if (parts.size() < 2) return std::nullopt;  // (x+1) is just grouping
    bool round_open = open.is(K::kPunct, "("), round_close = close.is(K::kPunct, ")");
    bool square_open = open.is(K::kPunct, "["), square_close = close.is(K::kPunct, "]");
    if (!(round_open || square_open) || !(round_close || square_close)) fail("a list in braces");
    if (parts.size() == 2 && !(round_open && round_close)) {
      MathValue v = items_of(VK::kInterval, parts);
      v.left_closed = square_open;
      v.right_closed = square_close;
      return v;
    }
    if (round_open != round_close) fail("a list of more than two items with mixed brackets");
    return items_of(VK::kTuple, parts);
  }

  MathValue matrix(size_t b, size_t e) {
    const std::string& env = t_[b].text;
    static constexpr std::string_view kEnvs[] = {"pmatrix", "bmatrix",     "matrix", "vmatrix",
                                                 "Bmatrix", "smallmatrix", "array"};
    if (std::find(std::begin(kEnvs), std::end(kEnvs), env) == std::end(kEnvs))
      fail("unknown environment " + env);
    if (t_[e - 1].text != env) fail("\\begin{" + env + "} closed by \\end{" + t_[e - 1].text + "}");
    size_t body = b + 1;
    if (env == "array" && body < e && t_[body].is(K::kPunct, "{")) {  // column spec
      size_t close = match(body, e);
      if (close == std::string::npos) fail("an array without its column spec");
      body = close + 1;
    }
    MathValue m;
    m.kind = MathValue::Kind::kMatrix;
    auto rows = split(body, e - 1, [](const LatexToken& t) { return t.is(K::kCommand, "\\"); });
    if (!rows.empty() && rows.back().first == rows.back().second) rows.pop_back();  // "\\" at end
    for (auto [rb, re] : rows) {
      auto cells = split(rb, re, [](const LatexToken& t) { return t.is(K::kPunct, "&"); });
      if (m.cols == 0) m.cols = cells.size();
      if (cells.size() != m.cols) fail("matrix rows of different lengths");
      for (auto [cb, ce] : cells) {
        MathValue cell = value(cb, ce);
        if (cell.kind != MathValue::Kind::kExpr) fail("a matrix cell that is not an expression");
        m.items.push_back(std::move(cell));
      }
      ++m.rows;
    }
    if (m.rows == 0) fail("an empty matrix");
    return m;
  }

  // ---- expressions --------------------------------------------------------

  Expr expression(size_t b, size_t e) {
    size_t saved_pos = pos_, saved_end = end_;
    int saved_abs = abs_depth_;
    pos_ = b;
    end_ = e;
    abs_depth_ = 0;
    if (b >= e) fail("an empty expression");
    Expr x = sum();
    if (pos_ != end_) fail("unexpected '" + t_[pos_].text + "'");
    pos_ = saved_pos;
    end_ = saved_end;
    abs_depth_ = saved_abs;
    return x;
  }

  bool at_end() const { return pos_ >= end_; }
  const LatexToken& peek() const { return t_[pos_]; }
  bool peek_is(K kind, std::string_view text) const { return !at_end() && t_[pos_].is(kind, text); }

  Expr sum() {
    Expr acc = term();
    std::vector<Expr> terms;
    terms.push_back(std::move(acc));
    auto collapse = [&]() {
      Expr s = terms.size() == 1 ? std::move(terms[0]) : Expr::make(EK::kSum, std::move(terms));
      terms.clear();
      return s;
    };
    while (!at_end()) {
      if (peek_is(K::kPunct, "+")) {
        ++pos_;
        terms.push_back(term());
      } else if (peek_is(K::kPunct, "-")) {
        ++pos_;
        terms.push_back(Expr::make(EK::kNegate, {term()}));
      } else if (peek_is(K::kCommand, "pm") || peek_is(K::kCommand, "mp")) {
        bool minus_first = peek().text == "mp";
        ++pos_;
        Expr left = collapse();
        Expr right = term();
        if (minus_first) right = Expr::make(EK::kNegate, {std::move(right)});
        terms.push_back(Expr::make(EK::kPlusMinus, {std::move(left), std::move(right)}));
      } else {
        break;
      }
    }
    return collapse();
  }

  bool starts_implicit_factor() const {
    if (at_end()) return false;
    const LatexToken& t = peek();
    switch (t.kind) {
      case K::kLetter:
        return true;
      case K::kPunct:
        return t.text == "(" || t.text == "{" || (t.text == "|" && abs_depth_ == 0);
      case K::kCommand:
        return t.text == "frac" || t.text == "sqrt" || t.text == "binom" || t.text == "pi" ||
               t.text == "infty" || is_function_name(t.text) || is_greek(t.text);
      default:
        return false;
    }
  }

  Expr term() {
    Expr acc = unary();
    while (!at_end()) {
      const LatexToken& t = peek();
      if (t.is(K::kPunct, "*") || t.is(K::kCommand, "cdot") || t.is(K::kCommand, "times")) {
        ++pos_;
        acc = product_of(std::move(acc), unary());
      } else if (t.is(K::kPunct, "/") || t.is(K::kCommand, "div")) {
        ++pos_;
        acc = Expr::make(EK::kQuotient, {std::move(acc), unary()});
      } else if (t.is(K::kCommand, "frac") &&
                 (integer_literal(acc) || (acc.kind == EK::kNegate && integer_literal(acc.args[0])))) {
        // 2\frac{1}{4}: a mixed number when the fraction is of two integers
        size_t save = pos_;
        Expr f = power();
        if (f.kind == EK::kQuotient && integer_literal(f.args[0]) && integer_literal(f.args[1]) &&
            !f.args[1].number.is_zero()) {
          bool negative = acc.kind == EK::kNegate;
          const Rational& whole = negative ? acc.args[0].number : acc.number;
          auto frac = divide(f.args[0].number, f.args[1].number);
          auto mixed = frac ? add(whole, *frac) : std::nullopt;
          if (!mixed) fail("a mixed number too large");
          Expr n = Expr::make_number(*mixed);
          acc = negative ? Expr::make(EK::kNegate, {n}) : n;
        } else {
          pos_ = save;
          acc = product_of(std::move(acc), power());
        }
      } else if (starts_implicit_factor()) {
        acc = product_of(std::move(acc), power());
      } else {
        break;
      }
    }
    return acc;
  }

  Expr unary() {
    if (at_end()) fail("an operator with nothing after it");
    if (peek_is(K::kPunct, "-")) {
      ++pos_;
      return Expr::make(EK::kNegate, {unary()});
    }
    if (peek_is(K::kPunct, "+")) {
      ++pos_;
      return unary();
    }
    if (peek_is(K::kCommand, "pm") || peek_is(K::kCommand, "mp")) {
      ++pos_;
      return Expr::make(EK::kPlusMinus, {unary()});
    }
    return power();
  }

  Expr power() {
    Expr base = postfix();
    while (peek_is(K::kPunct, "^")) {
      ++pos_;
      base = Expr::make(EK::kPower, {std::move(base), exponent()});
      base = postfix_ops(std::move(base));
    }
    return base;
  }

  Expr exponent() {
    if (at_end()) fail("^ with no exponent");
    if (peek_is(K::kPunct, "-")) {
      ++pos_;
      return Expr::make(EK::kNegate, {exponent()});
    }
    if (peek_is(K::kPunct, "+")) {
      ++pos_;
      return exponent();
    }
    return primary();
  }

  Expr postfix() { return postfix_ops(primary()); }

  Expr postfix_ops(Expr x) {
    while (!at_end()) {
      if (peek_is(K::kPunct, "!")) {
        ++pos_;
        x = Expr::make_function("factorial", {std::move(x)});
      } else if (peek_is(K::kCommand, "%")) {
        ++pos_;
        x = Expr::make(EK::kPercent, {std::move(x)});
      } else {
        break;
      }
    }
    return x;
  }

  // A {group} or one token, as LaTeX reads a command's argument.
  Expr argument() {
    if (at_end()) fail("a command without its argument");
    if (peek_is(K::kPunct, "{")) return group();
    return primary();
  }

  Expr group() {
    size_t close = match(pos_, end_);
    if (close == std::string::npos) fail("an unclosed '" + peek().text + "'");
    Expr inner = expression(pos_ + 1, close);
    pos_ = close + 1;
    return inner;
  }

  std::string subscript() {
    ++pos_;  // '_'
    if (at_end()) fail("_ with no subscript");
    size_t b = pos_, e = pos_ + 1;
    if (peek_is(K::kPunct, "{")) {
      size_t close = match(pos_, end_);
      if (close == std::string::npos) fail("an unclosed subscript");
      b = pos_ + 1;
      e = close;
    }
    std::string sub;
    for (size_t i = b; i < e; ++i)
      for (char c : t_[i].text)
        if (std::isalnum(static_cast<unsigned char>(c))) sub += c;
    if (sub.empty()) fail("an empty subscript");
    pos_ = e == pos_ + 1 ? e : e + 1;
    return sub;
  }

  Expr named(std::string name) {
    if (peek_is(K::kPunct, "_")) return Expr::make_symbol(name + "_" + subscript());
    return Expr::make_symbol(std::move(name));
  }

  Expr function_call(std::string name) {
    Expr power_of_result;
    bool has_power = false, inverse = false;
    Expr base;
    bool has_base = false;
    for (int k = 0; k < 2; ++k) {
      if (peek_is(K::kPunct, "^")) {
        ++pos_;
        Expr p = exponent();
        if (p.kind == EK::kNegate && integer_literal(p.args[0]) && p.args[0].number == Rational::integer(1)) {
          inverse = true;  // \sin^{-1} x
        } else {
          power_of_result = std::move(p);
          has_power = true;
        }
      } else if (peek_is(K::kPunct, "_") && name == "log") {
        ++pos_;
        base = argument();
        has_base = true;
      }
    }
    Expr arg;
    if (peek_is(K::kPunct, "(")) {
      size_t close = match(pos_, end_);
      if (close == std::string::npos) fail("an unclosed '('");
      arg = expression(pos_ + 1, close);
      pos_ = close + 1;
    } else if (peek_is(K::kPunct, "{")) {
      arg = group();
    } else {
      // \sin 2x: the argument runs over a product of numbers and letters.
      arg = power();
      while (!at_end() && (peek().kind == K::kLetter || is_greek(peek().text) || peek_is(K::kCommand, "pi")))
        arg = product_of(std::move(arg), power());
    }
    if (inverse) {
      if (name == "sin" || name == "cos" || name == "tan") {
        name = "a" + name;
      } else {
        fail("\\" + name + "^{-1}");
      }
    }
    static const std::pair<std::string_view, std::string_view> kRenames[] = {
        {"arcsin", "asin"}, {"arccos", "acos"}, {"arctan", "atan"}, {"ln", "log"}};
    for (auto [from, to] : kRenames)
      if (name == from) name = std::string(to);
    Expr call;
    if (name == "sec" || name == "csc" || name == "cot") {
      std::string inner = name == "sec" ? "cos" : (name == "csc" ? "sin" : "tan");
      call = Expr::make(EK::kQuotient, {Expr::make_number(Rational::integer(1)),
                                        Expr::make_function(inner, {std::move(arg)})});
    } else {
      call = Expr::make_function(name, {std::move(arg)});
    }
    if (has_base)
      call = Expr::make(EK::kQuotient, {std::move(call), Expr::make_function("log", {std::move(base)})});
    if (has_power) call = Expr::make(EK::kPower, {std::move(call), std::move(power_of_result)});
    return call;
  }

  Expr primary() {
    if (at_end()) fail("an expression ends too early");
    const LatexToken& t = peek();
    switch (t.kind) {
      case K::kNumber: {
        ++pos_;
        if (size_t bar = t.text.find('|'); bar != std::string::npos) return repeating(t.text, bar);
        auto value = Rational::parse_decimal(t.text);
        if (!value) fail("the number " + t.text + " is too long for exact arithmetic");
        size_t point = t.text.find('.');
        Expr n = Expr::make_number(*value, point != std::string::npos);
        if (point != std::string::npos) n.decimals = static_cast<int>(t.text.size() - point - 1);
        return n;
      }
      case K::kLetter: {
        ++pos_;
        bool subscripted = peek_is(K::kPunct, "_");
        if (!subscripted && (t.text == "e" || t.text == "i")) return Expr::make_constant(t.text);
        return named(t.text);
      }
      case K::kPunct: {
        if (t.text == "(" || t.text == "[") {
          size_t close = match(pos_, end_);
          if (close == std::string::npos) fail("an unclosed '" + t.text + "'");
          Expr inner = expression(pos_ + 1, close);
          pos_ = close + 1;
          return inner;
        }
        if (t.text == "{") return group();
        if (t.text == "|") {
          ++pos_;
          ++abs_depth_;
          Expr inner = sum();
          if (!peek_is(K::kPunct, "|")) fail("an unclosed |");
          ++pos_;
          --abs_depth_;
          return Expr::make_function("abs", {std::move(inner)});
        }
        fail("unexpected '" + t.text + "'");
      }
      case K::kCommand: {
        ++pos_;
        const std::string& n = t.text;
        if (n == "frac") {
          Expr num = argument();
          Expr den = argument();
          return Expr::make(EK::kQuotient, {std::move(num), std::move(den)});
        }
        if (n == "sqrt") {
          if (peek_is(K::kPunct, "[")) {
            size_t close = pos_;
            while (close < end_ && !t_[close].is(K::kPunct, "]")) ++close;
            if (close == end_) fail("an unclosed \\sqrt[");
            Expr index = expression(pos_ + 1, close);
            pos_ = close + 1;
            Expr radicand = argument();
            return Expr::make(
                EK::kPower,
                {std::move(radicand),
                 Expr::make(EK::kQuotient, {Expr::make_number(Rational::integer(1)), std::move(index)})});
          }
          return Expr::make_function("sqrt", {argument()});
        }
        if (n == "binom") {
          Expr top = argument();
          Expr bottom = argument();
          return Expr::make_function("binomial", {std::move(top), std::move(bottom)});
        }
        if (n == "pi") return Expr::make_constant("pi");
        if (n == "infty") return Expr::make_infinity();
        if (is_function_name(n)) return function_call(n);
        if (is_greek(n)) return named(n);
        fail("the command \\" + n + " in an expression");
      }
      case K::kWord:
      case K::kText:
        fail("the word '" + t.text + "'");
      case K::kEnvBegin:
      case K::kEnvEnd:
        fail("an environment inside an expression");
    }
    fail("unexpected token");
  }

  // 0.1\overline{6} = 0.1 + 0.0666... = 1/10 + 6 / (10 * 9)
  static Expr repeating(const std::string& text, size_t bar) {
    std::string head = text.substr(0, bar), repeat = text.substr(bar + 1);
    size_t places = head.size() - head.find('.') - 1;
    auto start = Rational::parse_decimal(head);
    auto digits = Rational::parse_decimal(repeat);
    auto shift = rlwb::rewards::power(Rational::integer(10), static_cast<long long>(places));
    auto nines = rlwb::rewards::power(Rational::integer(10), static_cast<long long>(repeat.size()));
    std::optional<Rational> value;
    if (start && digits && shift && nines) {
      auto den = multiply(*shift, *subtract(*nines, Rational::integer(1)));
      auto tail = den ? divide(*digits, *den) : std::nullopt;
      value = tail ? add(*start, *tail) : std::nullopt;
    }
    if (!value) fail("the repeating decimal " + head + "\\overline{" + repeat + "} is too long");
    return Expr::make_number(*value);
  }

  // ---- \pm ------------------------------------------------------------------

  static std::vector<Expr> expand_plus_minus(const Expr& x) {
    if (x.kind == EK::kPlusMinus) {
      std::vector<Expr> out;
      std::vector<Expr> lefts = x.args.size() == 2 ? expand_plus_minus(x.args[0]) : std::vector<Expr>{};
      for (const Expr& right : expand_plus_minus(x.args.back())) {
        if (x.args.size() == 1) {
          out.push_back(right);
          out.push_back(Expr::make(EK::kNegate, {right}));
          continue;
        }
        for (const Expr& left : lefts) {
          out.push_back(Expr::make(EK::kSum, {left, right}));
          out.push_back(Expr::make(EK::kSum, {left, Expr::make(EK::kNegate, {right})}));
        }
      }
      if (out.size() > 16) fail("too many \\pm");
      return out;
    }
    std::vector<Expr> out{x};
    for (size_t a = 0; a < x.args.size(); ++a) {
      std::vector<Expr> arg_variants = expand_plus_minus(x.args[a]);
      if (arg_variants.size() == 1) continue;
      std::vector<Expr> next;
      for (const Expr& partial : out)
        for (const Expr& v : arg_variants) {
          Expr copy = partial;
          copy.args[a] = v;
          next.push_back(std::move(copy));
        }
      out = std::move(next);
      if (out.size() > 16) fail("too many \\pm");
    }
    return out;
  }
};

}  // namespace

ParsedAnswer parse_answer(std::string_view normalized) {
  ParsedAnswer parsed;
  std::vector<LatexToken> tokens;
  std::string error;
  if (normalized.empty()) {
    error = "the answer is empty";
  } else if (tokenize_latex(normalized, &tokens, &error)) {
    try {
      Parser parser(tokens);
      parsed.value = parser.value(0, tokens.size());
      return parsed;
    } catch (const ParseFailure& f) {
      error = f.what;
    }
  }
  parsed.value = MathValue::of_text(std::string(normalized));
  parsed.is_text_fallback = true;
  parsed.error = error;
  return parsed;
}

}  // namespace rlwb::rewards
