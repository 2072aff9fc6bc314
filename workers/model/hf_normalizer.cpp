#include "workers/model/hf_normalizer.h"

#include <nlohmann/json.hpp>

#include "workers/model/model_error.h"

namespace rlwb::workers::model {
namespace {

void add_steps(const nlohmann::json& spec, const std::string& source,
               std::vector<unicode::NormalForm>& steps) {
  if (spec.is_null()) return;
  const std::string type = spec.is_object() ? spec.value("type", std::string("?")) : "?";
  if (type == "Sequence") {
    for (const auto& s : spec.value("normalizers", nlohmann::json::array())) add_steps(s, source, steps);
  } else if (type == "NFC") {
    steps.push_back(unicode::NormalForm::kNfc);
  } else if (type == "NFD") {
    steps.push_back(unicode::NormalForm::kNfd);
  } else if (type == "NFKC") {
    steps.push_back(unicode::NormalForm::kNfkc);
  } else if (type == "NFKD") {
    steps.push_back(unicode::NormalForm::kNfkd);
  } else {
    throw ModelError(source + ": normalizer '" + type +
                     "' is not supported (supported: none, NFC, NFD, NFKC, NFKD and a Sequence of them)");
  }
}

}  // namespace

HfNormalizer::HfNormalizer(const nlohmann::json& spec, const std::string& source) {
  add_steps(spec, source, steps_);
}

std::string HfNormalizer::apply(std::string_view text) const {
  std::string out(text);
  for (const auto form : steps_) out = unicode::normalize(out, form);
  return out;
}

}  // namespace rlwb::workers::model
