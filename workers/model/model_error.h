// ModelError: the one exception type of workers/model. Every message names
// the file (config.json, model.safetensors, tokenizer.json, ...) and the
// tensor or setting at fault, and says what would fix it when that is clear.
// The roles (actor, critic, ...) let it propagate so the controller shows it
// before training starts.
#pragma once

#include <stdexcept>
#include <string>

namespace rlwb::workers::model {

class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace rlwb::workers::model
