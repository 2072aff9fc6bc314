// Undo/redo of whole document states, one entry per user gesture (a drag,
// a link, one edited field). States are small (a graph file), so a snapshot
// per gesture is simpler and safer than inverse operations.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace rlwb::ui {

template <typename State>
class UndoStack {
 public:
  explicit UndoStack(size_t limit = 200) : limit_(limit) {}

  // `before` is the state the gesture started from; redo history is dropped.
  void push(State before) {
    undo_.push_back(std::move(before));
    if (undo_.size() > limit_) undo_.erase(undo_.begin());
    redo_.clear();
  }
  // Takes the current state, returns the one to restore (false when empty).
  bool undo(State& current) { return step(undo_, redo_, current); }
  bool redo(State& current) { return step(redo_, undo_, current); }
  bool can_undo() const { return !undo_.empty(); }
  bool can_redo() const { return !redo_.empty(); }
  size_t undo_size() const { return undo_.size(); }
  size_t redo_size() const { return redo_.size(); }
  void clear() {
    undo_.clear();
    redo_.clear();
  }

 private:
  static bool step(std::vector<State>& from, std::vector<State>& to, State& current) {
    if (from.empty()) return false;
    to.push_back(std::move(current));
    current = std::move(from.back());
    from.pop_back();
    return true;
  }
  size_t limit_;
  std::vector<State> undo_, redo_;
};

}  // namespace rlwb::ui
