// Two machines simulated on one: two network namespaces joined by a veth
// pair, each with its own loopback and one address (10.x.y.1 and 10.x.y.2
// on a /24), so a rank in one cannot reach the other through 127.0.0.1 or
// any address but the pair's. A world of one rank per "node" (and one of
// two launchers, one per node) runs the collectives scenario over it: the
// store must be reached at the master's address and every rank must
// advertise the address its route to the store leaves from — nothing may
// assume one host.
//
// Making namespaces needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN), iproute2's
// `ip` and veth support; without them the test says why and passes (WARN
// "skipped: ..."). The namespaces are deleted when the test ends, whatever
// happened.
#include "spawn_util.h"

#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <sstream>
#include <chrono>
#include <string>
#include <vector>

namespace {

using namespace loom_dist_test;
using namespace std::chrono_literals;

// `ip <args>`, waited for at most 10 s.
Outcome ip(std::vector<std::string> args) {
  args.insert(args.begin(), "ip");
  return run_one({args, {}}, 10s, std::string(LOOM_DIST_TEST_DIR) + "/two_node_ip");
}

// Two namespaces (node 0 and node 1) joined by a veth pair; made by the
// constructor, deleted by the destructor (deleting a namespace deletes its
// end of the pair, and with it the other end). When a step fails,
// skip_reason() says which and why, and the rest is not attempted.
class TwoNodes {
 public:
  // ipv6: the pair gets fd00:... addresses instead of 10.x.y.z.
  explicit TwoNodes(bool ipv6 = false) {
    remove_stale();
    static int serial = 0;
    const int pid = static_cast<int>(::getpid());
    const std::string id = std::to_string(pid) + "_" + std::to_string(serial++);
    // The addresses exist only inside the two namespaces, so any subnet
    // would do; one per process keeps concurrent runs easy to tell apart.
    const std::string subnet = ipv6 ? "fd00:77:" + std::to_string(pid % 10000) + "::"
                                    : "10." + std::to_string(100 + pid / 256 % 100) + "." + std::to_string(pid % 256) + ".";
    for (int n = 0; n < 2; ++n) {
      ns_[n] = "loom_node" + std::to_string(n) + "_" + id;
      address_[n] = subnet + std::to_string(n + 1);
      veth_[n] = "loom" + std::to_string(n);  // only ever seen inside its namespace
    }
    if (!step({"netns", "add", ns_[0]})) return;
    made_[0] = true;
    if (!step({"netns", "add", ns_[1]})) return;
    made_[1] = true;
    if (!step({"-n", ns_[0], "link", "add", veth_[0], "type", "veth", "peer", "name", veth_[1], "netns", ns_[1]})) return;
    for (int n = 0; n < 2; ++n) {
      // nodad: usable at once, without IPv6's duplicate address detection.
      if (!step(ipv6 ? std::vector<std::string>{"-n", ns_[n], "addr", "add", address_[n] + "/64", "dev", veth_[n], "nodad"}
                     : std::vector<std::string>{"-n", ns_[n], "addr", "add", address_[n] + "/24", "dev", veth_[n]}))
        return;
      if (!step({"-n", ns_[n], "link", "set", "lo", "up"})) return;
      if (!step({"-n", ns_[n], "link", "set", veth_[n], "up"})) return;
    }
    // `ip netns exec` also needs to mount (a sysfs of the namespace's own).
    if (!step({"netns", "exec", ns_[0], "ip", "-o", "-4", "addr", "show", "dev", veth_[0]})) return;
  }

  ~TwoNodes() {
    for (int n = 0; n < 2; ++n)
      if (made_[n]) {
        const Outcome o = ip({"netns", "del", ns_[n]});
        if (!succeeded(o)) WARN("could not delete network namespace " << ns_[n] << ": " << o.log);
      }
  }

  TwoNodes(const TwoNodes&) = delete;
  TwoNodes& operator=(const TwoNodes&) = delete;

  // Empty when both nodes are up.
  const std::string& skip_reason() const { return skip_; }
  const std::string& address(int node) const { return address_[node]; }
  // As a URL's host: IPv6 addresses in brackets.
  std::string url_host(int node) const {
    return address_[node].find(':') == std::string::npos ? address_[node] : "[" + address_[node] + "]";
  }

