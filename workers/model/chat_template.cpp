// The Jinja subset of chat_template.h in three steps: the template text is
// cut into text and tags with Jinja's whitespace rules ([SECTION] tags),
// each tag is parsed into a tree ([SECTION] parser), and the tree is
// evaluated against the messages ([SECTION] render).
#include "workers/model/chat_template.h"

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "workers/model/model_error.h"
#include "workers/model/unicode_text.h"

namespace rlwb::workers::model {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

// ---------------------------------------------------------------------------
// [SECTION] Python's text helpers (what Jinja inherits from str)

// str.isspace(): Unicode White_Space plus the four separators U+001C..U+001F.
bool is_python_space(char32_t cp) { return unicode::is_white_space(cp) || (cp >= 0x1C && cp <= 0x1F); }

std::string python_rstrip(const std::string& s) {
  size_t end = s.size();
  while (end > 0) {
    const auto c = unicode::last_char(std::string_view(s).substr(0, end));
    if (!is_python_space(c.cp)) break;
    end = c.begin;
  }
  return s.substr(0, end);
}

size_t python_space_prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = unicode::char_at(s, i);
    if (!is_python_space(c.cp)) break;
    i = c.end;
  }
  return i;
}

std::string python_strip(const std::string& s) {
  const std::string right = python_rstrip(s);
  return right.substr(python_space_prefix(right));
}

std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const auto c = unicode::char_at(s, i);
    out.push_back(s.substr(c.begin, c.end - c.begin));
    i = c.end;
  }
  return out;
}

// json.dumps(v, ensure_ascii=False, indent=indent): ", " and ": " without an
// indent, "," and ": " with one; keys in insertion order.
void python_json(const Json& v, int indent, int depth, std::string& out) {
  const auto newline = [&](int d) {
    out += '\n';
    out.append(static_cast<size_t>(indent) * static_cast<size_t>(d), ' ');
  };
  if (v.is_array() || v.is_object()) {
    const bool object = v.is_object();
    out += object ? '{' : '[';
    if (v.empty()) {
      out += object ? '}' : ']';
      return;
    }
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) out += indent >= 0 ? "," : ", ";
      first = false;
      if (indent >= 0) newline(depth + 1);
      if (object) out += Json(it.key()).dump() + ": ";
      python_json(it.value(), indent, depth + 1, out);
    }
    if (indent >= 0) newline(depth);
    out += object ? '}' : ']';
    return;
  }
  if (v.is_boolean()) {
    out += v.get<bool>() ? "true" : "false";
    return;
  }
  out += v.dump();
}

// ---------------------------------------------------------------------------
// [SECTION] tags: the template cut into text and tags, with transformers'
// settings (trim_blocks, lstrip_blocks, keep_trailing_newline off)

enum class ChunkKind { kText, kPrint, kStatement };

struct Chunk {
  ChunkKind kind;
  std::string text;  // the text, or the tag's inside without delimiters and `-`
  int line;
};

std::vector<Chunk> cut_tags(std::string source, const std::string& origin) {
  // Jinja reads the source with "\n" line ends and drops one final newline.
  std::string normalized;
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      normalized += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      normalized += source[i];
    }
  }
  if (!normalized.empty() && normalized.back() == '\n') normalized.pop_back();
  source = std::move(normalized);

  std::vector<Chunk> chunks;
  size_t pos = 0;
  bool line_starting = true;
  const auto line_of = [&](size_t p) {
    return 1 + static_cast<int>(std::count(source.begin(), source.begin() + static_cast<long>(p), '\n'));
  };
  while (pos <= source.size()) {
    size_t open = pos;
    while ((open = source.find('{', open)) != std::string::npos) {
      if (open + 1 < source.size() &&
          (source[open + 1] == '{' || source[open + 1] == '%' || source[open + 1] == '#'))
        break;
      ++open;
    }
    std::string text = source.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
    if (open == std::string::npos) {
      if (!text.empty()) chunks.push_back({ChunkKind::kText, text, line_of(pos)});
      break;
    }
    const char kind = source[open + 1];
    const int line = line_of(open);
    const bool block_like = kind != '{';
    size_t inner = open + 2;
    const char sign = inner < source.size() ? source[inner] : '\0';
    if (sign == '+') {
      throw ModelError(origin + ":" + std::to_string(line) + ": the chat template uses '" +
                       source.substr(open, 3) +
                       "' (disabling lstrip_blocks), which RLWB's Jinja subset does not support");
    }
    if (sign == '-') {
      text = python_rstrip(text);
      ++inner;
    } else if (block_like) {
      const size_t l = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
      if ((l > 0 || line_starting) &&
          python_space_prefix(std::string_view(text).substr(l)) == text.size() - l)
        text.erase(l);
    }
    if (!text.empty()) chunks.push_back({ChunkKind::kText, text, line_of(pos)});

    // The closing delimiter, outside string literals.
    const std::string close = kind == '{' ? "}}" : kind == '%' ? "%}" : "#}";
    size_t end = inner;
    if (kind == '#') {
      end = source.find(close, inner);
    } else {
      char quote = 0;
      for (; end < source.size(); ++end) {
        const char c = source[end];
        if (quote) {
          if (c == '\\')
            ++end;
          else if (c == quote)
            quote = 0;
        } else if (c == '\'' || c == '"') {
          quote = c;
        } else if (source.compare(end, 2, close) == 0) {
          break;
        }
      }
      if (end >= source.size()) end = std::string::npos;
    }
    if (end == std::string::npos) {
      std::string message = origin + ":" + std::to_string(line) + ": the tag opened here has no closing '";
      message += close + "'";
      throw ModelError(message);
    }
    bool strip_right = end > inner && source[end - 1] == '-';
    std::string body = source.substr(inner, end - inner - (strip_right ? 1 : 0));
    if (kind == '{') chunks.push_back({ChunkKind::kPrint, body, line});
    if (kind == '%') chunks.push_back({ChunkKind::kStatement, body, line});
    pos = end + 2;
    if (strip_right) {
      const size_t skip = python_space_prefix(std::string_view(source).substr(pos));
      line_starting = skip > 0 && source[pos + skip - 1] == '\n';
      pos += skip;
    } else if (block_like && pos < source.size() && source[pos] == '\n') {
      ++pos;
      line_starting = true;
    } else {
      line_starting = false;
    }
  }
  return chunks;
}

