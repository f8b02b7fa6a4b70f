// _rnn and _rnn_backward on CUDA through cuDNN's RNN API (the v8 calls,
// cudnn_adv in cuDNN 9); the core's composite (core/src/ops/ops_rnn.cpp) is the
// reference and runs whatever is declined here.
//
// Per call:
//   - an RNN descriptor (LSTM / GRU / RNN_TANH / RNN_RELU, both biases or
//     none, uni- or bidirectional, padded IO enabled, no dropout: loom's
//     frontends apply dropout between layers themselves);
//   - data descriptors: SEQ_MAJOR_UNPACKED [T, N, F], BATCH_MAJOR_UNPACKED
//     [N, T, F] for batch_first, or SEQ_MAJOR_PACKED for a packed input,
//     which is exactly PyTorch's (and loom's) packed layout;
//   - the weight space: each gate's rows of w_ih / w_hh and each gate's
//     bias, copied where cudnnGetRNNWeightParams says (cuDNN's gate orders
//     match PyTorch's: LSTM i, f, g, o; GRU r, z, n, with GRU's hidden bias
//     inside r * (h W_hn^T + b_hn) as in PyTorch).
// The forward runs in inference mode (nothing kept). The backward reruns
// the forward in training mode for cuDNN's reserve space, then
// BackwardData and BackwardWeights, and copies the weight gradients out of
// the gradient weight space into the flat grad_params output, in params'
// order. float32 runs without TF32 unless the allow_tf32 option is on;
// float16 may use tensor cores; bfloat16 is declined.
#include "../cuda_error.hpp"
#include "../device.hpp"
#include "../runtime.hpp"
#include "cudnn_handle.hpp"
#include "device_blocks.hpp"
#include "vendor/gpu_target.hpp"

#include <cudnn.h>

#include <string>
#include <string_view>
#include <vector>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using plugin::Failure;

using RnnDescriptor = CudnnDescriptor<cudnnRNNDescriptor_t, cudnnCreateRNNDescriptor, cudnnDestroyRNNDescriptor>;
using DataDescriptor =
    CudnnDescriptor<cudnnRNNDataDescriptor_t, cudnnCreateRNNDataDescriptor, cudnnDestroyRNNDataDescriptor>;
using DropoutDescriptor =
    CudnnDescriptor<cudnnDropoutDescriptor_t, cudnnCreateDropoutDescriptor, cudnnDestroyDropoutDescriptor>;

[[noreturn]] void decline(const char* op, const std::string& why) {
  throw Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": " + why);
}

// The call's shape (values laid out as core/src/ops/rnn.h says).
struct Problem {
  cudnnRNNMode_t cell = CUDNN_LSTM;
  int64_t G = 4, L = 1, D = 1, T = 0, N = 0, in = 0, H = 0;
  bool bias = true, batch_first = false, packed = false;
  std::vector<int> lengths;  // per batch element, non-increasing
  int64_t per_cell() const { return bias ? 4 : 2; }
  int64_t layer_in(int64_t l) const { return l == 0 ? in : D * H; }
};

