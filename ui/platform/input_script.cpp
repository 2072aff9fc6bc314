#include "ui/platform/input_script.h"

#include <GLFW/glfw3.h>

#include <cstdlib>
#include <map>
#include <sstream>

namespace rlwb::ui {
namespace {

// How long a command waits for the item it points at (a tab switch or a
// freshly opened popup needs a frame or two to draw it).
constexpr int kItemWaitMs = 10000;

int key_code(const std::string& name) {
  static const std::map<std::string, int> named = {
      {"delete", GLFW_KEY_DELETE}, {"backspace", GLFW_KEY_BACKSPACE},
      {"enter", GLFW_KEY_ENTER},   {"escape", GLFW_KEY_ESCAPE},
      {"tab", GLFW_KEY_TAB},       {"left", GLFW_KEY_LEFT},
      {"right", GLFW_KEY_RIGHT},   {"up", GLFW_KEY_UP},
      {"down", GLFW_KEY_DOWN},     {"home", GLFW_KEY_HOME},
      {"end", GLFW_KEY_END},       {"space", GLFW_KEY_SPACE}};
  if (auto it = named.find(name); it != named.end()) return it->second;
  if (name.size() == 1 && name[0] >= 'a' && name[0] <= 'z') return GLFW_KEY_A + (name[0] - 'a');
  if (name.size() == 1 && name[0] >= '0' && name[0] <= '9') return GLFW_KEY_0 + (name[0] - '0');
  return 0;
}

bool parse_pair(const std::string& text, float& x, float& y) {
  auto comma = text.find(',');
  if (comma == std::string::npos) return false;
  char* end = nullptr;
  x = std::strtof(text.c_str(), &end);
  if (end != text.c_str() + comma) return false;
  y = std::strtof(text.c_str() + comma + 1, &end);
  return *end == '\0' && comma + 1 < text.size();
}

ScriptPos parse_pos(const std::string& token, bool allow_relative, const std::string& where) {
  ScriptPos pos;
  if (token.empty()) throw ScriptError(where + "missing position");
  if (token[0] == '@') {
    pos.kind = ScriptPos::Kind::item;
    auto tilde = token.find('~');
    pos.item = token.substr(1, tilde == std::string::npos ? std::string::npos : tilde - 1);
    if (pos.item.empty()) throw ScriptError(where + "'@' needs an item id, e.g. @button/Save");
    if (tilde != std::string::npos && !parse_pair(token.substr(tilde + 1), pos.x, pos.y))
      throw ScriptError(where + "bad offset in '" + token + "' (use @ITEM~DX,DY)");
    return pos;
  }
  if (token[0] == '+') {
    if (!allow_relative) throw ScriptError(where + "'+DX,DY' is only for a drag's second point");
    pos.kind = ScriptPos::Kind::relative;
    if (!parse_pair(token.substr(1), pos.x, pos.y))
      throw ScriptError(where + "bad relative position '" + token + "'");
    return pos;
  }
  if (!parse_pair(token, pos.x, pos.y))
    throw ScriptError(where + "bad position '" + token + "' (use X,Y or @ITEM)");
  return pos;
}

// Words split on blanks; double quotes keep blanks inside a word
// (@"button/Start run") and are dropped.
std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool quoted = false, any = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (!quoted && (c == ' ' || c == '\t' || c == '\r')) {
      if (any) words.push_back(word);
      word.clear();
      any = false;
    } else {
      word += c;
      any = true;
    }
  }
  if (any) words.push_back(word);
  return words;
}

int parse_count(const std::string& token, const std::string& where) {
  char* end = nullptr;
  long v = std::strtol(token.c_str(), &end, 10);
  if (token.empty() || *end != '\0' || v < 0)
    throw ScriptError(where + "expected a count, got '" + token + "'");
  return static_cast<int>(v);
}

void parse_flags(ScriptCommand& cmd, const std::vector<std::string>& words, size_t from,
                 const std::string& where) {
  for (size_t i = from; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "right")
      cmd.button = 1;
    else if (w == "middle")
      cmd.button = 2;
    else if (w == "left")
      cmd.button = 0;
    else if (w == "ctrl")
      cmd.ctrl = true;
    else if (w == "shift")
      cmd.shift = true;
    else if (w.rfind("steps=", 0) == 0 && cmd.kind == ScriptCommand::Kind::drag)
      cmd.count = std::max(1, parse_count(w.substr(6), where));
    else
      throw ScriptError(where + "unknown option '" + w + "'");
  }
}

}  // namespace

