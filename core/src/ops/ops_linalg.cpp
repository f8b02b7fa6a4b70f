// ops_linalg.cpp — matmul with torch.matmul's rules for 1-D, 2-D and batched
// operands, and the fixed-rank products built on it (mm, bmm, dot, outer,
// addmm, baddbmm, linear).
//
// mm, bmm and dot prepare exactly the call matmul's kernel takes
// ([B..., M, K] x [B..., K, N]), so a device may register its matmul kernel
// under those names too; without one their composite calls matmul. outer
// prepares a broadcast multiply. addmm, baddbmm and linear are composites
// (product, then one in-place add) unless a device registers a fused kernel;
// their prepare step still plans the output so such a kernel can.
#include "autograd/formula.h"
#include "core_op.h"

#include <loom/error.h>
#include <loom/ops.h>

namespace loom {
namespace {

// The sizes and strides of `t` as a matrix (batch..., rows, cols): a 1-D
// left operand is a row vector, a 1-D right operand a column vector.
void as_matrix(const TensorImpl& t, bool left, DimVector& sizes, DimVector& strides) {
  sizes = DimVector(t.sizes());
  strides = DimVector(t.strides());
  if (t.dim() != 1) return;
  if (left) {
    sizes.insert(0, 1);
    strides.insert(0, strides[0]);
  } else {
    sizes.push_back(1);
    strides.push_back(1);
  }
}

// Plans args 0 and 1 as the operands of a (batched) matrix product.
void plan_product(OpCall& call, const char* op) {
  const Tensor& a = call.arg(0);
  const Tensor& b = call.arg(1);
  const DType t = result_type({&a, &b}, op);
  LOOM_CHECK(t != DType::Bool, op, ": bool tensors are not supported");

  const TensorImpl* impl[2];
  DimVector sz[2], st[2];
  for (size_t i = 0; i < 2; ++i) {
    impl[i] = call.args[i]->impl();
    if (impl[i]->dtype() != t) {
      call.temps.push_back(call.args[i]->to(t));
      impl[i] = call.temps.back().impl();
    }
    as_matrix(*impl[i], i == 0, sz[i], st[i]);
  }
  const int64_t M = sz[0][sz[0].size() - 2], K = sz[0].back();
  const int64_t K2 = sz[1][sz[1].size() - 2], N = sz[1].back();
  LOOM_CHECK(K == K2, op, ": shapes cannot be multiplied (", shape_str(a.sizes()), " and ",
             shape_str(b.sizes()), "): inner dimensions ", K, " and ", K2, " differ");
  const DimVector batch = broadcast_shapes(op, IntArrayRef(sz[0].data(), sz[0].size() - 2),
                                           IntArrayRef(sz[1].data(), sz[1].size() - 2));

  if (call.inputs.size() < 2) call.inputs.resize(2);
  for (size_t i = 0; i < 2; ++i) {
    const size_t n = sz[i].size();
    DimVector ks(batch), kst = broadcast_strides(IntArrayRef(sz[i].data(), n - 2),
                                                 IntArrayRef(st[i].data(), n - 2), batch);
    ks.push_back(sz[i][n - 2]);
    ks.push_back(sz[i][n - 1]);
    kst.push_back(st[i][n - 2]);
    kst.push_back(st[i][n - 1]);
    call.inputs[i].tensor = impl[i];
    call.inputs[i].view = call.make_view(ks, kst);
  }
  call.compute_dtype = t;

  auto& plan = call.outputs.emplace_back();
  plan.dtype = t;
  plan.sizes = batch;
  if (a.dim() > 1) plan.sizes.push_back(M);
  if (b.dim() > 1) plan.sizes.push_back(N);
  DimVector kernel_sizes(batch);
  kernel_sizes.push_back(M);
  kernel_sizes.push_back(N);
  plan.kernel_view = call.make_view(kernel_sizes, contiguous_strides(kernel_sizes));
}

void check_rank(const char* op, const char* arg, const Tensor& t, int64_t rank) {
  LOOM_CHECK(t.dim() == rank, op, ": expected '", arg, "' to be a ", rank, "-D tensor, but got a ",
             t.dim(), "-D tensor of shape ", shape_str(t.sizes()));
}

// mm, bmm, dot and the fused ops take one dtype, as PyTorch's do.
void check_same_dtype(const char* op, std::initializer_list<std::pair<const char*, const Tensor*>> ts) {
  const auto& first = *ts.begin();
  for (const auto& [arg, t] : ts) {
    if (!t || !t->defined()) continue;
    LOOM_CHECK(t->dtype() == first.second->dtype(), op, ": expected '", arg, "' to have dtype ",
               name(first.second->dtype()), " like '", first.first, "', but got ", name(t->dtype()));
  }
}

void check_inner(const char* op, const Tensor& a, const Tensor& b, int64_t ka, int64_t kb) {
  LOOM_CHECK(a.size(ka) == b.size(kb), op, ": shapes cannot be multiplied (",
             shape_str(a.sizes()), " and ", shape_str(b.sizes()), "): inner dimensions ",
             a.size(ka), " and ", b.size(kb), " differ");
}

void check_mm(const char* op, const Tensor& m1, const Tensor& m2) {
  check_rank(op, "mat1", m1, 2);
  check_rank(op, "mat2", m2, 2);
  check_inner(op, m1, m2, 1, 0);
}

void check_bmm(const char* op, const Tensor& b1, const Tensor& b2) {
  check_rank(op, "batch1", b1, 3);
  check_rank(op, "batch2", b2, 3);
  LOOM_CHECK(b1.size(0) == b2.size(0), op, ": batch sizes differ: 'batch1' has ", b1.size(0),
             " matrices, 'batch2' has ", b2.size(0));
  check_inner(op, b1, b2, 2, 1);
}

// `self` of addmm/baddbmm must broadcast to the product's shape.
void check_addend(const char* op, const Tensor& self, IntArrayRef shape) {
  const DimVector b = broadcast_shapes(op, self.sizes(), shape);
  LOOM_CHECK(IntArrayRef(b) == shape, op, ": 'self' of shape ", shape_str(self.sizes()),
             " can't be broadcast to the product's shape ", shape_str(shape));
}

void prepare_matmul(OpCall& call) {
  LOOM_CHECK(call.arg(0).dim() >= 1 && call.arg(1).dim() >= 1,
             "matmul: both arguments need to be at least 1-D, but they are ", call.arg(0).dim(),
             "-D and ", call.arg(1).dim(), "-D");
  plan_product(call, "matmul");
}

void prepare_mm(OpCall& call) {
  check_mm("mm", call.arg(0), call.arg(1));
  check_same_dtype("mm", {{"self", &call.arg(0)}, {"mat2", &call.arg(1)}});
  plan_product(call, "mm");
}

void prepare_bmm(OpCall& call) {
  check_bmm("bmm", call.arg(0), call.arg(1));
  check_same_dtype("bmm", {{"self", &call.arg(0)}, {"mat2", &call.arg(1)}});
  plan_product(call, "bmm");
}

void prepare_dot(OpCall& call) {
  const Tensor& a = call.arg(0);
  const Tensor& b = call.arg(1);
  check_rank("dot", "self", a, 1);
  check_rank("dot", "tensor", b, 1);
  LOOM_CHECK(a.numel() == b.numel(), "dot: expected both vectors to have the same number of "
             "elements, but got ", a.numel(), " and ", b.numel());
  check_same_dtype("dot", {{"self", &a}, {"tensor", &b}});
  plan_product(call, "dot");
}

// Every device has a matmul (kernel or CPU fallback): mm/bmm/dot without a
// kernel of their own run it.
void product_via_matmul(OpCall& call) {
  call.outputs[0].result = matmul(call.arg(0), call.arg(1));
}

// outer(a, b)[i, j] = a[i] * b[j]: a broadcast multiply, so a device may
// register its mul kernel under "outer".
void prepare_outer(OpCall& call) {
  const Tensor& a = call.arg(0);
  const Tensor& b = call.arg(1);
  check_rank("outer", "self", a, 1);
  check_rank("outer", "vec2", b, 1);
  const DType t = result_type({&a, &b}, "outer");
  const int64_t shape[2] = {a.size(0), b.size(0)};
  call.inputs.resize(2);
  for (size_t i = 0; i < 2; ++i) {
    const Tensor* arg = call.args[i];
    const TensorImpl* impl = arg->impl();
    if (impl->dtype() != t) {
      call.temps.push_back(arg->to(t));
      impl = call.temps.back().impl();
    }
    const int64_t s = impl->strides()[0];
    const int64_t strides[2] = {i == 0 ? s : 0, i == 0 ? 0 : s};
    call.inputs[i].tensor = impl;
    call.inputs[i].view = call.make_view(IntArrayRef(shape, 2), IntArrayRef(strides, 2));
  }
  call.compute_dtype = t;
  auto& plan = call.outputs.emplace_back();
  plan.dtype = t;
  plan.sizes = DimVector(IntArrayRef(shape, 2));
}
void outer_via_mul(OpCall& call) {
  call.outputs[0].result = mul(call.arg(0).unsqueeze(1), call.arg(1).unsqueeze(0));
}

// Plans the fused ops' output (self broadcast to the product's shape; the
// products' operands as given) for a device kernel that fuses them.
void plan_fused(OpCall& call, IntArrayRef shape) {
  const DType t = call.arg(1).dtype();
  call.inputs.resize(call.args.size());
  for (size_t i = 0; i < call.args.size(); ++i) {
    const Tensor* a = call.args[i];
    call.inputs[i].tensor = a && a->defined() ? a->impl() : nullptr;
  }
  if (call.args[0] && call.args[0]->defined()) set_input(call, 0, t, shape);
  call.compute_dtype = t;
  auto& plan = call.outputs.emplace_back();
  plan.dtype = t;
  plan.sizes = DimVector(shape);
}

// beta and alpha as numbers of the tensors' dtype: integer tensors truncate
// them, as PyTorch does.
Scalar coefficient(const LoomValue& v, DType t) {
  const Scalar s = detail::scalar_from_value(v);
  return is_floating_point(t) ? Scalar(s.to_double()) : Scalar(s.to_int());
}

// beta * self + alpha * product, in place on the fresh product. beta == 0
// ignores self entirely (NaN and inf in it do not propagate).
Tensor finish_fused(Tensor product, const Tensor& self, const LoomValue& beta_v,
                    const LoomValue& alpha_v) {
  const Scalar beta = coefficient(beta_v, product.dtype());
  const Scalar alpha = coefficient(alpha_v, product.dtype());
  if (alpha.to_double() != 1.0) product.mul_(scalar_tensor(alpha, product.device()));
  if (beta.to_double() != 0.0) product.add_(self, beta);
  return product;
}

// addmm (Rank 2: mm) and baddbmm (Rank 3: bmm).
template <int Rank>
void prepare_add_product(OpCall& call) {
  constexpr bool mat = Rank == 2;
  const char* op = mat ? "addmm" : "baddbmm";
  const Tensor& self = call.arg(0);
  const Tensor& x = call.arg(1);
  const Tensor& y = call.arg(2);
  mat ? check_mm(op, x, y) : check_bmm(op, x, y);
  check_same_dtype(op, {{mat ? "mat1" : "batch1", &x}, {mat ? "mat2" : "batch2", &y}, {"self", &self}});
  LOOM_CHECK(x.dtype() != DType::Bool, op, ": bool tensors are not supported");
  DimVector shape(x.sizes());
  shape.back() = y.size(-1);
  check_addend(op, self, shape);
  plan_fused(call, shape);
}
template <int Rank>
void add_product_composite(OpCall& call) {
  Tensor product = Rank == 2 ? mm(call.arg(1), call.arg(2)) : bmm(call.arg(1), call.arg(2));
  call.outputs[0].result = finish_fused(std::move(product), call.arg(0), call.values[0], call.values[1]);
}

// linear(input, weight, bias): input [*, in], weight [out, in] or [in],
// bias broadcastable to the result.
void prepare_linear(OpCall& call) {
  const Tensor& input = call.arg(0);
  const Tensor& weight = call.arg(1);
  const Tensor* bias = call.args[2];
  LOOM_CHECK(input.dim() >= 1, "linear: 'input' must be at least 1-D, but got a 0-D tensor");
  LOOM_CHECK(weight.dim() == 1 || weight.dim() == 2,
             "linear: 'weight' must be 1-D [in_features] or 2-D [out_features, in_features], "
             "but got shape ", shape_str(weight.sizes()));
  const int64_t in = weight.size(-1);
  LOOM_CHECK(input.size(-1) == in, "linear: 'input' has ", input.size(-1),
             " features in its last dimension (shape ", shape_str(input.sizes()),
             ") but 'weight' of shape ", shape_str(weight.sizes()), " expects ", in);
  check_same_dtype("linear", {{"input", &input}, {"weight", &weight}, {"bias", bias}});
  LOOM_CHECK(input.dtype() != DType::Bool, "linear: bool tensors are not supported");
  DimVector shape(input.sizes());
  shape.pop_back();
  if (weight.dim() == 2) shape.push_back(weight.size(0));
  if (bias && bias->defined()) {
    const DimVector b = broadcast_shapes("linear", bias->sizes(), shape);
    LOOM_CHECK(IntArrayRef(b) == IntArrayRef(shape), "linear: 'bias' of shape ",
               shape_str(bias->sizes()), " can't be broadcast to the output's shape ",
               shape_str(shape));
  }
  // Plan: output [*, out]; a fused kernel reads input, weight and bias as given.
  call.inputs.resize(3);
  for (size_t i = 0; i < 3; ++i) {
    const Tensor* a = call.args[i];
    call.inputs[i].tensor = a && a->defined() ? a->impl() : nullptr;
  }
  call.compute_dtype = input.dtype();
  auto& plan = call.outputs.emplace_back();
  plan.dtype = input.dtype();
  plan.sizes = shape;
}
void linear_composite(OpCall& call) {
  const Tensor& weight = call.arg(1);
  // weight.t() is a view: the matmul kernel reads it transposed, no copy.
  Tensor out = matmul(call.arg(0), weight.dim() == 2 ? weight.t() : weight);
  if (call.args[2] && call.args[2]->defined()) out.add_(*call.args[2]);
  call.outputs[0].result = out;
}

LOOM_CORE_OP(matmul_op, "matmul(Tensor self, Tensor other) -> Tensor", prepare_matmul, nullptr)
LOOM_CORE_OP(mm_op, "mm(Tensor self, Tensor mat2) -> Tensor", prepare_mm, product_via_matmul)
LOOM_CORE_OP(bmm_op, "bmm(Tensor self, Tensor mat2) -> Tensor", prepare_bmm, product_via_matmul)
LOOM_CORE_OP(dot_op, "dot(Tensor self, Tensor tensor) -> Tensor", prepare_dot, product_via_matmul)
LOOM_CORE_OP(outer_op, "outer(Tensor self, Tensor vec2) -> Tensor", prepare_outer, outer_via_mul)
// d(a @ b): g @ b^T and a^T @ g, with 1-D operands read as a row (a) or a
// column (b) and batch broadcasting summed away by the node.
LOOM_DERIVATIVE(matmul_op, "MatmulBackward0", autograd::inputs(0, 1), autograd::none(),
                [](autograd::BackwardContext& c) {
                  const Tensor a = c.input(0), b = c.input(1);
                  const bool a1 = a.dim() == 1, b1 = b.dim() == 1;
                  const Tensor a2 = a1 ? a.unsqueeze(0) : a;
                  const Tensor b2 = b1 ? b.unsqueeze(1) : b;
                  Tensor g = c.grad();
                  if (b1) g = g.unsqueeze(-1);
                  if (a1) g = g.unsqueeze(g.dim() - 1);
                  if (c.needs_grad(0)) {
                    Tensor ga = matmul(g, b2.transpose(-1, -2));
                    c.set(0, a1 ? ga.squeeze(-2) : ga);
                  }
                  if (c.needs_grad(1)) {
                    Tensor gb = matmul(a2.transpose(-1, -2), g);
                    c.set(1, b1 ? gb.squeeze(-1) : gb);
                  }
                })
// PyTorch's matmul is a composite; its result's node is that of the op it
// reduces to: dot, mv, mm, and a view over bmm/mm for the rest.
LOOM_DERIVATIVE_NAME(matmul_op, [](const OpCall& call) {
  const int64_t a = call.arg(0).dim(), b = call.arg(1).dim();
  if (a == 1 && b == 1) return "DotBackward0";
  if (a == 2 && b == 1) return "MvBackward0";
  if (a == 2 && b == 2) return "MmBackward0";
  if (a == 1 && b == 2) return "SqueezeBackward4";
  return "UnsafeViewBackward0";
})

LOOM_CORE_OP(addmm_op,
             "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
             prepare_add_product<2>, add_product_composite<2>)
LOOM_CORE_OP(baddbmm_op,
             "baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
             prepare_add_product<3>, add_product_composite<3>)
LOOM_CORE_OP(linear_op, "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
             prepare_linear, linear_composite)

// mm, bmm, addmm and baddbmm share one shape of derivative: with
// out = beta * self + alpha * (a @ b), d a = alpha g b^T, d b = alpha a^T g,
// d self = beta g. `product` is mm or bmm, so the gradients (and their own
// derivatives) stay on the fixed-rank kernels. `a_at` is a's argument index.
template <Tensor (*product)(const Tensor&, const Tensor&)>
void product_backward(autograd::BackwardContext& c, size_t a_at, double alpha) {
  const Tensor g = alpha == 1.0 ? c.grad() : c.grad() * alpha;
  if (c.needs_grad(a_at)) c.set(a_at, product(g, c.input(a_at + 1).transpose(-1, -2)));
  if (c.needs_grad(a_at + 1)) c.set(a_at + 1, product(c.input(a_at).transpose(-1, -2), g));
}
template <Tensor (*product)(const Tensor&, const Tensor&)>
void add_product_backward(autograd::BackwardContext& c) {
  const double beta = c.scalar(0).to_double();
  if (c.needs_grad(0) && beta != 0.0) c.set(0, beta == 1.0 ? c.grad() : c.grad() * beta);
  product_backward<product>(c, 1, c.scalar(1).to_double());
}

LOOM_DERIVATIVE(mm_op, "MmBackward0", autograd::inputs(0, 1), autograd::none(),
                [](autograd::BackwardContext& c) { product_backward<mm>(c, 0, 1.0); })
LOOM_DERIVATIVE(bmm_op, "BmmBackward0", autograd::inputs(0, 1), autograd::none(),
                [](autograd::BackwardContext& c) { product_backward<bmm>(c, 0, 1.0); })
LOOM_DERIVATIVE(addmm_op, "AddmmBackward0", autograd::inputs(1, 2), autograd::none(), add_product_backward<mm>)
LOOM_DERIVATIVE(baddbmm_op, "BaddbmmBackward0", autograd::inputs(1, 2), autograd::none(),
                add_product_backward<bmm>)
LOOM_DERIVATIVE(dot_op, "DotBackward0", autograd::inputs(0, 1), autograd::none(),
                [](autograd::BackwardContext& c) {
                  if (c.needs_grad(0)) c.set(0, c.grad() * c.input(1));
                  if (c.needs_grad(1)) c.set(1, c.grad() * c.input(0));
                })
// linear: one node instead of the composite's matmul and in-place bias add
// (which copies the output once more). The leading dims of input and grad
// are merged so the weight's gradient is one matrix product.
LOOM_DERIVATIVE(linear_op, "LinearBackward0", autograd::inputs(0, 1), autograd::none(),
                [](autograd::BackwardContext& c) {
                  const Tensor input = c.input(0), weight = c.input(1);
                  const int64_t in = weight.size(-1);
                  // The gradient with an [.., out] last dim, even for a 1-D weight.
                  const Tensor g = weight.dim() == 1 ? c.grad().unsqueeze(-1) : c.grad();
                  const Tensor w = weight.dim() == 1 ? weight.unsqueeze(0) : weight;
                  if (c.needs_grad(0)) c.set(0, matmul(g, w));
                  if (c.needs_grad(1)) {
                    const Tensor gw = matmul(g.reshape({-1, g.size(-1)}).t(), input.reshape({-1, in}));
                    c.set(1, weight.dim() == 1 ? gw.squeeze(0) : gw);
                  }
                  if (c.needs_grad(2)) c.set(2, c.grad());
                })
// PyTorch's linear is addmm (mm without a bias) on a 2-d input, and a view
// of that over the flattened batch dims otherwise.
LOOM_DERIVATIVE_NAME(linear_op, [](const OpCall& call) {
  const bool bias = call.args[2] && call.args[2]->defined();
  const int64_t d = call.arg(0).dim();
  if (d == 2) return bias ? "AddmmBackward0" : "MmBackward0";
  if (d == 1) return bias ? "ViewBackward0" : "SqueezeBackward4";
  return bias ? "ViewBackward0" : "UnsafeViewBackward0";
})

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) { return detail::run_op(matmul_op(), {&a, &b}); }
Tensor mm(const Tensor& a, const Tensor& b) { return detail::run_op(mm_op(), {&a, &b}); }
Tensor bmm(const Tensor& a, const Tensor& b) { return detail::run_op(bmm_op(), {&a, &b}); }
Tensor dot(const Tensor& a, const Tensor& b) { return detail::run_op(dot_op(), {&a, &b}); }
Tensor outer(const Tensor& a, const Tensor& b) { return detail::run_op(outer_op(), {&a, &b}); }
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, Scalar beta, Scalar alpha) {
  return detail::run_op(addmm_op(), {&self, &mat1, &mat2}, {beta.abi(), alpha.abi()});
}
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, Scalar beta,
               Scalar alpha) {
  return detail::run_op(baddbmm_op(), {&self, &batch1, &batch2}, {beta.abi(), alpha.abi()});
}
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  return detail::run_op(linear_op(), {&input, &weight, bias ? &*bias : nullptr});
}
Tensor& matmul_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return detail::run_op_out(out, matmul_op(), {&a, &b});
}
Tensor& mm_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return detail::run_op_out(out, mm_op(), {&a, &b});
}
Tensor& bmm_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return detail::run_op_out(out, bmm_op(), {&a, &b});
}
Tensor& addmm_out(Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                  Scalar beta, Scalar alpha) {
  return detail::run_op_out(out, addmm_op(), {&self, &mat1, &mat2}, {beta.abi(), alpha.abi()});
}
Tensor Tensor::matmul(const Tensor& o) const { return loom::matmul(*this, o); }

}  // namespace loom
