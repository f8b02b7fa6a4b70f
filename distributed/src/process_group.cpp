// PluginProcessGroup (process_group.h).
#include "process_group.h"

#include "host_copy.h"

#include <loom/error.h>
#include <loom/ops.h>
#include <loom/plugin/fnv1a.hpp>
#include <loom/stream.h>

#include <chrono>
#include <thread>

namespace loom::distributed::detail {
namespace {

int32_t abi_reduce_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return LOOM_COMM_SUM;  // the average divides afterwards
    case ReduceOp::Product: return LOOM_COMM_PRODUCT;
    case ReduceOp::Min: return LOOM_COMM_MIN;
    case ReduceOp::Max: return LOOM_COMM_MAX;
  }
  return LOOM_COMM_SUM;
}

std::string shape_of(const Tensor& t) {
  std::string s = "[";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

std::string describe_tensors(const std::vector<Tensor>& ts) {
  std::string s;
  for (const Tensor& t : ts) s += (s.empty() ? "" : ", ") + std::string(name(t.dtype())) + shape_of(t);
  return s.empty() ? "-" : s;
}

// The flight recorder, asked when a collective failed: this rank writes
// what it issued at `seq` (and the last sequence it completed) to the
// group's store, reads the other ranks' records for `seq` (waiting a few
// seconds: they time out at about the same moment) and says who issued
// what — ranks that disagree are a desynchronised program, a rank with no
// record is stuck elsewhere or gone.
std::string flight_record(const std::shared_ptr<Store>& store, int rank, int size, uint64_t seq,
                          const std::string& signature, uint64_t last_completed, std::chrono::milliseconds timeout) {
  const std::string prefix = "flight/" + std::to_string(seq) + "/";
  try {
    const std::string mine = signature + "\n" + std::to_string(last_completed);
    store->set(prefix + std::to_string(rank), std::vector<uint8_t>(mine.begin(), mine.end()));
    const auto wait = std::min(timeout, std::chrono::milliseconds(5000));
    std::string text = cat_op("\nflight recorder, sequence ", seq, ": rank ", rank, " issued ", signature,
                              " (its last completed: ", last_completed, ")");
    bool disagree = false;
    std::vector<int> silent;
    for (int q = 0; q < size; ++q) {
      if (q == rank) continue;
      try {
        store->wait({prefix + std::to_string(q)}, wait);
        const std::vector<uint8_t> v = store->get(prefix + std::to_string(q));
        const std::string rec(v.begin(), v.end());
        const size_t nl = rec.find('\n');
        const std::string theirs = rec.substr(0, nl);
        disagree = disagree || theirs != signature;
        text += cat_op("; rank ", q, " issued ", theirs, " (its last completed: ",
                       nl == std::string::npos ? "?" : rec.substr(nl + 1), ")");
      } catch (const std::exception&) {
        silent.push_back(q);
      }
    }
    for (int q : silent) text += cat_op("; rank ", q, " has no record for it (stuck before it, or gone)");
    // Leave only once every rank has read (or the wait is over): one of
    // these processes serves the store the others still read.
    store->add(prefix + "read", 1);
    const auto until = std::chrono::steady_clock::now() + wait;
    while (store->add(prefix + "read", 0) < size - static_cast<int64_t>(silent.size()) &&
           std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (disagree) text += " — the ranks issued different collectives at the same sequence number (desynchronised)";
    return text;
  } catch (const std::exception& e) {
    return cat_op("\nflight recorder unavailable: ", e.what());
  }
}

}  // namespace

// One collective's tensors as the plugin gets them: contiguous (staged
// copies where the caller's are not), plus what to do on completion.
struct PluginProcessGroup::Args {
  Args(const char* name, int32_t code) : op_name(name), op(code) {}
  const char* op_name;
  int32_t op;
  int32_t reduce_op = LOOM_COMM_SUM;
  int32_t root = 0;
  int32_t tag = 0;
  std::vector<Tensor> inputs, outputs;  // contiguous
  std::vector<std::pair<Tensor, Tensor>> copy_back;  // (caller's, staged)
  Tensor average;  // divided by the group size on completion, when defined
};

PluginProcessGroup::PluginProcessGroup(std::string name, std::string backend, std::shared_ptr<Communicator> comm,
                                       int rank, std::vector<int> global_ranks)
    : name_(std::move(name)),
      backend_(std::move(backend)),
      comm_(std::move(comm)),
      rank_(rank),
      global_ranks_(std::move(global_ranks)) {}

int PluginProcessGroup::group_rank(int global_rank) const {
  for (size_t i = 0; i < global_ranks_.size(); ++i)
    if (global_ranks_[i] == global_rank) return static_cast<int>(i);
  return -1;
}

void PluginProcessGroup::check_tensor(const Tensor& t, const char* op, const char* which) const {
  const LoomCommPluginInfo& p = comm_->plugin();
  if (!t.defined()) throw Error(cat_op(op, ": ", which, " is an undefined tensor"));
  const std::string type = t.device().type_name();
  if (type != p.device_type && !host_copies(t))
    throw Error(ErrorKind::InvalidArgument,
                cat_op(op, ": ", which, " is on ", t.device().str(), ", but the process group's backend '", backend_,
                       "' communicates ", p.device_type, " tensors (move it with .to(\"", p.device_type,
                       "\"), or make a group of a backend for ", type, ")"));
  if (!(p.dtypes & LOOM_DTYPE_BIT(static_cast<int32_t>(t.dtype()))))
    throw Error(ErrorKind::Unsupported,
                cat_op(op, ": backend '", backend_, "' does not support ", which, "'s dtype ", name(t.dtype())));
}

bool PluginProcessGroup::host_copies(const Tensor& t) const {
  // Only over a cpu backend, and only for a device no communication plugin
  // serves: a cuda tensor on a gloo group is a mistake (nccl is its
  // backend), a cpu tensor on an nccl group too.
  const std::string type = t.device().type_name();
  return std::string(comm_->plugin().device_type) == "cpu" && type != "cpu" && !has_comm_plugin_for(type);
}

Tensor PluginProcessGroup::stage(Args& a, const Tensor& t, bool written) const {
  if (host_copies(t)) {
    note_host_copy(a.op_name, t.device().type_name(), backend_);
    Tensor staged = t.to(Device(comm_->plugin().device_type)).contiguous();
    if (written) a.copy_back.emplace_back(t, staged);
    return staged;
  }
  // Non-contiguous: a contiguous copy, copied back into `t` on completion.
  if (t.is_contiguous()) return t;
  Tensor staged = t.contiguous();
  if (written) a.copy_back.emplace_back(t, staged);
  return staged;
}

void PluginProcessGroup::check_rank(int r, const char* op, const char* which) const {
  if (r < 0 || r >= size())
    throw Error(ErrorKind::InvalidArgument, cat_op(op, ": ", which, " rank ", r, " is not in the group ", name_,
                                                   " of ", size(), " process(es)"));
}

std::shared_ptr<Work> PluginProcessGroup::start(Args& a, bool async_op) {
  // Collectives are numbered per group, the same on every rank (plugins
  // may tag their messages with it); a send or receive involves two ranks
  // only, so it takes no number, or the others' count would fall behind.
  const bool point_to_point = a.op == LOOM_COMM_SEND || a.op == LOOM_COMM_RECV;
  const uint64_t seq = point_to_point ? 0 : ++sequence_;
  std::vector<LoomTensorDesc> in, out;
  for (const Tensor& t : a.inputs) in.push_back(t.impl()->desc());
  for (const Tensor& t : a.outputs) out.push_back(t.impl()->desc());
  LoomCollective c{};
  c.struct_size = sizeof c;
  c.op = a.op;
  c.reduce_op = a.reduce_op;
  c.root = a.root;
  c.tag = a.tag;
  c.num_inputs = static_cast<int32_t>(in.size());
  c.num_outputs = static_cast<int32_t>(out.size());
  c.inputs = in.data();
  c.outputs = out.data();
  c.sequence = seq;
  c.flags = async_op ? 0u : static_cast<uint32_t>(LOOM_COMM_FLAG_BLOCKING);
  // Devices with streams (cuda): the collective is queued on the tensors'
  // current stream, after the kernels that made them, as a kernel would be.
  // nullptr (the default stream) on devices without streams; a barrier has
  // no tensor and takes the default stream too.
  if (!a.inputs.empty() || !a.outputs.empty())
    c.stream = loom::current_stream((a.inputs.empty() ? a.outputs : a.inputs).front().device()).native_handle();
  // The signature: what every rank must agree on — the op, the tensors
  // every rank passes (not the root's alone: gather's and reduce's output,
  // scatter's input), the reduce op and the root.
  std::string tensors;
  if (a.op == LOOM_COMM_SCATTER) tensors = describe_tensors(a.outputs);
  else if (a.op == LOOM_COMM_GATHER || a.op == LOOM_COMM_REDUCE) tensors = describe_tensors(a.inputs);
  else tensors = describe_tensors(a.inputs) + " -> " + describe_tensors(a.outputs);
  static const char* const kReduceNames[] = {"sum", "product", "min", "max"};
  const bool reducing = a.op == LOOM_COMM_ALL_REDUCE || a.op == LOOM_COMM_REDUCE || a.op == LOOM_COMM_REDUCE_SCATTER;
  const bool rooted = a.op == LOOM_COMM_BROADCAST || a.op == LOOM_COMM_REDUCE || a.op == LOOM_COMM_GATHER ||
                      a.op == LOOM_COMM_SCATTER;
  const std::string signature =
      cat_op(a.op_name, "(", tensors, reducing ? cat_op(", ", kReduceNames[a.reduce_op & 3]) : std::string(),
             rooted ? cat_op(", root ", a.root) : std::string(), ")");
  c.signature = point_to_point ? 0 : plugin::fnv1a(signature);
  const std::string what =
      point_to_point ? cat_op(a.op_name, " (group ", name_, ", rank ", rank_, " of ", size(), ", peer ", a.root,
                              ", tag ", a.tag, ")")
                     : cat_op(a.op_name, " (group ", name_, ", rank ", rank_, " of ", size(), ", sequence ", seq, ")");
  LoomCommWork* handle = nullptr;
  throw_if_error(comm_->plugin().collective_start(comm_->handle(), &c, &handle), what);
  auto copy_back = std::move(a.copy_back);
  Tensor average = a.average;
  const int n = size();
  auto last = last_completed_;
  auto finish = [copy_back, average, n, last, seq]() mutable {
    for (auto& [caller, staged] : copy_back) caller.copy_(staged);
    if (average.defined()) average.div_(n);
    for (uint64_t prev = last->load(); prev < seq && !last->compare_exchange_weak(prev, seq);) {
    }
  };
  std::vector<Tensor> keep = a.inputs;
  keep.insert(keep.end(), a.outputs.begin(), a.outputs.end());
  std::function<std::string()> diagnose;
  if (!point_to_point) {
    auto store = comm_->store();
    const int rank = rank_, size = static_cast<int>(global_ranks_.size());
    const auto timeout = comm_->timeout();
    diagnose = [store, rank, size, seq, signature, last, timeout] {
      return flight_record(store, rank, size, seq, signature, last->load(), timeout);
    };
  }
  auto work = std::make_shared<PluginWork>(comm_, handle, what, std::move(finish), std::move(keep), std::move(diagnose));
  if (async_op) return work;
  work->wait();
  return nullptr;
}

std::shared_ptr<Work> PluginProcessGroup::all_reduce(Tensor& tensor, ReduceOp op, bool async_op) {
  check_tensor(tensor, "all_reduce", "the tensor");
  if (op == ReduceOp::Avg && !is_floating_point(tensor.dtype()))
    throw Error(ErrorKind::InvalidArgument, cat_op("all_reduce: ReduceOp.AVG of a ", name(tensor.dtype()),
                                                   " tensor (integer averages do not divide exactly: sum, then "
                                                   "divide as you need)"));
  Args a{"all_reduce", LOOM_COMM_ALL_REDUCE};
  a.reduce_op = abi_reduce_op(op);
  Tensor t = stage(a, tensor, true);
  a.inputs = {t};
  a.outputs = {t};
  if (op == ReduceOp::Avg) a.average = tensor;
  return start(a, async_op);
}

std::shared_ptr<Work> PluginProcessGroup::broadcast(Tensor& tensor, int src, bool async_op) {
  check_tensor(tensor, "broadcast", "the tensor");
  check_rank(src, "broadcast", "src");
  Args a{"broadcast", LOOM_COMM_BROADCAST};
  a.root = src;
  Tensor t = stage(a, tensor, true);
  a.inputs = {t};
  a.outputs = {t};
  return start(a, async_op);
}

std::shared_ptr<Work> PluginProcessGroup::reduce(Tensor& tensor, int dst, ReduceOp op, bool async_op) {
  check_tensor(tensor, "reduce", "the tensor");
  check_rank(dst, "reduce", "dst");
  if (op == ReduceOp::Avg && !is_floating_point(tensor.dtype()))
    throw Error(ErrorKind::InvalidArgument, cat_op("reduce: ReduceOp.AVG of a ", name(tensor.dtype()), " tensor"));
  Args a{"reduce", LOOM_COMM_REDUCE};
  a.root = dst;
  a.reduce_op = abi_reduce_op(op);
  const bool root = rank_ == dst;
  Tensor t = stage(a, tensor, root);
  a.inputs = {t};
  if (root) a.outputs = {t};
  if (op == ReduceOp::Avg && root) a.average = tensor;
  return start(a, async_op);
}

namespace {

void check_same_dtype(const Tensor& out, const Tensor& in, const char* op) {
  if (out.dtype() != in.dtype())
    throw Error(ErrorKind::InvalidArgument, cat_op(op, ": the output is ", name(out.dtype()), " but the input is ",
                                                   name(in.dtype())));
}

void check_multiple(const Tensor& big, const Tensor& small, int64_t world, const char* op, const char* big_name,
                    const char* small_name) {
  if (big.numel() != world * small.numel())
    throw Error(ErrorKind::InvalidArgument,
                cat_op(op, ": ", big_name, " ", shape_of(big), " must hold world_size (", world, ") times the ",
                       small_name, "'s ", small.numel(), " elements ", shape_of(small)));
}

}  // namespace

std::shared_ptr<Work> PluginProcessGroup::all_gather_into_tensor(Tensor& output, const Tensor& input,
                                                                 bool async_op) {
  check_tensor(output, "all_gather_into_tensor", "the output");
  check_tensor(input, "all_gather_into_tensor", "the input");
  check_same_dtype(output, input, "all_gather_into_tensor");
  check_multiple(output, input, size(), "all_gather_into_tensor", "the output", "input");
  Args a{"all_gather_into_tensor", LOOM_COMM_ALL_GATHER};
  a.inputs = {stage(a, input, false)};
  a.outputs = {stage(a, output, true)};
  return start(a, async_op);
}

std::shared_ptr<Work> PluginProcessGroup::reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op,
                                                                bool async_op) {
  check_tensor(output, "reduce_scatter_tensor", "the output");
  check_tensor(input, "reduce_scatter_tensor", "the input");
  check_same_dtype(output, input, "reduce_scatter_tensor");
  check_multiple(input, output, size(), "reduce_scatter_tensor", "the input", "output");
  if (op == ReduceOp::Avg && !is_floating_point(output.dtype()))
    throw Error(ErrorKind::InvalidArgument,
                cat_op("reduce_scatter_tensor: ReduceOp.AVG of a ", name(output.dtype()), " tensor"));
  Args a{"reduce_scatter_tensor", LOOM_COMM_REDUCE_SCATTER};
  a.reduce_op = abi_reduce_op(op);
  a.inputs = {stage(a, input, false)};
  a.outputs = {stage(a, output, true)};
  if (op == ReduceOp::Avg) a.average = output;
  return start(a, async_op);
}