std::vector<ScriptCommand> parse_script(const std::string& text) {
  std::vector<ScriptCommand> commands;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    const std::string where = "script:" + std::to_string(number) + ": ";
    auto hash = line.find('#');
    std::string body = line.substr(0, hash);
    std::vector<std::string> words = split_words(body);
    if (words.empty()) continue;
    ScriptCommand cmd;
    cmd.line = number;
    const std::string& verb = words[0];
    auto need = [&](size_t n, const char* usage) {
      if (words.size() < n) throw ScriptError(where + "usage: " + usage);
    };
    if (verb == "frames") {
      need(2, "frames N");
      cmd.kind = ScriptCommand::Kind::frames;
      cmd.count = parse_count(words[1], where);
    } else if (verb == "move") {
      need(2, "move POS");
      cmd.kind = ScriptCommand::Kind::move;
      cmd.pos.push_back(parse_pos(words[1], false, where));
    } else if (verb == "click" || verb == "dclick") {
      need(2, "click POS [right|middle] [ctrl] [shift]");
      cmd.kind = verb == "click" ? ScriptCommand::Kind::click : ScriptCommand::Kind::dclick;
      cmd.pos.push_back(parse_pos(words[1], false, where));
      parse_flags(cmd, words, 2, where);
    } else if (verb == "drag") {
      need(3, "drag POS POS [right|middle] [ctrl] [shift] [steps=N]");
      cmd.kind = ScriptCommand::Kind::drag;
      cmd.count = 8;
      cmd.pos.push_back(parse_pos(words[1], false, where));
      cmd.pos.push_back(parse_pos(words[2], true, where));
      parse_flags(cmd, words, 3, where);
    } else if (verb == "scroll") {
      need(3, "scroll POS DY");
      cmd.kind = ScriptCommand::Kind::scroll;
      cmd.pos.push_back(parse_pos(words[1], false, where));
      char* end = nullptr;
      cmd.wheel = std::strtof(words[2].c_str(), &end);
      if (*end != '\0') throw ScriptError(where + "scroll amount must be a number");
    } else if (verb == "key") {
      need(2, "key [ctrl+][shift+]NAME");
      cmd.kind = ScriptCommand::Kind::key;
      std::string combo = words[1];
      for (;;) {
        if (combo.rfind("ctrl+", 0) == 0) {
          cmd.ctrl = true;
          combo = combo.substr(5);
        } else if (combo.rfind("shift+", 0) == 0) {
          cmd.shift = true;
          combo = combo.substr(6);
        } else
          break;
      }
      cmd.key = key_code(combo);
      if (cmd.key == 0) throw ScriptError(where + "unknown key '" + combo + "'");
    } else if (verb == "text") {
      need(2, "text WORDS...");
      cmd.kind = ScriptCommand::Kind::text;
      auto start = body.find_first_not_of(" \t", body.find(verb) + verb.size());
      auto stop = body.find_last_not_of(" \t\r");
      cmd.text = body.substr(start, stop - start + 1);
    } else if (verb == "wait") {
      need(3, "wait @ITEM MS");
      cmd.kind = ScriptCommand::Kind::wait;
      cmd.pos.push_back(parse_pos(words[1], false, where));
      if (cmd.pos[0].kind != ScriptPos::Kind::item) throw ScriptError(where + "wait needs an @ITEM");
      cmd.count = parse_count(words[2], where);
    } else if (verb == "sleep") {
      need(2, "sleep MS");
      cmd.kind = ScriptCommand::Kind::sleep;
      cmd.count = parse_count(words[1], where);
    } else if (verb == "screenshot") {
      need(2, "screenshot FILE.png");
      cmd.kind = ScriptCommand::Kind::screenshot;
      cmd.text = words[1];
    } else if (verb == "close") {
      cmd.kind = ScriptCommand::Kind::close;
    } else {
      throw ScriptError(where + "unknown command '" + verb + "'");
    }
    commands.push_back(std::move(cmd));
  }
  return commands;
}

ScriptPlayer::ScriptPlayer(std::vector<ScriptCommand> commands)
    : commands_(commands.begin(), commands.end()) {}

ScriptFrame ScriptPlayer::hold() const {
  ScriptFrame f = state_;
  f.chars.clear();
  f.wheel = 0;
  f.key_down = 0;
  f.screenshot.clear();
  f.close = false;  // one request, not one a frame
  f.delta_time = 1.0f / 60.0f;
  return f;
}

ImVec2 ScriptPlayer::resolve(const ScriptPos& pos, const ItemRegistry& items, const ScriptCommand& cmd,
                             ImVec2 origin) const {
  switch (pos.kind) {
    case ScriptPos::Kind::absolute:
      return {pos.x, pos.y};
    case ScriptPos::Kind::relative:
      return {origin.x + pos.x, origin.y + pos.y};
    case ScriptPos::Kind::item: {
      auto rect = items.find(pos.item);
      if (!rect) {
        std::string known;
        for (auto& [id, r] : items.last_frame()) known += " " + id;
        throw ScriptError("script:" + std::to_string(cmd.line) + ": no item '" + pos.item +
                          "' on screen; items drawn:" + known);
      }
      ImVec2 c = rect->center();
      return {c.x + pos.x, c.y + pos.y};
    }
  }
  return origin;
}

