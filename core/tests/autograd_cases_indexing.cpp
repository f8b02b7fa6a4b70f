// autograd_cases_indexing.cpp — gradcheck cases for the indexing family (see autograd_cases.h):
// gather, index_select, scatter, scatter_add, index_add, masked_fill, masked_select, embedding,
// dropout; and plain tests for the C++ functions built on them (advanced indexing, masked_fill
// with a tensor value).
#include "autograd_cases.h"

#include <catch2/catch.hpp>

using loom::Tensor;
using loom_test::Args;
using loom_test::arg;
using loom_test::GradCase;
using loom_test::out;
using loom_test::strided_arg;

namespace {

Tensor ints(const std::vector<int64_t>& v, std::vector<int64_t> shape) { return loom::from_vector<int64_t>(v, shape); }
Tensor ints32(const std::vector<int32_t>& v, std::vector<int64_t> shape) {
  return loom::from_vector<int32_t>(v, shape);
}
Tensor mask(const std::vector<bool>& v, std::vector<int64_t> shape) { return loom::from_vector<bool>(v, shape); }

// Both checks on a function of the inputs.
void check_both(const char* label, const loom::autograd::GradcheckFn& fn, const Args& inputs) {
  INFO(label);
  CHECK_NOTHROW(loom::autograd::gradcheck(fn, inputs));
  CHECK_NOTHROW(loom::autograd::gradgradcheck(fn, inputs));
}

}  // namespace

