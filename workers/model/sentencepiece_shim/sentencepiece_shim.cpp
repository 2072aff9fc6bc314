#include "workers/model/sentencepiece_shim/sentencepiece_shim.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

using Processor = sentencepiece::SentencePieceProcessor;

void copy_error(const std::string& message, char* error, size_t error_size) {
  if (error == nullptr || error_size == 0) return;
  const size_t n = std::min(message.size(), error_size - 1);
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

}  // namespace

extern "C" {

void* rlwb_sp_load(const char* bytes, size_t size, char* error, size_t error_size) {
  auto* processor = new Processor();
  const auto status = processor->LoadFromSerializedProto(std::string_view(bytes, size));
  if (!status.ok()) {
    copy_error(status.ToString(), error, error_size);
    delete processor;
    return nullptr;
  }
  return processor;
}

void rlwb_sp_free(void* model) { delete static_cast<Processor*>(model); }

int32_t rlwb_sp_piece_count(const void* model) {
  return static_cast<const Processor*>(model)->GetPieceSize();
}

void rlwb_sp_reserved_ids(const void* model, int32_t* unk, int32_t* bos, int32_t* eos, int32_t* pad) {
  const auto* p = static_cast<const Processor*>(model);
  *unk = p->unk_id();
  *bos = p->bos_id();
  *eos = p->eos_id();
  *pad = p->pad_id();
}

int64_t rlwb_sp_encode(const void* model, const char* text, size_t size, int32_t* ids, size_t capacity,
                       char* error, size_t error_size) {
  std::vector<int> out;
  const auto status = static_cast<const Processor*>(model)->Encode(std::string_view(text, size), &out);
  if (!status.ok()) {
    copy_error(status.ToString(), error, error_size);
    return -1;
  }
  std::copy_n(out.begin(), std::min(out.size(), capacity), ids);
  return static_cast<int64_t>(out.size());
}
}
