// pad and embedding on CUDA, matching the CPU plugin (plugins/cpu/
// pad_kernels.cpp, embedding_kernels.cpp; contracts in docs/
// kernel_conventions.md, "Loss, dropout, embedding, pad"). Both only move
// elements, so they run once per element width: pad's fill value is turned
// into the dtype's bytes on the host (the shared casting rules, as fill_).
//
// pad: one thread per output element maps each coordinate back
// (indexing_ops.cuh pad_source) or writes the fill value.
// embedding: one thread per (index, column); an index outside [0, N) is
// skipped and the first one reported after the launch, in the CPU's words.
#include "elementwise_args.hpp"
#include "geometry.cuh"
#include "index_check.cuh"
#include "index_shape.hpp"
#include "indexing_ops.cuh"
#include "vendor/gpu_target.hpp"

#include <cstring>

namespace loom::LOOM_GPU_NAMESPACE::indexing {
namespace {

// ------------------------------------------------------------------ pad ---

struct PadGeom {
  int32_t ndim;
  PadMode mode;
  int64_t numel;
  int64_t out_shape[kMaxKernelDims];
  int64_t in_shape[kMaxKernelDims];
  int64_t before[kMaxKernelDims];
  int64_t in_strides[kMaxKernelDims];
  int64_t out_strides[kMaxKernelDims];
};

template <class W>
__global__ void pad_kernel(W* out, const W* in, PadGeom p, W fill) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < p.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rest = i, ioff = 0, ooff = 0;
    bool filled = false;
    for (int32_t d = p.ndim - 1; d >= 0; --d) {
      const int64_t n = p.out_shape[d], q = rest / n, o = rest - q * n;
      rest = q;
      const int64_t j = pad_source(p.mode, o, p.before[d], p.in_shape[d]);
      filled |= j < 0;
      ioff += j * p.in_strides[d];
      ooff += o * p.out_strides[d];
    }
    out[ooff] = filled ? fill : in[ioff];
  }
}

PadMode parse_mode(const LoomValue& v) {
  if (ew::string_is(v, "constant")) return PadMode::Constant;
  if (ew::string_is(v, "reflect")) return PadMode::Reflect;
  if (ew::string_is(v, "replicate")) return PadMode::Replicate;
  fail_op("pad", "mode must be the string 'constant', 'reflect' or 'replicate', got " + ew::string_of(v));
}

// The fill value as `dtype`'s bytes (low bytes of the word), converted as
// fill_ converts.
uint64_t fill_bits(const LoomKernelCall& c, int32_t dtype) {
  uint64_t bits = 0;
  visit<DTypes::All>(dtype, "pad", [&](auto t) {
    using H = typename ew::HostOf<decltype(t)>::type;
    const H v = ew::scalar_arg<H>(c, "pad", 2);
    static_assert(sizeof v <= sizeof bits);
    std::memcpy(&bits, &v, sizeof v);
  });
  return bits;
}

// values: INT_LIST (before, after) per dim, STRING mode, FLOAT fill.
void pad(const LoomKernelCall& c) {
  ew::expect_arity(c, "pad", 1, 1);
  const LoomTensorDesc& in = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  (void)ew::value_at(c, "pad", 2);  // pads, mode and fill value are all there
  const LoomValue& pairs = c.values[0];
  if (pairs.kind != LOOM_VALUE_INT_LIST || pairs.u.ints.size != 2 * int64_t{in.ndim} || out.ndim != in.ndim ||
      out.dtype != in.dtype) [[unlikely]]
    fail_op("pad", "expected one (before, after) pair per input dim and an output of the input's ndim and dtype");
  if (in.ndim > kMaxKernelDims) [[unlikely]]
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, LOOM_GPU_NAME " pad: more than 12 dims");
  PadGeom p{};
  p.ndim = in.ndim;
  p.mode = parse_mode(c.values[1]);
  p.numel = plugin::numel(out);
  for (int32_t d = 0; d < in.ndim; ++d) {
    const int64_t before = pairs.u.ints.data[2 * d], after = pairs.u.ints.data[2 * d + 1], n = in.shape[d];
    const bool size_ok = out.shape[d] == n + before + after;
    // Reflect and replicate read inside [0, n): the core checked n > 0 (and
    // reflect pads < n); re-checked, device memory is at stake.
    const bool reach_ok = p.mode == PadMode::Constant || out.shape[d] == 0 ||
                          (n > 0 && (p.mode == PadMode::Replicate || (before < n && after < n)));
    if (!size_ok || !reach_ok) [[unlikely]]
      fail_op("pad", "dim " + std::to_string(d) + ": input size " + std::to_string(n) + " with padding (" +
                         std::to_string(before) + ", " + std::to_string(after) + ") does not give output size " +
                         std::to_string(out.shape[d]) + ", or the padding reaches outside the input");
    p.out_shape[d] = out.shape[d];
    p.in_shape[d] = n;
    p.before[d] = before;
    p.in_strides[d] = in.strides[d];
    p.out_strides[d] = out.strides[d];
  }
  const uint64_t bits = fill_bits(c, out.dtype);
  if (p.numel == 0) return;
  const cudaStream_t s = ew::enter(c);
  visit_width(out.dtype, "pad", [&](auto w) {
    using W = decltype(w);
    W fill;
    std::memcpy(&fill, &bits, sizeof fill);  // little-endian: the low bytes
    pad_kernel<<<grid_for(p.numel), kBlock, 0, s>>>(plugin::data_ptr<W>(out), plugin::data_ptr<const W>(in), p,
                                                    fill);
  });
  check_launch(out.device.index, "pad");
}