Problem read(const LoomKernelCall& c, int32_t first, const char* op) {
  if (c.num_values < 7) throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(op) + ": expected 7 values");
  const LoomValue* v = c.values;
  Problem p;
  const std::string_view m(v[1].u.str.data, static_cast<size_t>(v[1].u.str.size));
  if (m == "LSTM") p.cell = CUDNN_LSTM, p.G = 4;
  else if (m == "GRU") p.cell = CUDNN_GRU, p.G = 3;
  else if (m == "RNN_TANH") p.cell = CUDNN_RNN_TANH, p.G = 1;
  else if (m == "RNN_RELU") p.cell = CUDNN_RNN_RELU, p.G = 1;
  else throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(op) + ": unknown mode " + std::string(m));
  p.bias = v[2].u.i != 0;
  p.L = v[3].u.i;
  p.D = v[4].u.i ? 2 : 1;
  p.batch_first = v[5].u.i != 0;
  p.packed = v[6].kind == LOOM_VALUE_INT_LIST;
  const LoomTensorDesc& x = c.inputs[first];
  p.H = c.inputs[first + 1].shape[2];
  if (p.packed) {
    const int64_t* bs = v[6].u.ints.data;
    p.T = v[6].u.ints.size;
    p.N = bs[0];
    p.in = x.shape[1];
    p.lengths.assign(static_cast<size_t>(p.N), 0);
    for (int64_t t = 0; t < p.T; ++t)
      for (int64_t n = 0; n < bs[t]; ++n) ++p.lengths[static_cast<size_t>(n)];
  } else {
    p.T = x.shape[p.batch_first ? 1 : 0];
    p.N = x.shape[p.batch_first ? 0 : 1];
    p.in = x.shape[2];
    p.lengths.assign(static_cast<size_t>(p.N), static_cast<int>(p.T));
  }
  if (c.num_inputs != first + 3 + p.L * p.D * p.per_cell())
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(op) + ": wrong number of parameter tensors");
  const int64_t limit = int64_t{1} << 30;
  if (p.T >= limit || p.N >= limit || p.in >= limit || p.H >= limit) decline(op, "a size past cuDNN's int range");
  return p;
}

cudnnDataType_t data_type(int32_t dtype, const char* op) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT32: return CUDNN_DATA_FLOAT;
    case LOOM_DTYPE_FLOAT16: return CUDNN_DATA_HALF;
    case LOOM_DTYPE_FLOAT64: return CUDNN_DATA_DOUBLE;
    default: break;
  }
  decline(op, std::string("no cuDNN RNN for dtype ") + plugin::dtype_name(dtype));
}

size_t element_size(cudnnDataType_t t) { return t == CUDNN_DATA_DOUBLE ? 8 : t == CUDNN_DATA_HALF ? 2 : 4; }

// Everything cuDNN needs for one problem on one device and stream.
struct Setup {
  int index;
  cudaStream_t stream;
  cudnnHandle_t handle;
  Blocks blocks;
  cudnnDataType_t dt;
  RnnDescriptor rnn;
  DropoutDescriptor dropout;
  DataDescriptor x, y;
  TensorDescriptor h;
  int32_t* dev_lengths = nullptr;
  size_t weight_bytes = 0;

  Setup(const LoomKernelCall& c, const Problem& p, int32_t dtype, const char* op)
      : index(c.outputs[0].device.index), stream(static_cast<cudaStream_t>(c.stream)),
        handle(cudnn_handle(index, stream)), blocks(index, stream), dt(data_type(dtype, op)),
        rnn(index, "cudnnCreateRNNDescriptor"), dropout(index, "cudnnCreateDropoutDescriptor"),
        x(index, "cudnnCreateRNNDataDescriptor"), y(index, "cudnnCreateRNNDataDescriptor"),
        h(index, "cudnnCreateTensorDescriptor") {
    check_cudnn(cudnnSetDropoutDescriptor(dropout.get(), handle, 0.0f, nullptr, 0, 0), index,
                "cudnnSetDropoutDescriptor");
    const cudnnDataType_t math_prec = dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    const cudnnMathType_t math = dt == CUDNN_DATA_HALF ? CUDNN_TENSOR_OP_MATH
                                 : dt == CUDNN_DATA_FLOAT && !options().allow_tf32.load() ? CUDNN_FMA_MATH
                                                                                           : CUDNN_DEFAULT_MATH;
    check_cudnn(cudnnSetRNNDescriptor_v8(rnn.get(), CUDNN_RNN_ALGO_STANDARD, p.cell,
                                         p.bias ? CUDNN_RNN_DOUBLE_BIAS : CUDNN_RNN_NO_BIAS,
                                         p.D == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, dt,
                                         math_prec, math, static_cast<int32_t>(p.in), static_cast<int32_t>(p.H),
                                         static_cast<int32_t>(p.H), static_cast<int32_t>(p.L), dropout.get(),
                                         CUDNN_RNN_PADDED_IO_ENABLED),
                index, "cudnnSetRNNDescriptor_v8");
    const cudnnRNNDataLayout_t layout = p.packed        ? CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED
                                        : p.batch_first ? CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED
                                                        : CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED;
    double zero_d = 0;
    float zero_f = 0;
    void* fill = dt == CUDNN_DATA_DOUBLE ? static_cast<void*>(&zero_d) : static_cast<void*>(&zero_f);
    check_cudnn(cudnnSetRNNDataDescriptor(x.get(), dt, layout, static_cast<int>(p.T), static_cast<int>(p.N),
                                          static_cast<int>(p.in), p.lengths.data(), fill),
                index, "cudnnSetRNNDataDescriptor (x)");
    check_cudnn(cudnnSetRNNDataDescriptor(y.get(), dt, layout, static_cast<int>(p.T), static_cast<int>(p.N),
                                          static_cast<int>(p.D * p.H), p.lengths.data(), fill),
                index, "cudnnSetRNNDataDescriptor (y)");
    const int dims[3] = {static_cast<int>(p.L * p.D), static_cast<int>(p.N), static_cast<int>(p.H)};
    const int strides[3] = {dims[1] * dims[2], dims[2], 1};
    check_cudnn(cudnnSetTensorNdDescriptor(h.get(), dt, 3, dims, strides), index, "cudnnSetTensorNdDescriptor");
    dev_lengths = static_cast<int32_t*>(blocks.get(sizeof(int32_t) * p.lengths.size()));
    check(cudaMemcpyAsync(dev_lengths, p.lengths.data(), sizeof(int32_t) * p.lengths.size(), cudaMemcpyHostToDevice,
                          stream),
          index, "rnn: sequence lengths to the device");
    check_cudnn(cudnnGetRNNWeightSpaceSize(handle, rnn.get(), &weight_bytes), index, "cudnnGetRNNWeightSpaceSize");
  }