std::shared_ptr<Work> PluginProcessGroup::all_to_all_single(Tensor& output, const Tensor& input, bool async_op) {
  check_tensor(output, "all_to_all_single", "the output");
  check_tensor(input, "all_to_all_single", "the input");
  check_same_dtype(output, input, "all_to_all_single");
  if (output.numel() != input.numel() || input.numel() % size() != 0)
    throw Error(ErrorKind::InvalidArgument,
                cat_op("all_to_all_single: input ", shape_of(input), " and output ", shape_of(output),
                       " must have the same number of elements, divisible by world_size (", size(), ")"));
  Args a{"all_to_all_single", LOOM_COMM_ALL_TO_ALL};
  a.inputs = {stage(a, input, false)};
  a.outputs = {stage(a, output, true)};
  return start(a, async_op);
}

std::shared_ptr<Work> PluginProcessGroup::gather_into_tensor(Tensor& output, const Tensor& input, int dst,
                                                             bool async_op) {
  check_tensor(input, "gather", "the input");
  check_rank(dst, "gather", "dst");
  Args a{"gather", LOOM_COMM_GATHER};
  a.root = dst;
  a.inputs = {stage(a, input, false)};
  if (rank_ == dst) {
    check_tensor(output, "gather", "the output");
    check_same_dtype(output, input, "gather");
    check_multiple(output, input, size(), "gather", "the output", "input");
    a.outputs = {stage(a, output, true)};
  }
  return start(a, async_op);
}

