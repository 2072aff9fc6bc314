#include "core/rpc/column_padding.h"

#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace rlwb::core {

void mark_padded_column(Batch& batch, const std::string& column, PadSide side, double value) {
  batch.meta()[kPadColumnsKey][column] = {{"side", side == PadSide::left ? "left" : "right"},
                                          {"value", value}};
}

void pad_to_widest(std::vector<Batch>& parts) {
  struct Mark {
    PadSide side;
    double value;
  };
  std::map<std::string, Mark> marks;
  for (const Batch& part : parts) {
    const auto& meta = part.meta();
    if (!meta.is_object() || !meta.contains(kPadColumnsKey)) continue;
    for (const auto& [column, mark] : meta[kPadColumnsKey].items()) {
      const std::string side = mark.is_object() ? mark.value("side", "") : "";
      if ((side != "left" && side != "right") || !mark.contains("value") || !mark["value"].is_number())
        throw std::invalid_argument("reply meta '" + std::string(kPadColumnsKey) + "." + column +
                                    "' is not {side: left|right, value: NUMBER}: " + mark.dump());
      marks[column] = {side == "left" ? PadSide::left : PadSide::right, mark["value"].get<double>()};
    }
  }
  for (const auto& [column, mark] : marks) {
    int64_t widest = 0;
    for (const Batch& part : parts) {
      if (!part.has_tensor(column)) continue;
      const torch::Tensor& t = part.tensor(column);
      if (t.dim() != 2)
        throw std::invalid_argument("column '" + column + "' is marked padded but has " +
                                    std::to_string(t.dim()) +
                                    " dimensions; only [rows, width] columns are padded");
      widest = std::max(widest, t.size(1));
    }
    for (Batch& part : parts) {
      if (!part.has_tensor(column)) continue;
      const torch::Tensor& t = part.tensor(column);
      const int64_t missing = widest - t.size(1);
      if (missing == 0) continue;
      const std::vector<int64_t> pad =
          mark.side == PadSide::left ? std::vector<int64_t>{missing, 0} : std::vector<int64_t>{0, missing};
      part.set_tensor(column, torch::constant_pad_nd(t, pad, mark.value));
    }
  }
}

}  // namespace rlwb::core
