// init_process_group and the torch.distributed-style functions over the
// default group (distributed.h).
#include "process_group.h"

#include <loom/distributed/distributed.h>
#include <loom/distributed/store.h>
#include <loom/device_info.h>
#include <loom/error.h>
#include <loom/ops.h>
#include <loom/ops/shape.h>
#include <loom/registry.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace loom::distributed {
namespace {

using detail::cat_op;

struct State {
  std::mutex mutex;
  std::shared_ptr<Store> store;  // the job's (TCP or file)
  std::shared_ptr<detail::PluginProcessGroup> world;
  const LoomCommPluginInfo* plugin = nullptr;
  std::string backend;
  std::string local_address;
  int device_index = 0;  // this rank's device of the backend's type
  std::chrono::milliseconds timeout{0};
  int groups_made = 0;
};

State& state() {
  static State s;
  return s;
}

int env_int(const char* name, int given, const char* what) {
  if (given >= 0) return given;
  const char* v = std::getenv(name);
  if (!v || !*v)
    throw Error(ErrorKind::InvalidArgument,
                cat_op("init_process_group: ", what, " not given and ", name,
                       " not set (env:// reads RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT; the launcher "
                       "`loom-run` / `python3 -m loom.distributed.run` sets them)"));
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end || x < 0 || x > 1 << 20)
    throw Error(ErrorKind::InvalidArgument, cat_op("init_process_group: ", name, "='", v, "' is not a valid ", what));
  return static_cast<int>(x);
}

// This rank's device of the backend's device type: 0 for cpu; for a GPU
// backend (nccl) LOCAL_RANK, which the launchers set (one process per GPU),
// else the rank modulo the GPUs seen here (a one-machine world started by
// hand).
int device_index_for(const LoomCommPluginInfo& plugin, int rank) {
  const std::string type = plugin.device_type ? plugin.device_type : "cpu";
  if (type == "cpu") return 0;
  if (const char* v = std::getenv("LOCAL_RANK"); v && *v) return env_int("LOCAL_RANK", -1, "local rank");
  const int n = available_device_count(type);
  return n > 0 ? rank % n : 0;
}

// The address of this machine that reaches `host`: a UDP socket connected
// there (nothing is sent) says which interface the route leaves from.
std::string local_address_towards(const std::string& host, uint16_t port) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;  // the store may be reached over IPv4 or IPv6
  hints.ai_socktype = SOCK_DGRAM;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || !res) return "127.0.0.1";
  std::string out = res->ai_family == AF_INET6 ? "::1" : "127.0.0.1";
  const int fd = ::socket(res->ai_family, SOCK_DGRAM, 0);
  if (fd >= 0) {
    // A datagram socket's connect sends nothing: it only picks the route.
    if (::connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
      sockaddr_storage local{};
      socklen_t len = sizeof local;
      char buf[NI_MAXHOST] = {};
      if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
          getnameinfo(reinterpret_cast<sockaddr*>(&local), len, buf, sizeof buf, nullptr, 0, NI_NUMERICHOST) == 0)
        out = buf;
    }
    ::close(fd);
  }
  freeaddrinfo(res);
  return out;
}

struct Endpoint {
  std::string host;
  uint16_t port = 0;
};

Endpoint parse_host_port(const std::string& text, const std::string& init_method) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    throw Error(ErrorKind::InvalidArgument,
                cat_op("init_process_group: init_method '", init_method, "' needs host:port"));
  Endpoint e;
  e.host = text.substr(0, colon);
  if (e.host.size() > 2 && e.host.front() == '[' && e.host.back() == ']') e.host = e.host.substr(1, e.host.size() - 2);
  char* end = nullptr;
  const long port = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (*end || port <= 0 || port > 65535)
    throw Error(ErrorKind::InvalidArgument,
                cat_op("init_process_group: the port in '", init_method, "' is not a port number"));
  e.port = static_cast<uint16_t>(port);
  return e;
}