std::shared_ptr<Work> PluginProcessGroup::scatter_tensor(Tensor& output, const Tensor& input, int src,
                                                         bool async_op) {
  check_tensor(output, "scatter", "the output");
  check_rank(src, "scatter", "src");
  Args a{"scatter", LOOM_COMM_SCATTER};
  a.root = src;
  if (rank_ == src) {
    check_tensor(input, "scatter", "the input");
    check_same_dtype(output, input, "scatter");
    check_multiple(input, output, size(), "scatter", "the input", "output");
    a.inputs = {stage(a, input, false)};
  }
  a.outputs = {stage(a, output, true)};
  return start(a, async_op);
}

std::shared_ptr<Work> PluginProcessGroup::barrier(bool async_op) {
  Args a{"barrier", LOOM_COMM_BARRIER};
  return start(a, async_op);
}

std::shared_ptr<Work> PluginProcessGroup::send(const Tensor& tensor, int dst, int tag) {
  check_tensor(tensor, "send", "the tensor");
  check_rank(dst, "send", "dst");
  if (dst == rank_) throw Error(ErrorKind::InvalidArgument, cat_op("send: a rank cannot send to itself (rank ", dst, ")"));
  Args a{"send", LOOM_COMM_SEND};
  a.root = dst;
  a.tag = tag;
  a.inputs = {stage(a, tensor, false)};
  return start(a, true);
}

std::shared_ptr<Work> PluginProcessGroup::recv(Tensor& tensor, int src, int tag) {
  check_tensor(tensor, "recv", "the tensor");
  check_rank(src, "recv", "src");
  if (src == rank_)
    throw Error(ErrorKind::InvalidArgument, cat_op("recv: a rank cannot receive from itself (rank ", src, ")"));
  Args a{"recv", LOOM_COMM_RECV};
  a.root = src;
  a.tag = tag;
  a.outputs = {stage(a, tensor, true)};
  return start(a, true);
}

}  // namespace loom::distributed::detail
