// Convolutions through oneDNN (float32, bfloat16): the forward (plain and
// transposed) and the plain forward's two backward passes (data, weights).
//
// The primitive picks its own layouts (format "any": blocked nChw16c-style
// on AVX-512), and reorders move the user's NCHW data (any strides) in and
// out, as PyTorch's mkldnn path does. Primitive and reorders are cached per
// shape (conv_onednn_cache.hpp); reordered operands live in per-thread
// buffers that only grow. oneDNN runs on the plugin's OpenMP runtime.
#include "common.hpp"
#include "conv.hpp"
#include "conv_onednn_cache.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace loom::cpu {
namespace {

using dnnl::memory;
using onednn::engine;

// One tensor of the primitive: the user's layout, the primitive's, and the
// reorder between them (user -> primitive for a read operand, primitive ->
// user for the written one; empty when the layouts match).
struct Operand {
  memory::desc user, prim;
  dnnl::reorder reorder;
  int arg = 0;  // DNNL_ARG_*
  bool written = false;
};

struct ConvEntry {
  bool usable = false;  // false: oneDNN has nothing good here; use the loop or the composite
  Operand src, wei, dst;
  memory::desc bias_md;  // forward with a bias only
  dnnl::primitive conv;
};

onednn::Cache<ConvEntry>& cache() {
  static auto* c = new onednn::Cache<ConvEntry>(64);
  return *c;
}

memory::desc user_md(memory::dims dims, memory::dims strides, memory::data_type dt) {
  onednn::tidy_strides(dims, strides);
  return memory::desc(dims, dt, strides);
}

// The user's weight as oneDNN sees it: [O, C, kH, kW], or [G, O/G, C/G, kH,
// kW] when grouped. A transposed conv's weight is [C, O/G, kH, kW] in loom,
// so its O and C axes swap.
memory::desc weight_md(const ConvProblem& p, memory::data_type dt) {
  const int64_t G = p.groups, Cg = p.C / G, Og = p.O / G;
  const int64_t* s = p.ws;
  if (!p.transposed) {
    if (G == 1) return user_md({p.O, p.C, p.kH, p.kW}, {s[0], s[1], s[2], s[3]}, dt);
    return user_md({G, Og, Cg, p.kH, p.kW}, {s[0] * Og, s[0], s[1], s[2], s[3]}, dt);
  }
  if (G == 1) return user_md({p.O, p.C, p.kH, p.kW}, {s[1], s[0], s[2], s[3]}, dt);
  return user_md({G, Og, Cg, p.kH, p.kW}, {s[0] * Cg, s[1], s[0], s[2], s[3]}, dt);
}

dnnl::reorder reorder_between(const memory::desc& from, const memory::desc& to) {
  if (from == to) return {};
  return dnnl::reorder(dnnl::reorder::primitive_desc(engine(), from, engine(), to));
}

// Takes the primitive's layouts (src, weights, dst: the diff_ ones where the
// pass has them) and the argument each is passed as; false for oneDNN's
// reference implementation, a naive loop ours is no slower than.
bool adopt(ConvEntry& e, const dnnl::primitive_desc_base& pd, const memory::desc& src, const memory::desc& wei,
           const memory::desc& dst, ConvPass pass) {
  if (!pd) return false;
  const char* impl = pd.impl_info_str();
  if (impl == nullptr || std::strncmp(impl, "ref", 3) == 0) return false;
  e.src.prim = src;
  e.wei.prim = wei;
  e.dst.prim = dst;
  e.src.arg = pass == ConvPass::BackwardData ? DNNL_ARG_DIFF_SRC : DNNL_ARG_SRC;
  e.wei.arg = pass == ConvPass::BackwardWeights ? DNNL_ARG_DIFF_WEIGHTS : DNNL_ARG_WEIGHTS;
  e.dst.arg = pass == ConvPass::Forward ? DNNL_ARG_DST : DNNL_ARG_DIFF_DST;
  e.src.written = pass == ConvPass::BackwardData;
  e.wei.written = pass == ConvPass::BackwardWeights;
  e.dst.written = pass == ConvPass::Forward;
  return true;
}

// The convolution's geometry in oneDNN's terms.
struct Geometry {
  memory::dims strides, dil, pad_l, pad_r;
};

Geometry geometry_of(const ConvProblem& p) {
  const int64_t ekh = p.dil[0] * (p.kH - 1) + 1, ekw = p.dil[1] * (p.kW - 1) + 1;
  Geometry g{{p.stride[0], p.stride[1]}, {p.dil[0] - 1, p.dil[1] - 1} /* oneDNN counts the gaps */,
             {p.pad[0], p.pad[1]}, {}};
  // Right padding that makes oneDNN's size formula give OH/OW exactly
  // (floor mode, or output_padding for the transposed case); negative trims.
  if (!p.transposed)
    g.pad_r = {(p.OH - 1) * p.stride[0] + ekh - p.H - p.pad[0], (p.OW - 1) * p.stride[1] + ekw - p.W - p.pad[1]};
  else
    g.pad_r = {(p.H - 1) * p.stride[0] + ekh - p.pad[0] - p.OH, (p.W - 1) * p.stride[1] + ekw - p.pad[1] - p.OW};
  return g;
}

// The primitive for `p`'s pass, its layouts adopted into `e`; false when
// oneDNN offers only its reference implementation.
bool build_primitive(ConvEntry& e, const ConvProblem& p, memory::data_type dt) {
  const memory::desc src_any({p.N, p.C, p.H, p.W}, dt, memory::format_tag::any);
  const memory::desc dst_any({p.N, p.O, p.OH, p.OW}, dt, memory::format_tag::any);
  const memory::desc wei_any(e.wei.user.dims(), dt, memory::format_tag::any);
  const Geometry g = geometry_of(p);
  const auto direct = dnnl::algorithm::convolution_direct;
  using Fwd = dnnl::convolution_forward;
  if (p.pass == ConvPass::Forward && p.transposed) {
    using D = dnnl::deconvolution_forward;
    const auto prop = dnnl::prop_kind::forward_inference;
    const D::desc d = p.b ? D::desc(prop, dnnl::algorithm::deconvolution_direct, src_any, wei_any, e.bias_md,
                                    dst_any, g.strides, g.dil, g.pad_l, g.pad_r)
                          : D::desc(prop, dnnl::algorithm::deconvolution_direct, src_any, wei_any, dst_any,
                                    g.strides, g.dil, g.pad_l, g.pad_r);
    const D::primitive_desc pd(d, engine(), /*allow_empty=*/true);
    if (!adopt(e, pd, pd.src_desc(), pd.weights_desc(), pd.dst_desc(), p.pass)) return false;
    e.conv = D(pd);
    return true;
  }
  if (p.pass == ConvPass::Forward) {
    const auto prop = dnnl::prop_kind::forward_inference;
    auto try_layouts = [&](const memory::desc& src, const memory::desc& dst) {
      const Fwd::desc d = p.b ? Fwd::desc(prop, direct, src, wei_any, e.bias_md, dst, g.strides, g.dil, g.pad_l,
                                          g.pad_r)
                              : Fwd::desc(prop, direct, src, wei_any, dst, g.strides, g.dil, g.pad_l, g.pad_r);
      const Fwd::primitive_desc pd(d, engine(), /*allow_empty=*/true);
      if (!adopt(e, pd, pd.src_desc(), pd.weights_desc(), pd.dst_desc(), p.pass)) return false;
      e.conv = Fwd(pd);
      return true;
    };
    // Few input channels (a network's first layer): oneDNN's "any" picks
    // brgconv on channels-last, 3x slower here than its direct kernel on a
    // plain NCHW input with a 16-channel-blocked output (7 vs 22 us for the
    // digits CNN's 1->16 conv on AVX-512; docs/benchmarks.md).
    if (p.C <= 4 && p.groups == 1 && p.O % 16 == 0 &&
        try_layouts(memory::desc(src_any.dims(), dt, memory::format_tag::nchw),
                    memory::desc(dst_any.dims(), dt, memory::format_tag::nChw16c)))
      return true;
    return try_layouts(src_any, dst_any);
  }
  // The backward primitives take the training forward as a hint.
  const Fwd::desc fd(dnnl::prop_kind::forward_training, direct, src_any, wei_any, dst_any, g.strides, g.dil, g.pad_l,
                     g.pad_r);
  const Fwd::primitive_desc hint(fd, engine(), /*allow_empty=*/true);
  if (!hint) return false;
  if (p.pass == ConvPass::BackwardData) {
    using B = dnnl::convolution_backward_data;
    const B::desc d(direct, src_any, wei_any, dst_any, g.strides, g.dil, g.pad_l, g.pad_r);
    const B::primitive_desc pd(d, engine(), hint, /*allow_empty=*/true);
    if (!adopt(e, pd, pd.diff_src_desc(), pd.weights_desc(), pd.diff_dst_desc(), p.pass)) return false;
    e.conv = B(pd);
    return true;
  }
  using B = dnnl::convolution_backward_weights;
  const B::desc d(direct, src_any, wei_any, dst_any, g.strides, g.dil, g.pad_l, g.pad_r);
  const B::primitive_desc pd(d, engine(), hint, /*allow_empty=*/true);
  if (!adopt(e, pd, pd.src_desc(), pd.diff_weights_desc(), pd.diff_dst_desc(), p.pass)) return false;
  e.conv = B(pd);
  return true;
}

ConvEntry build(const ConvProblem& p, memory::data_type dt) {
  ConvEntry e;
  try {
    e.src.user = user_md({p.N, p.C, p.H, p.W}, {p.xs[0], p.xs[1], p.xs[2], p.xs[3]}, dt);
    e.dst.user = user_md({p.N, p.O, p.OH, p.OW}, {p.ys[0], p.ys[1], p.ys[2], p.ys[3]}, dt);
    e.wei.user = weight_md(p, dt);
    // Always dense: oneDNN's convolutions read the bias as if it were, whatever
    // strides the desc says (a strided bias gave wrong sums), so conv_onednn
    // packs a strided one first.
    if (p.b) e.bias_md = memory::desc({p.O}, dt, memory::format_tag::a);
    if (!build_primitive(e, p, dt)) return e;
    for (Operand* o : {&e.src, &e.wei, &e.dst})
      o->reorder = o->written ? reorder_between(o->prim, o->user) : reorder_between(o->user, o->prim);
    e.usable = true;
  } catch (const dnnl::error&) {
    e.usable = false;
  }
  return e;
}

std::vector<int64_t> key_of(const ConvProblem& p) {
  std::vector<int64_t> k{p.dtype, static_cast<int64_t>(p.pass), p.transposed, p.N, p.C, p.H, p.W, p.O, p.kH,
                         p.kW, p.OH, p.OW, p.groups, p.stride[0], p.stride[1], p.pad[0], p.pad[1], p.dil[0],
                         p.dil[1], p.b != nullptr, p.bs};
  k.insert(k.end(), p.xs, p.xs + 4);
  k.insert(k.end(), p.ws, p.ws + 4);
  k.insert(k.end(), p.ys, p.ys + 4);
  return k;
}

// The bias as oneDNN reads it: the user's, or packed dense into `buf`.
const void* dense_bias(const ConvProblem& p, memory::data_type dt, onednn::ScratchBuffer& buf) {
  if (p.bs == 1) return p.b;
  const size_t es = dt == memory::data_type::f32 ? 4 : 2;
  auto* dense = static_cast<char*>(buf.get(static_cast<size_t>(p.O) * es));
  const auto* from = static_cast<const char*>(p.b);
  for (int64_t o = 0; o < p.O; ++o) std::memcpy(dense + o * es, from + o * p.bs * static_cast<int64_t>(es), es);
  return dense;
}

}  // namespace