detail::PluginProcessGroup& world_group() {
  State& s = state();
  if (!s.world)
    throw Error(ErrorKind::InvalidArgument,
                "the default process group is not initialized: call init_process_group first");
  return *s.world;
}

detail::PluginProcessGroup& group_or_world(ProcessGroup* group) {
  if (!group) return world_group();
  return static_cast<detail::PluginProcessGroup&>(*group);
}

// A global rank as a rank of `g`, or an error naming both.
int to_group_rank(detail::PluginProcessGroup& g, int global, const char* op, const char* which) {
  const int r = g.group_rank(global);
  if (r < 0)
    throw Error(ErrorKind::InvalidArgument,
                cat_op(op, ": ", which, " ", global, " is not a rank of this process group (its ranks: ",
                       g.size(), " of the world's)"));
  return r;
}

}  // namespace

const char* to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Avg: return "avg";
    case ReduceOp::Product: return "product";
    case ReduceOp::Min: return "min";
    case ReduceOp::Max: return "max";
  }
  return "?";
}

void init_process_group(const std::string& backend, const InitOptions& options) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.world) throw Error(ErrorKind::InvalidArgument, "init_process_group: the default process group is already "
                                                       "initialized (call destroy_process_group first)");
  std::string why;
  const LoomCommPluginInfo* plugin = registry::Registry::global().load_comm_backend(backend, why);
  if (!plugin) throw Error(ErrorKind::NotFound, cat_op("init_process_group('", backend, "'): ", why));
  const std::string& m = options.init_method;
  const int rank = env_int("RANK", options.rank, "rank");
  const int world_size = env_int("WORLD_SIZE", options.world_size, "world_size");
  if (world_size < 1 || rank >= world_size)
    throw Error(ErrorKind::InvalidArgument,
                cat_op("init_process_group: rank ", rank, " is not in a world of size ", world_size));
  std::shared_ptr<Store> store;
  std::string local = "127.0.0.1";
  if (m.rfind("env://", 0) == 0 || m.rfind("tcp://", 0) == 0) {
    Endpoint e;
    if (m.rfind("tcp://", 0) == 0) {
      e = parse_host_port(m.substr(6), m);
    } else {
      const char* addr = std::getenv("MASTER_ADDR");
      const char* port = std::getenv("MASTER_PORT");
      if (!addr || !*addr || !port || !*port)
        throw Error(ErrorKind::InvalidArgument,
                    "init_process_group: env:// needs MASTER_ADDR and MASTER_PORT (the address and port of "
                    "rank 0's store)");
      e = parse_host_port(std::string(addr) + ":" + port, cat_op("env:// (MASTER_ADDR=", addr, ", MASTER_PORT=", port, ")"));
    }
    // Rank 0 serves the store; everyone, rank 0 included, waits there
    // until the whole world has joined.
    store = std::make_shared<TCPStore>(e.host, e.port, rank == 0, options.timeout, world_size);
    local = local_address_towards(e.host, e.port);
  } else if (m.rfind("file://", 0) == 0) {
    store = std::make_shared<FileStore>(m.substr(7), options.timeout);
  } else {
    throw Error(ErrorKind::InvalidArgument,
                cat_op("init_process_group: init_method '", m, "' is not env://, tcp://host:port or file://path"));
  }
  const int device_index = device_index_for(*plugin, rank);
  auto comm = std::make_shared<detail::Communicator>(*plugin, std::make_shared<PrefixStore>("default_pg", store), rank,
                                                     world_size, options.timeout, local, device_index);
  std::vector<int> ranks(static_cast<size_t>(world_size));
  for (int i = 0; i < world_size; ++i) ranks[static_cast<size_t>(i)] = i;
  s.world = std::make_shared<detail::PluginProcessGroup>("default", backend, std::move(comm), rank, std::move(ranks));
  s.store = std::move(store);
  s.plugin = plugin;
  s.backend = backend;
  s.local_address = local;
  s.device_index = device_index;
  s.timeout = options.timeout;
  s.groups_made = 0;
}