// ---------------------------------------------------------------------------
// [SECTION] expression tokens

enum class TokenKind { kName, kString, kInteger, kFloat, kOperator, kEnd };

struct Token {
  TokenKind kind;
  std::string text;  // name, operator, or the decoded string
};

class TagError {
 public:
  TagError(const std::string& origin, int line) : prefix_(origin + ":" + std::to_string(line) + ": ") {}
  [[noreturn]] void fail(const std::string& message) const { throw ModelError(prefix_ + message); }
  [[noreturn]] void unsupported(const std::string& construct) const {
    fail("the chat template uses " + construct +
         ", which RLWB's Jinja subset does not support (see "
         "workers/model/chat_template.h)");
  }

 private:
  std::string prefix_;
};

std::vector<Token> tokenize(const std::string& s, const TagError& err) {
  std::vector<Token> tokens;
  size_t i = 0;
  static const char* kOperators[] = {"//", "==", "!=", "<=", ">=", "**", "+", "-", "*", "/", "%", "~", "<",
                                     ">",  "=",  "(",  ")",  "[",  "]",  "{", "}", ",", ".", ":", "|"};
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      tokens.push_back({TokenKind::kName, s.substr(i, j - i)});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      bool is_float = j + 1 < s.size() && s[j] == '.' && std::isdigit(static_cast<unsigned char>(s[j + 1]));
      if (is_float) {
        ++j;
        while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      }
      tokens.push_back({is_float ? TokenKind::kFloat : TokenKind::kInteger, s.substr(i, j - i)});
      i = j;
    } else if (c == '\'' || c == '"') {
      std::string value;
      size_t j = i + 1;
      for (; j < s.size() && s[j] != c; ++j) {
        if (s[j] != '\\') {
          value += s[j];
          continue;
        }
        if (++j >= s.size()) break;
        switch (s[j]) {
          case 'n':
            value += '\n';
            break;
          case 't':
            value += '\t';
            break;
          case 'r':
            value += '\r';
            break;
          case '\\':
            value += '\\';
            break;
          case '\'':
            value += '\'';
            break;
          case '"':
            value += '"';
            break;
          case '\n':
            break;
          case 'x':
          case 'u':
          case 'U': {
            const size_t digits = s[j] == 'x' ? 2 : s[j] == 'u' ? 4 : 8;
            if (j + digits >= s.size())
              err.fail("a string escape '\\" + std::string(1, s[j]) + "' is cut short");
            unicode::append_utf8(value,
                                 static_cast<char32_t>(std::stoul(s.substr(j + 1, digits), nullptr, 16)));
            j += digits;
            break;
          }
          default:
            err.unsupported("the string escape '\\" + std::string(1, s[j]) + "'");
        }
      }
      if (j >= s.size()) err.fail("a string literal is not closed");
      tokens.push_back({TokenKind::kString, value});
      i = j + 1;
    } else {
      bool matched = false;
      for (const char* op : kOperators) {
        const size_t n = std::char_traits<char>::length(op);
        if (s.compare(i, n, op) == 0) {
          tokens.push_back({TokenKind::kOperator, op});
          i += n;
          matched = true;
          break;
        }
      }
      if (!matched) err.fail("unexpected character '" + std::string(1, c) + "' in a tag");
    }
  }
  tokens.push_back({TokenKind::kEnd, ""});
  return tokens;
}

// ---------------------------------------------------------------------------
// [SECTION] parser: the tree

struct Expr {
  enum Kind {
    kLiteral,
    kName,
    kAttr,
    kItem,
    kSlice,
    kNot,
    kNeg,
    kBinary,
    kTest,
    kFilter,
    kCall,
    kList,
    kIfElse
  };
  Kind kind;
  Json literal;
  std::string name;                         // name, attribute, operator, test, filter or function
  bool negated = false;                     // `is not`
  std::vector<std::unique_ptr<Expr>> args;  // operands; a slice's missing bound is null
  std::vector<std::pair<std::string, std::unique_ptr<Expr>>> kwargs;
  int line = 0;
};
using ExprPtr = std::unique_ptr<Expr>;

}  // namespace

struct ChatTemplate::Node {
  enum Kind { kText, kPrint, kIf, kFor, kSet, kBreak, kContinue, kBody };
  Kind kind = kBody;
  std::string text;                                                 // text, or the name a set assigns
  std::vector<std::string> targets;                                 // a for loop's names
  ExprPtr expr;                                                     // printed, assigned or iterated
  std::vector<std::pair<ExprPtr, std::unique_ptr<Node>>> branches;  // if / elif / else (null condition)
  std::vector<std::unique_ptr<Node>> body;
  std::unique_ptr<Node> else_body;  // a for loop's else
  int line = 0;
};

