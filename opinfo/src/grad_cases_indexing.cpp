// grad_cases_indexing.cpp — gradcheck cases for the indexing family (see loom/opinfo.h):
// gather, index_select, scatter, scatter_add, index_add, masked_fill, masked_select, embedding,
// dropout.
#include <loom/opinfo.h>

using loom::Tensor;
using namespace loom::opinfo;

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