void ScriptPlayer::expand(const ScriptCommand& cmd, const ItemRegistry& items) {
  using K = ScriptCommand::Kind;
  ScriptFrame f = hold();
  auto push = [&](const ScriptFrame& frame) { queue_.push_back(frame); };
  switch (cmd.kind) {
    case K::frames:
      for (int i = 0; i < cmd.count; ++i) push(f);
      break;
    case K::move:
      f.mouse = resolve(cmd.pos[0], items, cmd, f.mouse);
      push(f);
      break;
    case K::click:
    case K::dclick: {
      f.mouse = resolve(cmd.pos[0], items, cmd, f.mouse);
      f.ctrl = cmd.ctrl;
      f.shift = cmd.shift;
      push(f);  // hover first, as a person's pointer arrives before the press
      for (int n = 0; n < (cmd.kind == K::dclick ? 2 : 1); ++n) {
        f.buttons[cmd.button] = true;
        push(f);
        f.buttons[cmd.button] = false;
        push(f);
      }
      f.ctrl = f.shift = false;
      f.delta_time = 0.5f;  // so that the next click is not taken as a double click
      push(f);
      break;
    }
    case K::drag: {
      ImVec2 from = resolve(cmd.pos[0], items, cmd, f.mouse);
      ImVec2 to = resolve(cmd.pos[1], items, cmd, from);
      f.mouse = from;
      f.ctrl = cmd.ctrl;
      f.shift = cmd.shift;
      push(f);
      f.buttons[cmd.button] = true;
      push(f);
      for (int i = 1; i <= cmd.count; ++i) {
        float t = static_cast<float>(i) / static_cast<float>(cmd.count);
        f.mouse = ImVec2(from.x + (to.x - from.x) * t, from.y + (to.y - from.y) * t);
        push(f);
      }
      push(f);  // rest on the target before letting go
      f.buttons[cmd.button] = false;
      push(f);
      f.ctrl = f.shift = false;
      f.delta_time = 0.5f;
      push(f);
      break;
    }
    case K::scroll:
      f.mouse = resolve(cmd.pos[0], items, cmd, f.mouse);
      push(f);
      f.wheel = cmd.wheel;
      push(f);
      f.wheel = 0;
      push(f);
      break;
    case K::key:
      f.ctrl = cmd.ctrl;
      f.shift = cmd.shift;
      push(f);
      f.key_down = cmd.key;
      push(f);
      f.key_down = 0;
      push(f);
      f.ctrl = f.shift = false;
      push(f);
      break;
    case K::text:
      f.chars = cmd.text;
      push(f);
      f.chars.clear();
      push(f);
      break;
    case K::screenshot:
      f.screenshot = cmd.text;
      push(f);
      break;
    case K::close:
      f.close = true;
      push(f);
      break;
    case K::wait:
    case K::sleep:
      break;  // handled by next_frame
  }
  if (!queue_.empty()) {
    state_ = queue_.back();
    state_.screenshot.clear();
    state_.close = false;
  }
}

std::optional<ScriptFrame> ScriptPlayer::next_frame(const ItemRegistry& items) {
  using K = ScriptCommand::Kind;
  while (queue_.empty()) {
    if (!waiting_) {
      if (commands_.empty()) return std::nullopt;
      pending_ = commands_.front();
      commands_.pop_front();
      waiting_ = true;
      int ms = pending_.kind == K::wait || pending_.kind == K::sleep ? pending_.count : kItemWaitMs;
      deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    }
    const bool expired = std::chrono::steady_clock::now() >= deadline_;
    if (pending_.kind == K::sleep) {
      if (!expired) return hold();
      waiting_ = false;
      continue;
    }
    bool all_found = true;
    for (const ScriptPos& p : pending_.pos)
      if (p.kind == ScriptPos::Kind::item && !items.find(p.item)) all_found = false;
    if (!all_found && !expired) return hold();  // let the screen catch up
    waiting_ = false;
    if (pending_.kind == K::wait) {
      if (!all_found) {
        std::string known;
        for (auto& [id, r] : items.last_frame()) known += " " + id;
        throw ScriptError("script:" + std::to_string(pending_.line) + ": '" + pending_.pos[0].item +
                          "' did not appear within " + std::to_string(pending_.count) +
                          " ms; items drawn:" + known);
      }
      continue;
    }
    expand(pending_, items);  // throws when an item is still missing
  }
  ScriptFrame f = queue_.front();
  queue_.pop_front();
  return f;
}

}  // namespace rlwb::ui