LOOM_GRAD_CASES("gather", [] {
  return std::vector<GradCase>{
      {"dim 1, repeated indices", {arg({3, 4})},
       [](const Args& x) { return out(loom::gather(x[0], 1, ints({0, 3, 3, 1, 2, 2}, {3, 2}))); }},
      {"negative dim, index smaller than self, strided", {strided_arg({4, 3})},
       [](const Args& x) { return out(loom::gather(x[0], -2, ints({3, 0, 1, 1}, {2, 2}))); }},
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::gather(x[0], 0, ints({0}, {}))); }}};
})
LOOM_GRAD_CASES("index_select", [] {
  return std::vector<GradCase>{
      {"dim 0, repeated indices", {arg({4, 3})},
       [](const Args& x) { return out(loom::index_select(x[0], 0, ints({2, 0, 2}, {3}))); }},
      {"negative dim, int32 index, strided", {strided_arg({3, 4})},
       [](const Args& x) { return out(loom::index_select(x[0], -1, ints32({3, 1}, {2}))); }},
      {"0-d index", {arg({3, 2})}, [](const Args& x) { return out(loom::index_select(x[0], 1, ints({1}, {}))); }},
      {"0-d self", {arg({})}, [](const Args& x) { return out(loom::index_select(x[0], 0, ints({0}, {1}))); }}};
})
// Scatter without duplicate targets: with them the last write wins and the
// others have no derivative.
LOOM_GRAD_CASES("scatter.src", [] {
  return std::vector<GradCase>{
      {"dim 0", {arg({3, 4}), arg({2, 4})},
       [](const Args& x) { return out(loom::scatter(x[0], 0, ints({0, 2, 1, 0, 2, 0, 0, 1}, {2, 4}), x[1])); }},
      {"index smaller than src, strided self", {strided_arg({4, 3}), arg({3, 3})},
       [](const Args& x) { return out(loom::scatter(x[0], -1, ints({0, 2, 1, 0}, {2, 2}), x[1])); }},
      {"0-d src", {arg({5}), arg({})},
       [](const Args& x) { return out(loom::scatter(x[0], 0, ints({1, 3}, {2}), x[1])); }},
      {"in place on a non-leaf", {arg({3, 2}), arg({1, 2})}, [](const Args& x) {
         Tensor y = x[0] * 2.0;
         loom::scatter_(y, 0, ints({2, 0}, {1, 2}), x[1]);
         return out(y * y);
       }}};
})
LOOM_GRAD_CASES("scatter.value", [] {
  return std::vector<GradCase>{
      {"dim 1", {arg({3, 4})},
       [](const Args& x) { return out(loom::scatter(x[0], 1, ints({3, 0, 1, 1, 2, 0}, {3, 2}), 2.5)); }},
      {"in place on a strided non-leaf", {strided_arg({2, 3})}, [](const Args& x) {
         Tensor y = x[0] * 2.0;
         loom::scatter_(y, 0, ints({1, 0}, {1, 2}), -1.0);
         return out(y * y);
       }}};
})
LOOM_GRAD_CASES("scatter_add", [] {
  return std::vector<GradCase>{
      {"dim 0, repeated targets", {arg({3, 4}), arg({2, 4})},
       [](const Args& x) { return out(loom::scatter_add(x[0], 0, ints({0, 2, 1, 0, 0, 2, 1, 0}, {2, 4}), x[1])); }},
      {"index smaller than src, strided src", {arg({2, 5}), strided_arg({2, 4})},
       [](const Args& x) { return out(loom::scatter_add(x[0], 1, ints({4, 4, 0}, {1, 3}), x[1])); }},
      {"in place on a non-leaf", {arg({4}), arg({3})}, [](const Args& x) {
         Tensor y = x[0] * x[0];
         loom::scatter_add_(y, 0, ints({3, 3, 1}, {3}), x[1]);
         return out(y);
       }}};
})
LOOM_GRAD_CASES("index_add", [] {
  return std::vector<GradCase>{
      {"dim 0, repeated indices", {arg({4, 3}), arg({3, 3})},
       [](const Args& x) { return out(loom::index_add(x[0], 0, ints({1, 3, 1}, {3}), x[1])); }},
      {"alpha, negative dim, int32 index, strided self", {strided_arg({3, 4}), arg({3, 2})},
       [](const Args& x) { return out(loom::index_add(x[0], -1, ints32({2, 0}, {2}), x[1], 2.5)); }},
      {"0-d index and source", {arg({3}), arg({})},
       [](const Args& x) { return out(loom::index_add(x[0], 0, ints({2}, {}), x[1])); }},
      {"in place on a non-leaf", {arg({2, 3}), arg({2, 2})}, [](const Args& x) {
         Tensor y = x[0] * 3.0;
         loom::index_add_(y, 1, ints({0, 0}, {2}), x[1], -0.5);
         return out(y * y);
       }}};
})
LOOM_GRAD_CASES("masked_fill.Scalar", [] {
  return std::vector<GradCase>{
      {"mask broadcast", {arg({2, 3})},
       [](const Args& x) { return out(loom::masked_fill(x[0], mask({true, false, true}, {3}), 0.5)); }},
      {"self broadcast to the mask", {arg({3})},
       [](const Args& x) {
         return out(loom::masked_fill(x[0], mask({true, false, false, false, true, false}, {2, 3}), -1));
       }},
      {"in place on a strided non-leaf", {strided_arg({2, 3})}, [](const Args& x) {
         Tensor y = x[0] * 2.0;
         loom::masked_fill_(y, mask({false, true, true, false, false, true}, {2, 3}), 2.0);
         return out(y * y);
       }},
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::masked_fill(x[0], mask({false}, {}), 1.0)); }}};
})
LOOM_GRAD_CASES("masked_select", [] {
  return std::vector<GradCase>{
      {"mask broadcast", {arg({2, 3})},
       [](const Args& x) { return out(loom::masked_select(x[0], mask({true, false, true}, {3}))); }},
      {"self broadcast to the mask", {arg({3})},
       [](const Args& x) {
         return out(loom::masked_select(x[0], mask({true, true, false, false, true, true}, {2, 3})));
       }},
      {"strided", {strided_arg({3, 2})},
       [](const Args& x) {
         return out(loom::masked_select(x[0], mask({false, true, true, true, false, true}, {3, 2})));
       }},
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::masked_select(x[0], mask({true}, {}))); }},
      {"nothing selected, with another output", {arg({2})}, [](const Args& x) {
         return std::vector<Tensor>{loom::masked_select(x[0], mask({false, false}, {2})), x[0] * x[0]};
       }}};
})
// The padding row gets no gradient although the output reads it (as
// PyTorch), so these cases zero the rows that read it; the plain test below
// checks the gradient itself.
LOOM_GRAD_CASES("embedding", [] {
  return std::vector<GradCase>{
      {"repeated indices", {arg({5, 3})},
       [](const Args& x) { return out(loom::embedding(x[0], ints({4, 1, 4, 0, 1, 4}, {2, 3}))); }},
      {"padding_idx", {arg({4, 2})},
       [](const Args& x) {
         const Tensor idx = ints({0, 2, 2, 3}, {4});
         return out(loom::embedding(x[0], idx, 2) * loom::ne(idx, 2).unsqueeze(1));
       }},
      {"negative padding_idx, int32 indices, strided weight", {strided_arg({4, 3})},
       [](const Args& x) {
         const Tensor idx = ints32({3, 1, 3, 0}, {2, 2});
         return out(loom::embedding(x[0], idx, -1) * loom::ne(idx, 3).unsqueeze(2));
       }},
      {"0-d indices", {arg({3, 2})}, [](const Args& x) { return out(loom::embedding(x[0], ints({1}, {}))); }}};
})
// Each evaluation seeds the generator first, so every one draws the same mask.
LOOM_GRAD_CASES("dropout", [] {
  return std::vector<GradCase>{
      {"p 0.3", {arg({4, 5})},
       [](const Args& x) {
         loom::manual_seed(7);
         return out(loom::dropout(x[0], 0.3));
       }},
      {"strided", {strided_arg({3, 4})},
       [](const Args& x) {
         loom::manual_seed(11);
         return out(loom::dropout(x[0], 0.5));
       }},
      {"in place on a non-leaf", {arg({6})},
       [](const Args& x) {
         loom::manual_seed(3);
         Tensor y = x[0] * 2.0;
         loom::dropout_(y, 0.4);
         return out(y * y);
       }},
      {"0-d", {arg({})}, [](const Args& x) {
         loom::manual_seed(5);
         return out(loom::dropout(x[0], 0.2));
       }}};
})

