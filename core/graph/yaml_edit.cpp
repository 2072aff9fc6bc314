// edit_experiment_text: what the file should now say (the edited document,
// or for a file with `defaults:` its difference from the bases), compared
// with what it says, and each difference patched into the text. The text is
// indexed by a small scanner for the YAML that graph files use: block maps
// and lists, one-line flow collections, plain and quoted scalars, comments,
// anchors and aliases. What it does not know it marks opaque, and an edit
// there is written by rewriting the top-level section (see yaml_edit.h).
#include "core/graph/yaml_edit.h"

#include <algorithm>
#include <optional>

#include "core/graph/defaults.h"
#include "core/graph/yaml_document.h"

namespace rlwb::core {
namespace {

using graph_detail::emit_yaml;
using graph_detail::ordered_keys;
using nlohmann::json;

// ---------------------------------------------------------------- [SECTION] the text's index

enum class Kind { scalar, block_map, block_seq, flow_map, flow_seq, alias, opaque };

struct Entry;

// A value as written: for scalars, flow collections and aliases the span of
// its text on its line; for block collections the whole lines of its entries.
struct Node {
  Kind kind = Kind::scalar;
  std::size_t begin = 0, end = 0;
  int indent = 0;             // block collections: the column of their keys or dashes
  bool anchored = false;      // written `&name value`: aliases elsewhere share it
  bool holds_anchor = false;  // it or something inside it is anchored
  std::vector<Entry> entries;
};

// A key and its value, or a list item. In block style [begin, end) is its
// whole lines (the key line through the value's last line), in flow style
// the key through the value.
struct Entry {
  std::string key;                           // "" for list items
  std::size_t begin = 0, end = 0;            // as above
  std::size_t lead_begin = 0, lead_end = 0;  // block style: "key:" or "-" as written
  int column = 0;                            // block style: where the key or dash starts
  Node value;
};

// Thrown where an edit cannot be patched into the text safely.
struct CannotPlace {
  std::string why;
};

bool is_space(char c) { return c == ' ' || c == '\t'; }

class Scanner {
 public:
  explicit Scanner(const std::string& text) : text_(text) {
    for (std::size_t begin = 0; begin < text.size();) {
      std::size_t nl = text.find('\n', begin);
      std::size_t end = nl == std::string::npos ? text.size() : nl;
      Line line{begin, end, nl == std::string::npos ? text.size() : nl + 1, 0, false};
      while (begin + line.indent < end && text[begin + line.indent] == ' ') ++line.indent;
      std::size_t first = begin + line.indent;
      line.blank = first == end || text[first] == '#' || text[first] == '\r';
      lines_.push_back(line);
      begin = line.next;
    }
  }

  // The document: a block map at column 0.
  Node document() {
    std::size_t i = next_content(0);
    for (const auto& line : lines_) {
      std::string_view start(text_.data() + line.begin, line.end - line.begin);
      if (start.rfind("---", 0) == 0 || start.rfind("...", 0) == 0 || start.rfind('%', 0) == 0)
        throw CannotPlace{"the file has YAML document markers or directives"};
    }
    if (i == lines_.size() || lines_[i].indent != 0 || starts_item(i))
      throw CannotPlace{"the file is not a block map of sections"};
    std::size_t last = i;
    Node root = block_map(i, 0, lines_[i].begin, last);
    if (next_content(last + 1) != lines_.size()) throw CannotPlace{"text after the document's sections"};
    return root;
  }

 private:
  struct Line {
    std::size_t begin, end, next;
    int indent;
    bool blank;  // empty or a comment
  };

