// ops_linalg.cpp — matmul with torch.matmul's rules for 1-D, 2-D and batched
// operands. The kernel always sees [B..., M, K] x [B..., K, N].
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

void prepare_matmul(OpCall& call) {
  const Tensor& a = call.arg(0);
  const Tensor& b = call.arg(1);
  const char* op = "matmul";
  LOOM_CHECK(a.dim() >= 1 && b.dim() >= 1, op,
             ": both arguments need to be at least 1-D, but they are ", a.dim(), "-D and ",
             b.dim(), "-D");
  const DType t = result_type(call);
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

  call.inputs.resize(2);
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

LOOM_CORE_OP(matmul_op, "matmul(Tensor self, Tensor other) -> Tensor", prepare_matmul, nullptr)

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) { return detail::run_op(matmul_op(), {&a, &b}); }
Tensor Tensor::matmul(const Tensor& o) const { return loom::matmul(*this, o); }

}  // namespace loom
