// An experiment graph file open in the editor: the parsed experiment, where
// each node sits on the canvas, undo/redo per gesture, and saving.
//
// A file without positions for its nodes opens laid out by auto_layout.h;
// nodes missing from a layout that has others go below them by depth.
// Opening never throws: a file that fails to load opens read-only with the
// loader's issues in `load_issues()`, and save() refuses, so nothing is
// overwritten. Saving an unedited document writes the bytes it was opened
// from (comments included); after an edit it writes those bytes with only
// the changes patched in (core/graph/yaml_edit.h: comments, key order,
// anchors and `defaults:` stay), every node's position in `layout`. Saved
// into another folder, a file built on others (`defaults:`) is written
// resolved instead, as its bases would not be found from there.
//
// Every change goes through a gesture: begin_gesture(), change experiment()
// and positions, end_gesture(). A gesture that changed nothing leaves no
// undo entry.
//
// The trainer phases' nodes (phase_graphs.h) are edited like the step's:
// positions, edits and `layout:` name them by canvas key ("eval/eval_gen").
// A gesture edits `phase_nodes`; end_gesture() writes each phase whose
// nodes changed back into trainer.<phase>.nodes, which the writer saves
// and the validator reads. A phase without positions is laid out as its
// own block below the others.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/graph/experiment.h"
#include "ui/graph/undo_stack.h"

namespace rlwb::ui {

struct Vec2 {
  float x = 0, y = 0;
  bool operator==(const Vec2&) const = default;
};

// What undo restores: the experiment and the canvas positions.
struct GraphState {
  core::Experiment exp;
  std::map<std::string, Vec2> pos;  // canvas key -> top-left corner on the canvas
  uint64_t id = 0;                  // identifies a state, for "unsaved changes"
};

class GraphDocument {
 public:
  GraphDocument() = default;
  static GraphDocument open(const std::string& path);
  static GraphDocument from_text(const std::string& text, const std::string& path);

  const std::string& path() const { return path_; }
  bool loaded() const { return loaded_; }  // false: parse errors; read-only
  const std::vector<core::GraphIssue>& load_issues() const { return load_issues_; }
  bool dirty() const { return state_.id != saved_id_; }

  const core::Experiment& experiment() const { return state_.exp; }
  core::Experiment& experiment() { return state_.exp; }  // only inside a gesture
  const std::map<std::string, Vec2>& positions() const { return state_.pos; }
  Vec2 position(const std::string& node) const;
  void set_position(const std::string& node, Vec2 p);  // inside a gesture
  uint64_t version() const { return state_.id; }       // changes with every edit, undo, redo

  void begin_gesture();
  bool in_gesture() const { return in_gesture_; }
  // Ends the gesture; returns true when it changed something (one undo entry).
  bool end_gesture();
  void cancel_gesture();  // puts the state back as it was at begin_gesture()
  bool undo();
  bool redo();
  bool can_undo() const { return undo_.can_undo(); }
  bool can_redo() const { return undo_.can_redo(); }

  // Edits (each a whole gesture). Return false and set `error` when refused.
  // `in_ports`/`out_ports` as NodeSpec's: empty where each column is its own port.
  // Nodes are named by canvas key; add_node() adds to `phase`'s graph ("" the
  // step's) and returns the new node's key.
  std::string add_node(const std::string& call, Vec2 at, const std::vector<std::string>& in = {},
                       const std::vector<std::string>& out = {},
                       const std::vector<std::string>& in_ports = {},
                       const std::vector<std::string>& out_ports = {}, const std::string& phase = "");
  void delete_nodes(const std::set<std::string>& keys);
  // Renames the node `key` names to `new_id` (unique in its own graph).
  bool rename_node(const std::string& key, const std::string& new_id, std::string& error);
  // Lays every node out anew (auto_layout.h), as one gesture; false when
  // nothing moved.
  bool arrange();
  // Where a node of a graph built on another (`defaults:`) comes from: ""
  // for a node the file adds, "from grpo.yaml" for one it inherits as is,
  // "from grpo.yaml; in set here" for one whose keys differ from the base's.
  std::string node_origin(const core::NodeSpec& node) const;
  // The base file ("grpo.yaml") a setting at dotted `path` comes from, when
  // the file does not write it itself and `value` is still the base's; ""
  // otherwise (also once the user set it to something else here).
  std::string setting_origin(const std::string& path, const nlohmann::json& value) const;
  // A node id not used yet in `phase`'s graph: `base`, else base_2, base_3, ...
  std::string unique_node_id(const std::string& base, const std::string& phase = "") const;

  // The text save() would write now.
  std::string text_to_save() const;
  // Writes the file (atomically: temp file + rename). Throws std::runtime_error
  // when the document could not be loaded or the file cannot be written.
  void save();
  void save_as(const std::string& path);

 private:
  void place_unpositioned_nodes();
  void place_unpositioned_phase_nodes();
  // Writes the phases whose nodes differ from `before` into `trainer`.
  void save_changed_phases(const core::Experiment& before);
  // The experiment as saved: every node's canvas position in `layout`.
  core::Experiment experiment_to_save() const;
  bool same_state(const GraphState& a, const GraphState& b) const;

  std::string path_;
  std::string original_text_;  // the bytes on disk, as opened or last saved
  bool loaded_ = false;
  std::vector<core::GraphIssue> load_issues_;
  // Layout entries for ids that are no node (the validator warns about
  // them): kept as the user wrote them.
  nlohmann::json stray_layout_ = nlohmann::json::object();
  // The nodes of the files `defaults:` names, by id, with the file's name
  // (read once at open; a later base wins, as in the merge).
  std::map<std::string, std::pair<std::string, core::NodeSpec>> base_nodes_;
  // Each base's whole document, by file name, latest base last.
  std::vector<std::pair<std::string, nlohmann::json>> base_documents_;
  GraphState state_;
  GraphState gesture_start_;
  bool in_gesture_ = false;
  uint64_t next_id_ = 1;
  uint64_t saved_id_ = 0;
  UndoStack<GraphState> undo_;
};

}  // namespace rlwb::ui