  std::size_t next_content(std::size_t i) const {
    while (i < lines_.size() && lines_[i].blank) ++i;
    return i;
  }
  std::size_t first_char(std::size_t i) const { return lines_[i].begin + lines_[i].indent; }
  bool at_line_end(std::size_t i, std::size_t p) const {
    while (p < lines_[i].end && is_space(text_[p])) ++p;
    return p >= lines_[i].end || text_[p] == '#' || text_[p] == '\r';
  }
  bool starts_item(std::size_t i) const {
    std::size_t p = first_char(i);
    return text_[p] == '-' && (p + 1 >= lines_[i].end || is_space(text_[p + 1]) || text_[p + 1] == '\r');
  }
  // The last content line after line i indented deeper than `column`.
  std::size_t deeper_extent(std::size_t i, int column) const {
    std::size_t last = i;
    for (std::size_t j = next_content(i + 1); j < lines_.size() && lines_[j].indent > column;
         j = next_content(j + 1))
      last = j;
    return last;
  }

  // End of a quoted scalar starting at p (after its closing quote), or npos.
  std::size_t quoted_end(std::size_t p, std::size_t limit) const {
    const char quote = text_[p];
    for (std::size_t q = p + 1; q < limit; ++q) {
      if (quote == '"' && text_[q] == '\\') {
        ++q;
      } else if (text_[q] == quote) {
        if (quote == '\'' && q + 1 < limit && text_[q + 1] == '\'') {
          ++q;
          continue;
        }
        return q + 1;
      }
    }
    return std::string::npos;
  }

  // A block key at p: its text, and p moved past the ':'. False when the
  // line holds no key there.
  bool block_key(std::size_t i, std::size_t& p, std::string& key) const {
    const std::size_t limit = lines_[i].end;
    if (text_[p] == '"' || text_[p] == '\'') {
      std::size_t end = quoted_end(p, limit);
      if (end == std::string::npos || end >= limit || text_[end] != ':') return false;
      if (!unquote(p, end, key)) return false;
      p = end + 1;
      return true;
    }
    if (std::string_view("{[&*|>!?#").find(text_[p]) != std::string_view::npos) return false;
    for (std::size_t q = p; q < limit; ++q) {
      if (text_[q] == '#' && q > p && is_space(text_[q - 1])) return false;
      if (text_[q] == ':' && (q + 1 == limit || is_space(text_[q + 1]) || text_[q + 1] == '\r')) {
        std::size_t end = q;
        while (end > p && is_space(text_[end - 1])) --end;
        key = text_.substr(p, end - p);
        p = q + 1;
        return !key.empty();
      }
    }
    return false;
  }

  bool unquote(std::size_t begin, std::size_t end, std::string& out) const {
    std::string inner = text_.substr(begin + 1, end - begin - 2);
    if (text_[begin] == '"') {
      if (inner.find('\\') != std::string::npos) return false;  // escapes: leave to the fallback
      out = inner;
      return true;
    }
    out.clear();
    for (std::size_t k = 0; k < inner.size(); ++k) {
      out += inner[k];
      if (inner[k] == '\'') ++k;  // '' is one quote
    }
    return true;
  }

  Node opaque(std::size_t i, std::size_t p, int column, std::size_t& last) const {
    Node node;
    node.kind = Kind::opaque;
    node.begin = p;
    last = deeper_extent(i, column);
    node.end = lines_[last].end;
    return node;
  }

  // A block map whose keys sit at `column`, the first at p on line i: at
  // the line's indentation, or after a list item's dash (`- id: gen`),
  // where the first entry starts at its key rather than at the line.
  Node block_map(std::size_t i, int column, std::size_t p, std::size_t& last) {
    Node map;
    map.kind = Kind::block_map;
    map.indent = column;
    map.begin = p == first_char(i) ? lines_[i].begin : p;
    for (bool first = true;; first = false) {
      Entry entry;
      entry.begin = first ? map.begin : lines_[i].begin;
      entry.column = column;
      std::size_t at = first ? p : first_char(i);
      entry.lead_begin = at;
      if (!block_key(i, at, entry.key)) {
        if (first) throw CannotPlace{"no key where one should be"};
        return map;
      }
      entry.lead_end = at;
      entry.value = value_at(i, at, column, true, last);
      entry.end = lines_[last].next;
      map.holds_anchor |= entry.value.holds_anchor;
      map.entries.push_back(std::move(entry));
      map.end = lines_[last].next;
      std::size_t j = next_content(last + 1);
      if (j == lines_.size() || lines_[j].indent != column || starts_item(j)) return map;
      i = j;
    }
  }

