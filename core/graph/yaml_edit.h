// Saving an edited experiment into the text it was opened from, changing
// only what changed: the GUI editor's save (ui/graph/graph_document.h).
// experiment_to_yaml() writes a whole canonical file, which drops the
// user's comments, key order, anchors and `defaults:`; this writes the
// original text with each change patched in where it was written.
//
// What the patch keeps and what it changes:
//   - Unchanged keys keep their lines byte for byte, in their order, with
//     their comments; comment and blank lines are never removed.
//   - A changed scalar in block style (`lr: 1e-3  # why`) has only its
//     value replaced; the comment stays.
//   - A change inside a one-line flow collection (`{dp: 2, tp: 1}`,
//     `[a, b]`) rewrites that collection on its line; its unchanged entries
//     keep their text.
//   - An added key goes after its parent's last child, at the children's
//     indentation; a removed key loses its line(s).
//   - Lists of maps with an `id` (the nodes) are matched by id, other lists
//     by position; a list whose ids changed order is written anew.
//   - Where an edit cannot be placed safely -- under an anchor (`&arch`,
//     which aliases elsewhere share) or an alias, in a flow collection over
//     several lines, a block scalar (`|`) or a plain scalar over several
//     lines -- the top-level section around it is written anew in the
//     canonical style (experiment_to_yaml's), never the whole file.
//   - A file built on others (`defaults:`) keeps its `defaults:` and
//     writes only what differs from the merged bases: a changed key is
//     written over the base's, a removed one as `key: ~`, and nodes are
//     edited by id (`nodes: {gen: {out: [...]}}`) as the loader merges
//     them, or listed whole when their order changed.
// Always: loading the result gives an experiment same_content() as
// loading experiment_to_yaml(edited). When the patched text does not, the
// whole file is experiment_to_yaml(edited), so nothing is ever lost.
#pragma once

#include <string>
#include <vector>

#include "core/graph/experiment.h"

namespace rlwb::core {

struct YamlEdit {
  std::string text;  // what to write
  // The top-level sections written anew because an edit inside them could
  // not be placed in the text (see above), in file order.
  std::vector<std::string> rewritten_sections;
  // True when the patch did not reload to the edited experiment and `text`
  // is experiment_to_yaml(edited) instead.
  bool whole_file_canonical = false;
};

// `original_text` is what `file` held when it was loaded (its `defaults:`
// resolve relative to `file`, as when loading); `edited` is that
// experiment after edits to its structs. An unedited experiment gives
// `original_text` back unchanged. Throws GraphError only when
// `original_text` itself does not load.
YamlEdit edit_experiment_text(const std::string& original_text, const std::string& file,
                              const Experiment& edited);

}  // namespace rlwb::core
