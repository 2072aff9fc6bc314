#include "core/wire/host_identity.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace rlwb::core {
namespace {

std::string compute_host_identity() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  struct stat ns {};
  std::string net = stat("/proc/self/ns/net", &ns) == 0 ? std::to_string(ns.st_ino) : "?";
  return std::string(name) + "/" + boot + "/net:" + net;
}

}  // namespace

const std::string& host_identity() {
  static const std::string identity = compute_host_identity();
  return identity;
}

}  // namespace rlwb::core