void destroy_process_group() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.world.reset();
  s.store.reset();
  s.plugin = nullptr;
}

bool is_initialized() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.world != nullptr;
}

int get_rank() { return world_group().rank(); }
int get_world_size() { return world_group().size(); }
ProcessGroup& default_group() { return world_group(); }

std::shared_ptr<ProcessGroup> new_group(const std::vector<int>& ranks) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.world) throw Error(ErrorKind::InvalidArgument, "new_group: call init_process_group first");
  const int world = s.world->size();
  std::vector<int> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= world)
      throw Error(ErrorKind::InvalidArgument,
                  cat_op("new_group: rank ", sorted[i], " is not in the world of ", world, " process(es)"));
    if (i && sorted[i] == sorted[i - 1])
      throw Error(ErrorKind::InvalidArgument, cat_op("new_group: rank ", sorted[i], " is listed twice"));
  }
  if (sorted.empty()) throw Error(ErrorKind::InvalidArgument, "new_group: no ranks");
  const int id = ++s.groups_made;  // every process counts the same calls
  const int me = s.world->rank();
  const auto it = std::find(sorted.begin(), sorted.end(), me);
  if (it == sorted.end()) return nullptr;
  const int group_rank = static_cast<int>(it - sorted.begin());
  auto comm = std::make_shared<detail::Communicator>(
      *s.plugin, std::make_shared<PrefixStore>("group_" + std::to_string(id), s.store), group_rank,
      static_cast<int>(sorted.size()), s.timeout, s.local_address, s.device_index);
  return std::make_shared<detail::PluginProcessGroup>("group " + std::to_string(id), s.backend, std::move(comm),
                                                      group_rank, sorted);
}

std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op, ProcessGroup* group, bool async_op) {
  return group_or_world(group).all_reduce(tensor, op, async_op);
}

std::shared_ptr<Work> broadcast(Tensor& tensor, int src, ProcessGroup* group, bool async_op) {
  auto& g = group_or_world(group);
  return g.broadcast(tensor, to_group_rank(g, src, "broadcast", "src"), async_op);
}

std::shared_ptr<Work> reduce(Tensor& tensor, int dst, ReduceOp op, ProcessGroup* group, bool async_op) {
  auto& g = group_or_world(group);
  return g.reduce(tensor, to_group_rank(g, dst, "reduce", "dst"), op, async_op);
}

namespace {

// `work`, then `after` (copies out of a staging buffer) once, on the first wait.
std::shared_ptr<Work> then(std::shared_ptr<Work> work, std::function<void()> after) {
  struct Then : Work {
    std::shared_ptr<Work> inner;
    std::function<void()> after;
    bool done = false;
    void wait() override {
      inner->wait();
      if (!done) after();
      done = true;
    }
    bool is_completed() override { return inner->is_completed(); }
  };
  auto t = std::make_shared<Then>();
  t->inner = std::move(work);
  t->after = std::move(after);
  return t;
}

}  // namespace

std::shared_ptr<Work> all_gather(std::vector<Tensor>& tensor_list, const Tensor& input, ProcessGroup* group,
                                 bool async_op) {
  auto& g = group_or_world(group);
  if (static_cast<int>(tensor_list.size()) != g.size())
    throw Error(ErrorKind::InvalidArgument, cat_op("all_gather: tensor_list has ", tensor_list.size(),
                                                   " tensors, the group ", g.size(), " ranks"));
  for (const Tensor& t : tensor_list)
    if (!t.defined() || t.sizes() != input.sizes() || t.dtype() != input.dtype())
      throw Error(ErrorKind::InvalidArgument,
                  "all_gather: every tensor of tensor_list must have the input's shape and dtype");
  // One gather into a flat buffer, then split: the list's tensors may be
  // anywhere in memory.
  std::vector<int64_t> flat_shape = {static_cast<int64_t>(g.size()) * input.numel()};
  Tensor flat = loom::empty(flat_shape, input.dtype(), input.device());
  Tensor in = input.reshape({input.numel()});
  auto work = g.all_gather_into_tensor(flat, in, true);
  auto split = [tensor_list, flat, n = input.numel()]() mutable {
    for (size_t r = 0; r < tensor_list.size(); ++r)
      tensor_list[r].copy_(flat.narrow(0, static_cast<int64_t>(r) * n, n).reshape(tensor_list[r].sizes()));
  };
  if (!async_op) {
    work->wait();
    split();
    return nullptr;
  }
  return then(work, split);
}

