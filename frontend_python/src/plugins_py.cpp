// plugins_py.cpp — plugins and custom ops from Python: what loom-info shows,
// loading a plugin by path, fallback counters and policy, and defining a
// new op with a Python implementation for a device (loom/library.py).
#include "convert.h"
#include "ops_py.h"

#include <loom/did_you_mean.h>
#include <loom/op_registry.h>
#include <loom/registry.h>
#include <pybind11/stl.h>

namespace loom::python {
namespace {

py::dict plugin_dict(const registry::PluginRecord& r) {
  py::dict d;
  d["name"] = r.name;
  d["state"] = registry::to_string(r.state);
  d["reason"] = r.reason;
  d["version"] = r.version;
  d["manifest"] = r.manifest_path;
  d["library"] = r.library_path;
  d["abi_version"] = r.plugin_abi_version.empty() ? r.abi_version : r.plugin_abi_version;
  d["device_types"] = r.registered_device_types.empty() ? r.device_types : r.registered_device_types;
  d["comm_backends"] = r.comm_backends;
  d["devices"] = r.device_count;
  d["kernels"] = r.kernels;
  d["priority"] = r.priority;
  return d;
}

// A kernel argument as a tensor that borrows the kernel's memory (valid for
// the kernel call only: the Python implementation must not keep it).
Tensor borrowed(const LoomTensorDesc& d) {
  const DType t = static_cast<DType>(d.dtype);
  const auto isz = static_cast<int64_t>(itemsize(t));
  int64_t extent = 0;  // elements the view spans past its first one
  for (int32_t i = 0; i < d.ndim; ++i)
    if (d.shape[i] > 0) extent += (d.shape[i] - 1) * d.strides[i];
  const auto offset = static_cast<int64_t>(d.byte_offset) / isz;
  const size_t nbytes = static_cast<size_t>((offset + extent + 1) * isz);
  Storage s = detail::make_intrusive<StorageImpl>(Device(static_cast<int16_t>(d.device.type),
                                                         static_cast<int16_t>(d.device.index)),
                                                  d.data, nbytes, StorageDeleter{});
  return Tensor(detail::make_intrusive<TensorImpl>(std::move(s), t, IntArrayRef(d.shape, static_cast<size_t>(d.ndim)),
                                                   IntArrayRef(d.strides, static_cast<size_t>(d.ndim)), offset));
}

py::object value_object(const LoomValue& v) {
  switch (v.kind) {
    case LOOM_VALUE_BOOL: return py::bool_(v.u.i != 0);
    case LOOM_VALUE_INT: return py::int_(v.u.i);
    case LOOM_VALUE_FLOAT: return py::float_(v.u.f);
    case LOOM_VALUE_INT_LIST: return py::cast(std::vector<int64_t>(v.u.ints.data, v.u.ints.data + v.u.ints.size));
    case LOOM_VALUE_FLOAT_LIST: return py::cast(std::vector<double>(v.u.floats.data, v.u.floats.data + v.u.floats.size));
    case LOOM_VALUE_STRING: return py::str(v.u.str.data, static_cast<size_t>(v.u.str.size));
    case LOOM_VALUE_DTYPE: return dtype_object(static_cast<DType>(v.u.i));
    default: return py::none();
  }
}

// The C++ kernel that runs a Python implementation: inputs (and values) in,
// its results copied into the outputs the core allocated.
CppKernel python_kernel(const std::string& op, py::function fn) {
  auto shared = std::make_shared<py::function>(std::move(fn));
  return [op, shared](const LoomKernelCall& call) {
    py::gil_scoped_acquire gil;
    try {
      py::list args;
      for (int32_t i = 0; i < call.num_inputs; ++i)
        args.append(call.inputs[i].ndim < 0 ? py::none() : py::cast(borrowed(call.inputs[i])));
      for (int32_t i = 0; i < call.num_values; ++i)
        if (call.values[i].kind != LOOM_VALUE_TENSOR_LIST) args.append(value_object(call.values[i]));
      py::object r = (*shared)(*py::tuple(args));
      if (is_tensor(r)) r = py::make_tuple(r);
      const py::sequence results = py::reinterpret_borrow<py::sequence>(r);
      LOOM_CHECK(static_cast<int32_t>(py::len(results)) == call.num_outputs, op, ": the Python implementation returned ",
                 py::len(results), " results but the op has ", call.num_outputs, " outputs");
      autograd::NoGradGuard no_grad;
      for (int32_t i = 0; i < call.num_outputs; ++i) {
        py::handle x = results[static_cast<size_t>(i)];
        LOOM_CHECK(is_tensor(x), op, ": the Python implementation must return Tensors, got ", type_name(x));
        Tensor out = borrowed(call.outputs[i]);
        const Tensor& got = as_tensor(x);
        LOOM_CHECK(got.sizes() == out.sizes(), op, ": the Python implementation returned shape ",
                   shape_str(got.sizes()), " for output ", i, " but the op's shape rule gives ",
                   shape_str(out.sizes()), " (give define() an infer function)");
        out.copy_(got);
      }
    } catch (py::error_already_set& e) {
      throw Error(detail::cat(op, ": the Python implementation raised ", e.what()));
    }
  };
}

}  // namespace

void bind_plugins(py::module_& m) {
  m.def("plugins", [] {
    // Loaded first, as loom-info does: otherwise a plugin no tensor has used
    // yet would show as "found" with 0 kernels.
    registry::Registry::global().load_all();
    py::list out;
    for (const auto& r : registry::Registry::global().plugins()) out.append(plugin_dict(r));
    return out;
  }, "Every plugin found, loaded, with its state, kernel count and, when it failed, the reason "
     "(what loom-info shows)");
  m.def("kernels", [](const std::string& device_type) {
    registry::Registry::global().load_all();
    if (find_device_type_slot(device_type) < 0)
      throw py::value_error("loom.kernels: no device type '" + device_type + "'" +
                            did_you_mean(device_type, device_type_names()));
    py::list out;
    for (const auto& k : kernels_on(device_type)) {
      py::dict d;
      d["op"] = k.op;
      py::list dtypes;
      for (int code = 0; code < kNumDTypes; ++code)
        if (k.dtypes == 0 || ((k.dtypes >> code) & 1u)) dtypes.append(py::str(std::string(name(static_cast<DType>(code)))));
      d["dtypes"] = dtypes;
      d["contiguous_only"] = (k.flags & LOOM_KERNEL_CONTIGUOUS_ONLY) != 0;
      d["via"] = k.via.empty() ? py::object(py::none()) : py::object(py::str(k.via));
      d["provider"] = k.provider;
      d["where"] = k.where;
      out.append(d);
    }
    return out;
  }, py::arg("device_type"),
     "Every op with a kernel on a device type (what loom-info --kernels shows): op, dtypes, contiguous_only, "
     "via (the functional op whose kernel runs an in-place op without its own), provider, where");
  m.def("load_plugin", [](const std::string& path) {
    std::string why;
    if (!registry::Registry::global().load(path, why))
      throw py::value_error("loom.load_plugin('" + path + "'): " + why);
    registry::PluginRecord r;
    for (const auto& p : registry::Registry::global().plugins())
      if (p.manifest_path == path || p.library_path == path || p.name == path) r = p;
    return plugin_dict(r);
  }, py::arg("path"));
  m.def("fallback_stats", [] {
    py::dict out;
    for (const auto& r : fallback_counts()) out[py::make_tuple(r.op, r.device_type)] = r.count;
    return out;
  }, "{(op, device type): how often the op ran through a fallback there}");
  m.def("set_fallback_policy", [](const std::string& p) {
    if (p == "allow") set_fallback_policy(FallbackPolicy::Allow);
    else if (p == "warn") set_fallback_policy(FallbackPolicy::Warn);
    else if (p == "error") set_fallback_policy(FallbackPolicy::Error);
    else throw py::value_error("fallback policy must be 'allow', 'warn' or 'error', not '" + p + "'");
  });
  m.def("_library_define", [](const std::string& lib, const std::string& schema) {
    Library(lib, "python", 0).def(schema);
  });
  m.def("_library_impl", [](const std::string& lib, const std::string& op, const std::string& device_type,
                            py::function fn) {
    LOOM_CHECK(Dispatcher::instance().find(op), "loom.library: no op named '", op, "'; define it first");
    Library(lib, "python", 0).impl(op, device_type, python_kernel(op, std::move(fn)));
  });
}

}  // namespace loom::python
