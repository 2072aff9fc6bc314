// The parsed form of an answer, as the math checker compares it.
//
// Expr is one scalar expression (2\sqrt{3}, \frac{x+1}{2}, 50\%); MathValue is
// the shape around expressions that answers take: a bare comma list, a tuple,
// a set, an interval, a union, a matrix, a relation (x = 3, 1 < x \le 5) or
// plain text (\text{Evelyn}). rewards/math/latex_parser.h builds them from
// normalised LaTeX; compare.h decides whether two of them are the same answer;
// infix.h prints them for GiNaC and for humans.
#pragma once

#include <string>
#include <vector>

#include "rewards/math/rational.h"

namespace rlwb::rewards {

struct Expr {
  enum class Kind {
    kNumber,     // number (exact); decimal says it was written with a point
    kSymbol,     // name: "x", "x_1", "alpha"
    kConstant,   // name: "pi", "e" or "i"
    kInfinity,   // +infinity (minus infinity is kNegate of it)
    kSum,        // args[0] + args[1] + ...
    kProduct,    // args[0] * args[1] * ...
    kQuotient,   // args[0] / args[1]
    kPower,      // args[0] ^ args[1]
    kNegate,     // -args[0]
    kPlusMinus,  // args[0] \pm args[1] (one arg: \pm args[0]); expanded before comparing
    kPercent,    // args[0] \%  (its value depends on MathCheckOptions::percent)
    kFunction,   // name(args...): sqrt, sin, cos, tan, asin, acos, atan, sinh, cosh,
                 // tanh, log, exp, abs, factorial, binomial
  };

  Kind kind = Kind::kNumber;
  Rational number;
  bool decimal = false;  // kNumber written with a decimal point
  int decimals = 0;      // digits after that point as written ("0.50": 2)
  std::string name;
  std::vector<Expr> args;

  static Expr make_number(const Rational& value, bool decimal = false);
  static Expr make_symbol(std::string name);
  static Expr make_constant(std::string name);
  static Expr make_infinity();
  static Expr make(Kind kind, std::vector<Expr> args);
  static Expr make_function(std::string name, std::vector<Expr> args);
};

enum class Relation { kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual };
const char* relation_text(Relation r);  // "=", "\ne", "<", "\le", ">", "\ge"

struct MathValue {
  enum class Kind {
    kExpr,      // expr
    kList,      // items: a bare comma list "1, 2" (order does not matter)
    kTuple,     // items: (1, 2) or [1, 2, 3] or \langle 1, 2 \rangle (order matters);
                // a two-item tuple in round brackets may also be an open interval
    kSet,       // items: \{1, 2\} (order does not matter)
    kInterval,  // items = {low, high}; left_closed, right_closed
    kUnion,     // items: the parts of A \cup B \cup ...
    kMatrix,    // items row-major; rows x cols
    kRelation,  // items = chain operands, relations between consecutive ones
    kEmptySet,  // \emptyset, \varnothing, \{\}
    kReals,     // \mathbb{R}: all real numbers
    kText,      // text: words that are not mathematics, normalised
  };

  Kind kind = Kind::kExpr;
  Expr expr;
  std::vector<MathValue> items;
  std::vector<Relation> relations;
  bool left_closed = false;
  bool right_closed = false;
  size_t rows = 0;
  size_t cols = 0;
  std::string text;

  static MathValue of(Expr e);
  static MathValue of_items(Kind kind, std::vector<MathValue> items);
  static MathValue of_text(std::string text);
};

}  // namespace rlwb::rewards