// ---- C++ functions built on the ops above ---------------------------------------------

TEST_CASE("autograd: advanced indexing (index) with integer and bool indices", "[autograd]") {
  const Tensor x = arg({3, 4, 2});
  check_both("repeated and negative indices",
             [](const Args& a) { return out(loom::index(a[0], {ints({2, 0, 2, -1}, {4})})); }, {x});
  check_both("adjacent advanced dims",
             [](const Args& a) { return out(loom::index(a[0], {std::nullopt, ints({1, 3, 1}, {3}), ints({0}, {1})})); },
             {x});
  check_both("separated advanced dims, int32",
             [](const Args& a) {
               return out(loom::index(a[0], {ints({0, 2}, {2, 1}), std::nullopt, ints32({1, 1}, {2})}));
             },
             {x});
  check_both("into a tensor that needs no grad",
             [](const Args& a) {
               Tensor y = loom::zeros({3, 2}, loom::DType::Float64);
               loom::index_put_(y, {ints({0, 2, 0}, {3})}, a[0], /*accumulate=*/true);
               return out(y * y);
             },
             {arg({3, 2})});
  check_both("bool mask", [](const Args& a) { return out(loom::index(a[0], {mask({true, false, true}, {3})})); }, {x});
  check_both("2-d bool mask, strided",
             [](const Args& a) {
               const Tensor m =
                   mask({true, false, false, true, false, true, false, true, true, false, false, false}, {3, 4});
               return out(loom::index(a[0], {m}));
             },
             {strided_arg({3, 4})});
}

TEST_CASE("autograd: index_put_ with and without accumulate", "[autograd]") {
  // Without accumulate the targets are distinct (a repeated one's losing
  // writes have no derivative); with it, repeats add.
  check_both("in place",
             [](const Args& a) {
               Tensor y = a[0] * 1.0;
               loom::index_put_(y, {ints({2, 0}, {2})}, a[1]);
               return out(y * y);
             },
             {arg({3, 2}), arg({2, 2})});
  check_both("in place, accumulate, repeated indices",
             [](const Args& a) {
               Tensor y = a[0] * 1.0;
               loom::index_put_(y, {ints({1, 1, 0, 1}, {4})}, a[1], /*accumulate=*/true);
               return out(y * y);
             },
             {arg({3, 2}), arg({2})});
  // Separated advanced dims of a non-contiguous self: the staged path.
  check_both("separated dims, accumulate, repeated indices",
             [](const Args& a) {
               const loom::TensorIndices at = {ints({0, 2, 0}, {3}), std::nullopt, ints({1, 0, 1}, {3})};
               return out(loom::index_put(a[0], at, a[1], /*accumulate=*/true));
             },
             {strided_arg({3, 2, 2}), arg({3, 2})});
  check_both("separated dims",
             [](const Args& a) {
               return out(loom::index_put(a[0], {ints({1, 0}, {2}), std::nullopt, ints({1, 0}, {2})}, a[1]));
             },
             {strided_arg({2, 3, 2}), arg({3})});
  check_both("into a tensor that needs no grad",
             [](const Args& a) {
               Tensor y = loom::zeros({3, 2}, loom::DType::Float64);
               loom::index_put_(y, {ints({0, 2, 0}, {3})}, a[0], /*accumulate=*/true);
               return out(y * y);
             },
             {arg({3, 2})});
  check_both("bool mask",
             [](const Args& a) { return out(loom::index_put(a[0], {mask({false, true, true}, {3})}, a[1])); },
             {arg({3, 2}), arg({2})});
  check_both("2-d bool mask, accumulate",
             [](const Args& a) {
               return out(loom::index_put(a[0], {mask({true, false, true, true}, {2, 2})}, a[1], true));
             },
             {strided_arg({2, 2}), arg({3})});
}

TEST_CASE("autograd: masked_fill with a tensor value that requires grad", "[autograd]") {
  const Tensor m = mask({true, false, true}, {3});
  check_both("out of place", [m](const Args& a) { return out(loom::masked_fill(a[0], m, a[1])); },
             {arg({2, 3}), arg({})});
  check_both("in place",
             [m](const Args& a) {
               Tensor y = a[0] * 2.0;
               loom::masked_fill_(y, m, a[1]);
               return out(y * y);
             },
             {arg({2, 3}), arg({})});
}
TEST_CASE("autograd: embedding's weight gradient adds repeated rows and skips padding_idx", "[autograd]") {
  const Tensor w = arg({4, 2});
  loom::embedding(w, ints({3, 0, 3, 1, 3}, {5}), 1).sum().backward();
  CHECK(w.grad().to_vector<double>() == std::vector<double>{1, 1, 0, 0, 0, 0, 3, 3});
}