  // Each (layer, direction, gate) matrix and bias of the weight space
  // `space` as (address, bytes), against its place in loom's tensors:
  // visit(pseudo_layer, tensor_in_cell (0 w_ih, 1 w_hh, 2 b_ih, 3 b_hh),
  // byte offset in that tensor, address in space, bytes).
  template <class F>
  void for_each_chunk(const Problem& p, void* space, F&& visit) {
    TensorDescriptor mdesc(index, "cudnnCreateTensorDescriptor"), bdesc(index, "cudnnCreateTensorDescriptor");
    const size_t es = element_size(dt);
    for (int64_t layer = 0; layer < p.L * p.D; ++layer) {
      const int64_t in_l = p.layer_in(layer / p.D);
      // Every matrix, then every bias: in that order each tensor's gates
      // are visited back to back (so Copies can merge them).
      std::vector<std::pair<void*, void*>> at(static_cast<size_t>(2 * p.G));
      for (int64_t id = 0; id < 2 * p.G; ++id)
        check_cudnn(cudnnGetRNNWeightParams(handle, rnn.get(), static_cast<int32_t>(layer), weight_bytes, space,
                                            static_cast<int32_t>(id), mdesc.get(), &at[static_cast<size_t>(id)].first,
                                            bdesc.get(), &at[static_cast<size_t>(id)].second),
                    index, "cudnnGetRNNWeightParams");
      for (int pass = 0; pass < (p.bias ? 2 : 1); ++pass)
        for (int64_t id = 0; id < 2 * p.G; ++id) {
          const bool recurrent = id >= p.G;
          const int64_t gate = id % p.G;
          const int64_t cols = pass == 1 ? 1 : recurrent ? p.H : in_l;
          const auto& [m, b] = at[static_cast<size_t>(id)];
          visit(layer, (recurrent ? 1 : 0) + 2 * pass, static_cast<size_t>(gate * p.H * cols) * es, pass ? b : m,
                static_cast<size_t>(p.H * cols) * es);
        }
    }
  }