  // A block list whose dashes sit at `column`, the first on line i.
  Node block_seq(std::size_t i, int column, std::size_t& last) {
    Node seq;
    seq.kind = Kind::block_seq;
    seq.indent = column;
    seq.begin = lines_[i].begin;
    for (;;) {
      Entry item;
      item.begin = lines_[i].begin;
      item.column = column;
      item.lead_begin = first_char(i);
      item.lead_end = item.lead_begin + 1;
      std::size_t q = item.lead_end;
      while (q < lines_[i].end && is_space(text_[q])) ++q;
      std::size_t key_at = q;
      std::string key;
      if (!at_line_end(i, q) && block_key(i, key_at, key))
        item.value = block_map(i, static_cast<int>(q - lines_[i].begin), q, last);
      else
        item.value = value_at(i, item.lead_end, column, false, last);
      item.end = lines_[last].next;
      seq.holds_anchor |= item.value.holds_anchor;
      seq.entries.push_back(std::move(item));
      seq.end = lines_[last].next;
      std::size_t j = next_content(last + 1);
      if (j == lines_.size() || lines_[j].indent != column || !starts_item(j)) return seq;
      i = j;
    }
  }

  // The value after a key's ':' or an item's '-' at p on line i; `column`
  // is the key's or dash's. `last` gets the last line it uses.
  Node value_at(std::size_t i, std::size_t p, int column, bool after_key, std::size_t& last) {
    const std::size_t limit = lines_[i].end;
    const std::size_t lead = p;
    while (p < limit && is_space(text_[p])) ++p;
    last = i;
    if (at_line_end(i, p)) {  // the value is on the lines below, or null
      std::size_t j = next_content(i + 1);
      if (j < lines_.size() && lines_[j].indent > column)
        return starts_item(j) ? block_seq(j, lines_[j].indent, last)
                              : block_map(j, lines_[j].indent, first_char(j), last);
      if (after_key && j < lines_.size() && lines_[j].indent == column && starts_item(j))
        return block_seq(j, column, last);
      Node null;
      null.begin = null.end = lead;
      return null;
    }
    const char c = text_[p];
    if (c == '&') {
      std::size_t q = p;
      while (q < limit && !is_space(text_[q])) ++q;
      Node node = value_at(i, q, column, after_key, last);
      node.anchored = node.holds_anchor = true;
      return node;
    }
    if (c == '|' || c == '>' || c == '!' || c == '?') return opaque(i, p, column, last);
    if (c == '{' || c == '[' || c == '*' || c == '"' || c == '\'') {
      std::size_t q = p;
      Node node;
      if (!flow_node(q, limit, node) || !at_line_end(i, q)) return opaque(i, p, column, last);
      return node;
    }
    Node scalar;  // plain: to the end of the line or a comment
    scalar.begin = p;
    std::size_t end = p;
    while (end < limit && !(text_[end] == '#' && is_space(text_[end - 1])) && text_[end] != '\r') ++end;
    while (end > p && is_space(text_[end - 1])) --end;
    scalar.end = end;
    std::size_t j = next_content(i + 1);
    if (j < lines_.size() && lines_[j].indent > column) return opaque(i, p, column, last);  // goes on below
    return scalar;
  }

