// ops_pad.cpp — torch.nn.functional.pad: constant, reflect and replicate.
//
// The core turns the user's pad list (pairs from the last dim backwards) into
// one (before, after) pair per input dim, checks PyTorch's rules and sizes the
// output; a kernel fills it in one pass. Without a kernel the op runs as a
// composite of full, narrow and copy_ (pad_composite), on any device.
#include "autograd/formula.h"
#include "core_op.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <algorithm>

namespace loom {
namespace {

enum class PadMode { Constant, Reflect, Replicate };

PadMode parse_mode(const LoomValue& v) {
  LOOM_CHECK(v.kind == LOOM_VALUE_STRING, "pad: mode must be a string");
  const std::string_view s(v.u.str.data, v.u.str.size);
  if (s == "constant") return PadMode::Constant;
  if (s == "reflect") return PadMode::Reflect;
  if (s == "replicate") return PadMode::Replicate;
  throw Error(detail::cat("pad: unrecognised padding mode '", s,
                          "' (expected 'constant', 'reflect' or 'replicate')"));
}

// values: [0] INT_LIST pad (user order), [1] STRING mode, [2] FLOAT? value.
// Rewritten for the kernel: [0] one (before, after) pair per input dim in
// dim order, [2] a FLOAT fill value (0 when None).
void prepare_pad(OpCall& call) {
  const Tensor& self = call.arg(0);
  const LoomValue& pv = call.values[0];
  const IntArrayRef pad(pv.u.ints.data, static_cast<size_t>(pv.u.ints.size));
  const PadMode mode = parse_mode(call.values[1]);
  const int64_t ndim = self.dim();
  const int64_t npad = static_cast<int64_t>(pad.size());
  LOOM_CHECK(npad % 2 == 0, "pad: padding length must be divisible by 2, got ", npad);
  const int64_t pdims = npad / 2;
  LOOM_CHECK(pdims <= ndim, "pad: padding length too large: ", npad, " values pad ", pdims,
             " dims but the input has ", ndim);
  if (mode != PadMode::Constant) {
    const char* m = mode == PadMode::Reflect ? "reflect" : "replicate";
    LOOM_CHECK(call.values[2].kind == LOOM_VALUE_NONE, "pad: mode '", m,
               "' doesn't take a value argument");
    LOOM_CHECK(pdims >= 1 && pdims <= 3 && (ndim == pdims + 1 || ndim == pdims + 2), "pad: mode '",
               m, "' pads the last 1, 2 or 3 dims of a 2-D/3-D, 3-D/4-D or 4-D/5-D input; got ",
               pdims, " padded dims of a ", ndim, "-D input ", shape_str(self.sizes()));
  }

  DimVector& pairs = call.list_storage;
  pairs.clear();
  pairs.resize(static_cast<size_t>(2 * ndim), 0);
  DimVector out(self.sizes());
  for (int64_t k = 0; k < pdims; ++k) {
    const int64_t d = ndim - 1 - k;
    const int64_t before = pad[2 * k], after = pad[2 * k + 1], in = self.size(d);
    pairs[2 * d] = before;
    pairs[2 * d + 1] = after;
    out[d] = in + before + after;
    if (mode == PadMode::Constant) {
      LOOM_CHECK(out[d] >= 0, "pad: padding (", before, ", ", after, ") at dimension ", d,
                 " of input ", shape_str(self.sizes()), " gives a negative size ", out[d]);
    } else {
      LOOM_CHECK(in > 0, "pad: mode '", mode == PadMode::Reflect ? "reflect" : "replicate",
                 "' needs a non-empty dimension ", d, " in input ", shape_str(self.sizes()));
      if (mode == PadMode::Reflect)
        LOOM_CHECK(before < in && after < in,
                   "pad: reflect padding size should be less than the corresponding input "
                   "dimension, but got padding (", before, ", ", after, ") at dimension ", d,
                   " of input ", shape_str(self.sizes()));
      LOOM_CHECK(out[d] >= 1, "pad: input size ", in, " at dimension ", d,
                 " is too small for padding (", before, ", ", after, "): output size ", out[d]);
    }
  }
  call.values[0] = detail::int_list_value(pairs);
  const double fill = call.values[2].kind == LOOM_VALUE_NONE ? 0.0 : call.values[2].u.f;
  call.values[2] = detail::float_value(fill);

  call.inputs.resize(1);
  call.inputs[0].tensor = self.impl();
  call.compute_dtype = self.dtype();
  auto& plan = call.outputs.emplace_back();
  plan.dtype = self.dtype();
  plan.sizes = out;
}

// Input index for output index `o` along a dim of size n padded by
// `before` (reflect and replicate; the kernel contract's mapping).
int64_t edge_source(PadMode m, int64_t o, int64_t before, int64_t n) {
  const int64_t i = o - before;
  if (m == PadMode::Reflect) return i < 0 ? -i : 2 * (n - 1) - i;
  return i < 0 ? 0 : n - 1;
}

// Without a pad kernel. Constant: a filled output and one copy_ of the
// overlap (negative pads narrow the input, positive ones the output).
// Reflect/replicate: one padded dim at a time, the kept middle as one copy_
// and each edge slice as its own (pads are small: each is < the dim's size
// for reflect), so any device with copy_ runs it.
void pad_composite(OpCall& call) {
  const PadMode mode = parse_mode(call.values[1]);
  const Tensor& self = call.arg(0);
  const auto& plan = call.outputs[0];
  const IntArrayRef pairs(call.values[0].u.ints.data, static_cast<size_t>(call.values[0].u.ints.size));
  if (mode == PadMode::Constant) {
    Tensor out = full(plan.sizes, call.values[2].u.f, plan.dtype, self.device());
    Tensor src = self, dst = out;
    for (int64_t d = 0; d < self.dim(); ++d) {
      const int64_t before = pairs[2 * d], after = pairs[2 * d + 1];
      const int64_t keep = self.size(d) + std::min<int64_t>(before, 0) + std::min<int64_t>(after, 0);
      if (keep <= 0) {  // the input is cropped away: the fill is the result
        call.outputs[0].result = out;
        return;
      }
      src = src.narrow(d, std::max<int64_t>(-before, 0), keep);
      dst = dst.narrow(d, std::max<int64_t>(before, 0), keep);
    }
    dst.copy_(src);
    call.outputs[0].result = out;
    return;
  }
  Tensor cur = self;
  for (int64_t d = 0; d < self.dim(); ++d) {
    const int64_t before = pairs[2 * d], after = pairs[2 * d + 1];
    if (before == 0 && after == 0) continue;
    const int64_t n = cur.size(d), w = plan.sizes[d];
    DimVector sizes(cur.sizes());
    sizes[d] = w;
    Tensor next = empty(sizes, plan.dtype, self.device());
    if (shape_numel(sizes) > 0) {
      const int64_t mid_begin = std::clamp<int64_t>(before, 0, w);
      const int64_t mid_end = std::clamp<int64_t>(before + n, 0, w);
      if (mid_end > mid_begin)
        next.narrow(d, mid_begin, mid_end - mid_begin)
            .copy_(cur.narrow(d, mid_begin - before, mid_end - mid_begin));
      for (int64_t o = 0; o < w; ++o) {
        if (o == mid_begin) o = std::max(mid_end, o);
        if (o >= w) break;
        next.narrow(d, o, 1).copy_(cur.narrow(d, edge_source(mode, o, before, n), 1));
      }
    }
    cur = next;
  }
  call.outputs[0].result = cur.is_same(self) ? self.clone() : cur;
}

LOOM_CORE_OP(pad_op, "pad(Tensor self, int[] pad, str mode='constant', float? value=None) -> Tensor",
             prepare_pad, pad_composite)

// ---- derivative ----------------------------------------------------------------------

// `t` zero-padded by (before, after) along dim d only.
Tensor pad_dim(const Tensor& t, int64_t d, int64_t before, int64_t after) {
  std::vector<int64_t> p(static_cast<size_t>(2 * (t.dim() - d)), 0);
  p[p.size() - 2] = before;
  p[p.size() - 1] = after;
  return pad(t, p);
}

// The gradient of reflect/replicate padding along dim d (input size n): the
// kept middle goes back in place, and each edge adds onto the input rows it
// copied (reflect: mirrored, from row 1; replicate: all onto the end row).
Tensor edge_pad_backward(PadMode mode, const Tensor& g, int64_t d, int64_t before, int64_t after, int64_t n) {
  const int64_t w = g.size(d);
  const int64_t lo = std::max<int64_t>(before, 0), hi = std::min(before + n, w);
  Tensor r = pad_dim(g.narrow(d, lo, hi - lo), d, lo - before, n - (hi - before));
  const bool reflect = mode == PadMode::Reflect;
  if (before > 0) {
    const Tensor e = g.narrow(d, 0, before);
    r = r + (reflect ? pad_dim(flip(e, {d}), d, 1, n - 1 - before) : pad_dim(sum(e, {d}, true), d, 0, n - 1));
  }
  if (after > 0) {
    const Tensor e = g.narrow(d, w - after, after);
    r = r + (reflect ? pad_dim(flip(e, {d}), d, n - 1 - after, 1) : pad_dim(sum(e, {d}, true), d, n - 1, 0));
  }
  return r;
}

// Constant padding's gradient is the opposite crop (or zero-pad): the same
// op with the pads negated. (PyTorch names the node per mode; one op here
// has one name, that of the default mode.)
LOOM_DERIVATIVE(pad_op, "ConstantPadNdBackward0", autograd::none(), autograd::none(),
                [](autograd::BackwardContext& c) {
                  const IntArrayRef p = c.int_list(0);
                  const PadMode mode = parse_mode(c.value(1));
                  if (mode == PadMode::Constant) {
                    std::vector<int64_t> neg;
                    for (int64_t v : p) neg.push_back(-v);
                    c.set(0, pad(c.grad(), neg));
                    return;
                  }
                  const IntArrayRef in = c.input_sizes(0);
                  Tensor g = c.grad();
                  for (size_t k = 0; 2 * k < p.size(); ++k) {
                    const int64_t d = static_cast<int64_t>(in.size() - 1 - k);
                    g = edge_pad_backward(mode, g, d, p[2 * k], p[2 * k + 1], in[static_cast<size_t>(d)]);
                  }
                  c.set(0, g);
                })

}  // namespace

Tensor pad(const Tensor& input, const std::vector<int64_t>& pad, const std::string& mode,
           std::optional<double> value) {
  return detail::run_op(pad_op(), {&input},
                        {detail::int_list_value(pad), detail::string_value(mode),
                         value ? detail::float_value(*value) : detail::none_value()});
}

}  // namespace loom
