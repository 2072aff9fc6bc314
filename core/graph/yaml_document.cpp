// YAML <-> JSON for graph files: parsing with key lines, scalar resolution
// by the YAML 1.2 core schema, and canonical emission.
#include "core/graph/yaml_document.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <regex>

namespace rlwb::core::graph_detail {
namespace {

using nlohmann::json;

int line_of_mark(const YAML::Mark& mark) { return mark.line >= 0 ? mark.line + 1 : 0; }

struct Reader {
  const std::string& file;
  LineMap& lines;
  std::vector<GraphIssue>& issues;

  json convert(const YAML::Node& node, const std::string& path) {
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return nullptr;
      case YAML::NodeType::Scalar:
        // "!" is the tag of a quoted scalar; "!!str" spells it out.
        if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") return node.Scalar();
        return resolve_plain_scalar(node.Scalar());
      case YAML::NodeType::Sequence: {
        json list = json::array();
        for (std::size_t i = 0; i < node.size(); ++i) {
          std::string item_path = join_path(path, std::to_string(i));
          if (int line = line_of_mark(node[i].Mark())) lines[item_path] = {line, file};
          list.push_back(convert(node[i], item_path));
        }
        return list;
      }
      case YAML::NodeType::Map: {
        json map = json::object();
        for (auto it = node.begin(); it != node.end(); ++it) {
          int line = line_of_mark(it->first.Mark());
          if (!it->first.IsScalar()) {
            issues.push_back(
                {file, line, "", "a key that is not plain text", "keys must be names, like 'workers:'"});
            continue;
          }
          const std::string key = it->first.Scalar();
          std::string key_path = join_path(path, key);
          if (map.contains(key)) {
            issues.push_back({file, line, "",
                              "key '" + key_path + "' is written twice (first on line " +
                                  std::to_string(lines[key_path].line) + ")",
                              "keep one of them"});
            continue;
          }
          if (line) lines[key_path] = {line, file};
          map[key] = convert(it->second, key_path);
        }
        return map;
      }
    }
    return nullptr;
  }
};

bool is_one_of(const std::string& s, std::initializer_list<const char*> words) {
  return std::any_of(words.begin(), words.end(), [&](const char* w) { return s == w; });
}

json parse_integer(std::string digits, int base) {
  bool negative = !digits.empty() && digits[0] == '-';
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) digits.erase(0, 1);
  if (base != 10) digits.erase(0, 2);  // 0x / 0o
  uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (ec != std::errc() || end != digits.data() + digits.size()) {
    return std::strtod((negative ? "-" + digits : digits).c_str(), nullptr);  // too big: float
  }
  constexpr uint64_t max_int = std::numeric_limits<int64_t>::max();
  if (!negative) return magnitude <= max_int ? json(static_cast<int64_t>(magnitude)) : json(magnitude);
  if (magnitude <= max_int + 1) return static_cast<int64_t>(0 - magnitude);
  return -static_cast<double>(magnitude);
}

std::string format_double(double value) {
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value > 0 ? ".inf" : "-.inf";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, end);
  // "100" would read back as an int.
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

void emit(YAML::Emitter& out, const json& value, std::vector<std::string>& path, ShapeOf shape_of);

void emit_string(YAML::Emitter& out, const std::string& text) {
  // Quote what a reader would take for a number, bool or null.
  if (resolve_plain_scalar(text) != json(text)) out << YAML::DoubleQuoted;
  out << text;
}

bool all_scalars(const json& list) {
  return std::none_of(list.begin(), list.end(), [](const json& v) { return v.is_structured(); });
}

void emit(YAML::Emitter& out, const json& value, std::vector<std::string>& path, ShapeOf shape_of) {
  switch (value.type()) {
    case json::value_t::object: {
      YamlShape shape = shape_of(path);
      if (shape.flow || value.empty()) out << YAML::Flow;
      out << YAML::BeginMap;
      for (const auto& key : ordered_keys(value, shape.first_keys)) {
        out << YAML::Key;
        emit_string(out, key);
        out << YAML::Value;
        path.push_back(key);
        emit(out, value.at(key), path, shape_of);
        path.pop_back();
      }
      out << YAML::EndMap;
      break;
    }
    case json::value_t::array: {
      if (all_scalars(value) || shape_of(path).flow) out << YAML::Flow;
      out << YAML::BeginSeq;
      path.push_back("#");
      for (const auto& item : value) emit(out, item, path, shape_of);
      path.pop_back();
      out << YAML::EndSeq;
      break;
    }
    case json::value_t::string:
      emit_string(out, value.get<std::string>());
      break;
    case json::value_t::boolean:
      out << (value.get<bool>() ? "true" : "false");
      break;
    case json::value_t::number_integer:
      out << std::to_string(value.get<int64_t>());
      break;
    case json::value_t::number_unsigned:
      out << std::to_string(value.get<uint64_t>());
      break;
    case json::value_t::number_float:
      out << format_double(value.get<double>());
      break;
    default:              // null, binary, discarded
      out << YAML::Null;  // "~": the emitter would quote the word null
      break;
  }
}

}  // namespace

