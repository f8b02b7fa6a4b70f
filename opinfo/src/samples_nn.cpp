// samples_nn.cpp — softmax, log_softmax and their gradient ops,
// scaled_dot_product_attention,
// layer_norm, rms_norm and their gradient ops, group_norm, batch_norm,
// _batch_norm_backward.
#include "sample_util.h"

namespace loom::opinfo {
namespace {
using namespace detail;

Samples softmax_samples(const SampleContext& c) {
  Samples v{c.call("dim=1", {c.tensor({4, 6})}, {I(1)}),
            c.call("dim=0", {c.tensor({4, 6})}, {I(0)}),
            c.call("dim=-2 of 3-d", {c.tensor({2, 5, 3})}, {I(-2)}),
            c.call("large logits", {c.tensor({3, 8}, 50, 90)}, {I(-1)}),
            c.call("0-d", {c.tensor({})}, {I(0)}),
            c.call("size-1 dim", {c.tensor({5, 1})}, {I(1)}),
            c.call("empty", {c.tensor({0, 4})}, {I(1)}),
            c.call("large", {c.tensor({4, 12000})}, {I(1)}),
            c.call("edge values", {c.edge_values(32).reshape({4, 8})}, {I(1)})};
  // dtype=: the input is cast first (integers become a valid input then).
  v.push_back(c.call("dtype=float64", {c.tensor({3, 5})}, {I(1), D(DType::Float64)}));
  return v;
}
// Integer inputs need dtype=; only that sample runs for them.
LOOM_OP_SAMPLES("softmax", {.dtypes = kFloatDTypes, .make = [](const SampleContext& c) { return softmax_samples(c); }})
LOOM_OP_SAMPLES("log_softmax", {.dtypes = kFloatDTypes, .make = [](const SampleContext& c) { return softmax_samples(c); }})

// The gradient ops (grad_output, the forward's result, dim): the result of
// a real softmax (rows summing to 1) or log_softmax, so the math is the
// derivative's.
Samples softmax_backward_samples(const SampleContext& c, bool log) {
  auto result = [&](Shape s, int64_t dim) {
    const Tensor x = c.tensor(s, -2, 2);
    return log ? loom::log_softmax(x, dim) : loom::softmax(x, dim);
  };
  return Samples{c.call("last dim", {c.tensor({4, 6}), result({4, 6}, 1)}, {I(1)}).for_gradcheck(),
                 c.call("dim 0", {c.tensor({3, 5}), result({3, 5}, 0)}, {I(0)}).for_gradcheck(),
                 c.call("middle dim of 3-d", {c.tensor({2, 5, 3}), result({2, 5, 3}, 1)}, {I(-2)}).for_gradcheck(),
                 c.call("size-1 dim", {c.tensor({5, 1}), result({5, 1}, 1)}, {I(1)}),
                 c.call("empty", {c.tensor({0, 4}), result({0, 4}, 1)}, {I(1)}),
                 c.call("large rows", {c.tensor({8, 3000}), result({8, 3000}, 1)}, {I(1)}),
                 c.call("large columns", {c.tensor({300, 70}), result({300, 70}, 0)}, {I(0)})};
}
LOOM_OP_SAMPLES("_softmax_backward", {.dtypes = kFloatDTypes, .make = [](const SampleContext& c) {
                  return softmax_backward_samples(c, false);
                }})
LOOM_OP_SAMPLES("_log_softmax_backward", {.dtypes = kFloatDTypes, .make = [](const SampleContext& c) {
                  return softmax_backward_samples(c, true);
                }})

LOOM_OP_SAMPLES("scaled_dot_product_attention", {
    .accumulates = true,
    .make = [](const SampleContext& c) {
      auto qkv = [&c](Shape q, Shape kv) {
        Shape v = kv;
        return std::vector<std::optional<Tensor>>{c.tensor(q, -1, 1), c.tensor(kv, -1, 1), c.tensor(v, -1, 1)};
      };
      auto with = [](std::vector<std::optional<Tensor>> t, std::optional<Tensor> mask) {
        t.push_back(std::move(mask));
        return t;
      };
      Samples v{c.call("4-d", qkv({2, 3, 5, 8}, {2, 3, 6, 8})),
                c.call("3-d", qkv({3, 4, 8}, {3, 4, 8})),
                c.call("causal", with(qkv({2, 2, 5, 8}, {2, 2, 5, 8}), std::nullopt), {F(0), B(true)}),
                c.call("bool mask, broadcast", with(qkv({2, 3, 5, 8}, {2, 3, 6, 8}), c.mask({5, 6}, 0.7)), {}),
                c.call("float mask", with(qkv({2, 5, 8}, {2, 6, 8}), c.tensor({2, 5, 6}, -2, 0)), {}),
                c.call("scale=0.3", with(qkv({2, 5, 8}, {2, 6, 8}), std::nullopt), {F(0), B(false), F(0.3)}),
                c.call("one query", qkv({1, 1, 8}, {1, 7, 8})),
                c.call("large", qkv({2, 4, 64, 32}, {2, 4, 64, 32}))};
      return v;
    }})

// The fused op and its gradient op (what scaled_dot_product_attention runs
// without dropout): sizes past one tile of the CUDA kernels (16 rows, 32
// columns), a fully masked row (NaN, lse -inf), head dims the kernels
// decline.
using Qkv = std::vector<std::optional<Tensor>>;
Qkv attention_operands(const SampleContext& c, Shape q, Shape k, Shape v, std::optional<Tensor> mask = std::nullopt) {
  return Qkv{c.tensor(q, -1, 1), c.tensor(k, -1, 1), c.tensor(v, -1, 1), std::move(mask)};
}
Tensor fully_masked_row(const SampleContext& c) {
  Tensor m = c.mask({5, 6}, 0.7);
  m.select(0, 2).fill_(false);
  return m;
}
Samples fused_attention_samples(const SampleContext& c) {
  return Samples{
      c.call("4-d", attention_operands(c, {2, 3, 5, 8}, {2, 3, 6, 8}, {2, 3, 6, 8}), {B(false), F(0.35)}),
      c.call("causal, L > S, Ev != E", attention_operands(c, {2, 7, 8}, {2, 5, 8}, {2, 5, 4}), {B(true), F(0.3)}),
      c.call("bool mask, a fully masked row", attention_operands(c, {2, 5, 8}, {2, 6, 8}, {2, 6, 8}, fully_masked_row(c)),
             {B(false), F(0.35)}),
      c.call("float mask, broadcast batch",
             attention_operands(c, {2, 1, 5, 8}, {2, 3, 6, 8}, {1, 3, 6, 4}, c.tensor({3, 5, 6}, -2, 0)),
             {B(false), F(0.35)}),
      c.call("several tiles", attention_operands(c, {2, 37, 64}, {2, 70, 64}, {2, 70, 48}), {B(true), F(0.125)}),
      c.call("head dim 160", attention_operands(c, {1, 3, 160}, {1, 4, 160}, {1, 4, 8}), {B(false), F(0.08)})};
}

LOOM_OP_SAMPLES("_scaled_dot_product_attention_fused", {
    .accumulates = true,
    .make = [](const SampleContext& c) { return fused_attention_samples(c); }})

// The forward's own results as output and logsumexp, a random grad_out.
LOOM_OP_SAMPLES("_scaled_dot_product_attention_backward", {
    .accumulates = true,
    .make = [](const SampleContext& c) {
      Samples v;
      for (const Sample& f : fused_attention_samples(c)) {
        const bool causal = std::get<bool>(f.values[0]);
        const double scale = std::get<double>(f.values[1]);
        const Tensor mask = f.tensors[3] ? *f.tensors[3] : Tensor();
        const auto [out, lse] =
            scaled_dot_product_attention_fused(*f.tensors[0], *f.tensors[1], *f.tensors[2], mask, causal, scale);
        const IntArrayRef os = out.sizes();
        const Tensor go = c.tensor(Shape(os.begin(), os.end()), -1, 1);
        v.push_back(c.call(f.label, {go, f.tensors[0], f.tensors[1], f.tensors[2], f.tensors[3], out, lse}, f.values));
      }
      return v;
    }})

LOOM_OP_SAMPLES("layer_norm", {
    .make = [](const SampleContext& c) {
      return Samples{c.call("last dim", {c.tensor({4, 6})}, {L({6})}),
                     c.call("last two dims, weight and bias", {c.tensor({2, 3, 4}), c.tensor({3, 4}), c.tensor({3, 4})}, {L({3, 4})}),
                     c.call("weight only", {c.tensor({3, 5}), c.tensor({5}), std::nullopt}, {L({5})}),
                     c.call("eps=0.1", {c.tensor({3, 5}), std::nullopt, c.tensor({5})}, {L({5}), F(0.1)}),
                     c.call("constant rows", {full({3, 4}, 2.0, c.dtype())}, {L({4})}),
                     c.call("empty batch", {c.tensor({0, 4})}, {L({4})}),
                     c.call("large", {c.tensor({64, 1024}), c.tensor({1024}), c.tensor({1024})}, {L({1024})})};
    }})

// rms_norm(input, normalized_shape, weight, eps): eps None is the dtype's
// machine epsilon.
LOOM_OP_SAMPLES("rms_norm", {
    .make = [](const SampleContext& c) {
      return Samples{c.call("last dim", {c.tensor({4, 6})}, {L({6})}),
                     c.call("last two dims, weight", {c.tensor({2, 3, 4}), c.tensor({3, 4})}, {L({3, 4})}),
                     c.call("eps=0.1", {c.tensor({3, 5}), c.tensor({5})}, {L({5}), F(0.1)}),
                     c.call("zero rows", {zeros({3, 4}, c.dtype())}, {L({4})}),
                     c.call("empty batch", {c.tensor({0, 4})}, {L({4})}),
                     c.call("large", {c.tensor({64, 1024}), c.tensor({1024})}, {L({1024})})};
    }})

// The gradient ops (grad_output, input, normalized_shape, weight, eps): the
// parameters' gradients sum over the leading dims.
Samples norm_backward_samples(const SampleContext& c) {
  auto args = [&](Shape x, std::optional<Shape> w) {
    std::vector<std::optional<Tensor>> t{c.tensor(x, -1, 1), c.tensor(x)};
    t.push_back(w ? std::optional<Tensor>(c.tensor(*w)) : std::nullopt);
    return t;
  };
  return Samples{c.call("last dim, weight", args({4, 6}, Shape{6}), {L({6}), F(1e-5)}),
                 c.call("last two dims, no weight", args({2, 3, 4}, std::nullopt), {L({3, 4}), F(1e-5)}),
                 c.call("all dims", args({3, 5}, Shape{3, 5}), {L({3, 5}), F(0.1)}),
                 c.call("empty batch", args({0, 4}, Shape{4}), {L({4}), F(1e-5)}),
                 c.call("large", args({64, 1024}, Shape{1024}), {L({1024}), F(1e-5)})};
}
LOOM_OP_SAMPLES("_layer_norm_backward", {.accumulates = true, .make = [](const SampleContext& c) {
                  return norm_backward_samples(c);
                }})
LOOM_OP_SAMPLES("_rms_norm_backward", {.accumulates = true, .make = [](const SampleContext& c) {
                  return norm_backward_samples(c);
                }})

LOOM_OP_SAMPLES("group_norm", {
    .make = [](const SampleContext& c) {
      return Samples{c.call("2 groups", {c.tensor({2, 4, 3})}, {I(2)}),
                     c.call("weight and bias, 4-d", {c.tensor({2, 6, 3, 3}), c.tensor({6}), c.tensor({6})}, {I(3)}),
                     c.call("one group", {c.tensor({3, 4, 5})}, {I(1)}),
                     c.call("group per channel, eps", {c.tensor({2, 4, 5}), c.tensor({4}), std::nullopt}, {I(4), F(0.01)}),
                     c.call("2-d input", {c.tensor({3, 4})}, {I(2)}),
                     c.call("large", {c.tensor({4, 32, 32, 32}), c.tensor({32}), c.tensor({32})}, {I(8)})};
    }})

// batch_norm(input, running_mean, running_var, weight, bias, training,
// momentum, eps). Training mode updates the running statistics in place.
LOOM_OP_SAMPLES("batch_norm", {
    .make = [](const SampleContext& c) {
      auto stats = [&c](int64_t n) {
        return std::vector<std::optional<Tensor>>{c.tensor({n}, -1, 1), c.tensor({n}, 0.5, 2)};
      };
      auto args = [&](Shape x, int64_t n, bool affine) {
        std::vector<std::optional<Tensor>> t{c.tensor(x)};
        for (auto& s : stats(n)) t.push_back(std::move(s));
        if (affine) t.push_back(c.tensor({n})), t.push_back(c.tensor({n}));
        return t;
      };
      return Samples{
          c.call("eval", args({4, 3}, 3, false)),
          c.call("eval, affine, 4-d", args({2, 3, 4, 4}, 3, true)),
          c.call("training", args({5, 3, 4}, 3, true), {B(true)}),
          c.call("training, momentum 0.5, eps 0.1", args({5, 3}, 3, false), {B(true), F(0.5), F(0.1)}),
          c.call("training without running stats", {c.tensor({6, 2, 3}), std::nullopt, std::nullopt}, {B(true)}),
          c.call("training, 5-d, bias only", {c.tensor({2, 3, 2, 3, 2}), std::nullopt, std::nullopt, std::nullopt, c.tensor({3})}, {B(true)}),
          c.call("training, float64 running stats", {c.tensor({4, 3, 5}), c.tensor({3}, -1, 1, DType::Float64), c.tensor({3}, 0.5, 2, DType::Float64)}, {B(true), F(0.2)}),
          c.call("eval, 5-d, weight only, float32 running stats", {c.tensor({2, 3, 2, 2, 3}), c.tensor({3}, -1, 1, DType::Float32), c.tensor({3}, 0.5, 2, DType::Float32), c.tensor({3})}),
          // A channel slice keeps each (batch, channel) plane contiguous; a
          // channels-last input does not (a CPU kernel declines it).
          c.call("training, channel slice", {c.tensor({2, 6, 3, 3}).narrow(1, 1, 4), c.tensor({4}, -1, 1), c.tensor({4}, 0.5, 2)}, {B(true)}),
          c.call("training, channels-last", {c.tensor({2, 3, 3, 4}).permute({0, 3, 1, 2}), c.tensor({4}, -1, 1), c.tensor({4}, 0.5, 2), c.tensor({4}), c.tensor({4})}, {B(true)}),
          c.call("eval, channels-last", {c.tensor({2, 3, 3, 4}).permute({0, 3, 1, 2}), c.tensor({4}, -1, 1), c.tensor({4}, 0.5, 2)}),
          c.call("large, training", args({16, 8, 32, 32}, 8, true), {B(true)}),
          c.call("large, eval", args({16, 8, 32, 32}, 8, true))};
    }})

// _batch_norm_backward(grad_output, input, weight, running_mean,
// running_var, training, eps) -> (grad_input, grad_weight, grad_bias): the
// weight and bias gradients are sums over every dim but the channels.
LOOM_OP_SAMPLES("_batch_norm_backward", {
    .accumulates = true,
    .make = [](const SampleContext& c) {
      auto train = [&](Shape x, bool weight) {
        std::vector<std::optional<Tensor>> t{c.tensor(x, -1, 1), c.tensor(x)};
        if (weight) t.push_back(c.tensor({x[1]}));
        return t;
      };
      auto eval = [&](Shape x, bool weight, std::optional<DType> stats = std::nullopt) {
        std::vector<std::optional<Tensor>> t{c.tensor(x, -1, 1), c.tensor(x)};
        t.push_back(weight ? std::optional<Tensor>(c.tensor({x[1]})) : std::nullopt);
        t.push_back(c.tensor({x[1]}, -1, 1, stats));
        t.push_back(c.tensor({x[1]}, 0.5, 2, stats));
        return t;
      };
      // The large samples' weight and bias gradients sum 16·32·32 terms per
      // channel: a device summing in float32 (the composite does) rounds
      // where the CPU kernel's double sums do not.
      auto large = [](Sample s) {
        s.atol = s.rtol = 1e-4;
        return s;
      };
      return Samples{
          c.call("training, weight, 2-d", train({6, 3}, true), {B(true), F(1e-5)}),
          c.call("training, no weight, 3-d", train({4, 2, 5}, false), {B(true), F(1e-5)}),
          c.call("training, weight, 4-d, eps 0.1", train({2, 3, 4, 4}, true), {B(true), F(0.1)}),
          c.call("training, 5-d", train({2, 2, 3, 2, 2}, true), {B(true), F(1e-5)}),
          c.call("eval, weight, 4-d", eval({2, 3, 4, 4}, true), {B(false), F(1e-5)}),
          c.call("eval, no weight, 2-d, float64 running stats", eval({5, 4}, false, DType::Float64), {B(false), F(1e-5)}),
          c.call("eval, 5-d, eps 0.01", eval({2, 2, 2, 3, 2}, true), {B(false), F(0.01)}),
          large(c.call("large, training", train({16, 8, 32, 32}, true), {B(true), F(1e-5)})),
          large(c.call("large, eval", eval({16, 8, 32, 32}, true), {B(false), F(1e-5)}))};
    }})

}  // namespace
}  // namespace loom::opinfo