  // Device-to-device copies, those that continue the previous one on both
  // sides merged: cuDNN's standard layout keeps a tensor's gates adjacent,
  // so a cell's four tensors are usually four copies, not 4 G.
  class Copies {
   public:
    Copies(Setup& s, const char* what) : s_(s), what_(what) {}
    ~Copies() noexcept(false) { flush(); }
    void add(void* dst, const void* src, size_t bytes) {
      if (bytes_ && static_cast<char*>(dst_) + bytes_ == dst && static_cast<const char*>(src_) + bytes_ == src) {
        bytes_ += bytes;
        return;
      }
      flush();
      dst_ = dst, src_ = src, bytes_ = bytes;
    }

   private:
    void flush() {
      if (bytes_) check(cudaMemcpyAsync(dst_, src_, bytes_, cudaMemcpyDeviceToDevice, s_.stream), s_.index, what_);
      bytes_ = 0;
    }
    Setup& s_;
    const char* what_;
    void* dst_ = nullptr;
    const void* src_ = nullptr;
    size_t bytes_ = 0;
  };

  // The weight space filled from the call's parameters (from input `first_param`).
  void* weights(const LoomKernelCall& c, const Problem& p, int32_t first_param) {
    void* space = blocks.get(weight_bytes);
    Copies copies(*this, "rnn: weights to cuDNN");
    for_each_chunk(p, space, [&](int64_t layer, int64_t which, size_t offset, void* at, size_t bytes) {
      const LoomTensorDesc& t = c.inputs[first_param + layer * p.per_cell() + which];
      copies.add(at, static_cast<const char*>(plugin::data_ptr<const void>(t)) + offset, bytes);
    });
    return space;
  }
};

const void* data(const LoomTensorDesc& t) { return plugin::is_absent(t) ? nullptr : plugin::data_ptr<const void>(t); }

// inputs: input, hx, cx?, params...; outputs: output, hy, cy.
void rnn(const LoomKernelCall& c) {
  constexpr const char* op = "_rnn";
  const Problem p = read(c, 0, op);
  Setup s(c, p, c.inputs[0].dtype, op);
  void* w = s.weights(c, p, 3);
  size_t work = 0, reserve = 0;
  check_cudnn(cudnnGetRNNTempSpaceSizes(s.handle, s.rnn.get(), CUDNN_FWD_MODE_INFERENCE, s.x.get(), &work, &reserve),
              s.index, "cudnnGetRNNTempSpaceSizes");
  const bool lstm = p.cell == CUDNN_LSTM;
  check_cudnn(cudnnRNNForward(s.handle, s.rnn.get(), CUDNN_FWD_MODE_INFERENCE, s.dev_lengths, s.x.get(),
                              data(c.inputs[0]), s.y.get(), plugin::data_ptr<void>(c.outputs[0]), s.h.get(),
                              data(c.inputs[1]), plugin::data_ptr<void>(c.outputs[1]), s.h.get(),
                              lstm ? data(c.inputs[2]) : nullptr,
                              lstm ? plugin::data_ptr<void>(c.outputs[2]) : nullptr, s.weight_bytes, w, work,
                              s.blocks.get(work), reserve, s.blocks.get(reserve)),
              s.index, "cudnnRNNForward");
}

