// batch_norm and _batch_norm_backward on CUDA (core/src/ops/ops_batch_norm.cpp
// has the composites this must match), through cuDNN's spatial batch
// normalisation (legacy API):
//   - training forward: cudnnBatchNormalizationForwardTraining, which also
//     blends the running statistics in place with factor = momentum. Its
//     running variance is the unbiased one (n / (n - 1) · the batch's), as
//     PyTorch keeps it; PyTorch's CUDA batch_norm hands cuDNN's running
//     variance over unchanged;
//   - evaluation forward: cudnnBatchNormalizationForwardInference;
//   - training backward: cudnnBatchNormalizationBackward without saved
//     statistics (the forward's are not kept: cuDNN recomputes them);
//   - evaluation backward: own kernels (batch_norm_ops.cuh), since cuDNN's
//     backward always differentiates through the batch statistics.
// batch_norm_plan.hpp maps the input onto cuDNN's 4-D/5-D NCHW tensor and
// says when to decline (LOOM_STATUS_UNSUPPORTED: the core runs the
// composite): eps below CUDNN_BN_MIN_EPSILON, more than 2^31 - 1 elements,
// a running statistic with a broadcast (stride 0) dim, or whatever cuDNN
// itself reports as unsupported (check_cudnn).
//
// cuDNN's per-channel parameters are float (double for float64 inputs);
// loom's weight and bias have the input's dtype and the running statistics
// any floating dtype and layout, so those that are not already dense
// arrays of that type are staged through small buffers of the caching
// allocator (and running statistics written back in their own dtype).
// Absent weight: ones; absent bias: zeros; absent running statistics in
// training: none given to cuDNN (both NULL, or a scratch one when only one
// is given: cuDNN takes both or neither).
//
// batch_norm is not registered CONTIGUOUS_ONLY: the core would then pass
// contiguous copies of strided running statistics and their update would
// be lost. A strided input is copied here instead. _batch_norm_backward
// writes no argument and is CONTIGUOUS_ONLY.
#include "../cuda_error.hpp"
#include "../device.hpp"
#include "../runtime.hpp"
#include "batch_norm_ops.cuh"
#include "batch_norm_plan.hpp"
#include "cudnn_handle.hpp"
#include "device_blocks.hpp"
#include "dtype.cuh"
#include "loops.cuh"
#include "row_reduce.cuh"
#include "vendor/gpu_target.hpp"

#include <cudnn.h>

#include <optional>
#include <string>
#include <vector>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using plugin::Failure;

// A value converted between storage types through their compute types.
template <class To>
struct ConvertTo {
  template <class From>
  __device__ To operator()(From v) const { return narrow<To>(static_cast<opmath_t<To>>(widen(v))); }
};

template <class P>
__global__ void fill_channels(P* p, int64_t n, P v) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    p[i] = v;
}

template <class P>
constexpr int32_t dtype_code() {
  return std::is_same_v<P, double> ? LOOM_DTYPE_FLOAT64 : LOOM_DTYPE_FLOAT32;
}

// One call: its device (made current), stream and scratch memory.
struct Context {
  const char* op;
  int index;
  cudaStream_t stream;
  Blocks blocks;
  Context(const LoomKernelCall& c, const char* op_name)
      : op(op_name), index(current(c.outputs[0].device.index)), stream(static_cast<cudaStream_t>(c.stream)),
        blocks(index, stream) {}

 private:
  static int current(int index) {
    use_device(index);
    return index;
  }
};

// `t`'s shape, packed, at `data` in dtype `dtype` (the strides live in
// `strides`, which must outlive the descriptor).
LoomTensorDesc dense_like(const LoomTensorDesc& t, void* data, int32_t dtype, std::vector<int64_t>& strides) {
  strides.assign(static_cast<size_t>(t.ndim), 0);
  int64_t s = 1;
  for (int32_t d = t.ndim - 1; d >= 0; --d) {
    strides[static_cast<size_t>(d)] = s;
    s *= t.shape[d];
  }
  LoomTensorDesc r = t;
  r.data = data;
  r.byte_offset = 0;
  r.dtype = dtype;
  r.strides = strides.data();
  return r;
}