// Multiply-adds below which a convolution runs on one thread: 2^25 is
// ~1-2 ms of single-core work. Higher than matmul's bar because oneDNN's
// convolutions synchronise their team with spinning barriers: with one other
// busy process on this 2-core machine, a 9.4M-MAC convolution on two threads
// made a whole CNN training step ~100 ms instead of ~2 ms, while on an idle
// machine two threads saved under 10% (docs/benchmarks.md, "C++ training step").
constexpr int64_t kSerialConvMacs = int64_t{1} << 25;

bool conv_onednn(const ConvProblem& p) {
  memory::data_type dt;
  switch (p.dtype) {
    case LOOM_DTYPE_FLOAT32: dt = memory::data_type::f32; break;
    case LOOM_DTYPE_BFLOAT16: dt = memory::data_type::bf16; break;
    default: return false;
  }
  thread_local onednn::ScratchBuffer staging[3], bias_buf;
  // Multiply-adds of the whole convolution (the same in every pass); small
  // ones run on this thread.
  const int64_t macs = p.N * p.O * p.OH * p.OW * (p.C / std::max<int64_t>(1, p.groups)) * p.kH * p.kW;
  const onednn::SerialBelow serial(macs, kSerialConvMacs);
  try {
    const auto e = cache().get(key_of(p), [&] { return build(p, dt); });
    if (!e->usable) return false;
    dnnl::stream& s = onednn::thread_stream();
    const Operand* operands[3] = {&e->src, &e->wei, &e->dst};
    void* user_data[3] = {p.x, p.w, p.y};
    memory user[3], prim[3];
    std::unordered_map<int, memory> args;
    for (int i = 0; i < 3; ++i) {
      const Operand& o = *operands[i];
      user[i] = memory(o.user, engine(), user_data[i]);
      prim[i] = o.reorder ? memory(o.prim, engine(), staging[i].get(o.prim.get_size())) : user[i];
      if (o.reorder && !o.written) o.reorder.execute(s, user[i], prim[i]);
      args.emplace(o.arg, prim[i]);
    }
    if (p.b) args.emplace(DNNL_ARG_BIAS, memory(e->bias_md, engine(), const_cast<void*>(dense_bias(p, dt, bias_buf))));
    e->conv.execute(s, args);
    for (int i = 0; i < 3; ++i)
      if (operands[i]->reorder && operands[i]->written) operands[i]->reorder.execute(s, prim[i], user[i]);
    s.wait();
  } catch (const dnnl::error&) {
    return false;  // the caller computes every output element another way
  }
  return true;
}

}  // namespace loom::cpu