// inputs: grad_output, grad_hy?, grad_cy?, input, hx, cx?, params...;
// outputs: grad_input, grad_hx, grad_cx, grad_params.
void rnn_backward(const LoomKernelCall& c) {
  constexpr const char* op = "_rnn_backward";
  const Problem p = read(c, 3, op);
  Setup s(c, p, c.inputs[3].dtype, op);
  void* w = s.weights(c, p, 6);
  size_t work = 0, reserve = 0;
  check_cudnn(cudnnGetRNNTempSpaceSizes(s.handle, s.rnn.get(), CUDNN_FWD_MODE_TRAINING, s.x.get(), &work, &reserve),
              s.index, "cudnnGetRNNTempSpaceSizes");
  void* workspace = s.blocks.get(work);
  void* reserved = s.blocks.get(reserve);
  const bool lstm = p.cell == CUDNN_LSTM;
  const LoomTensorDesc& y_like = c.inputs[0];  // the output's shape and dtype
  void* y = s.blocks.get(static_cast<size_t>(plugin::numel(y_like)) * element_size(s.dt));
  const size_t state_bytes = static_cast<size_t>(p.L * p.D * p.N * p.H) * element_size(s.dt);
  void* hy = s.blocks.get(state_bytes);
  void* cy = lstm ? s.blocks.get(state_bytes) : nullptr;
  const void* x = data(c.inputs[3]);
  const void* hx = data(c.inputs[4]);
  const void* cx = lstm ? data(c.inputs[5]) : nullptr;
  check_cudnn(cudnnRNNForward(s.handle, s.rnn.get(), CUDNN_FWD_MODE_TRAINING, s.dev_lengths, s.x.get(), x, s.y.get(),
                              y, s.h.get(), hx, hy, s.h.get(), cx, cy, s.weight_bytes, w, work, workspace, reserve,
                              reserved),
              s.index, "cudnnRNNForward (training)");
  check_cudnn(cudnnRNNBackwardData_v8(s.handle, s.rnn.get(), s.dev_lengths, s.y.get(), y, data(c.inputs[0]),
                                      s.x.get(), plugin::data_ptr<void>(c.outputs[0]), s.h.get(), hx,
                                      data(c.inputs[1]), plugin::data_ptr<void>(c.outputs[1]), s.h.get(), cx,
                                      lstm ? data(c.inputs[2]) : nullptr,
                                      lstm ? plugin::data_ptr<void>(c.outputs[2]) : nullptr, s.weight_bytes, w, work,
                                      workspace, reserve, reserved),
              s.index, "cudnnRNNBackwardData_v8");
  void* dw = s.blocks.get(s.weight_bytes);
  check(cudaMemsetAsync(dw, 0, s.weight_bytes, s.stream), s.index, "rnn: clear the weight gradients");
  check_cudnn(cudnnRNNBackwardWeights_v8(s.handle, s.rnn.get(), CUDNN_WGRAD_MODE_ADD, s.dev_lengths, s.x.get(), x,
                                         s.h.get(), hx, s.y.get(), y, s.weight_bytes, dw, work, workspace, reserve,
                                         reserved),
              s.index, "cudnnRNNBackwardWeights_v8");
  // The flat gradient: per (layer, direction) w_ih, w_hh, b_ih, b_hh.
  std::vector<size_t> cell_start(static_cast<size_t>(p.L * p.D) + 1, 0);
  const size_t es = element_size(s.dt);
  for (int64_t k = 0; k < p.L * p.D; ++k) {
    const int64_t in_l = p.layer_in(k / p.D);
    const int64_t n = p.G * p.H * (in_l + p.H) + (p.bias ? 2 * p.G * p.H : 0);
    cell_start[static_cast<size_t>(k) + 1] = cell_start[static_cast<size_t>(k)] + static_cast<size_t>(n) * es;
  }
  char* flat = plugin::data_ptr<char>(c.outputs[3]);
  Setup::Copies copies(s, "rnn: weight gradients from cuDNN");
  s.for_each_chunk(p, dw, [&](int64_t layer, int64_t which, size_t offset, void* at, size_t bytes) {
    const int64_t in_l = p.layer_in(layer / p.D);
    const int64_t GH = p.G * p.H;
    const size_t starts[4] = {0, static_cast<size_t>(GH * in_l) * es, static_cast<size_t>(GH * (in_l + p.H)) * es,
                              static_cast<size_t>(GH * (in_l + p.H) + GH) * es};
    copies.add(flat + cell_start[static_cast<size_t>(layer)] + starts[which] + offset, at, bytes);
  });
}

}  // namespace

void register_rnn_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  constexpr uint64_t kMask =
      LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT16) | LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32) | LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT64);
  r.kernel("_rnn", LOOM_GPU_NAME, kernel<rnn>, kMask, LOOM_KERNEL_CONTIGUOUS_ONLY);
  r.kernel("_rnn_backward", LOOM_GPU_NAME, kernel<rnn_backward>, kMask, LOOM_KERNEL_CONTIGUOUS_ONLY);
}

}  // namespace loom::LOOM_GPU_NAMESPACE
