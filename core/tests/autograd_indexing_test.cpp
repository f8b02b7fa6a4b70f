// autograd_indexing_test.cpp — gradient tests of the C++ functions built on the indexing
// ops (advanced indexing, index_put_, masked_fill with a tensor value, embedding).
#include <loom/opinfo.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using loom::Tensor;
using namespace loom::opinfo;

namespace {

// Both checks on a function of the inputs.
void check_both(const char* label, const loom::autograd::GradcheckFn& fn, const Args& inputs) {
  INFO(label);
  CHECK_NOTHROW(loom::autograd::gradcheck(fn, inputs));
  CHECK_NOTHROW(loom::autograd::gradgradcheck(fn, inputs));
}
}  // namespace

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
