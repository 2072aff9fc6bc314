#include "app/tokenizer_vocab.h"

#include "workers/roles/model_setup.h"

namespace rlwb::app {

int64_t tokenizer_vocab(const core::config::TokenizerOptions& options) {
  return workers::roles::make_tokenizer(options)->vocab_size();
}

}  // namespace rlwb::app
