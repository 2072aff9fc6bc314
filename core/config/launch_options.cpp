#include "core/config/launch_options.h"

#include "core/graph/yaml_document.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace rlwb::core::config {
namespace {

using nlohmann::json;

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

// "host:port" -> {host, port}; a bare host has port 0.
std::pair<std::string, int> split_host_port(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || text.find(':') != colon) return {text, 0};  // none, or IPv6
  try {
    return {text.substr(0, colon), std::stoi(text.substr(colon + 1))};
  } catch (const std::exception&) {
    return {text, -1};
  }
}

// The IPv4 addresses of this host's interfaces.
std::vector<std::string> own_addresses() {
  std::vector<std::string> found;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return found;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    if (inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text))
      found.push_back(text);
  }
  freeifaddrs(list);
  return found;
}

// bind must name an address of this host (or a wildcard): known before
// anything starts, where ZeroMQ would only say "Cannot assign requested
// address" once the run is under way.
void check_bind_is_here(const LaunchOptions& launch, ParseContext& ctx) {
  const std::string host = launch.bind_host();
  if (host == "0.0.0.0" || host == "*" || host == "localhost" || is_loopback(host)) return;
  std::vector<std::string> own = own_addresses();
  if (own.empty() || std::find(own.begin(), own.end(), host) != own.end()) return;
  std::string listed;
  for (const auto& a : own) listed += (listed.empty() ? "" : ", ") + a;
  ctx.add("bind", host + " is not an address of this host", "bind to one of " + listed + " (or 0.0.0.0)");
}

}  // namespace

std::string LaunchOptions::host_of(const std::string& pool, int rank) const {
  auto it = placement.find(pool);
  if (it == placement.end() || it->second.empty()) return "";
  if (it->second.size() == 1) return it->second[0];
  return rank >= 0 && rank < static_cast<int>(it->second.size()) ? it->second[rank] : "";
}

std::vector<std::string> LaunchOptions::exec_of(const std::string& pool, int rank) const {
  auto it = hosts.find(host_of(pool, rank));
  return it == hosts.end() ? std::vector<std::string>{} : it->second.exec;
}

bool LaunchOptions::spans_hosts() const {
  for (const auto& [pool, names] : placement)
    for (const auto& name : names)
      if (auto h = hosts.find(name); h != hosts.end() && !h->second.exec.empty()) return true;
  return false;
}

std::string LaunchOptions::bind_host() const { return split_host_port(bind).first; }
int LaunchOptions::bind_port() const { return split_host_port(bind).second; }
std::string LaunchOptions::advertised_host() const {
  if (!advertise.empty()) return advertise;
  std::string host = bind_host();
  return host == "0.0.0.0" || host == "*" ? "" : host;
}

LaunchOptions parse_launch_options(const json& doc, ParseContext& ctx) {
  LaunchOptions o;
  Section s(&doc, "", ctx);
  s.choice("target", o.target, {{"local", LaunchTarget::kLocal}, {"slurm", LaunchTarget::kSlurm}},
           "how the workers are started: local (this host, or the hosts' exec) or slurm (srun)");
  {
    Section slurm = s.child("slurm", "the Slurm allocation of each pool (target: slurm)");
    slurm.text("partition", o.slurm.partition, "srun --partition; empty: the default partition")
        .text("account", o.slurm.account, "srun --account; empty: the user's default")
        .text("time", o.slurm.time, "srun --time, e.g. 00:30:00; empty: the partition's limit")
        .integer("nodes", o.slurm.nodes, "nodes per pool", at_least(1))
        .integer("cpus_per_task", o.slurm.cpus_per_task, "cores per worker", at_least(1))
        .integer("gpus_per_node", o.slurm.gpus_per_node, "GPUs per node (0: none asked)", at_least(0))
        .names("extra_args", o.slurm.extra_args, "more srun options, as given");
  }
  s.text("bind", o.bind, "address the controller's RPC listens on (host or host:port)")
      .text("advertise", o.advertise, "address workers dial; default: bind's host");
  if (int port = o.bind_port(); port < 0 || port > 65535)
    s.fail("bind", "'" + o.bind + "' has no valid port", "write host or host:port, the port in 1..65535");
  if (const json* hosts = s.raw("hosts", "map", "how to start a process on each host");
      hosts && !hosts->is_null()) {
    if (!hosts->is_object()) {
      s.fail("hosts", "must be a map of host name -> {exec: [...]}", "see docs/launching.md");
    } else {
      for (const auto& [name, value] : hosts->items()) {
        Section h(&value, s.path("hosts") + "." + name, ctx);
        h.names("exec", o.hosts[name].exec, "argv prefix that starts a process there; empty: this host");
      }
    }
  }
  if (const json* placement = s.raw("placement", "map", "the host of each rank of a pool");
      placement && !placement->is_null()) {
    if (!placement->is_object()) {
      s.fail("placement", "must be a map of pool -> host name(s)", "e.g. placement: {main: [a, b]}");
    } else {
      for (const auto& [pool, value] : placement->items()) {
        std::vector<std::string>& names = o.placement[pool];
        if (value.is_string()) {
          names = {value.get<std::string>()};
        } else if (value.is_array() &&
                   std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_string(); })) {
          names = value.get<std::vector<std::string>>();
        } else {
          s.fail("placement",
                 "pool '" + pool + "': " + show_value(value) + " is not a host name or a list of them",
                 "write one host name per rank, e.g. [a, b]");
        }
      }
    }
  }
  s.finish();
  return o;
}