std::shared_ptr<Work> all_gather_into_tensor(Tensor& output, const Tensor& input, ProcessGroup* group,
                                             bool async_op) {
  return group_or_world(group).all_gather_into_tensor(output, input, async_op);
}

std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op, ProcessGroup* group,
                                            bool async_op) {
  return group_or_world(group).reduce_scatter_tensor(output, input, op, async_op);
}

std::shared_ptr<Work> all_to_all_single(Tensor& output, const Tensor& input, ProcessGroup* group, bool async_op) {
  return group_or_world(group).all_to_all_single(output, input, async_op);
}

std::shared_ptr<Work> all_to_all_single(Tensor& output, const Tensor& input,
                                        const std::vector<int64_t>& output_split_sizes,
                                        const std::vector<int64_t>& input_split_sizes, ProcessGroup* group,
                                        bool async_op) {
  auto& g = group_or_world(group);
  if (output_split_sizes.empty() && input_split_sizes.empty()) return g.all_to_all_single(output, input, async_op);
  const int world = g.size();
  if (!input.defined() || !output.defined() || input.dim() == 0 || output.dim() == 0)
    throw Error(ErrorKind::InvalidArgument, "all_to_all_single: input and output need at least one dimension");
  // Empty split sizes mean equal chunks of dim 0, as PyTorch's.
  auto splits = [&](const std::vector<int64_t>& given, const Tensor& t, const char* which) {
    std::vector<int64_t> s = given;
    if (s.empty()) {
      if (t.size(0) % world != 0)
        throw Error(ErrorKind::InvalidArgument,
                    cat_op("all_to_all_single: ", which, "'s dim 0 (", t.size(0), ") does not split into ", world,
                           " equal chunks; give ", which, "_split_sizes"));
      s.assign(static_cast<size_t>(world), t.size(0) / world);
    }
    int64_t total = 0;
    for (int64_t x : s) {
      if (x < 0) throw Error(ErrorKind::InvalidArgument, cat_op("all_to_all_single: ", which, "_split_sizes has ", x));
      total += x;
    }
    if (static_cast<int>(s.size()) != world || total != t.size(0))
      throw Error(ErrorKind::InvalidArgument,
                  cat_op("all_to_all_single: ", which, "_split_sizes must hold ", world, " sizes adding up to ",
                         which, "'s dim 0 (", t.size(0), "), got ", s.size(), " adding up to ", total));
    return s;
  };
  const std::vector<int64_t> out_splits = splits(output_split_sizes, output, "output");
  const std::vector<int64_t> in_splits = splits(input_split_sizes, input, "input");
  const std::vector<int64_t> row_shape(input.sizes().begin() + 1, input.sizes().end());
  if (std::vector<int64_t>(output.sizes().begin() + 1, output.sizes().end()) != row_shape)
    throw Error(ErrorKind::InvalidArgument, "all_to_all_single: input and output must match past dim 0");
  // Every chunk padded to the largest any rank sends: one equal-chunk
  // all_to_all over the backend, then the real rows copied out.
  Tensor largest = loom::tensor(std::vector<int64_t>{*std::max_element(in_splits.begin(), in_splits.end())})
                       .to(input.device());
  g.all_reduce(largest, ReduceOp::Max, false);
  const int64_t chunk = largest.to(Device("cpu")).item<int64_t>();
  std::vector<int64_t> padded_shape = row_shape;
  padded_shape.insert(padded_shape.begin(), static_cast<int64_t>(world) * chunk);
  Tensor send = loom::zeros(padded_shape, input.dtype(), input.device());
  Tensor recv = loom::empty(padded_shape, input.dtype(), input.device());
  for (int64_t r = 0, offset = 0; r < world; offset += in_splits[static_cast<size_t>(r)], ++r)
    send.narrow(0, r * chunk, in_splits[static_cast<size_t>(r)])
        .copy_(input.narrow(0, offset, in_splits[static_cast<size_t>(r)]));
  auto work = g.all_to_all_single(recv, send, true);
  auto unpack = [output, recv, out_splits, chunk, world]() mutable {
    for (int64_t r = 0, offset = 0; r < world; offset += out_splits[static_cast<size_t>(r)], ++r)
      output.narrow(0, offset, out_splits[static_cast<size_t>(r)])
          .copy_(recv.narrow(0, r * chunk, out_splits[static_cast<size_t>(r)]));
  };
  if (!async_op) {
    work->wait();
    unpack();
    return nullptr;
  }
  return then(work, unpack);
}

