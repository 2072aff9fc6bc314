// Hosts for the multi-host tests, made of Linux network namespaces: each
// host is a namespace with its own loopback and one veth link whose outer
// end sits on a bridge in the test's namespace, where the controller
// listens (the bridge's address). Processes started with
// `ip netns exec NAME` are then on another host in every way the wire can
// tell: another address, another /dev/shm identity (core/wire/host_identity.h),
// and their traffic crosses the veth link, whose byte counters the tests
// read. Needs root and iproute2; available() says why not when it cannot.
// Everything is removed when the object goes.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace rlwb::testing {

class NetnsHosts {
 public:
  explicit NetnsHosts(int count) {
    // Names and subnet from the pid, so that tests running side by side
    // don't collide (interface names are at most 15 characters).
    const int pid = static_cast<int>(getpid());
    tag_ = std::to_string(pid % 100000);
    subnet_ = "10." + std::to_string(64 + (pid / 250) % 64) + "." + std::to_string(pid % 250);
    bridge_ = "rb" + tag_;
    if (!sh("ip link add " + bridge_ + " type bridge") ||
        !sh("ip addr add " + subnet_ + ".1/24 dev " + bridge_) || !sh("ip link set " + bridge_ + " up"))
      return;
    made_bridge_ = true;
    for (int i = 0; i < count; ++i) {
      const std::string letter(1, static_cast<char>('a' + i));
      const std::string ns = "rlwb" + tag_ + letter, outer = "rv" + tag_ + letter,
                        inner = "ri" + tag_ + letter;
      if (!sh("ip netns add " + ns)) return;
      names_.push_back(ns);
      outer_.push_back(outer);
      if (!sh("ip link add " + outer + " type veth peer name " + inner) ||
          !sh("ip link set " + inner + " netns " + ns) ||
          !sh("ip link set " + outer + " master " + bridge_) || !sh("ip link set " + outer + " up") ||
          !sh("ip -n " + ns + " addr add " + address(i) + "/24 dev " + inner) ||
          !sh("ip -n " + ns + " link set " + inner + " up") || !sh("ip -n " + ns + " link set lo up"))
        return;
    }
    ok_ = true;
  }
  ~NetnsHosts() {
    for (const auto& ns : names_) sh("ip netns del " + ns);  // takes its veth pair with it
    if (made_bridge_) sh("ip link del " + bridge_);
  }
  NetnsHosts(const NetnsHosts&) = delete;
  NetnsHosts& operator=(const NetnsHosts&) = delete;

  bool available() const { return ok_; }
  const std::string& why_not() const { return why_not_; }
  const std::string& name(int i) const { return names_.at(i); }
  std::string address(int i) const { return subnet_ + "." + std::to_string(2 + i); }
  std::string controller_address() const { return subnet_ + ".1"; }
  // Cuts host i off (its link down) or joins it again.
  bool set_link_up(int i, bool up) { return sh("ip link set " + outer_.at(i) + (up ? " up" : " down")); }
  // Bytes through host i's link, both ways, so far.
  long long link_bytes(int i) const {
    return counter(outer_.at(i), "rx_bytes") + counter(outer_.at(i), "tx_bytes");
  }

 private:
  static long long counter(const std::string& link, const std::string& which) {
    long long value = -1;
    std::ifstream("/sys/class/net/" + link + "/statistics/" + which) >> value;
    return value;
  }
  // Runs a command; on failure keeps its output as the reason.
  bool sh(const std::string& command) {
    std::string output;
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (!pipe) {
      why_not_ = "cannot run '" + command + "'";
      return false;
    }
    char buf[256];
    while (fgets(buf, sizeof buf, pipe)) output += buf;
    if (pclose(pipe) != 0) {
      if (why_not_.empty()) why_not_ = "'" + command + "' failed: " + output;
      return false;
    }
    return true;
  }

  std::string tag_, subnet_, bridge_, why_not_;
  bool made_bridge_ = false, ok_ = false;
  std::vector<std::string> names_, outer_;
};

}  // namespace rlwb::testing
