#include "ui/graph/validator_client.h"
#include "core/validate/validator.h"

namespace rlwb::ui {
namespace {

constexpr auto kSettle = std::chrono::milliseconds(250);

}  // namespace

std::vector<core::GraphIssue> validate_text(const std::string& text, const std::string& file,
                                            const core::MethodCatalog& catalog) {
  try {
    return core::validate_experiment(core::load_experiment_text(text, file), catalog);
  } catch (const core::GraphError& e) {
    return e.issues();
  } catch (const std::exception& e) {
    // Not the loader's typed error: still a problem of this text, shown as one.
    return {{file, 0, "", std::string("the validator failed: ") + e.what(), "", core::Severity::error}};
  }
}

ValidatorClient::~ValidatorClient() {
  if (worker_.joinable()) worker_.join();
}

void ValidatorClient::reset(std::shared_ptr<const core::MethodCatalog> catalog) {
  std::lock_guard<std::mutex> lock(mu_);
  catalog_ = std::move(catalog);
  ++generation_;
  state_ = State::idle;
  wanted_ = checked_ = 0;
  issues_.clear();
}

bool ValidatorClient::settled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !catalog_ || (!busy_ && wanted_ != 0 && wanted_ == checked_);
}

void ValidatorClient::update(uint64_t version, const std::string& yaml_text, const std::string& file) {
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  if (version != wanted_) {
    wanted_ = version;
    changed_at_ = now;
  }
  if (!catalog_ || busy_ || wanted_ == checked_ || now - changed_at_ < kSettle) return;
  if (worker_.joinable()) worker_.join();  // finished: busy_ is false
  state_ = State::checking;
  busy_ = true;
  worker_ = std::thread(&ValidatorClient::run_check, this, generation_, wanted_, yaml_text, file, catalog_);
}

void ValidatorClient::run_check(uint64_t generation, uint64_t version, std::string text, std::string file,
                                std::shared_ptr<const core::MethodCatalog> catalog) {
  auto issues = validate_text(text, file, *catalog);
  std::lock_guard<std::mutex> lock(mu_);
  busy_ = false;
  if (generation != generation_) return;  // another document since: reset() set the state
  issues_ = std::move(issues);
  checked_ = version;
  state_ = State::done;
}

ValidatorClient::State ValidatorClient::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

uint64_t ValidatorClient::checked_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return checked_;
}

std::vector<core::GraphIssue> ValidatorClient::issues() const {
  std::lock_guard<std::mutex> lock(mu_);
  return issues_;
}

}  // namespace rlwb::ui
