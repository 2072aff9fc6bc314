#include "workers/model/sentencepiece_library.h"

#include <dlfcn.h>

#include <array>
#include <cstdlib>

#include "workers/model/model_error.h"
#include "workers/model/sentencepiece_shim/sentencepiece_shim.h"

namespace rlwb::workers::model {

// Written by workers/CMakeLists.txt: where the build put the shim.
extern const char* const kSentencePieceShimPath;

namespace {

// The shim's functions, resolved once per process.
struct Shim {
  decltype(&rlwb_sp_load) load = nullptr;
  decltype(&rlwb_sp_free) free = nullptr;
  decltype(&rlwb_sp_piece_count) piece_count = nullptr;
  decltype(&rlwb_sp_reserved_ids) reserved_ids = nullptr;
  decltype(&rlwb_sp_encode) encode = nullptr;
  std::string error;  // why it could not be loaded; "" when it was
};

template <typename F>
void resolve(void* library, const char* name, F& out, std::string& error) {
  out = reinterpret_cast<F>(::dlsym(library, name));
  if (out == nullptr && error.empty()) error = std::string("it has no function ") + name;
}

const Shim& shim() {
  static const Shim loaded = [] {
    Shim s;
    const char* override_path = std::getenv("RLWB_SENTENCEPIECE_SHIM");
    const std::string path = override_path != nullptr ? override_path : kSentencePieceShimPath;
    // DEEPBIND: libsentencepiece binds to the protobuf inside it, not to the system one RLWB links.
    void* library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (library == nullptr) {
      const char* why = ::dlerror();
      s.error = "cannot load " + path + " (" + (why ? why : "?") +
                "): build the target rlwb_sentencepiece (it needs Debian's libsentencepiece-dev, "
                "which scripts/setup.sh installs), or point RLWB_SENTENCEPIECE_SHIM at it";
      return s;
    }
    resolve(library, "rlwb_sp_load", s.load, s.error);
    resolve(library, "rlwb_sp_free", s.free, s.error);
    resolve(library, "rlwb_sp_piece_count", s.piece_count, s.error);
    resolve(library, "rlwb_sp_reserved_ids", s.reserved_ids, s.error);
    resolve(library, "rlwb_sp_encode", s.encode, s.error);
    if (!s.error.empty()) s.error = path + ": " + s.error + " (rebuild the target rlwb_sentencepiece)";
    return s;
  }();
  return loaded;
}

}  // namespace

SentencePieceModel::SentencePieceModel(const std::string& bytes, const std::string& source)
    : source_(source) {
  const Shim& s = shim();
  if (!s.error.empty()) throw ModelError(source + ": cannot read a SentencePiece model: " + s.error);
  std::array<char, 1024> error{};
  handle_ = s.load(bytes.data(), bytes.size(), error.data(), error.size());
  if (handle_ == nullptr) {
    throw ModelError(source + ": not a SentencePiece model (" + std::to_string(bytes.size()) +
                     " bytes; libsentencepiece says: " + error.data() +
                     "); the file is corrupt or cut short: copy tokenizer.model again from the checkpoint "
                     "it came with");
  }
  piece_count_ = s.piece_count(handle_);
  s.reserved_ids(handle_, &reserved_.unk, &reserved_.bos, &reserved_.eos, &reserved_.pad);
}

SentencePieceModel::~SentencePieceModel() {
  if (handle_ != nullptr) shim().free(handle_);
}

std::vector<int64_t> SentencePieceModel::encode(std::string_view text) const {
  std::array<char, 1024> error{};
  // Most texts give fewer ids than bytes; a second call covers the rest.
  std::vector<int32_t> ids(text.size() + 8);
  int64_t n =
      shim().encode(handle_, text.data(), text.size(), ids.data(), ids.size(), error.data(), error.size());
  if (n > static_cast<int64_t>(ids.size())) {
    ids.resize(static_cast<size_t>(n));
    n = shim().encode(handle_, text.data(), text.size(), ids.data(), ids.size(), error.data(), error.size());
  }
  if (n < 0) throw ModelError(source_ + ": libsentencepiece cannot encode the text: " + error.data());
  return std::vector<int64_t>(ids.begin(), ids.begin() + n);
}

}  // namespace rlwb::workers::model
