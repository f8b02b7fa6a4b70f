// Convolutions through oneDNN (float32, bfloat16).
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

struct ConvEntry {
  bool usable = false;  // false: oneDNN has nothing good here; use the loop
  memory::desc src_user, wei_user, bias_md, dst_user;
  memory::desc src_prim, wei_prim, dst_prim;
  dnnl::primitive conv;
  dnnl::reorder src_in, wei_in, dst_out;  // empty when the layouts match
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

dnnl::reorder reorder_if_needed(const memory::desc& from, const memory::desc& to) {
  if (from == to) return {};
  return dnnl::reorder(dnnl::reorder::primitive_desc(engine(), from, engine(), to));
}

template <class PD>
bool adopt(ConvEntry& e, const PD& pd) {
  if (!pd) return false;
  // The reference implementation is a naive loop: ours is no slower.
  const char* impl = pd.impl_info_str();
  if (impl == nullptr || std::strncmp(impl, "ref", 3) == 0) return false;
  e.src_prim = pd.src_desc();
  e.wei_prim = pd.weights_desc();
  e.dst_prim = pd.dst_desc();
  return true;
}

ConvEntry build(const ConvProblem& p, memory::data_type dt) {
  ConvEntry e;
  try {
    e.src_user = user_md({p.N, p.C, p.H, p.W}, {p.xs[0], p.xs[1], p.xs[2], p.xs[3]}, dt);
    e.dst_user = user_md({p.N, p.O, p.OH, p.OW}, {p.ys[0], p.ys[1], p.ys[2], p.ys[3]}, dt);
    e.wei_user = weight_md(p, dt);
    // Always dense: oneDNN's convolutions read the bias as if it were, whatever
    // strides the desc says (a strided bias gave wrong sums), so conv_onednn
    // packs a strided one first.
    if (p.b) e.bias_md = memory::desc({p.O}, dt, memory::format_tag::a);
    const memory::desc src_any({p.N, p.C, p.H, p.W}, dt, memory::format_tag::any);
    const memory::desc dst_any({p.N, p.O, p.OH, p.OW}, dt, memory::format_tag::any);
    const memory::desc wei_any(e.wei_user.dims(), dt, memory::format_tag::any);
    const memory::dims strides{p.stride[0], p.stride[1]};
    const memory::dims dil{p.dil[0] - 1, p.dil[1] - 1};  // oneDNN counts the gaps
    const memory::dims pad_l{p.pad[0], p.pad[1]};
    const int64_t ekh = p.dil[0] * (p.kH - 1) + 1, ekw = p.dil[1] * (p.kW - 1) + 1;
    // Right padding that makes oneDNN's size formula give OH/OW exactly
    // (floor mode, or output_padding for the transposed case).
    memory::dims pad_r;
    if (!p.transposed)
      pad_r = {(p.OH - 1) * p.stride[0] + ekh - p.H - p.pad[0], (p.OW - 1) * p.stride[1] + ekw - p.W - p.pad[1]};
    else
      pad_r = {(p.H - 1) * p.stride[0] + ekh - p.pad[0] - p.OH, (p.W - 1) * p.stride[1] + ekw - p.pad[1] - p.OW};
    const auto prop = dnnl::prop_kind::forward_inference;
    if (!p.transposed) {
      using C = dnnl::convolution_forward;
      const C::desc d = p.b ? C::desc(prop, dnnl::algorithm::convolution_direct, src_any, wei_any, e.bias_md,
                                      dst_any, strides, dil, pad_l, pad_r)
                            : C::desc(prop, dnnl::algorithm::convolution_direct, src_any, wei_any, dst_any,
                                      strides, dil, pad_l, pad_r);
      const C::primitive_desc pd(d, engine(), /*allow_empty=*/true);
      if (!adopt(e, pd)) return e;
      e.conv = C(pd);
    } else {
      using D = dnnl::deconvolution_forward;
      const D::desc d = p.b ? D::desc(prop, dnnl::algorithm::deconvolution_direct, src_any, wei_any, e.bias_md,
                                      dst_any, strides, dil, pad_l, pad_r)
                            : D::desc(prop, dnnl::algorithm::deconvolution_direct, src_any, wei_any, dst_any,
                                      strides, dil, pad_l, pad_r);
      const D::primitive_desc pd(d, engine(), /*allow_empty=*/true);
      if (!adopt(e, pd)) return e;
      e.conv = D(pd);
    }
    e.src_in = reorder_if_needed(e.src_user, e.src_prim);
    e.wei_in = reorder_if_needed(e.wei_user, e.wei_prim);
    e.dst_out = reorder_if_needed(e.dst_prim, e.dst_user);
    e.usable = true;
  } catch (const dnnl::error&) {
    e.usable = false;
  }
  return e;
}

std::vector<int64_t> key_of(const ConvProblem& p) {
  std::vector<int64_t> k{p.dtype, p.transposed, p.N, p.C, p.H, p.W, p.O, p.kH, p.kW, p.OH, p.OW,
                         p.groups, p.stride[0], p.stride[1], p.pad[0], p.pad[1], p.dil[0], p.dil[1],
                         p.b != nullptr, p.bs};
  k.insert(k.end(), p.xs, p.xs + 4);
  k.insert(k.end(), p.ws, p.ws + 4);
  k.insert(k.end(), p.ys, p.ys + 4);
  return k;
}

// The operand in the primitive's layout: the user's memory, or a reorder of
// it into `buf`.
memory staged(const memory::desc& md, void* buf) { return memory(md, engine(), buf); }

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
  thread_local onednn::ScratchBuffer src_buf, wei_buf, dst_buf, bias_buf;
  // Multiply-adds of the whole convolution; small ones run on this thread.
  const int64_t macs = p.N * p.O * p.OH * p.OW * (p.C / std::max<int64_t>(1, p.groups)) * p.kH * p.kW;
  const onednn::SerialBelow serial(macs, kSerialConvMacs);
  try {
    const auto e = cache().get(key_of(p), [&] { return build(p, dt); });
    if (!e->usable) return false;
    dnnl::stream& s = onednn::thread_stream();
    memory src_user(e->src_user, engine(), const_cast<void*>(p.x));
    memory wei_user(e->wei_user, engine(), const_cast<void*>(p.w));
    memory dst_user(e->dst_user, engine(), p.y);
    memory src = src_user, wei = wei_user, dst = dst_user;
    if (e->src_in) {
      src = staged(e->src_prim, src_buf.get(e->src_prim.get_size()));
      e->src_in.execute(s, src_user, src);
    }
    if (e->wei_in) {
      wei = staged(e->wei_prim, wei_buf.get(e->wei_prim.get_size()));
      e->wei_in.execute(s, wei_user, wei);
    }
    if (e->dst_out) dst = staged(e->dst_prim, dst_buf.get(e->dst_prim.get_size()));
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
    if (p.b) {
      const void* bias = p.b;
      if (p.bs != 1) {  // pack the strided bias (O elements of 2 or 4 bytes)
        const size_t es = dt == memory::data_type::f32 ? 4 : 2;
        auto* dense = static_cast<char*>(bias_buf.get(static_cast<size_t>(p.O) * es));
        const auto* from = static_cast<const char*>(p.b);
        for (int64_t o = 0; o < p.O; ++o) std::memcpy(dense + o * es, from + o * p.bs * static_cast<int64_t>(es), es);
        bias = dense;
      }
      args.emplace(DNNL_ARG_BIAS, memory(e->bias_md, engine(), const_cast<void*>(bias)));
    }
    e->conv.execute(s, args);
    if (e->dst_out) e->dst_out.execute(s, dst, dst_user);
    s.wait();
  } catch (const dnnl::error&) {
    return false;  // the loop recomputes every output element
  }
  return true;
}

}  // namespace loom::cpu