  // A value inside a flow collection (or one that starts like one) at p; p
  // moves past it. False when it does not end before `limit`.
  bool flow_node(std::size_t& p, std::size_t limit, Node& out) const {
    auto skip = [&] {
      while (p < limit && is_space(text_[p])) ++p;
    };
    skip();
    if (p >= limit) return false;
    out.begin = p;
    const char c = text_[p];
    if (c == '{' || c == '[') {
      const bool map = c == '{';
      const char close = map ? '}' : ']';
      out.kind = map ? Kind::flow_map : Kind::flow_seq;
      ++p;
      for (;;) {
        skip();
        if (p >= limit) return false;
        if (text_[p] == close) break;
        Entry entry;
        entry.begin = p;
        if (map) {
          std::size_t key_end = p;
          if (text_[p] == '"' || text_[p] == '\'') {
            key_end = quoted_end(p, limit);
            if (key_end == std::string::npos || !unquote(p, key_end, entry.key)) return false;
          } else {
            while (key_end < limit &&
                   std::string_view(":,{}[]#").find(text_[key_end]) == std::string_view::npos)
              ++key_end;
            std::size_t trimmed = key_end;
            while (trimmed > p && is_space(text_[trimmed - 1])) --trimmed;
            entry.key = text_.substr(p, trimmed - p);
          }
          p = key_end;
          skip();
          if (p >= limit || text_[p] != ':' || entry.key.empty()) return false;
          ++p;
          skip();
          if (p < limit && (text_[p] == ',' || text_[p] == close)) {
            entry.value.begin = entry.value.end = p;  // `key:` alone is null
          } else if (!flow_node(p, limit, entry.value)) {
            return false;
          }
        } else if (!flow_node(p, limit, entry.value)) {
          return false;
        }
        entry.end = entry.value.end;
        out.holds_anchor |= entry.value.holds_anchor;
        out.entries.push_back(std::move(entry));
        skip();
        if (p < limit && text_[p] == ',') {
          ++p;
          continue;
        }
        if (p < limit && text_[p] == close) break;
        return false;
      }
      out.end = ++p;
      return true;
    }
    if (c == '&') {
      while (p < limit && !is_space(text_[p])) ++p;
      if (!flow_node(p, limit, out)) return false;
      out.anchored = out.holds_anchor = true;
      return true;
    }
    if (c == '"' || c == '\'') {
      std::size_t end = quoted_end(p, limit);
      if (end == std::string::npos) return false;
      out.kind = Kind::scalar;
      out.end = p = end;
      return true;
    }
    out.kind = c == '*' ? Kind::alias : Kind::scalar;
    while (p < limit && std::string_view(",{}[]\r").find(text_[p]) == std::string_view::npos &&
           !(text_[p] == '#' && p > out.begin && is_space(text_[p - 1])) &&
           !(text_[p] == ':' && (p + 1 == limit || is_space(text_[p + 1]))))
      ++p;
    std::size_t end = p;
    while (end > out.begin && is_space(text_[end - 1])) --end;
    out.end = end;
    return true;
  }