  // `command` run inside node `node`'s namespace.
  Command on(int node, std::vector<std::string> command) const {
    command.insert(command.begin(), {"ip", "netns", "exec", ns_[node]});
    return {command, {}};
  }

 private:
  // Namespaces a killed run of this test left (their pid is gone): deleted,
  // so crashed runs do not pile up in /run/netns.
  static void remove_stale() {
    const Outcome list = ip({"netns", "list"});
    if (!succeeded(list)) return;
    std::istringstream lines(list.log);
    for (std::string line; std::getline(lines, line);) {
      const std::string name = line.substr(0, line.find(' '));
      int node = 0, pid = 0, serial = 0;
      char tail = 0;
      if (std::sscanf(name.c_str(), "loom_node%d_%d_%d%c", &node, &pid, &serial, &tail) != 3 || pid <= 0) continue;
      if (::kill(pid, 0) != 0 && errno == ESRCH) ip({"netns", "del", name});
    }
  }

  bool step(const std::vector<std::string>& args) {
    const Outcome o = ip(args);
    if (succeeded(o)) return true;
    std::string command = "ip";
    for (const std::string& a : args) command += " " + a;
    std::string log = o.log;
    while (!log.empty() && log.back() == '\n') log.pop_back();
    skip_ = "cannot make two network namespaces joined by a veth pair (this needs root, or CAP_SYS_ADMIN and "
            "CAP_NET_ADMIN, iproute2's `ip` and veth support): `" +
            command + "` " + describe(o) + (log.empty() ? "" : ": " + log);
    return false;
  }

  std::array<std::string, 2> ns_, address_, veth_;
  std::array<bool, 2> made_{false, false};
  std::string skip_;
};

// Both nodes' outcomes must be successes; the logs otherwise.
void check_all(const std::vector<Outcome>& result) {
  for (size_t i = 0; i < result.size(); ++i) {
    INFO("node " << i << ": `" << result[i].command << "` " << describe(result[i]) << ":\n" << result[i].log);
    CHECK(succeeded(result[i]));
  }
}

}  // namespace

namespace {

// One rank per node, every collective, over tcp:// to node 0.
void one_rank_per_node(bool ipv6) {
  TwoNodes nodes(ipv6);
  if (!nodes.skip_reason().empty()) {
    WARN("skipped: " << nodes.skip_reason());
    return;
  }
  // A fresh namespace has every port free.
  const std::string init = "tcp://" + nodes.url_host(0) + ":29500";
  std::vector<Command> ranks;
  for (int node = 0; node < 2; ++node)
    ranks.push_back(nodes.on(node, {LOOM_DIST_WORKER, "collectives", std::to_string(node), "2", init, "20000"}));
  const auto t0 = std::chrono::steady_clock::now();
  check_all(run_together(ranks, 60s, std::string(LOOM_DIST_TEST_DIR) + "/two_node_tcp"));
  CHECK(std::chrono::steady_clock::now() - t0 < 30s);
}

}  // namespace

TEST_CASE("two nodes (network namespaces joined by a veth pair), one rank each, run every collective over tcp://",
          "[distributed][multinode]") {
  one_rank_per_node(false);
}

TEST_CASE("two nodes joined over IPv6 run every collective (each rank advertises its IPv6 address)",
          "[distributed][multinode]") {
  one_rank_per_node(true);
}

TEST_CASE("loom-run --nnodes 2, one launcher per node (network namespaces joined by a veth pair), starts one world",
          "[distributed][multinode][launcher]") {
  TwoNodes nodes;
  if (!nodes.skip_reason().empty()) {
    WARN("skipped: " << nodes.skip_reason());
    return;
  }
  // 2 nodes x 2 processes: ranks 0-1 on node 0, 2-3 on node 1, over env://.
  std::vector<Command> launchers;
  for (int node = 0; node < 2; ++node)
    launchers.push_back(nodes.on(node, {LOOM_RUN, "--nnodes", "2", "--node-rank", std::to_string(node),
                                        "--nproc-per-node", "2", "--master-addr", nodes.address(0), "--master-port",
                                        "29500", "--grace", "2", LOOM_DIST_WORKER, "collectives", "-", "-", "env://",
                                        "20000"}));
  const auto t0 = std::chrono::steady_clock::now();
  check_all(run_together(launchers, 60s, std::string(LOOM_DIST_TEST_DIR) + "/two_node_launcher"));
  CHECK(std::chrono::steady_clock::now() - t0 < 30s);
}