namespace {

using Node = ChatTemplate::Node;

const std::vector<std::string> kTests = {"defined", "undefined", "none",     "string",   "number", "integer",
                                         "boolean", "mapping",   "iterable", "sequence", "true",   "false",
                                         "equalto", "eq",        "odd",      "even"};
const std::vector<std::string> kFilters = {"trim", "length", "count",  "string", "first",
                                           "last", "list",   "items",  "join",   "default",
                                           "d",    "select", "reject", "tojson"};

bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

class ExprParser {
 public:
  ExprParser(std::vector<Token> tokens, TagError err, int line)
      : tokens_(std::move(tokens)), err_(std::move(err)), line_(line) {}

  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  bool at_op(const char* op) const { return peek().kind == TokenKind::kOperator && peek().text == op; }
  bool at_name(const char* name) const { return peek().kind == TokenKind::kName && peek().text == name; }
  bool at_end() const { return peek().kind == TokenKind::kEnd; }
  Token next() { return tokens_[std::min(pos_++, tokens_.size() - 1)]; }
  void expect_op(const char* op) {
    if (!at_op(op)) err_.fail(std::string("expected '") + op + "' but found '" + peek().text + "'");
    ++pos_;
  }
  std::string expect_name() {
    if (peek().kind != TokenKind::kName) err_.fail("expected a name but found '" + peek().text + "'");
    return next().text;
  }
  void expect_end() {
    if (!at_end()) err_.fail("unexpected '" + peek().text + "' in a tag");
  }
  const TagError& err() const { return err_; }

  ExprPtr expression() {
    ExprPtr value = or_expr();
    if (at_name("if")) {
      ++pos_;
      auto e = make(Expr::kIfElse);
      e->args.push_back(or_expr());  // condition
      e->args.push_back(std::move(value));
      if (at_name("else")) {
        ++pos_;
        e->args.push_back(or_expr());
      }
      return e;
    }
    return value;
  }

 private:
  ExprPtr make(Expr::Kind kind) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line_;
    return e;
  }
  ExprPtr binary(std::string op, ExprPtr a, ExprPtr b) {
    auto e = make(Expr::kBinary);
    e->name = std::move(op);
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }
  // One left-associative level: `operand`s joined by any of `ops` (the
  // names "or", "and" or operator symbols).
  ExprPtr joined(ExprPtr (ExprParser::*operand)(), std::initializer_list<const char*> ops) {
    auto left = (this->*operand)();
    for (;;) {
      const char* found = nullptr;
      for (const char* op : ops) {
        if (at_op(op) || at_name(op)) found = op;
      }
      if (found == nullptr) return left;
      ++pos_;
      left = binary(found, std::move(left), (this->*operand)());
    }
  }
  ExprPtr or_expr() { return joined(&ExprParser::and_expr, {"or"}); }
  ExprPtr and_expr() { return joined(&ExprParser::not_expr, {"and"}); }
  ExprPtr not_expr() {
    if (at_name("not")) {
      ++pos_;
      auto e = make(Expr::kNot);
      e->args.push_back(not_expr());
      return e;
    }
    return compare();
  }
  ExprPtr compare() {
    auto left = math1();
    for (;;) {
      if (peek().kind == TokenKind::kOperator &&
          (peek().text == "==" || peek().text == "!=" || peek().text == "<" || peek().text == "<=" ||
           peek().text == ">" || peek().text == ">=")) {
        const std::string op = next().text;
        left = binary(op, std::move(left), math1());
      } else if (at_name("in")) {
        ++pos_;
        left = binary("in", std::move(left), math1());
      } else if (at_name("not") && peek(1).kind == TokenKind::kName && peek(1).text == "in") {
        pos_ += 2;
        left = binary("not in", std::move(left), math1());
      } else {
        return left;
      }
    }
  }
  ExprPtr math1() { return joined(&ExprParser::concat, {"+", "-"}); }
  ExprPtr concat() { return joined(&ExprParser::math2, {"~"}); }
  ExprPtr math2() {
    auto left = joined(&ExprParser::unary, {"*", "/", "//", "%"});
    if (at_op("**")) err_.unsupported("the operator '**'");
    return left;
  }
  ExprPtr unary() {
    if (at_op("-")) {
      ++pos_;
      auto e = make(Expr::kNeg);
      e->args.push_back(unary());
      return filters_and_tests(std::move(e));
    }
    return filters_and_tests(postfix(primary()));
  }
  ExprPtr primary() {
    const Token t = next();
    if (t.kind == TokenKind::kString) {
      auto e = make(Expr::kLiteral);
      e->literal = t.text;
      // Adjacent string literals are one string in Jinja.
      while (peek().kind == TokenKind::kString) e->literal = e->literal.get<std::string>() + next().text;
      return e;
    }
    if (t.kind == TokenKind::kInteger || t.kind == TokenKind::kFloat) {
      auto e = make(Expr::kLiteral);
      if (t.kind == TokenKind::kInteger)
        e->literal = std::stoll(t.text);
      else
        e->literal = std::stod(t.text);
      return e;
    }
    if (t.kind == TokenKind::kName) {
      if (t.text == "true" || t.text == "True" || t.text == "false" || t.text == "False") {
        auto e = make(Expr::kLiteral);
        e->literal = t.text == "true" || t.text == "True";
        return e;
      }
      if (t.text == "none" || t.text == "None") return make(Expr::kLiteral);
      if (at_op("(")) {
        if (t.text != "raise_exception") err_.unsupported("the function '" + t.text + "()'");
        auto e = make(Expr::kCall);
        e->name = t.text;
        call_args(*e);
        return e;
      }
      auto e = make(Expr::kName);
      e->name = t.text;
      return e;
    }
    if (t.kind == TokenKind::kOperator && t.text == "(") {
      auto e = expression();
      if (at_op(",")) err_.unsupported("tuples");
      expect_op(")");
      return e;
    }
    if (t.kind == TokenKind::kOperator && t.text == "[") {
      auto e = make(Expr::kList);
      while (!at_op("]")) {
        e->args.push_back(expression());
        if (!at_op(",")) break;
        ++pos_;
      }
      expect_op("]");
      return e;
    }
    if (t.kind == TokenKind::kOperator && t.text == "{") err_.unsupported("dict literals");
    err_.fail("unexpected '" + t.text + "' where a value was expected");
  }
  ExprPtr postfix(ExprPtr e) {
    for (;;) {
      if (at_op(".")) {
        ++pos_;
        auto a = make(Expr::kAttr);
        a->name = expect_name();
        if (at_op("(")) err_.unsupported("the method call '." + a->name + "()'");
        a->args.push_back(std::move(e));
        e = std::move(a);
      } else if (at_op("[")) {
        ++pos_;
        ExprPtr first;
        if (!at_op(":")) first = expression();
        if (at_op(":")) {
          auto s = make(Expr::kSlice);
          s->args.push_back(std::move(e));
          s->args.push_back(std::move(first));
          for (int part = 0; part < 2; ++part) {
            if (!at_op(":")) break;
            ++pos_;
            s->args.push_back(at_op(":") || at_op("]") ? nullptr : expression());
          }
          while (s->args.size() < 4) s->args.push_back(nullptr);
          e = std::move(s);
        } else {
          auto i = make(Expr::kItem);
          i->args.push_back(std::move(e));
          i->args.push_back(std::move(first));
          e = std::move(i);
        }
        expect_op("]");
      } else if (at_op("(")) {
        err_.unsupported("calling a value");
      } else {
        return e;
      }
    }
  }
  void call_args(Expr& e) {
    expect_op("(");
    while (!at_op(")")) {
      if (peek().kind == TokenKind::kName && peek(1).kind == TokenKind::kOperator && peek(1).text == "=") {
        std::string key = next().text;
        ++pos_;
        e.kwargs.emplace_back(std::move(key), expression());
      } else {
        e.args.push_back(expression());
      }
      if (!at_op(",")) break;
      ++pos_;
    }
    expect_op(")");
  }
  ExprPtr filters_and_tests(ExprPtr e) {
    for (;;) {
      if (at_op("|")) {
        ++pos_;
        auto f = make(Expr::kFilter);
        f->name = expect_name();
        if (!listed(kFilters, f->name)) err_.unsupported("the filter '" + f->name + "'");
        f->args.push_back(std::move(e));
        if (at_op("(")) call_args(*f);
        e = std::move(f);
      } else if (at_name("is")) {
        ++pos_;
        auto t = make(Expr::kTest);
        if (at_name("not")) {
          ++pos_;
          t->negated = true;
        }
        t->name = expect_name();
        if (!listed(kTests, t->name)) err_.unsupported("the test 'is " + t->name + "'");
        t->args.push_back(std::move(e));
        if (at_op("(")) {
          call_args(*t);
        } else if (peek().kind == TokenKind::kString || peek().kind == TokenKind::kInteger ||
                   peek().kind == TokenKind::kFloat) {
          t->args.push_back(primary());
        }
        e = std::move(t);
      } else {
        return e;
      }
    }
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  TagError err_;
  int line_;
};

// Statements, over the chunks.
class TemplateParser {
 public:
  TemplateParser(std::vector<Chunk> chunks, std::string origin)
      : chunks_(std::move(chunks)), origin_(std::move(origin)) {}