std::vector<std::string> ordered_keys(const json& map, const std::vector<std::string>& first) {
  std::vector<std::string> keys;
  for (const auto& key : first)
    if (map.contains(key)) keys.push_back(key);
  for (const auto& [key, _] : map.items())  // nlohmann::json keeps keys sorted
    if (std::find(first.begin(), first.end(), key) == first.end()) keys.push_back(key);
  return keys;
}

std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

json parse_yaml_document(const std::string& text, const std::string& file, LineMap& lines,
                         std::vector<GraphIssue>& issues) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    std::string where =
        e.mark.column >= 0 ? " (column " + std::to_string(e.mark.column + 1) + ")" : std::string();
    issues.push_back({file, line_of_mark(e.mark), "", "YAML syntax error: " + e.msg + where,
                      "check the indentation, colons and quotes on this line and the one above"});
    return nullptr;
  }
  Reader reader{file, lines, issues};
  return reader.convert(root, "");
}

json resolve_plain_scalar(const std::string& text) {
  static const std::regex decimal_int(R"([-+]?[0-9]+)");
  static const std::regex hex_int(R"(0x[0-9a-fA-F]+)");
  static const std::regex octal_int(R"(0o[0-7]+)");
  static const std::regex decimal_float(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  if (text.empty() || is_one_of(text, {"~", "null", "Null", "NULL"})) return nullptr;
  if (is_one_of(text, {"true", "True", "TRUE"})) return true;
  if (is_one_of(text, {"false", "False", "FALSE"})) return false;
  if (std::regex_match(text, decimal_int)) return parse_integer(text, 10);
  if (std::regex_match(text, hex_int)) return parse_integer(text, 16);
  if (std::regex_match(text, octal_int)) return parse_integer(text, 8);
  if (std::regex_match(text, decimal_float)) {
    double value = 0;
    const char* begin = text.data() + (text[0] == '+' ? 1 : 0);
    std::from_chars(begin, text.data() + text.size(), value);
    return value;
  }
  std::string sign, rest = text;
  if (rest[0] == '-' || rest[0] == '+') sign = rest.substr(0, 1), rest.erase(0, 1);
  if (is_one_of(rest, {".inf", ".Inf", ".INF"}))
    return sign == "-" ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  if (sign.empty() && is_one_of(rest, {".nan", ".NaN", ".NAN"}))
    return std::numeric_limits<double>::quiet_NaN();
  return text;
}

void erase_lines_below(LineMap& lines, const std::string& path, bool including_itself) {
  if (including_itself) lines.erase(path);
  const std::string prefix = path + ".";
  for (auto it = lines.lower_bound(prefix); it != lines.end() && it->first.rfind(prefix, 0) == 0;)
    it = lines.erase(it);
}

void shift_lines_after(LineMap& lines, const std::string& list_path, std::size_t removed) {
  const std::string prefix = list_path.empty() ? "" : list_path + ".";
  LineMap shifted;
  for (auto it = lines.begin(); it != lines.end();) {
    if (it->first.rfind(prefix, 0) != 0) {
      ++it;
      continue;
    }
    std::string rest = it->first.substr(prefix.size());
    std::size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    bool is_item = digits > 0 && (digits == rest.size() || rest[digits] == '.');
    if (!is_item || std::stoul(rest.substr(0, digits)) <= removed) {
      ++it;
      continue;
    }
    shifted[prefix + std::to_string(std::stoul(rest.substr(0, digits)) - 1) + rest.substr(digits)] =
        it->second;
    it = lines.erase(it);
  }
  lines.merge(shifted);
}

std::string emit_yaml(const json& value, ShapeOf shape_of) {
  YAML::Emitter out;
  out.SetIndent(2);
  std::vector<std::string> path;
  emit(out, value, path, shape_of);
  return std::string(out.c_str()) + "\n";
}

}  // namespace rlwb::core::graph_detail
