// PyTorch's promotion table (torch.promote_types) for a representative set.
#include <catch2/catch.hpp>
#include <loom/loom.h>
#include <loom/plugin.hpp>

using loom::DType;

TEST_CASE("promote_types follows torch.promote_types") {
  struct Row { DType a, b, want; };
  const Row rows[] = {
      {DType::Bool, DType::Bool, DType::Bool},
      {DType::Bool, DType::UInt8, DType::UInt8},
      {DType::Bool, DType::Float16, DType::Float16},
      {DType::UInt8, DType::Int8, DType::Int16},
      {DType::UInt8, DType::Int16, DType::Int16},
      {DType::UInt8, DType::Int32, DType::Int32},
      {DType::Int8, DType::Int16, DType::Int16},
      {DType::Int32, DType::Int64, DType::Int64},
      {DType::Int64, DType::Float16, DType::Float16},
      {DType::Int64, DType::BFloat16, DType::BFloat16},
      {DType::Float16, DType::BFloat16, DType::Float32},
      {DType::Float16, DType::Float32, DType::Float32},
      {DType::BFloat16, DType::Float64, DType::Float64},
      {DType::Float32, DType::Float64, DType::Float64},
      {DType::UInt8, DType::Float32, DType::Float32},
  };
  for (const auto& r : rows) {
    INFO(loom::name(r.a) << " with " << loom::name(r.b));
    CHECK(loom::promote_types(r.a, r.b) == r.want);
    CHECK(loom::promote_types(r.b, r.a) == r.want);
  }
}

TEST_CASE("dtype names round-trip and sizes match the ABI") {
  for (int code = 0; code < loom::kNumDTypes; ++code) {
    auto t = static_cast<DType>(code);
    CHECK(loom::dtype_from_name(loom::name(t)) == t);
    CHECK(loom::itemsize(t) == loom::plugin::dtype_itemsize(code));
  }
  CHECK(loom::dtype_from_name("double") == DType::Float64);
  CHECK_THROWS_WITH(loom::dtype_from_name("float8"), Catch::Contains("unknown dtype 'float8'"));
}

TEST_CASE("result_type: dimensioned tensors beat 0-d tensors and numbers of the same category") {
  auto i32 = loom::zeros({3}, DType::Int32);
  auto f16 = loom::zeros({3}, DType::Float16);
  auto zero_d_f64 = loom::zeros({}, DType::Float64);
  auto zero_d_i64 = loom::zeros({}, DType::Int64);
  CHECK((i32 + zero_d_i64).dtype() == DType::Int32);      // same category: tensor wins
  CHECK((i32 + zero_d_f64).dtype() == DType::Float64);    // higher category: 0-d counts
  CHECK((f16 + zero_d_f64).dtype() == DType::Float16);
  CHECK((i32 + 2.5).dtype() == DType::Float32);           // a float number: default float
  CHECK((i32 + 2).dtype() == DType::Int32);
  CHECK((f16 * 3).dtype() == DType::Float16);
  CHECK((i32 / i32).dtype() == DType::Float32);           // true division
  CHECK((zero_d_i64 + 1.5).dtype() == DType::Float32);
}

TEST_CASE("numbers keep full precision: float64 tensor times 0.1 is exact, float32 rounds once") {
  auto f64 = loom::full({2}, 3.0, DType::Float64);
  const auto d = (f64 * 0.1).to_vector<double>();
  CHECK(d[0] == 3.0 * 0.1);  // a float32 0.1 would give 0.30000000447...
  CHECK(d[1] == 3.0 * 0.1);
  auto f32 = loom::full({1}, 3.0, DType::Float32);
  const auto r = f32 * 0.1;
  CHECK(r.dtype() == DType::Float32);
  CHECK(r.to_vector<float>()[0] == 3.0f * 0.1f);
  auto i64 = loom::full({1}, int64_t{1} << 60, DType::Int64);
  CHECK((i64 + 1).to_vector<int64_t>()[0] == (int64_t{1} << 60) + 1);
}