  std::unique_ptr<Node> parse() {
    auto root = std::make_unique<Node>();
    const std::string end = body(*root, {});
    (void)end;
    return root;
  }

 private:
  // Fills `into` until a statement named in `stops`; returns its keyword
  // (the parser is left just after it, its tokens in stop_parser_).
  std::string body(Node& into, const std::vector<std::string>& stops) {
    while (pos_ < chunks_.size()) {
      const Chunk& chunk = chunks_[pos_++];
      TagError err(origin_, chunk.line);
      if (chunk.kind == ChunkKind::kText) {
        auto n = std::make_unique<Node>();
        n->kind = Node::kText;
        n->text = chunk.text;
        into.body.push_back(std::move(n));
        continue;
      }
      auto p = std::make_unique<ExprParser>(tokenize(chunk.text, err), err, chunk.line);
      if (chunk.kind == ChunkKind::kPrint) {
        auto n = std::make_unique<Node>();
        n->kind = Node::kPrint;
        n->line = chunk.line;
        n->expr = p->expression();
        p->expect_end();
        into.body.push_back(std::move(n));
        continue;
      }
      if (p->peek().kind != TokenKind::kName) err.fail("a statement tag must start with a keyword");
      std::string keyword = p->next().text;
      if (listed(stops, keyword)) {
        stop_parser_ = std::move(p);
        return keyword;
      }
      into.body.push_back(statement(keyword, *p, err, chunk.line));
    }
    if (!stops.empty()) {
      throw ModelError(origin_ + ": the template ends before '{% " + stops.back() + " %}'");
    }
    return "";
  }

