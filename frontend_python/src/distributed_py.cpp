// distributed_py.cpp — loom._C's side of loom.distributed: the process
// group functions of loom/distributed/distributed.h, a ProcessGroup and a
// Work type. loom/distributed/__init__.py gives them PyTorch's signatures.
// And the C++ DistributedDataParallel's GradientReducer, which
// loom.nn.parallel.DistributedDataParallel runs on.
#include "convert.h"
#include "ops_py.h"

#include <loom/distributed/distributed.h>
#include <loom/nn/parallel/distributed.h>
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <optional>

namespace loom::python {
namespace {

namespace dist = loom::distributed;

dist::ReduceOp reduce_op(const std::string& name) {
  if (name == "sum") return dist::ReduceOp::Sum;
  if (name == "avg") return dist::ReduceOp::Avg;
  if (name == "product") return dist::ReduceOp::Product;
  if (name == "min") return dist::ReduceOp::Min;
  if (name == "max") return dist::ReduceOp::Max;
  throw py::value_error("loom.distributed: unsupported reduce op '" + name +
                        "' (SUM, AVG, PRODUCT, MIN, MAX are; the bitwise ones are not yet)");
}

dist::ProcessGroup* group_of(const py::object& g) {
  if (g.is_none()) return nullptr;
  return g.cast<std::shared_ptr<dist::ProcessGroup>>().get();
}

std::vector<Tensor> tensor_list(const py::handle& list) {
  std::vector<Tensor> out;
  for (py::handle h : list) out.push_back(as_tensor(h));
  return out;
}

// A collective call with the GIL released: it may block for the timeout.
template <class F>
std::shared_ptr<dist::Work> released(F&& f) {
  py::gil_scoped_release nogil;
  return f();
}

}  // namespace

void bind_distributed(py::module_& m) {
  py::class_<dist::Work, std::shared_ptr<dist::Work>>(m, "_DistWork")
      .def("wait", [](dist::Work& w) {
        py::gil_scoped_release nogil;
        w.wait();
        return true;
      })
      .def("is_completed", &dist::Work::is_completed);
  py::class_<dist::ProcessGroup, std::shared_ptr<dist::ProcessGroup>>(m, "_DistProcessGroup")
      .def("rank", &dist::ProcessGroup::rank)
      .def("size", &dist::ProcessGroup::size)
      .def("backend", &dist::ProcessGroup::backend)
      .def("global_ranks", &dist::ProcessGroup::global_ranks);

  m.def("_dist_init", [](const std::string& backend, const std::string& init_method, int world_size, int rank,
                         double timeout_s) {
    dist::InitOptions o;
    o.init_method = init_method;
    o.world_size = world_size;
    o.rank = rank;
    o.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    py::gil_scoped_release nogil;
    dist::init_process_group(backend, o);
  });
  m.def("_dist_destroy", [] {
    py::gil_scoped_release nogil;
    dist::destroy_process_group();
  });
  m.def("_dist_is_initialized", &dist::is_initialized);
  m.def("_dist_rank", &dist::get_rank);
  m.def("_dist_world_size", &dist::get_world_size);
  m.def("_dist_backend", [] { return dist::default_group().backend(); });
  m.def("_dist_new_group", [](const std::vector<int>& ranks) {
    py::gil_scoped_release nogil;
    return dist::new_group(ranks);
  });
  m.def("_dist_all_reduce", [](py::object t, const std::string& op, py::object g, bool async_op) {
    Tensor x = as_tensor(t);
    return released([&] { return dist::all_reduce(x, reduce_op(op), group_of(g), async_op); });
  });
  m.def("_dist_broadcast", [](py::object t, int src, py::object g, bool async_op) {
    Tensor x = as_tensor(t);
    return released([&] { return dist::broadcast(x, src, group_of(g), async_op); });
  });
  m.def("_dist_reduce", [](py::object t, int dst, const std::string& op, py::object g, bool async_op) {
    Tensor x = as_tensor(t);
    return released([&] { return dist::reduce(x, dst, reduce_op(op), group_of(g), async_op); });
  });
  m.def("_dist_all_gather", [](py::list out, py::object t, py::object g, bool async_op) {
    std::vector<Tensor> list = tensor_list(out);
    Tensor x = as_tensor(t);
    return released([&] { return dist::all_gather(list, x, group_of(g), async_op); });
  });
  m.def("_dist_all_gather_into_tensor", [](py::object out, py::object t, py::object g, bool async_op) {
    Tensor o = as_tensor(out), x = as_tensor(t);
    return released([&] { return dist::all_gather_into_tensor(o, x, group_of(g), async_op); });
  });
  m.def("_dist_reduce_scatter_tensor", [](py::object out, py::object t, const std::string& op, py::object g,
                                          bool async_op) {
    Tensor o = as_tensor(out), x = as_tensor(t);
    return released([&] { return dist::reduce_scatter_tensor(o, x, reduce_op(op), group_of(g), async_op); });
  });
  m.def("_dist_all_to_all_single", [](py::object out, py::object t, const std::vector<int64_t>& output_split_sizes,
                                      const std::vector<int64_t>& input_split_sizes, py::object g, bool async_op) {
    Tensor o = as_tensor(out), x = as_tensor(t);
    return released([&] {
      return dist::all_to_all_single(o, x, output_split_sizes, input_split_sizes, group_of(g), async_op);
    });
  });
  m.def("_dist_gather", [](py::object t, py::object out_list, int dst, py::object g) {
    Tensor x = as_tensor(t);
    std::optional<std::vector<Tensor>> list;
    if (!out_list.is_none()) list = tensor_list(out_list);
    return released([&] { return dist::gather(x, list ? &*list : nullptr, dst, group_of(g), false); });
  });
  m.def("_dist_scatter", [](py::object t, py::object in_list, int src, py::object g, bool async_op) {
    Tensor x = as_tensor(t);
    std::optional<std::vector<Tensor>> list;
    if (!in_list.is_none()) list = tensor_list(in_list);
    return released([&] { return dist::scatter(x, list ? &*list : nullptr, src, group_of(g), async_op); });
  });
  m.def("_dist_barrier", [](py::object g, bool async_op) {
    return released([&] { return dist::barrier(group_of(g), async_op); });
  });
  m.def("_dist_isend", [](py::object t, int dst, py::object g, int tag) {
    Tensor x = as_tensor(t);
    return released([&] { return dist::isend(x, dst, group_of(g), tag); });
  });
  m.def("_dist_irecv", [](py::object t, int src, py::object g, int tag) {
    Tensor x = as_tensor(t);
    return released([&] { return dist::irecv(x, src, group_of(g), tag); });
  });

  m.def("_dist_host_copy_stats", [] {
    py::dict out;
    for (const auto& r : dist::host_copy_counts()) out[py::make_tuple(r.op, r.device_type)] = r.count;
    return out;
  });

  // Buckets, gradient hooks and all-reduces in C++: backward runs them
  // without the GIL.
  namespace parallel = loom::nn::parallel;
  py::class_<parallel::GradientReducer, std::shared_ptr<parallel::GradientReducer>>(m, "_GradientReducer")
      .def(py::init([](py::iterable named_parameters, py::iterable buffers, py::object group, double bucket_cap_mb,
                       bool find_unused_parameters, bool broadcast_buffers, bool gradient_as_bucket_view) {
             std::vector<std::pair<std::string, Tensor>> params;
             for (py::handle item : named_parameters) {
               auto pair = item.cast<py::tuple>();
               params.emplace_back(pair[0].cast<std::string>(), as_tensor(pair[1]));
             }
             parallel::DistributedDataParallelOptions options;
             options.bucket_cap_mb(bucket_cap_mb)
                 .find_unused_parameters(find_unused_parameters)
                 .broadcast_buffers(broadcast_buffers)
                 .gradient_as_bucket_view(gradient_as_bucket_view);
             if (!group.is_none()) options.process_group(group.cast<std::shared_ptr<dist::ProcessGroup>>());
             std::vector<Tensor> bufs = tensor_list(buffers);
             py::gil_scoped_release nogil;  // broadcasts the parameters
             return std::make_shared<parallel::GradientReducer>(std::move(params), std::move(bufs), options);
           }),
           py::arg("named_parameters"), py::arg("buffers"), py::arg("process_group"), py::arg("bucket_cap_mb"),
           py::arg("find_unused_parameters"), py::arg("broadcast_buffers"), py::arg("gradient_as_bucket_view"))
      .def("before_forward", [](parallel::GradientReducer& r) {
        py::gil_scoped_release nogil;
        r.before_forward();
      })
      .def_property("require_sync", &parallel::GradientReducer::require_sync,
                    &parallel::GradientReducer::set_require_sync)
      .def("bucket_indices", &parallel::GradientReducer::bucket_indices)
      .def("bucket_tensors", &parallel::GradientReducer::bucket_tensors);
}

}  // namespace loom::python