void check_launch_against_pools(const LaunchOptions& launch, const std::map<std::string, int>& pools,
                                ParseContext& ctx) {
  if (launch.target == LaunchTarget::kSlurm && !launch.placement.empty())
    ctx.add("placement", "Slurm places the ranks (target: slurm), so placement cannot",
            "remove placement, or use target: local");
  std::vector<std::string> pool_names, host_names;
  for (const auto& [name, workers] : pools) pool_names.push_back(name);
  for (const auto& [name, host] : launch.hosts) host_names.push_back(name);
  for (const auto& [pool, names] : launch.placement) {
    std::string path = "placement." + pool;
    auto it = pools.find(pool);
    if (it == pools.end()) {
      ctx.add(path, "the experiment has no pool '" + pool + "'",
              "place one of its pools" + did_you_mean_hint(pool, pool_names));
      continue;
    }
    if (names.size() != 1 && static_cast<int>(names.size()) != it->second)
      ctx.add(path,
              "names " + std::to_string(names.size()) + " hosts, but the pool has " +
                  std::to_string(it->second) + " workers",
              "name one host per rank, or one host for all of them");
    for (const auto& name : names)
      if (!launch.hosts.count(name))
        ctx.add(path, "host '" + name + "' is not defined under hosts",
                "add hosts: {" + name + ": {exec: [...]}}" + did_you_mean_hint(name, host_names));
  }
  if (launch.spans_hosts() && is_loopback(launch.bind_host()) &&
      is_loopback(launch.advertise.empty() ? launch.bind_host() : launch.advertise))
    ctx.add("bind",
            "workers run on other hosts, but the controller listens on " + launch.bind_host() +
                ", which they cannot reach",
            "set bind: to an address of this host that those hosts can reach (or 0.0.0.0 with advertise:)");
  if (launch.spans_hosts() && launch.advertised_host().empty())
    ctx.add("advertise", "bind is a wildcard, so workers on other hosts need an address to dial",
            "set advertise: to this host's address as they see it");
}

LaunchOptions read_launch_file(const std::string& path, const std::map<std::string, int>& pools) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the launch file " + path + ": does it exist?");
  std::stringstream text;
  text << in.rdbuf();
  graph_detail::LineMap origins;
  std::vector<GraphIssue> issues;
  json doc = graph_detail::parse_yaml_document(text.str(), path, origins, issues);
  std::vector<ConfigProblem> problems;
  for (const auto& i : issues) problems.push_back({"", i.line, i.message, i.hint});
  if (!problems.empty()) throw ConfigError(problems);
  std::map<std::string, int> lines;
  for (const auto& [key, origin] : origins) lines[key] = origin.line;
  ParseContext ctx(&lines);
  LaunchOptions options = parse_launch_options(doc.is_null() ? json::object() : doc, ctx);
  check_launch_against_pools(options, pools, ctx);
  check_bind_is_here(options, ctx);
  ctx.throw_if_any();
  return options;
}

}  // namespace rlwb::core::config