  std::unique_ptr<Node> statement(const std::string& keyword, ExprParser& p, const TagError& err, int line) {
    auto n = std::make_unique<Node>();
    n->line = line;
    if (keyword == "if") {
      n->kind = Node::kIf;
      ExprPtr condition = p.expression();
      p.expect_end();
      for (;;) {
        auto branch = std::make_unique<Node>();
        const std::string end = body(*branch, {"elif", "else", "endif"});
        n->branches.emplace_back(std::move(condition), std::move(branch));
        if (end == "endif") {
          stop_parser_->expect_end();
          break;
        }
        if (end == "elif") {
          condition = stop_parser_->expression();
        } else {
          condition = nullptr;
          auto last = std::make_unique<Node>();
          stop_parser_->expect_end();
          const std::string close = body(*last, {"endif"});
          (void)close;
          stop_parser_->expect_end();
          n->branches.emplace_back(nullptr, std::move(last));
          break;
        }
        stop_parser_->expect_end();
      }
    } else if (keyword == "for") {
      n->kind = Node::kFor;
      n->targets.push_back(p.expect_name());
      while (p.at_op(",")) {
        p.next();
        n->targets.push_back(p.expect_name());
      }
      if (!p.at_name("in")) err.fail("expected 'in' in the for loop");
      p.next();
      n->expr = p.expression();
      if (p.at_name("if")) err.unsupported("a filtered for loop ('for ... if ...')");
      if (p.at_name("recursive")) err.unsupported("recursive for loops");
      p.expect_end();
      auto loop_body = std::make_unique<Node>();
      const std::string end = body(*loop_body, {"else", "endfor"});
      n->body = std::move(loop_body->body);
      stop_parser_->expect_end();
      if (end == "else") {
        n->else_body = std::make_unique<Node>();
        body(*n->else_body, {"endfor"});
        stop_parser_->expect_end();
      }
    } else if (keyword == "set") {
      n->kind = Node::kSet;
      n->text = p.expect_name();
      if (p.at_op("."))
        err.unsupported("assigning to an attribute ('set " + n->text + ".x = ...'; namespace())");
      if (p.at_op(",")) err.unsupported("assigning to several names at once");
      if (!p.at_op("="))
        err.unsupported("the block form of set ('{% set " + n->text + " %}...{% endset %}')");
      p.next();
      n->expr = p.expression();
      p.expect_end();
    } else if (keyword == "break" || keyword == "continue") {
      n->kind = keyword == "break" ? Node::kBreak : Node::kContinue;
      p.expect_end();
    } else if (keyword == "generation") {
      p.expect_end();
      body(*n, {"endgeneration"});
      stop_parser_->expect_end();
    } else {
      err.unsupported("the statement '{% " + keyword + " %}'");
    }
    return n;
  }

  std::vector<Chunk> chunks_;
  size_t pos_ = 0;
  std::string origin_;
  std::unique_ptr<ExprParser> stop_parser_;
};

// ---------------------------------------------------------------------------
// [SECTION] render

// A Jinja value: JSON, or undefined.
struct Value {
  Json j;
  bool undefined = false;
};

Value undefined_value() { return {Json(), true}; }

enum class Flow { kNormal, kBreak, kContinue };

class Renderer {
 public:
  Renderer(const std::string& origin, std::vector<std::map<std::string, Value>> scopes)
      : origin_(origin), scopes_(std::move(scopes)) {}

  Flow run(const Node& node) {
    switch (node.kind) {
      case Node::kText:
        out_ += node.text;
        return Flow::kNormal;
      case Node::kPrint:
        out_ += text_of(eval(*node.expr), node.line);
        return Flow::kNormal;
      case Node::kSet:
        scopes_.back()[node.text] = eval(*node.expr);
        return Flow::kNormal;
      case Node::kBreak:
        return Flow::kBreak;
      case Node::kContinue:
        return Flow::kContinue;
      case Node::kBody:
        return run_all(node.body);
      case Node::kIf:
        for (const auto& [condition, branch] : node.branches) {
          if (!condition || truthy(eval(*condition))) return run_all(branch->body);
        }
        return Flow::kNormal;
      case Node::kFor:
        return run_for(node);
    }
    return Flow::kNormal;
  }

  std::string& out() { return out_; }

 private:
  [[noreturn]] void fail(int line, const std::string& message) const {
    throw ModelError(origin_ + ":" + std::to_string(line) + ": " + message);
  }

  Flow run_all(const std::vector<std::unique_ptr<Node>>& nodes) {
    for (const auto& n : nodes) {
      const Flow f = run(*n);
      if (f != Flow::kNormal) return f;
    }
    return Flow::kNormal;
  }

  Flow run_for(const Node& node) {
    const Value iterable = eval(*node.expr);
    std::vector<Json> items;
    if (iterable.undefined || iterable.j.is_null()) {
      if (!iterable.undefined) fail(node.line, "cannot loop over none");
    } else if (iterable.j.is_array()) {
      items.assign(iterable.j.begin(), iterable.j.end());
    } else if (iterable.j.is_object()) {
      for (auto it = iterable.j.begin(); it != iterable.j.end(); ++it) items.emplace_back(it.key());
    } else if (iterable.j.is_string()) {
      for (auto& c : code_points(iterable.j.get<std::string>())) items.emplace_back(c);
    } else {
      fail(node.line, "cannot loop over a " + std::string(iterable.j.type_name()));
    }
    if (items.empty()) {
      if (node.else_body) return run_all(node.else_body->body);
      return Flow::kNormal;
    }
    scopes_.emplace_back();
    const auto n = static_cast<int64_t>(items.size());
    for (int64_t k = 0; k < n; ++k) {
      auto& scope = scopes_.back();
      const Json& item = items[static_cast<size_t>(k)];
      if (node.targets.size() == 1) {
        scope[node.targets[0]] = {item};
      } else {
        if (!item.is_array() || item.size() != node.targets.size()) {
          fail(node.line,
               "cannot unpack " + item.dump() + " into " + std::to_string(node.targets.size()) + " names");
        }
        for (size_t t = 0; t < node.targets.size(); ++t) scope[node.targets[t]] = {item[t]};
      }
      scope["loop"] = {Json{{"index", k + 1},
                            {"index0", k},
                            {"revindex", n - k},
                            {"revindex0", n - k - 1},
                            {"first", k == 0},
                            {"last", k == n - 1},
                            {"length", n}}};
      const Flow f = run_all(node.body);
      if (f == Flow::kBreak) break;
    }
    scopes_.pop_back();
    return Flow::kNormal;
  }

  static bool truthy(const Value& v) {
    if (v.undefined) return false;
    const Json& j = v.j;
    if (j.is_null()) return false;
    if (j.is_boolean()) return j.get<bool>();
    if (j.is_number_integer()) return j.get<int64_t>() != 0;
    if (j.is_number()) return j.get<double>() != 0.0;
    if (j.is_string()) return !j.get<std::string>().empty();
    return !j.empty();
  }