// One per-channel operand as the dense P array cuDNN reads or writes:
// the tensor itself when it already is one, else a staged copy; `write_back`
// copies a staged copy into the tensor (in its dtype and layout).
template <class P>
class Channels {
 public:
  // Ones or zeros (an absent weight or bias), or scratch.
  Channels(Context& k, int64_t C, P fill) : k_(k), data_(static_cast<P*>(k.blocks.get(C * sizeof(P)))) {
    if (C == 0) return;
    fill_channels<P><<<grid_for(C), kBlock, 0, k.stream>>>(data_, C, fill);
    check(cudaGetLastError(), k.index, "batch norm parameters: fill kernel launch");
  }
  // `t`'s C values (read: `copy_in`; written only: uninitialised).
  Channels(Context& k, const LoomTensorDesc& t, bool copy_in = true) : k_(k), target_(&t) {
    if (t.dtype == dtype_code<P>() && plugin::is_contiguous(t)) {
      data_ = plugin::data_ptr<P>(t);
      return;
    }
    staged_ = true;
    data_ = static_cast<P*>(k.blocks.get(static_cast<size_t>(plugin::numel(t)) * sizeof(P)));
    if (!copy_in) return;
    std::vector<int64_t> strides;
    const LoomTensorDesc dense = dense_like(t, data_, dtype_code<P>(), strides);
    visit<DTypes::Floating>(t.dtype, k.op, [&](auto tag) {
      elementwise<P, decltype(tag)>(dense, {&t}, ConvertTo<P>{}, k.stream, k.op);
    });
  }
  Channels(const Channels&) = delete;
  Channels& operator=(const Channels&) = delete;

  P* data() const { return data_; }

  void write_back() {
    if (!staged_) return;
    std::vector<int64_t> strides;
    const LoomTensorDesc dense = dense_like(*target_, data_, dtype_code<P>(), strides);
    visit<DTypes::Floating>(target_->dtype, k_.op, [&](auto tag) {
      using S = decltype(tag);
      elementwise<S, P>(*target_, {&dense}, ConvertTo<S>{}, k_.stream, k_.op);
    });
  }

 private:
  Context& k_;
  const LoomTensorDesc* target_ = nullptr;
  P* data_ = nullptr;
  bool staged_ = false;
};

// `t` as Channels, or `fill` in every channel when `t` is absent (C values).
template <class P>
Channels<P> channels_or(Context& k, const LoomTensorDesc& t, int64_t C, P fill) {
  if (plugin::is_absent(t)) return Channels<P>(k, C, fill);
  return Channels<P>(k, t);
}

// The input and the parameters' descriptors: x as p's packed NCHW tensor,
// the parameters' derived from it (1 x C x 1 x 1, float or double).
struct Descriptors {
  TensorDescriptor x, param;
  Descriptors(const bn::Problem& p, cudnnDataType_t type, int index)
      : x(index, "cudnnCreateTensorDescriptor"), param(index, "cudnnCreateTensorDescriptor") {
    int dims[5], strides[5];
    for (int d = 0; d < p.nb_dims; ++d) {
      dims[d] = static_cast<int>(p.dims[d]);  // fits: decline_reason bounds numel
      strides[d] = static_cast<int>(p.strides[d]);
    }
    check_cudnn(cudnnSetTensorNdDescriptor(x.get(), type, p.nb_dims, dims, strides), index,
                "cudnnSetTensorNdDescriptor");
    check_cudnn(cudnnDeriveBNTensorDescriptor(param.get(), x.get(), CUDNN_BATCHNORM_SPATIAL), index,
                "cudnnDeriveBNTensorDescriptor");
  }
};

// The input as cuDNN reads it: itself when contiguous, else a packed copy.
template <class T>
const void* packed_input(Context& k, const LoomTensorDesc& in) {
  if (plugin::is_contiguous(in)) return plugin::data_ptr<const void>(in);
  std::vector<int64_t> strides;
  const LoomTensorDesc dense = dense_like(in, k.blocks.get(static_cast<size_t>(plugin::numel(in)) * sizeof(T)),
                                          in.dtype, strides);
  elementwise<T, T>(dense, {&in}, ConvertTo<T>{}, k.stream, k.op);
  return dense.data;
}

[[noreturn]] void decline(const char* op, const std::string& why) {
  throw Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": not run by cuDNN: " + why);
}

// Where an op's operands sit in its call.
struct Layout {
  const char* op;
  int num_inputs, num_outputs, num_values;
  const char* arity;  // what those are, for the error
  int x;              // inputs[x]: the input [N, C, *]; outputs[0] is like it
  int like_x;         // another input like it (grad_output), or -1
  int stats;          // inputs[stats], inputs[stats + 1]: running_mean, running_var
};

