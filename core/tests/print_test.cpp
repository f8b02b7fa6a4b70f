// repr strings checked against what PyTorch prints for the same tensors.
#include <catch2/catch.hpp>
#include <loom/loom.h>

#include <cmath>

using loom::DType;

TEST_CASE("printing matches PyTorch's repr") {
  CHECK(loom::arange(6, DType::Float32).view({2, 3}).str() ==
        "tensor([[0., 1., 2.],\n        [3., 4., 5.]])");
  CHECK(loom::from_vector<float>({1.5f, 2.25f}, {2}).str() == "tensor([1.5000, 2.2500])");
  CHECK(loom::from_vector<int32_t>({1, 2}, {2}).str() == "tensor([1, 2], dtype=loom.int32)");
  CHECK(loom::full({}, 3.0).str() == "tensor(3.)");
  CHECK(loom::from_vector<bool>({true, false}, {2}).str() == "tensor([ True, False])");
  CHECK(loom::zeros({0}).str() == "tensor([])");
  CHECK(loom::zeros({2, 0}).str() == "tensor([], size=(2, 0))");
  CHECK(loom::from_vector<float>({1e-5f, 1.0f}, {2}).str() == "tensor([1.0000e-05, 1.0000e+00])");
  CHECK(loom::from_vector<float>({-1.f, 2.f}, {2}).str() == "tensor([-1.,  2.])");
  CHECK(loom::ones({2}, DType::Float16).str() == "tensor([1., 1.], dtype=loom.float16)");
  CHECK(loom::from_vector<float>({NAN, 1.5f}, {2}).str() == "tensor([   nan, 1.5000])");
  CHECK(loom::arange(8).view({2, 2, 2}).str() ==
        "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]])");
  CHECK(loom::arange(2000).str() == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  // Integer-valued floats spanning more than 1e3 switch to scientific notation.
  CHECK(loom::arange(2000, DType::Float32).str() ==
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
        "        1.9990e+03])");
}

TEST_CASE("long rows wrap at 80 columns like PyTorch") {
  CHECK(loom::arange(30).str() ==
        "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
        "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29])");
}

TEST_CASE("non-CPU tensors print their device") {
  auto t = loom::ones({2}).to(loom::Device("sim"));
  CHECK(t.str() == "tensor([1., 1.], device='sim:0')");
}