std::shared_ptr<Work> gather(const Tensor& input, std::vector<Tensor>* gather_list, int dst, ProcessGroup* group,
                             bool async_op) {
  auto& g = group_or_world(group);
  const int root = to_group_rank(g, dst, "gather", "dst");
  Tensor flat;
  if (g.rank() == root) {
    if (!gather_list || static_cast<int>(gather_list->size()) != g.size())
      throw Error(ErrorKind::InvalidArgument,
                  cat_op("gather: the destination rank needs a gather_list of ", g.size(), " tensors"));
    flat = loom::empty({static_cast<int64_t>(g.size()) * input.numel()}, input.dtype(), input.device());
  }
  auto work = g.gather_into_tensor(flat, input.reshape({input.numel()}), root, true);
  work->wait();
  if (g.rank() == root)
    for (size_t r = 0; r < gather_list->size(); ++r)
      (*gather_list)[r].copy_(
          flat.narrow(0, static_cast<int64_t>(r) * input.numel(), input.numel()).reshape((*gather_list)[r].sizes()));
  (void)async_op;  // completes before returning (the list is filled from the flat buffer)
  return nullptr;
}

std::shared_ptr<Work> scatter(Tensor& output, const std::vector<Tensor>* scatter_list, int src, ProcessGroup* group,
                              bool async_op) {
  auto& g = group_or_world(group);
  const int root = to_group_rank(g, src, "scatter", "src");
  Tensor flat;
  if (g.rank() == root) {
    if (!scatter_list || static_cast<int>(scatter_list->size()) != g.size())
      throw Error(ErrorKind::InvalidArgument,
                  cat_op("scatter: the source rank needs a scatter_list of ", g.size(), " tensors"));
    std::vector<Tensor> parts;
    for (const Tensor& t : *scatter_list) parts.push_back(t.reshape({t.numel()}));
    flat = loom::cat(parts, 0);
  }
  return g.scatter_tensor(output, flat, root, async_op);
}

std::shared_ptr<Work> barrier(ProcessGroup* group, bool async_op) { return group_or_world(group).barrier(async_op); }

void send(const Tensor& tensor, int dst, ProcessGroup* group, int tag) { isend(tensor, dst, group, tag)->wait(); }
void recv(Tensor& tensor, int src, ProcessGroup* group, int tag) { irecv(tensor, src, group, tag)->wait(); }

std::shared_ptr<Work> isend(const Tensor& tensor, int dst, ProcessGroup* group, int tag) {
  auto& g = group_or_world(group);
  return g.send(tensor, to_group_rank(g, dst, "send", "dst"), tag);
}

std::shared_ptr<Work> irecv(Tensor& tensor, int src, ProcessGroup* group, int tag) {
  auto& g = group_or_world(group);
  return g.recv(tensor, to_group_rank(g, src, "recv", "src"), tag);
}

}  // namespace loom::distributed
