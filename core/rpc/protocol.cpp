#include "core/rpc/protocol.h"

namespace rlwb::core {

nlohmann::json RemoteErrorInfo::to_json() const {
  return {{"group", group}, {"rank", rank},     {"host", host},      {"pid", pid},
          {"model", model}, {"method", method}, {"message", message}};
}

RemoteErrorInfo RemoteErrorInfo::from_json(const nlohmann::json& j) {
  RemoteErrorInfo info;
  info.group = j.value("group", "");
  info.rank = j.value("rank", -1);
  info.host = j.value("host", "");
  info.pid = j.value("pid", 0);
  info.model = j.value("model", "");
  info.method = j.value("method", "");
  info.message = j.value("message", "");
  return info;
}

static std::string describe(const RemoteErrorInfo& i) {
  std::string where = "worker " + i.group + "/" + std::to_string(i.rank);
  if (!i.host.empty()) where += " on " + i.host;
  if (i.pid) where += " (pid " + std::to_string(i.pid) + ")";
  std::string what = i.model.empty() ? i.method : i.model + "." + i.method;
  return where + ", method '" + what + "': " + i.message;
}

RemoteError::RemoteError(RemoteErrorInfo info) : std::runtime_error(describe(info)), info_(std::move(info)) {}

std::string worker_id(const std::string& group, int rank) { return group + "/" + std::to_string(rank); }

}  // namespace rlwb::core
