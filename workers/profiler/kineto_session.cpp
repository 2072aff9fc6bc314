#include "workers/profiler/kineto_session.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <filesystem>
#include <stdexcept>

namespace rlwb::workers::profiler {

namespace kineto = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

namespace {
ProfilerConfig config() { return ProfilerConfig(ProfilerState::KINETO, /*report_input_shapes=*/true); }
}  // namespace

void KinetoSession::start() {
  if (running_) throw std::runtime_error("the Kineto profiler is running already");
  const std::set<ActivityType> activities = {ActivityType::CPU};
  kineto::prepareProfiler(config(), activities);
  kineto::enableProfiler(config(), activities);
  running_ = true;
}

int64_t KinetoSession::stop(const std::string& path) {
  if (!running_) throw std::runtime_error("the Kineto profiler is not running");
  running_ = false;
  auto result = kineto::disableProfiler();
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  result->save(path);
  return static_cast<int64_t>(std::filesystem::file_size(path));
}

}  // namespace rlwb::workers::profiler