// The call's problem, after checking what the core promises (a call that
// breaks it is an error, not a decline): the arity; outputs[0] (and
// inputs[like_x]) of the input's dtype and size; every other input absent
// or of C elements, every other output of C; the running statistics
// present in evaluation mode (values[0] is training).
bn::Problem read_call(const LoomKernelCall& c, const Layout& l) {
  const std::string op = std::string(LOOM_GPU_NAME " ") + l.op;
  if (c.num_inputs != l.num_inputs || c.num_outputs != l.num_outputs || c.num_values != l.num_values)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, op + ": expected " + l.arity);
  const LoomTensorDesc& in = c.inputs[l.x];
  bool like = in.ndim >= 2;
  for (const LoomTensorDesc* t : {&c.outputs[0], l.like_x >= 0 ? &c.inputs[l.like_x] : &in})
    like = like && t->dtype == in.dtype && plugin::numel(*t) == plugin::numel(in);
  if (!like)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT,
                  op + ": expected an input [N, C, *], its output (and grad_output) of its dtype and size");
  const bn::Problem p = bn::problem_of(in.ndim, in.shape);
  for (int i = 0; i < c.num_inputs + c.num_outputs; ++i) {
    const bool input = i < c.num_inputs;
    if (i == l.x || i == l.like_x || i == c.num_inputs) continue;
    const LoomTensorDesc& t = input ? c.inputs[i] : c.outputs[i - c.num_inputs];
    if (!(input && plugin::is_absent(t)) && plugin::numel(t) != p.C)
      throw Failure(LOOM_STATUS_INVALID_ARGUMENT, op + ": expected " + (input ? "input " : "output ") +
                                                      std::to_string(input ? i : i - c.num_inputs) + " to have " +
                                                      std::to_string(p.C) + " elements (one per channel)");
  }
  const bool training = c.values[0].u.i != 0;
  if (!training && (plugin::is_absent(c.inputs[l.stats]) || plugin::is_absent(c.inputs[l.stats + 1])))
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, op + ": evaluation mode needs the running statistics");
  return p;
}

// ---- batch_norm ---------------------------------------------------------------------------
// inputs (input, running_mean, running_var, weight, bias); values (training,
// momentum, eps); output y like the input.

template <class T>
void forward(const LoomKernelCall& c, const bn::Problem& p, bool training, double momentum, double eps) {
  using P = cudnn_scale_t<T>;
  Context k(c, "batch_norm");
  const int index = k.index;
  const cudaStream_t stream = k.stream;
  const LoomTensorDesc *rm = &c.inputs[1], *rv = &c.inputs[2], *w = &c.inputs[3], *b = &c.inputs[4];
  const void* x = packed_input<T>(k, c.inputs[0]);
  void* y = plugin::data_ptr<void>(c.outputs[0]);
  const Descriptors d(p, cudnn_data_type<T>(), index);
  const Channels<P> scale = channels_or(k, *w, p.C, P(1));
  const Channels<P> bias = channels_or(k, *b, p.C, P(0));
  const cudnnHandle_t h = cudnn_handle(index, stream);
  const P one = 1, zero = 0;
  if (!training) {
    const Channels<P> mean(k, *rm), var(k, *rv);
    check_cudnn(cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, d.x.get(), x,
                                                        d.x.get(), y, d.param.get(), scale.data(), bias.data(),
                                                        mean.data(), var.data(), eps),
                index, "cudnnBatchNormalizationForwardInference");
    return;
  }
  // cuDNN takes both running statistics or neither: scratch stands in for
  // an absent one.
  std::optional<Channels<P>> mean, var;
  if (!plugin::is_absent(*rm) || !plugin::is_absent(*rv)) {
    auto stage = [&](std::optional<Channels<P>>& o, const LoomTensorDesc& t, P fill) {
      if (plugin::is_absent(t)) o.emplace(k, p.C, fill);
      else o.emplace(k, t);
    };
    stage(mean, *rm, P(0));
    stage(var, *rv, P(1));
  }
  check_cudnn(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, d.x.get(), x,
                                                     d.x.get(), y, d.param.get(), scale.data(), bias.data(),
                                                     momentum, mean ? mean->data() : nullptr,
                                                     var ? var->data() : nullptr, eps, nullptr, nullptr),
              index, "cudnnBatchNormalizationForwardTraining");
  // Only after cuDNN succeeded: a decline above leaves them to the composite.
  if (mean) mean->write_back();
  if (var) var->write_back();
}

