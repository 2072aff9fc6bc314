// Columns whose width depends on the rows a rank was given: a rank's
// prompts are left-padded to its own longest prompt and its responses end
// when its own rows stop, so two data-parallel ranks can reply with
// prompt_ids [4, 7] and [4, 6]. The method marks such columns in its reply's
// meta (side and pad value), and collect_replies pads each marked column of
// every part to the widest part before the rows are joined. A column that
// is not marked must have the same width everywhere (Batch::concat says so).
#pragma once

#include <string>
#include <vector>

#include "core/batch/batch.h"

namespace rlwb::core {

// meta key: {"column": {"side": "left"|"right", "value": pad}, ...}
inline constexpr const char* kPadColumnsKey = "pad_columns";

enum class PadSide { left, right };

// Marks 2-D tensor column `column` of `batch` as padded on `side` with `value`.
void mark_padded_column(Batch& batch, const std::string& column, PadSide side, double value);

// Pads the marked columns of every part to the widest part's width (dim 1),
// on the marked side with the marked value. Throws std::invalid_argument for
// a mark that is not {side, value} or a marked column that is not 2-D.
void pad_to_widest(std::vector<Batch>& parts);

}  // namespace rlwb::core
