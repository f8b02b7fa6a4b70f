// execute.cpp — one case: reference on the CPU plugin (in float64 where the
// op allows), the same call on the device under a DispatchTrace, compare.
#include "execute.h"

#include "compare.h"
#include "device_layout.h"
#include "fallback_ops.h"
#include "gradient_case.h"
#include "op_forms.h"
#include "perf_timer.h"

#include <loom/dispatch_trace.h>
#include <loom/loom.h>
#include <loom/op_registry.h>

#include <algorithm>

namespace loom::conformance {
namespace {

using opinfo::RunOptions;
using opinfo::Sample;
using TensorList = std::vector<std::optional<Tensor>>;

bool kept(const Sample& s, size_t i) {
  return std::find(s.keep_layout.begin(), s.keep_layout.end(), i) != s.keep_layout.end();
}

// The CPU reference: the sample in its own dtype (which fixes the expected
// dtypes and tells UNSUPPORTED apart), then in float64 when the op allows,
// cast back to the dtypes of the first run.
// Fresh copies of a sample's tensors: an op that writes its arguments
// (_adam_update_, fill_, ...) must not change the sample the next run reads.
TensorList copies_of(const TensorList& ts) {
  TensorList out;
  for (const auto& t : ts) out.push_back(t ? std::optional<Tensor>(t->clone()) : std::nullopt);
  return out;
}

std::vector<Tensor> reference(const OpDef& op, const opinfo::OpSamples& os, const Sample& s) {
  const TensorList own = copies_of(s.tensors);
  RunOptions native_options;
  native_options.tensors = &own;
  std::vector<Tensor> native = opinfo::run_sample(op, s, native_options);
  bool lower_float = false;
  for (const auto& t : s.tensors)
    lower_float |= t && is_floating_point(t->dtype()) && t->dtype() != DType::Float64;
  if (!os.reference_in_double || !lower_float || os.compare == opinfo::Compare::Statistical) return native;
  TensorList wide;
  for (const auto& t : copies_of(s.tensors))
    wide.push_back(t && is_floating_point(t->dtype()) ? std::optional<Tensor>(t->to(DType::Float64)) : t);
  std::vector<Tensor> dbl;
  try {
    RunOptions o;
    o.tensors = &wide;
    dbl = opinfo::run_sample(op, s, o);
  } catch (const std::exception&) {
    return native;  // the op has no float64 path: its own dtype is the reference
  }
  if (dbl.size() != native.size()) return native;
  for (size_t i = 0; i < native.size(); ++i)
    if (is_floating_point(native[i].dtype()) && is_floating_point(dbl[i].dtype()))
      native[i] = dbl[i].to(native[i].dtype());
  return native;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

int64_t bytes_of(const TensorList& in, const std::vector<Tensor>& out) {
  int64_t n = 0;
  for (const auto& t : in) n += t ? static_cast<int64_t>(t->nbytes()) : 0;
  for (const auto& t : out) n += static_cast<int64_t>(t.nbytes());
  return n;
}

}  // namespace

const std::vector<Sample>& CaseExecutor::samples_for(const CaseSpec& spec) {
  auto key = std::make_pair(spec.op, spec.dtype);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    const opinfo::OpSamples* os = opinfo::find_op_samples(spec.op);
    LOOM_CHECK(os, "no samples for op '", spec.op, "'");
    it = cache_.emplace(key, os->make(opinfo::SampleContext(spec.dtype, spec.seed))).first;
  }
  return it->second;
}

CaseResult CaseExecutor::run(const CaseSpec& spec) {
  CaseResult r;
  r.id = spec.id, r.op = spec.op, r.dtype = std::string(name(spec.dtype)), r.variant = to_string(spec.variant);
  r.seed = spec.seed;
  const Device device = config_.device;
  try {
    const OpDef& op = Dispatcher::instance().op(spec.op);
    const opinfo::OpSamples& os = *opinfo::find_op_samples(spec.op);
    const auto& all = samples_for(spec);
    LOOM_CHECK(spec.sample_index < all.size(), "sample ", spec.sample_index, " of '", spec.op, "' is gone");
    const Sample& s = all[spec.sample_index];
    r.shapes = shapes_of(s.tensors);
    const Tolerance tol = tolerance_for(spec.dtype, s.atol, s.rtol, os.accumulates);

    if (spec.variant == Variant::Grad) {
      run_gradient_case(op, s, device, tol, r);
      return r;
    }

    std::vector<Tensor> expected;
    try {
      expected = reference(op, os, s);
    } catch (const std::exception& e) {
      r.status = Status::Unsupported;
      r.message = std::string("the CPU reference rejects this case: ") + e.what();
      return r;
    }

    // The device's inputs, laid out as the variant asks.
    TensorList inputs;
    for (size_t i = 0; i < s.tensors.size(); ++i) {
      const auto& t = s.tensors[i];
      if (!t) {
        inputs.emplace_back();
      } else if (spec.variant == Variant::NonContiguous && !kept(s, i)) {
        inputs.push_back(non_contiguous_on(*t, device));
      } else {
        Tensor moved = t->to(device);
        inputs.push_back(moved.is_same(*t) ? t->clone() : moved);  // in-place runs must not touch the sample
      }
    }
    r.strides = strides_of(inputs);

    const OpDef* run_op = &op;
    RunOptions options;
    options.tensors = &inputs;
    std::vector<Tensor> outs;
    if (spec.variant == Variant::InPlace) {
      run_op = inplace_partner(op);
      const Tensor& self = *s.tensors.at(0);
      if (expected.size() != 1 || expected[0].dtype() != self.dtype() ||
          !std::equal(expected[0].sizes().begin(), expected[0].sizes().end(), self.sizes().begin(),
                      self.sizes().end())) {
        r.status = Status::Unsupported;
        r.message = "in-place form does not apply: the result does not fit self";
        return r;
      }
    } else if (spec.variant == Variant::Out) {
      for (const Tensor& e : expected) outs.push_back(non_contiguous_on(zeros(e.sizes(), e.dtype()), device));
      for (Tensor& o : outs) options.out.push_back(&o);
    }
    const std::vector<Tensor> outs_before = outs;  // the out= tensors as given

    std::vector<Tensor> actual;
    DispatchTrace trace;
    try {
      actual = opinfo::run_sample(*run_op, s, options);
    } catch (const std::exception& e) {
      r.status = Status::Error;
      r.message = std::string("the device run threw: ") + e.what();
      r.providers = join(trace.providers());
      return r;
    }
    r.providers = join(trace.providers());
    const bool fell_back = trace.fell_back_on(device.type);
    r.fallbacks = fallen_back_ops(trace, device.type);
    const std::string fallen = quoted_list(r.fallbacks);

    if (actual.size() != expected.size()) {
      r.status = Status::FailShape;
      r.message = "returned " + std::to_string(actual.size()) + " results, expected " +
                  std::to_string(expected.size());
      return r;
    }
    for (size_t i = 0; i < actual.size(); ++i) {
      if (actual[i].device() != device) {
        r.status = Status::FailShape;
        r.message = "result " + std::to_string(i) + " is on " + actual[i].device().str() + ", not " + device.str();
        return r;
      }
      if (spec.variant == Variant::Out &&
          (actual[i].data_ptr() != outs_before[i].data_ptr() ||
           !std::equal(actual[i].strides().begin(), actual[i].strides().end(), outs_before[i].strides().begin(),
                       outs_before[i].strides().end()))) {
        r.status = Status::FailShape;
        r.message = "out= tensor " + std::to_string(i) + " was not written in its own layout";
        return r;
      }
      const Tolerance result_tol = result_tolerance(spec.dtype, expected[i].dtype(), s.atol, s.rtol, os.accumulates);
      Comparison c = compare(actual[i], expected[i], os.compare, result_tol);
      r.max_abs = std::max(r.max_abs, c.max_abs), r.max_rel = std::max(r.max_rel, c.max_rel);
      if (c.status != Status::Pass && r.status == Status::Pass) {
        r.status = c.status;
        r.message = (actual.size() > 1 ? "result " + std::to_string(i) + ": " : "") + c.message;
        if (fell_back) r.message += " (through the fallback of " + fallen + ")";
      }
    }
    if (r.status == Status::Pass && fell_back) {
      r.status = Status::Fallback;
      r.message = "ran through a fallback on " + device.type_name() + ": " + fallen + " (" +
                  fallback_reasons(trace, device.type) + ")";
    }
    if (config_.perf && spec.variant == Variant::Contiguous && r.status != Status::Error) {
      const int64_t bytes = bytes_of(inputs, actual);
      r.device_us = time_call_us([&] { opinfo::run_sample(op, s, {&inputs, {}}); }, device,
                                 config_.perf_min_seconds);
      r.cpu_us = time_call_us([&] { opinfo::run_sample(op, s); }, cpu_device(), config_.perf_min_seconds);
      r.device_gbps = static_cast<double>(bytes) / (r.device_us * 1e3);
      r.cpu_gbps = static_cast<double>(bytes) / (r.cpu_us * 1e3);
    }
  } catch (const std::exception& e) {
    r.status = Status::Error;
    r.message = std::string("the runner failed on this case: ") + e.what();
  }
  return r;
}

}  // namespace loom::conformance