void batch_norm(const LoomKernelCall& c) {
  constexpr const char* op = "batch_norm";
  const bn::Problem p = read_call(c, {op, 5, 1, 3,
                                      "(input, running_mean, running_var, weight, bias), (training, momentum, eps) "
                                      "and one output",
                                      0, -1, 1});
  const LoomTensorDesc& in = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  const bool training = c.values[0].u.i != 0;
  const double momentum = plugin::value_float(c, 1), eps = plugin::value_float(c, 2);
  if (p.numel() == 0) return;  // nothing to normalise (the core rejects an empty batch in training)
  if (const char* why = bn::decline_reason(p, eps, CUDNN_BN_MIN_EPSILON, training)) decline(op, why);
  if (!plugin::is_contiguous(out)) decline(op, "the output is not contiguous");
  if (training)
    for (int i = 1; i < 3; ++i)
      if (!plugin::is_absent(c.inputs[i]) && !bn::is_writable(c.inputs[i]))
        decline(op, "a running statistic has a broadcast dim");
  visit<DTypes::Floating>(in.dtype, op, [&](auto tag) { forward<decltype(tag)>(c, p, training, momentum, eps); });
}

// ---- _batch_norm_backward -----------------------------------------------------------------
// inputs (grad_output, input, weight, running_mean, running_var); values
// (training, eps); outputs (grad_input, grad_weight [C], grad_bias [C]).

// Evaluation mode, pass 1: block `blk` takes chunk blk % per_channel of
// channel blk / per_channel, writes its grad_input and its partial sums.
template <class T, class P, class A>
__global__ void eval_backward_chunks(const T* g, const T* x, T* dx, const P* w, const P* mean, const P* var,
                                     double eps, int64_t C, int64_t S, int64_t M, bn::Split split,
                                     bn::ChannelSums<A>* parts) {
  constexpr int kThreads = rows::kBlockRowThreads;
  for (int64_t blk = blockIdx.x; blk < C * split.per_channel; blk += gridDim.x) {
    const int64_t ch = blk / split.per_channel, begin = (blk % split.per_channel) * split.chunk;
    const int64_t end = begin + split.chunk < M ? begin + split.chunk : M;
    const bn::EvalChannel<A> e = bn::eval_channel<A>(w ? w[ch] : P(1), mean[ch], var[ch], eps);
    bn::ChannelSums<A> s = bn::eval_backward_range(g, x, dx, ch, C, S, begin + threadIdx.x, end, kThreads, e);
    s = rows::merge_row<kThreads>(s);  // ends with a barrier: the loop may go on
    if (threadIdx.x == 0) parts[blk] = s;
  }
}

// Pass 2: each channel's partial sums, in chunk order.
template <class P, class A>
__global__ void eval_backward_finish(const bn::ChannelSums<A>* parts, int64_t C, int64_t per_channel, P* gw, P* gb) {
  for (int64_t ch = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; ch < C; ch += int64_t{gridDim.x} * blockDim.x) {
    const bn::ChannelSums<A> s = bn::sum_parts(parts + ch * per_channel, per_channel);
    gw[ch] = static_cast<P>(s.gx);
    gb[ch] = static_cast<P>(s.g);
  }
}

template <class T, class P>
void eval_backward(Context& k, const bn::Problem& p, const LoomKernelCall& c, const Channels<P>* w, double eps,
                   P* gw, P* gb) {
  using A = opmath_t<T>;
  const Channels<P> mean(k, c.inputs[3]), var(k, c.inputs[4]);
  // About 8 blocks of 256 threads per multiprocessor of an H100 (132).
  const bn::Split split = bn::eval_backward_split(p.C, p.N * p.S, 1024, 4096);
  const int64_t blocks = p.C * split.per_channel;
  auto* parts = static_cast<bn::ChannelSums<A>*>(k.blocks.get(static_cast<size_t>(blocks) * sizeof(bn::ChannelSums<A>)));
  constexpr int64_t kMaxGrid = int64_t{65535} * 8;
  eval_backward_chunks<T, P, A><<<static_cast<unsigned>(blocks < kMaxGrid ? blocks : kMaxGrid),
                                  rows::kBlockRowThreads, 0, k.stream>>>(
      plugin::data_ptr<const T>(c.inputs[0]), plugin::data_ptr<const T>(c.inputs[1]),
      plugin::data_ptr<T>(c.outputs[0]), w ? w->data() : nullptr, mean.data(), var.data(), eps, p.C, p.S,
      p.N * p.S, split, parts);
  check(cudaGetLastError(), k.index, "_batch_norm_backward: evaluation-mode kernel launch");
  eval_backward_finish<P, A><<<grid_for(p.C), kBlock, 0, k.stream>>>(parts, p.C, split.per_channel, gw, gb);
  check(cudaGetLastError(), k.index, "_batch_norm_backward: evaluation-mode kernel launch");
}

