// Infix printing (see infix.h).
#include "rewards/math/infix.h"

namespace rlwb::rewards {
namespace {

using EK = Expr::Kind;

// Binding strength: higher binds tighter.
int strength(const Expr& e) {
  switch (e.kind) {
    case EK::kSum:
    case EK::kPlusMinus:
      return 1;
    case EK::kNegate:
      return 2;
    case EK::kProduct:
    case EK::kQuotient:
      return 3;
    case EK::kPower:
      return 4;
    case EK::kNumber:
      return e.number.is_integer() && e.number.sign() >= 0 ? 6 : 3;
    default:
      return 6;
  }
}

void print(const Expr& e, PercentReading percent, std::string* out);

void print_at(const Expr& e, int at_least, PercentReading percent, std::string* out) {
  if (strength(e) < at_least) {
    *out += '(';
    print(e, percent, out);
    *out += ')';
  } else {
    print(e, percent, out);
  }
}

void print(const Expr& e, PercentReading percent, std::string* out) {
  switch (e.kind) {
    case EK::kNumber:
      *out += e.number.to_string();
      return;
    case EK::kSymbol:
      if (e.name == "I" || e.name == "E" || e.name == "Pi") *out += "v_";
      *out += e.name;
      return;
    case EK::kConstant:
      *out += e.name == "pi" ? "Pi" : (e.name == "e" ? "E" : "I");
      return;
    case EK::kInfinity:
      *out += "oo";
      return;
    case EK::kSum:
      for (size_t i = 0; i < e.args.size(); ++i) {
        const Expr& a = e.args[i];
        if (i > 0 && a.kind == EK::kNegate) {
          *out += '-';
          print_at(a.args[0], 3, percent, out);
        } else {
          if (i > 0) *out += '+';
          print_at(a, 2, percent, out);
        }
      }
      return;
    case EK::kProduct:
      for (size_t i = 0; i < e.args.size(); ++i) {
        if (i > 0) *out += '*';
        print_at(e.args[i], 3, percent, out);
      }
      return;
    case EK::kQuotient:
      print_at(e.args[0], 3, percent, out);
      *out += '/';
      print_at(e.args[1], 4, percent, out);
      return;
    case EK::kPower:
      if (e.args[0].kind == EK::kConstant && e.args[0].name == "e") {  // e^x is exp(x)
        *out += "exp(";
        print(e.args[1], percent, out);
        *out += ')';
        return;
      }
      print_at(e.args[0], 5, percent, out);
      *out += '^';
      print_at(e.args[1], 5, percent, out);
      return;
    case EK::kNegate:
      *out += '-';
      print_at(e.args[0], 3, percent, out);
      return;
    case EK::kPlusMinus:
      if (e.args.size() == 2) print_at(e.args[0], 2, percent, out);
      *out += "+-";
      print_at(e.args.back(), 2, percent, out);
      return;
    case EK::kPercent:
      if (percent == PercentReading::kFraction) {
        print_at(e.args[0], 3, percent, out);
        *out += "/100";
      } else {
        print(e.args[0], percent, out);
      }
      return;
    case EK::kFunction:
      *out += e.name;
      *out += '(';
      for (size_t i = 0; i < e.args.size(); ++i) {
        if (i > 0) *out += ',';
        print(e.args[i], percent, out);
      }
      *out += ')';
      return;
  }
}

std::string joined(const std::vector<MathValue>& items, PercentReading percent,
                   const char* separator = ", ") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += to_infix(items[i], percent);
  }
  return out;
}

}  // namespace

std::string to_infix(const Expr& e, PercentReading percent) {
  std::string out;
  print(e, percent, &out);
  return out;
}

std::string to_infix(const MathValue& v, PercentReading percent) {
  using VK = MathValue::Kind;
  switch (v.kind) {
    case VK::kExpr:
      return to_infix(v.expr, percent);
    case VK::kList:
      return joined(v.items, percent);
    case VK::kTuple:
      return "(" + joined(v.items, percent) + ")";
    case VK::kSet:
      return "{" + joined(v.items, percent) + "}";
    case VK::kInterval:
      return std::string(v.left_closed ? "[" : "(") + joined(v.items, percent) + (v.right_closed ? "]" : ")");
    case VK::kUnion:
      return joined(v.items, percent, " U ");
    case VK::kMatrix: {
      std::string out = "[";
      for (size_t r = 0; r < v.rows; ++r) {
        out += r > 0 ? ", [" : "[";
        for (size_t c = 0; c < v.cols; ++c) {
          if (c > 0) out += ", ";
          out += to_infix(v.items[r * v.cols + c], percent);
        }
        out += "]";
      }
      return out + "]";
    }
    case VK::kRelation: {
      std::string out = to_infix(v.items[0], percent);
      for (size_t i = 0; i < v.relations.size(); ++i) {
        static const char* kOps[] = {" = ", " != ", " < ", " <= ", " > ", " >= "};
        out += kOps[static_cast<int>(v.relations[i])];
        out += to_infix(v.items[i + 1], percent);
      }
      return out;
    }
    case VK::kEmptySet:
      return "{}";
    case VK::kReals:
      return "(-oo, oo)";
    case VK::kText:
      return "text:" + v.text;
  }
  return "";
}

}  // namespace rlwb::rewards