// ------------------------------------------------------------ embedding ---

// g walks the index positions (operand 0: the output row, 1: the index);
// each is `cols` threads (at least 1, so an empty embedding still checks its
// indices, as the CPU does).
template <class W, class I>
__global__ void embedding_kernel(W* out, const W* weight, const I* index, Geometry<2> g, int64_t cols,
                                 int64_t out_col, int64_t rows, int64_t w_row, int64_t w_col, BadIndexSlot* bad) {
  const int64_t n = g.numel * cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t j = i / cols, col = i - j * cols;
    int64_t off[2];
    g.offsets(j, off);
    const int64_t r = static_cast<int64_t>(index[off[1]]);
    if (!in_bounds(r, rows)) [[unlikely]] {
      record_bad_index(bad, r);
      continue;
    }
    if (out_col >= 0) out[off[0] + col * out_col] = weight[r * w_row + col * w_col];
  }
}

// inputs: weight [N, D], indices (int64/int32, any shape); outputs:
// indices.shape + [D]; values[0] padding_idx (gradients only: ignored).
void embedding(const LoomKernelCall& c) {
  ew::expect_arity(c, "embedding", 2, 1);
  const LoomTensorDesc& w = c.inputs[0];
  const LoomTensorDesc& idx = c.inputs[1];
  const LoomTensorDesc& out = c.outputs[0];
  bool ok = w.ndim == 2 && out.ndim == idx.ndim + 1 && out.dtype == w.dtype && out.shape[out.ndim - 1] == w.shape[1];
  for (int32_t d = 0; ok && d < idx.ndim; ++d) ok = out.shape[d] == idx.shape[d];
  if (!ok) [[unlikely]]
    fail_op("embedding",
            "expected a 2-D weight and an output of shape indices.shape + [embedding_dim] in weight's dtype");
  const int64_t* strides[2] = {out.strides, idx.strides};
  Geometry<2> g;
  if (!make_geometry<2>(idx.ndim, idx.shape, strides, g))
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, LOOM_GPU_NAME " embedding: more than 12 non-mergeable dims");
  if (g.numel == 0) return;
  const int64_t D = w.shape[1], N = w.shape[0];
  const cudaStream_t s = ew::enter(c);
  const BadIndexCheck check_slot(out.device.index, s);
  const int64_t cols = D > 0 ? D : 1, out_col = D > 0 ? out.strides[out.ndim - 1] : -1;
  visit_width(w.dtype, "embedding", [&](auto word) {
    using W = decltype(word);
    visit_index(idx.dtype, "embedding", [&](auto i) {
      using I = decltype(i);
      embedding_kernel<<<grid_for(g.numel * cols), kBlock, 0, s>>>(
          plugin::data_ptr<W>(out), plugin::data_ptr<const W>(w), plugin::data_ptr<const I>(idx), g, cols, out_col,
          N, w.strides[0], w.strides[1], check_slot.slot());
    });
  });
  int64_t bad = 0;
  if (check_slot.first_bad(bad))
    throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT,
                          "embedding: index " + std::to_string(bad) + " is out of range for num_embeddings " +
                              std::to_string(N) + " (expected an index in [0, " + std::to_string(N) + "))");
}

}  // namespace

void register_pad_embedding_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("pad", LOOM_GPU_NAME, kernel<pad>, kAllMask);
  r.kernel("embedding", LOOM_GPU_NAME, kernel<embedding>, kAllMask);
}

}  // namespace loom::LOOM_GPU_NAMESPACE::indexing