template <class T>
void backward(const LoomKernelCall& c, const bn::Problem& p, bool training, double eps) {
  using P = cudnn_scale_t<T>;
  Context k(c, "_batch_norm_backward");
  const int index = k.index;
  const cudaStream_t stream = k.stream;
  const LoomTensorDesc& w = c.inputs[2];
  Channels<P> gw(k, c.outputs[1], false), gb(k, c.outputs[2], false);
  if (training) {
    const Descriptors d(p, cudnn_data_type<T>(), index);
    const Channels<P> scale = channels_or(k, w, p.C, P(1));
    const P one = 1, zero = 0;
    check_cudnn(cudnnBatchNormalizationBackward(cudnn_handle(index, stream), CUDNN_BATCHNORM_SPATIAL, &one, &zero,
                                                &one, &zero, d.x.get(), plugin::data_ptr<const void>(c.inputs[1]),
                                                d.x.get(), plugin::data_ptr<const void>(c.inputs[0]), d.x.get(),
                                                plugin::data_ptr<void>(c.outputs[0]), d.param.get(), scale.data(),
                                                gw.data(), gb.data(), eps, nullptr, nullptr),
                index, "cudnnBatchNormalizationBackward");
  } else if (plugin::is_absent(w)) {
    eval_backward<T, P>(k, p, c, nullptr, eps, gw.data(), gb.data());
  } else {
    const Channels<P> scale(k, w);
    eval_backward<T, P>(k, p, c, &scale, eps, gw.data(), gb.data());
  }
  gw.write_back();
  gb.write_back();
}

void batch_norm_backward(const LoomKernelCall& c) {
  constexpr const char* op = "_batch_norm_backward";
  const bn::Problem p = read_call(c, {op, 5, 3, 2,
                                      "(grad_output, input, weight, running_mean, running_var), (training, eps) and "
                                      "three outputs",
                                      1, 0, 3});
  const LoomTensorDesc& in = c.inputs[1];
  const bool training = c.values[0].u.i != 0;
  const double eps = plugin::value_float(c, 1);
  for (int i = 0; i < 3; ++i)
    if (!plugin::is_contiguous(i < 2 ? c.inputs[i] : c.outputs[i - 2]))
      throw Failure(LOOM_STATUS_INVALID_ARGUMENT,
                    LOOM_GPU_NAME " _batch_norm_backward: registered CONTIGUOUS_ONLY, got a strided operand");
  // No element: empty sums (the core rejects this in training; evaluation
  // mode with an empty batch still has channels to zero).
  if (p.numel() == 0) {
    if (p.C == 0) return;
    const int index = c.outputs[1].device.index;
    use_device(index);
    for (int o = 1; o < 3; ++o)
      check(cudaMemsetAsync(plugin::data_ptr<void>(c.outputs[o]), 0,
                            static_cast<size_t>(p.C) * plugin::dtype_itemsize(c.outputs[o].dtype),
                            static_cast<cudaStream_t>(c.stream)),
            index, "_batch_norm_backward: cudaMemsetAsync");
    return;
  }
  if (training)
    if (const char* why = bn::decline_reason(p, eps, CUDNN_BN_MIN_EPSILON, training)) decline(op, why);
  visit<DTypes::Floating>(in.dtype, op, [&](auto tag) { backward<decltype(tag)>(c, p, training, eps); });
}

}  // namespace

void register_batch_norm_kernels(plugin::Registrar& r) {
  // Not CONTIGUOUS_ONLY: the running statistics it writes must not be copies.
  r.kernel("batch_norm", LOOM_GPU_NAME, plugin::kernel<batch_norm>, kFloatingMask);
  r.kernel("_batch_norm_backward", LOOM_GPU_NAME, plugin::kernel<batch_norm_backward>, kFloatingMask,
           LOOM_KERNEL_CONTIGUOUS_ONLY);
}

}  // namespace loom::LOOM_GPU_NAMESPACE
