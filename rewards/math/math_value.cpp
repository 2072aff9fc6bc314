// Constructors of the answer tree (see math_value.h).
#include "rewards/math/math_value.h"

namespace rlwb::rewards {

Expr Expr::make_number(const Rational& value, bool decimal) {
  Expr e;
  e.kind = Kind::kNumber;
  e.number = value;
  e.decimal = decimal;
  return e;
}

Expr Expr::make_symbol(std::string name) {
  Expr e;
  e.kind = Kind::kSymbol;
  e.name = std::move(name);
  return e;
}

Expr Expr::make_constant(std::string name) {
  Expr e;
  e.kind = Kind::kConstant;
  e.name = std::move(name);
  return e;
}

Expr Expr::make_infinity() {
  Expr e;
  e.kind = Kind::kInfinity;
  return e;
}

Expr Expr::make(Kind kind, std::vector<Expr> args) {
  Expr e;
  e.kind = kind;
  e.args = std::move(args);
  return e;
}

Expr Expr::make_function(std::string name, std::vector<Expr> args) {
  Expr e;
  e.kind = Kind::kFunction;
  e.name = std::move(name);
  e.args = std::move(args);
  return e;
}

const char* relation_text(Relation r) {
  switch (r) {
    case Relation::kEqual:
      return "=";
    case Relation::kNotEqual:
      return "\\ne";
    case Relation::kLess:
      return "<";
    case Relation::kLessEqual:
      return "\\le";
    case Relation::kGreater:
      return ">";
    case Relation::kGreaterEqual:
      return "\\ge";
  }
  return "?";
}

MathValue MathValue::of(Expr e) {
  MathValue v;
  v.kind = Kind::kExpr;
  v.expr = std::move(e);
  return v;
}

MathValue MathValue::of_items(Kind kind, std::vector<MathValue> items) {
  MathValue v;
  v.kind = kind;
  v.items = std::move(items);
  return v;
}

MathValue MathValue::of_text(std::string text) {
  MathValue v;
  v.kind = Kind::kText;
  v.text = std::move(text);
  return v;
}

}  // namespace rlwb::rewards