  // str(value) as Jinja prints it.
  std::string text_of(const Value& v, int line) const {
    if (v.undefined) return "";
    const Json& j = v.j;
    if (j.is_string()) return j.get<std::string>();
    if (j.is_null()) return "None";
    if (j.is_boolean()) return j.get<bool>() ? "True" : "False";
    if (j.is_number_integer()) return std::to_string(j.get<int64_t>());
    if (j.is_number()) return j.dump();
    fail(line, std::string("printing a ") + (j.is_array() ? "list" : "mapping") +
                   " (Python's repr) is not in RLWB's Jinja subset; use |tojson");
  }

  Value lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end()) return found->second;
    }
    return undefined_value();
  }

  static int64_t wrap_index(int64_t i, int64_t size) { return i < 0 ? i + size : i; }

  Value item(const Value& base, const Value& key, int line, const std::string& what) const {
    if (base.undefined) fail(line, "cannot read " + what + " of an undefined value");
    const Json& b = base.j;
    if (b.is_object()) {
      if (!key.j.is_string()) return undefined_value();
      auto it = b.find(key.j.get<std::string>());
      return it == b.end() ? undefined_value() : Value{*it};
    }
    if ((b.is_array() || b.is_string()) && key.j.is_number_integer()) {
      std::vector<Json> elements;
      if (b.is_array())
        elements.assign(b.begin(), b.end());
      else
        for (auto& c : code_points(b.get<std::string>())) elements.emplace_back(c);
      const int64_t i = wrap_index(key.j.get<int64_t>(), static_cast<int64_t>(elements.size()));
      if (i < 0 || i >= static_cast<int64_t>(elements.size())) return undefined_value();
      return {elements[static_cast<size_t>(i)]};
    }
    if (b.is_null()) fail(line, "cannot read " + what + " of none");
    return undefined_value();
  }

  Value slice(const Expr& e) {
    const Value base = eval(*e.args[0]);
    if (base.undefined) fail(e.line, "cannot slice an undefined value");
    std::vector<Json> elements;
    if (base.j.is_array())
      elements.assign(base.j.begin(), base.j.end());
    else if (base.j.is_string())
      for (auto& c : code_points(base.j.get<std::string>())) elements.emplace_back(c);
    else
      fail(e.line, "cannot slice a " + std::string(base.j.type_name()));
    const auto size = static_cast<int64_t>(elements.size());
    std::optional<int64_t> bounds[3];
    for (int k = 0; k < 3; ++k) {
      if (!e.args[1 + k]) continue;
      const Value v = eval(*e.args[1 + k]);
      if (v.undefined || v.j.is_null()) continue;
      if (!v.j.is_number_integer()) fail(e.line, "slice bounds must be integers");
      bounds[k] = v.j.get<int64_t>();
    }
    const int64_t step = bounds[2].value_or(1);
    if (step == 0) fail(e.line, "slice step cannot be zero");
    // Python's slice.indices().
    const auto clamp = [&](std::optional<int64_t> b, int64_t fallback) {
      if (!b) return fallback;
      int64_t i = *b < 0 ? *b + size : *b;
      if (step > 0) return std::clamp<int64_t>(i, 0, size);
      return std::clamp<int64_t>(i, -1, size - 1);
    };
    const int64_t start = clamp(bounds[0], step > 0 ? 0 : size - 1);
    const int64_t stop = clamp(bounds[1], step > 0 ? size : -1);
    Json out = Json::array();
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
      out.push_back(elements[static_cast<size_t>(i)]);
    if (base.j.is_string()) {
      std::string s;
      for (const auto& c : out) s += c.get<std::string>();
      return {s};
    }
    return {out};
  }

  bool equal(const Value& a, const Value& b) const {
    if (a.undefined || b.undefined) return a.undefined && b.undefined;
    return a.j == b.j;
  }

  Value binary(const Expr& e) {
    const std::string& op = e.name;
    if (op == "and") {
      Value a = eval(*e.args[0]);
      return truthy(a) ? eval(*e.args[1]) : a;
    }
    if (op == "or") {
      Value a = eval(*e.args[0]);
      return truthy(a) ? a : eval(*e.args[1]);
    }
    const Value a = eval(*e.args[0]);
    const Value b = eval(*e.args[1]);
    if (op == "==") return {equal(a, b)};
    if (op == "!=") return {!equal(a, b)};
    if (op == "in" || op == "not in") return {contains(b, a, e.line) == (op == "in")};
    if (op == "~") return {text_of(a, e.line) + text_of(b, e.line)};
    if (a.undefined || b.undefined) fail(e.line, "the operator '" + op + "' got an undefined value");
    const Json& x = a.j;
    const Json& y = b.j;
    const bool numbers = x.is_number() && y.is_number() && !x.is_boolean() && !y.is_boolean();
    const bool integers = numbers && x.is_number_integer() && y.is_number_integer();
    if (op == "<" || op == "<=" || op == ">" || op == ">=") {
      if (!numbers && !(x.is_string() && y.is_string())) {
        fail(e.line, "cannot compare a " + std::string(x.type_name()) + " with a " + y.type_name());
      }
      const bool less = x < y, greater = y < x;
      if (op == "<") return {less};
      if (op == "<=") return {!greater};
      if (op == ">") return {greater};
      return {!less};
    }
    if (op == "+") {
      if (x.is_string() && y.is_string()) return {x.get<std::string>() + y.get<std::string>()};
      if (x.is_array() && y.is_array()) {
        Json out = x;
        for (const auto& v : y) out.push_back(v);
        return {out};
      }
    }
    if (!numbers) {
      fail(e.line, "the operator '" + op + "' cannot take a " + x.type_name() + " and a " + y.type_name());
    }
    if (integers) {
      const int64_t i = x.get<int64_t>(), k = y.get<int64_t>();
      if (op == "+") return {i + k};
      if (op == "-") return {i - k};
      if (op == "*") return {i * k};
      if (op == "/" && k != 0) return {static_cast<double>(i) / static_cast<double>(k)};
      if (k == 0) fail(e.line, "division by zero");
      // Python floors.
      const int64_t q = i / k - ((i % k != 0) && ((i < 0) != (k < 0)) ? 1 : 0);
      if (op == "//") return {q};
      return {i - q * k};
    }
    const double i = x.get<double>(), k = y.get<double>();
    if (op == "+") return {i + k};
    if (op == "-") return {i - k};
    if (op == "*") return {i * k};
    if (k == 0.0) fail(e.line, "division by zero");
    if (op == "/") return {i / k};
    if (op == "//") return {std::floor(i / k)};
    return {i - std::floor(i / k) * k};
  }

  bool contains(const Value& container, const Value& needle, int line) const {
    if (container.undefined) return false;
    const Json& c = container.j;
    if (c.is_string()) {
      if (!needle.j.is_string() || needle.undefined) fail(line, "'in <string>' needs a string on the left");
      return c.get<std::string>().find(needle.j.get<std::string>()) != std::string::npos;
    }
    if (c.is_object()) return needle.j.is_string() && c.contains(needle.j.get<std::string>());
    if (c.is_array()) {
      for (const auto& v : c)
        if (equal({v}, needle)) return true;
      return false;
    }
    fail(line, "'in' cannot look inside a " + std::string(c.type_name()));
  }

  bool test(const std::string& name, const Value& v, const std::vector<Value>& args, int line) const {
    const Json& j = v.j;
    const bool number = !v.undefined && j.is_number() && !j.is_boolean();
    if (name == "defined") return !v.undefined;
    if (name == "undefined") return v.undefined;
    if (name == "none") return !v.undefined && j.is_null();
    if (name == "string") return !v.undefined && j.is_string();
    if (name == "number") return number;
    if (name == "integer") return number && j.is_number_integer();
    if (name == "boolean") return !v.undefined && j.is_boolean();
    if (name == "true") return !v.undefined && j.is_boolean() && j.get<bool>();
    if (name == "false") return !v.undefined && j.is_boolean() && !j.get<bool>();
    if (name == "mapping") return !v.undefined && j.is_object();
    if (name == "iterable") return v.undefined || j.is_array() || j.is_object() || j.is_string();
    if (name == "sequence") return !v.undefined && (j.is_array() || j.is_object() || j.is_string());
    if (name == "odd" || name == "even") {
      if (!number || !j.is_number_integer()) fail(line, "'is " + name + "' needs an integer");
      return (j.get<int64_t>() % 2 != 0) == (name == "odd");
    }
    // equalto / eq
    if (args.size() != 1) fail(line, "'is " + name + "' takes one value");
    return equal(v, args[0]);
  }

  Value filter(const Expr& e) {
    Value v = eval(*e.args[0]);
    std::vector<Value> args;
    for (size_t k = 1; k < e.args.size(); ++k) args.push_back(eval(*e.args[k]));
    const std::string& name = e.name;
    const auto no_kwargs = [&] {
      if (!e.kwargs.empty())
        fail(e.line, "the filter '" + name + "' takes no keyword '" + e.kwargs[0].first + "' here");
    };
    const auto need = [&](bool ok, const std::string& what) {
      if (!ok) fail(e.line, "the filter '" + name + "' needs " + what);
    };
    if (name == "tojson") {
      int indent = -1;
      for (const auto& [key, value] : e.kwargs) {
        if (key != "indent") fail(e.line, "tojson takes no keyword '" + key + "' in RLWB's Jinja subset");
        const Value i = eval(*value);
        if (!i.j.is_null()) {
          need(i.j.is_number_integer(), "an integer indent");
          indent = static_cast<int>(i.j.get<int64_t>());
        }
      }
      need(!v.undefined, "a defined value");
      std::string out;
      python_json(v.j, indent, 0, out);
      return {out};
    }
    no_kwargs();
    if (name == "default" || name == "d") {
      const bool boolean = args.size() > 1 && truthy(args[1]);
      if (v.undefined || (boolean && !truthy(v))) return args.empty() ? Value{Json("")} : args[0];
      return v;
    }
    if (name == "length" || name == "count") {
      if (v.undefined) return {0};
      if (v.j.is_string()) return {static_cast<int64_t>(code_points(v.j.get<std::string>()).size())};
      need(v.j.is_array() || v.j.is_object(), "a string, list or mapping");
      return {static_cast<int64_t>(v.j.size())};
    }
    if (name == "string") return {text_of(v, e.line)};
    need(!v.undefined, "a defined value");
    if (name == "trim") {
      need(args.empty(), "no arguments (trim(chars) is not in the subset)");
      need(v.j.is_string(), "a string");
      return {python_strip(v.j.get<std::string>())};
    }
    if (name == "items") {
      need(v.j.is_object(), "a mapping");
      Json out = Json::array();
      for (auto it = v.j.begin(); it != v.j.end(); ++it) out.push_back(Json::array({it.key(), it.value()}));
      return {out};
    }
    if (name == "list") {
      if (v.j.is_array()) return v;
      Json out = Json::array();
      if (v.j.is_string())
        for (auto& c : code_points(v.j.get<std::string>())) out.push_back(c);
      else if (v.j.is_object())
        for (auto it = v.j.begin(); it != v.j.end(); ++it) out.push_back(it.key());
      else
        need(false, "a list, string or mapping");
      return {out};
    }
    need(v.j.is_array(), "a list");
    if (name == "first" || name == "last") {
      if (v.j.empty()) return undefined_value();
      return {name == "first" ? v.j.front() : v.j.back()};
    }
    if (name == "join") {
      const std::string sep = args.empty() ? "" : text_of(args[0], e.line);
      std::string out;
      for (size_t k = 0; k < v.j.size(); ++k) out += (k ? sep : "") + text_of({v.j[k]}, e.line);
      return {out};
    }
    // select / reject
    need(!args.empty() && args[0].j.is_string(), "the name of a test");
    const std::string test_name = args[0].j.get<std::string>();
    if (!listed(kTests, test_name))
      fail(e.line, "the test '" + test_name + "' is not in RLWB's Jinja subset");
    const std::vector<Value> test_args(args.begin() + 1, args.end());
    Json out = Json::array();
    for (const auto& item : v.j) {
      if (test(test_name, {item}, test_args, e.line) == (name == "select")) out.push_back(item);
    }
    return {out};
  }

  Value eval(const Expr& e) {
    switch (e.kind) {
      case Expr::kLiteral:
        return {e.literal};
      case Expr::kName:
        return lookup(e.name);
      case Expr::kAttr:
        return item(eval(*e.args[0]), {Json(e.name)}, e.line, "." + e.name);
      case Expr::kItem: {
        const Value base = eval(*e.args[0]);
        return item(base, eval(*e.args[1]), e.line, "an item");
      }
      case Expr::kSlice:
        return slice(e);
      case Expr::kNot:
        return {!truthy(eval(*e.args[0]))};
      case Expr::kNeg: {
        const Value v = eval(*e.args[0]);
        if (v.undefined || !v.j.is_number() || v.j.is_boolean()) fail(e.line, "'-' needs a number");
        if (v.j.is_number_integer()) return {-v.j.get<int64_t>()};
        return {-v.j.get<double>()};
      }
      case Expr::kBinary:
        return binary(e);
      case Expr::kTest: {
        std::vector<Value> args;
        for (size_t k = 1; k < e.args.size(); ++k) args.push_back(eval(*e.args[k]));
        return {test(e.name, eval(*e.args[0]), args, e.line) != e.negated};
      }
      case Expr::kFilter:
        return filter(e);
      case Expr::kCall: {  // raise_exception
        const std::string message = e.args.empty() ? "" : text_of(eval(*e.args[0]), e.line);
        fail(e.line, "the chat template raised an error: " + message);
      }
      case Expr::kList: {
        Json out = Json::array();
        for (const auto& a : e.args) {
          const Value v = eval(*a);
          if (v.undefined) fail(e.line, "a list literal holds an undefined value");
          out.push_back(v.j);
        }
        return {out};
      }
      case Expr::kIfElse:
        if (truthy(eval(*e.args[0]))) return eval(*e.args[1]);
        return e.args.size() > 2 ? eval(*e.args[2]) : undefined_value();
    }
    return undefined_value();
  }

  const std::string& origin_;
  std::vector<std::map<std::string, Value>> scopes_;
  std::string out_;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(path.string() + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

ChatTemplate::ChatTemplate(const std::string& source, std::string origin, nlohmann::ordered_json variables)
    : origin_(std::move(origin)), variables_(std::move(variables)) {
  if (variables_.is_null()) variables_ = Json::object();
  root_ = TemplateParser(cut_tags(source, origin_), origin_).parse();
}

ChatTemplate::~ChatTemplate() = default;
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;

std::string ChatTemplate::render(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                 const nlohmann::ordered_json& tools) const {
  if (!messages.is_array()) throw ModelError(origin_ + ": the messages to render must be a JSON array");
  std::map<std::string, Value> globals;
  for (auto it = variables_.begin(); it != variables_.end(); ++it) globals[it.key()] = {it.value()};
  globals["messages"] = {messages};
  globals["add_generation_prompt"] = {add_generation_prompt};
  if (!tools.is_null() && !tools.is_array())
    throw ModelError(origin_ + ": the tools to render must be a JSON array");
  globals["tools"] = {tools};
  globals["documents"] = {Json()};
  // Jinja's template scope sits above the globals: a top-level set shadows them.
  Renderer renderer(origin_, {std::move(globals), {}});
  renderer.run(*root_);
  return std::move(renderer.out());
}

std::optional<ChatTemplate> load_chat_template(const fs::path& path) {
  const fs::path dir = fs::is_directory(path) ? path : path.parent_path();
  const fs::path config_path = dir / "tokenizer_config.json";
  Json config = Json::object();
  if (fs::exists(config_path)) {
    try {
      config = Json::parse(read_text(config_path));
    } catch (const nlohmann::json::exception& e) {
      throw ModelError(config_path.string() + ": not valid JSON: " + e.what());
    }
  }
  Json variables = Json::object();
  for (const char* key :
       {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
    if (!config.contains(key)) continue;
    const Json& v = config.at(key);
    if (v.is_string()) variables[key] = v;
    if (v.is_object() && v.contains("content") && v.at("content").is_string())
      variables[key] = v.at("content");
  }
  const fs::path jinja_path = dir / "chat_template.jinja";
  if (fs::exists(jinja_path)) return ChatTemplate(read_text(jinja_path), jinja_path.string(), variables);
  if (!config.contains("chat_template") || config.at("chat_template").is_null()) return std::nullopt;
  const Json& t = config.at("chat_template");
  if (t.is_string()) return ChatTemplate(t.get<std::string>(), config_path.string(), variables);
  if (t.is_array()) {
    for (const auto& named : t) {
      if (named.is_object() && named.value("name", "") == "default" && named.contains("template") &&
          named.at("template").is_string()) {
        return ChatTemplate(named.at("template").get<std::string>(),
                            config_path.string() + " (template 'default')", variables);
      }
    }
    throw ModelError(config_path.string() +
                     ": 'chat_template' is a list of named templates without one named "
                     "'default'");
  }
  throw ModelError(config_path.string() + ": 'chat_template' must be a string or a list of {name, template}");
}

}  // namespace rlwb::workers::model