  const std::string& text_;
  std::vector<Line> lines_;
};

// ---------------------------------------------------------------- [SECTION] writing new values

// Keys in the order a reader expects them in a node, model, pool, ...;
// other keys sorted.
const std::vector<std::string>& key_order() {
  static const std::vector<std::string> order = {
      "id",     "call",    "in", "out", "name", "role", "type", "pool",   "parallel", "workers",
      "device", "threads", "dp", "tp",  "pp",   "x",    "y",    "config", "args"};
  return order;
}

graph_detail::YamlShape flow_shape(const std::vector<std::string>&) { return {key_order(), true}; }

std::string without_newline(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// `value` on one line, as it reads inside a flow collection (and so also
// after a block key).
std::string flow_text(const json& value) {
  if (value.is_structured()) return without_newline(emit_yaml(value, flow_shape));
  const std::string list = without_newline(emit_yaml(json::array({value}), flow_shape));
  return list.substr(1, list.size() - 2);
}

int depth_of(const json& value) {
  int depth = 0;
  if (value.is_structured())
    for (const auto& item : value) depth = std::max(depth, depth_of(item));
  return value.is_structured() ? depth + 1 : 0;
}

// Whether a new value goes on one line in flow style, as graph files
// write nodes, layout entries and small settings: scalars, and
// collections up to two levels deep (`{id: a, in: [x]}`) -- list items of
// any length, a key's value up to 120 characters. Larger ones go as
// blocks below their key.
bool on_one_line(const json& value, bool in_list) {
  if (!value.is_structured() || value.empty()) return true;
  return depth_of(value) <= 2 && (in_list || flow_text(value).size() <= 120);
}

// New lines for `lead value` at `indent` ("key:" or "-"). A new section
// of maps (`layout:`) goes as a block, like the sections around it.
std::string render(int indent, const std::string& lead, const json& value, bool in_list) {
  const std::string pad(indent, ' ');
  const bool section_of_maps = indent == 0 && value.is_object() && depth_of(value) > 1;
  if (on_one_line(value, in_list) && !section_of_maps) return pad + lead + " " + flow_text(value) + "\n";
  std::string body;
  if (value.is_object()) {
    for (const auto& key : ordered_keys(value, key_order()))
      body += render(indent + 2, flow_text(json(key)) + ":", value.at(key), false);
    if (lead == "-") return pad + "- " + body.substr(indent + 2);  // `- key: value` and the rest below
  } else {
    for (const auto& item : value) body += render(indent + 2, "-", item, true);
  }
  return pad + lead + "\n" + body;
}

// ---------------------------------------------------------------- [SECTION] patching the text

// Ids of a list whose items are all maps with distinct text ids; nullopt otherwise.
std::optional<std::vector<std::string>> item_ids(const json& list) {
  std::vector<std::string> ids;
  for (const auto& item : list) {
    if (!item.is_object() || !item.contains("id") || !item["id"].is_string()) return std::nullopt;
    ids.push_back(item["id"].get<std::string>());
  }
  std::vector<std::string> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return std::nullopt;
  return ids;
}

// How the items of an old list map onto a new one: for each new item the
// index of the old item it continues, or -1 for a new item. By id when both
// lists are of maps with ids, else by position. nullopt when ids kept
// changed their order (the list is then written anew).
std::optional<std::vector<int>> match_items(const json& old_list, const json& new_list) {
  std::vector<int> from;
  auto old_ids = item_ids(old_list), new_ids = item_ids(new_list);
  if (!old_ids || !new_ids) {
    for (std::size_t i = 0; i < new_list.size(); ++i) from.push_back(i < old_list.size() ? int(i) : -1);
    return from;
  }
  int previous = -1;
  for (const auto& id : *new_ids) {
    auto it = std::find(old_ids->begin(), old_ids->end(), id);
    int index = it == old_ids->end() ? -1 : int(it - old_ids->begin());
    if (index >= 0 && index < previous) return std::nullopt;
    if (index >= 0) previous = index;
    from.push_back(index);
  }
  return from;
}

class Patcher {
 public:
  explicit Patcher(const std::string& text) : text_(text) {}

  // The whole document; a section whose edit cannot be placed is written anew.
  std::string document(const Node& root, const json& old, const json& now,
                       std::vector<std::string>& rewritten) {
    // New sections go in the canonical order (name, ..., models, ..., layout).
    const auto& order = graph_detail::canonical_shape({}).first_keys;
    return map_entries(root, old, now, order, [&](const Entry& entry, const json& was, const json& is) {
      try {
        return block_entry(entry, was, is);
      } catch (const CannotPlace&) {
        // The smallest safe unit: the section, canonically. Its comments go;
        // the rest of the file stays as written.
        rewritten.push_back(entry.key);
        return emit_yaml(json{{entry.key, is}}, graph_detail::canonical_shape);
      }
    });
  }

 private:
  std::string slice(std::size_t begin, std::size_t end) const { return text_.substr(begin, end - begin); }

  static void end_line(std::string& out) {
    if (!out.empty() && out.back() != '\n') out += '\n';
  }

  // A removed or wholly rewritten entry must not take an anchor that an
  // alias elsewhere reads.
  static void check_no_anchor(const Entry& entry) {
    if (entry.value.holds_anchor)
      throw CannotPlace{"'" + entry.key + "' holds an anchor (&name) that aliases may read"};
  }

  // A block map's entries: unchanged ones as written, changed ones by
  // `patch`, removed ones dropped, new ones after the last.
  // New keys go in `order` (those it names first, the rest sorted).
  template <typename Patch>
  std::string map_entries(const Node& map, const json& old, const json& now,
                          const std::vector<std::string>& order, Patch patch) {
    if (!old.is_object() || map.entries.size() != old.size())
      throw CannotPlace{"the text's keys do not match the document's"};
    std::string out;
    std::size_t at = map.begin;
    for (const Entry& entry : map.entries) {
      if (!old.contains(entry.key)) throw CannotPlace{"the text's keys do not match the document's"};
      out += slice(at, entry.begin);  // the comments and blank lines before it stay
      at = entry.end;
      if (!now.contains(entry.key)) {
        check_no_anchor(entry);
        continue;
      }
      const json& was = old.at(entry.key);
      const json& is = now.at(entry.key);
      out += was == is ? slice(entry.begin, entry.end) : patch(entry, was, is);
    }
    out += slice(at, map.end);
    for (const auto& key : ordered_keys(now, order)) {
      if (old.contains(key)) continue;
      end_line(out);
      out += render(map.indent, flow_text(json(key)) + ":", now.at(key), false);
    }
    return out;
  }

  // A block list's items, matched by id or position (match_items).
  std::string seq_items(const Node& seq, const json& old, const json& now) {
    if (!old.is_array() || seq.entries.size() != old.size())
      throw CannotPlace{"the text's items do not match the document's"};
    auto from = match_items(old, now);
    if (!from) {  // the order changed: the list anew, at its indentation
      for (const auto& entry : seq.entries) check_no_anchor(entry);
      std::string out;
      for (const auto& item : now) out += render(seq.indent, "-", item, true);
      return out;
    }
    std::string out;
    std::size_t at = seq.begin;
    std::size_t next_old = 0;
    for (std::size_t i = 0; i < now.size(); ++i) {
      const int k = (*from)[i];
      if (k < 0) {
        end_line(out);
        out += render(seq.indent, "-", now[i], true);
        continue;
      }
      for (; next_old <= std::size_t(k); ++next_old) {
        const Entry& entry = seq.entries[next_old];
        out += slice(at, entry.begin);
        at = entry.end;
        if (next_old < std::size_t(k)) {
          check_no_anchor(entry);  // removed
          continue;
        }
        out += old[k] == now[i] ? slice(entry.begin, entry.end) : block_entry(entry, old[k], now[i]);
      }
    }
    for (; next_old < seq.entries.size(); ++next_old) {
      const Entry& entry = seq.entries[next_old];
      check_no_anchor(entry);
      out += slice(at, entry.begin);
      at = entry.end;
    }
    out += slice(at, seq.end);
    return out;
  }

  // One changed block entry (a key's or an item's whole lines).
  std::string block_entry(const Entry& entry, const json& was, const json& is) {
    const Node& value = entry.value;
    if (value.anchored || value.kind == Kind::alias)
      throw CannotPlace{"'" + entry.key + "' is an anchor or alias that other keys share"};
    if (value.kind == Kind::opaque)
      throw CannotPlace{"'" + entry.key + "' is written in a style the patch does not edit"};
    const bool same_shape = was.type() == is.type() && is.is_structured() && !is.empty();
    if (value.kind == Kind::block_map && same_shape)
      return slice(entry.begin, value.begin) +
             map_entries(value, was, is, key_order(),
                         [&](const Entry& e, const json& a, const json& b) { return block_entry(e, a, b); }) +
             slice(value.end, entry.end);
    if (value.kind == Kind::block_seq && same_shape)
      return slice(entry.begin, value.begin) + seq_items(value, was, is) + slice(value.end, entry.end);
    // A value on the key's line: only its span changes; the key and a comment stay.
    const bool in_flow = value.kind == Kind::flow_map || value.kind == Kind::flow_seq;
    std::string text;
    if (in_flow && same_shape) {
      text = flow(value, was, is);
    } else if ((in_flow || value.kind == Kind::scalar) && on_one_line(is, entry.key.empty())) {
      check_no_anchor(entry);
      text = flow_text(is);
    }
    if (!text.empty()) {
      if (value.begin == value.end && value.begin == entry.lead_end) text = " " + text;  // was `key:` alone
      return slice(entry.begin, value.begin) + text + slice(value.end, entry.end);
    }
    // Another shape (a block where a scalar was, a long list, ...): the entry anew.
    check_no_anchor(entry);
    if (entry.begin != entry.lead_begin - entry.column)
      throw CannotPlace{"'" + entry.key + "' starts inside a list item's line"};
    return render(entry.column, slice(entry.lead_begin, entry.lead_end), is, entry.key.empty());
  }

  // A changed one-line flow collection, its unchanged entries as written.
  std::string flow(const Node& node, const json& was, const json& is) {
    if (node.anchored || node.kind == Kind::alias)
      throw CannotPlace{"an anchor or alias that other keys share"};
    std::vector<std::string> parts;
    auto part = [&](const Entry& entry, const json& a, const json& b) {
      if (a == b) return slice(entry.begin, entry.end);
      const Node& value = entry.value;
      if (value.anchored || value.kind == Kind::alias)
        throw CannotPlace{"an anchor or alias that other keys share"};
      const bool nested =
          (value.kind == Kind::flow_map || value.kind == Kind::flow_seq) && a.type() == b.type();
      if (!nested && value.holds_anchor) throw CannotPlace{"a replaced value holds an anchor"};
      return slice(entry.begin, value.begin) + (nested ? flow(value, a, b) : flow_text(b));
    };
    if (node.kind == Kind::flow_map && was.is_object() && is.is_object() &&
        node.entries.size() == was.size()) {
      for (const Entry& entry : node.entries) {
        if (!was.contains(entry.key)) throw CannotPlace{"the text's keys do not match the document's"};
        if (is.contains(entry.key))
          parts.push_back(part(entry, was.at(entry.key), is.at(entry.key)));
        else if (entry.value.holds_anchor)
          throw CannotPlace{"a removed key holds an anchor"};
      }
      for (const auto& key : ordered_keys(is, key_order()))
        if (!was.contains(key)) parts.push_back(flow_text(json(key)) + ": " + flow_text(is.at(key)));
      return join('{', parts, '}');
    }
    // A list (or a map whose keys do not match): its items by match_items,
    // or anew. One holding an anchor is left alone: an item may move or go.
    if (node.holds_anchor) throw CannotPlace{"a flow collection holds an anchor"};
    auto from =
        node.kind == Kind::flow_seq && was.is_array() && is.is_array() && node.entries.size() == was.size()
            ? match_items(was, is)
            : std::nullopt;
    if (!from) return flow_text(is);
    for (std::size_t i = 0; i < is.size(); ++i) {
      const int k = (*from)[i];
      parts.push_back(k < 0 ? flow_text(is[i]) : part(node.entries[k], was[k], is[i]));
    }
    return join('[', parts, ']');
  }

  static std::string join(char open, const std::vector<std::string>& parts, char close) {
    std::string out(1, open);
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
    return out + close;
  }

  const std::string& text_;
};

// ---------------------------------------------------------------- [SECTION] what the file should say

const json* member(const json* map, const std::string& key) {
  if (!map || !map->is_object()) return nullptr;
  auto it = map->find(key);
  return it == map->end() ? nullptr : &*it;
}

const json* node_with_id(const json* list, const std::string& id) {
  if (!list || !list->is_array()) return nullptr;
  for (const auto& item : *list)
    if (item.is_object() && item.value("id", json()) == json(id)) return &item;
  return nullptr;
}

bool same(const json* a, const json* b) { return a && b ? *a == *b : a == b; }

// What the file should write at one key so that merged over `base` (null:
// no base there) it reads `now`, given that `written` (null: not written)
// read `before`. Null result: write nothing there. Unchanged keys stay as
// written; the rest follow the merge rules of defaults.h.
std::optional<json> to_write(const json* base, const json* before, const json* now, const json* written) {
  if (same(before, now)) return written ? std::optional<json>(*written) : std::nullopt;
  if (!now) return base ? std::optional<json>(json(nullptr)) : std::nullopt;  // `key: ~` removes the base's
  const json* own = written && !written->is_null() ? written : nullptr;
  const auto base_ids = base ? item_ids(*base) : std::nullopt;
  const auto now_ids = item_ids(*now);
  if (base && base->is_array() && base_ids && now->is_array() && now_ids && (!own || own->is_object())) {
    // Nodes edited by id over the base's list: kept ids keep the base's
    // order and new ones are appended, so any other order lists them all.
    std::vector<std::string> expected;
    for (const auto& id : *base_ids)
      if (std::count(now_ids->begin(), now_ids->end(), id)) expected.push_back(id);
    for (const auto& id : *now_ids)
      if (!std::count(base_ids->begin(), base_ids->end(), id)) expected.push_back(id);
    if (expected != *now_ids) return *now;
    json edits = own ? *own : json::object();
    for (const auto& id : *base_ids)
      if (!std::count(now_ids->begin(), now_ids->end(), id)) edits[id] = nullptr;
    for (const auto& id : *now_ids) {
      const json* base_node = node_with_id(base, id);
      auto edit = to_write(base_node, node_with_id(before, id), node_with_id(now, id), member(own, id));
      if (edit && !base_node && !member(own, id) && edit->is_object())
        edit->erase("id");  // a new node: its key names it
      if (edit)
        edits[id] = *edit;
      else
        edits.erase(id);
    }
    return edits;
  }
  if (now->is_object() && ((own && own->is_object()) || (!own && base && base->is_object()))) {
    json out = own && own->is_object() ? *own : json::object();
    std::vector<std::string> keys;
    for (const json* map : {own, now, base, before})
      if (map && map->is_object())
        for (const auto& [key, _] : map->items()) keys.push_back(key);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    for (const auto& key : keys) {
      auto value = to_write(member(base, key), member(before, key), member(now, key), member(own, key));
      if (value)
        out[key] = *value;
      else
        out.erase(key);
    }
    return out;
  }
  return *now;
}

json parse(const std::string& text, const std::string& file) {
  graph_detail::LineMap lines;
  std::vector<GraphIssue> issues;
  json doc = graph_detail::parse_yaml_document(text, file, lines, issues);
  if (!issues.empty()) throw GraphError(issues);
  return doc;
}

}  // namespace

YamlEdit edit_experiment_text(const std::string& original_text, const std::string& file,
                              const Experiment& edited) {
  const Experiment before = load_experiment_text(original_text, file);
  YamlEdit result;
  result.text = experiment_to_yaml(edited);
  Experiment wanted;
  try {
    wanted = load_experiment_text(result.text, file);
  } catch (const GraphError&) {  // the edit broke a type; the canonical text shows it
    result.whole_file_canonical = true;
    return result;
  }
  if (same_content(before, wanted)) return {original_text, {}, false};

  const json written = parse(original_text, file);
  json base;  // what the bases say, merged; null without `defaults:`
  if (written.is_object() && written.contains("defaults")) {
    graph_detail::LineMap lines;
    std::vector<std::string> bases;
    std::vector<GraphIssue> issues;
    base = graph_detail::parse_with_defaults(emit_yaml(json{{"defaults", written["defaults"]}}, flow_shape),
                                             file, lines, bases, issues);
  }
  const auto to = to_write(base.is_null() ? nullptr : &base, &before.raw, &wanted.raw, &written);
  try {
    Node root = Scanner(original_text).document();
    std::vector<std::string> rewritten;
    std::string patched =
        original_text.substr(0, root.begin) +
        Patcher(original_text).document(root, written, to ? *to : json::object(), rewritten) +
        original_text.substr(root.end);
    if (same_content(load_experiment_text(patched, file), wanted)) return {patched, rewritten, false};
  } catch (const CannotPlace&) {  // the file's shape itself: see below
  } catch (const GraphError&) {   // the patch did not parse: see below
  }
  // The patch is wrong or the file is not one it edits: the whole file
  // canonically, which always reloads to the edited experiment.
  result.whole_file_canonical = true;
  return result;
}

}  // namespace rlwb::core
