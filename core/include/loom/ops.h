// loom/ops.h — the op catalog as C++ functions.
//
// Each function fills an OpCall and dispatches it (loom/op_call.h); the op's
// schema, shape/dtype rule and (later) derivative sit together in
// core/src/ops_*.cpp.
#pragma once

#include <loom/tensor.h>

#include <cstdint>
#include <optional>

namespace loom {

// ---- creation ----------------------------------------------------------------
Tensor empty(IntArrayRef sizes, DType dtype = DType::Float32, Device device = cpu_device());
Tensor zeros(IntArrayRef sizes, DType dtype = DType::Float32, Device device = cpu_device());
Tensor ones(IntArrayRef sizes, DType dtype = DType::Float32, Device device = cpu_device());
Tensor full(IntArrayRef sizes, Scalar value, std::optional<DType> dtype = std::nullopt,
            Device device = cpu_device());
// [start, end) with step; dtype int64 when all are integers, else float32.
Tensor arange(Scalar end, std::optional<DType> dtype = std::nullopt, Device device = cpu_device());
Tensor arange(Scalar start, Scalar end, Scalar step = 1, std::optional<DType> dtype = std::nullopt,
              Device device = cpu_device());
Tensor rand(IntArrayRef sizes, DType dtype = DType::Float32, Device device = cpu_device());
Tensor randn(IntArrayRef sizes, DType dtype = DType::Float32, Device device = cpu_device());
Tensor empty_like(const Tensor& t);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
// A 0-d tensor holding `value` on `device`, marked as a wrapped number so it
// takes part in type promotion like a Python number.
Tensor scalar_tensor(Scalar value, Device device);

// ---- random numbers ------------------------------------------------------------
// Seeds the default generator; streams are reproducible on every device.
void manual_seed(uint64_t seed);

// ---- elementwise -----------------------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);  // true division
Tensor neg(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor exp(const Tensor& a);

// ---- reductions --------------------------------------------------------------------
Tensor sum(const Tensor& a, std::optional<DType> dtype = std::nullopt);
Tensor sum(const Tensor& a, IntArrayRef dim, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);

// ---- linear algebra ------------------------------------------------------------------
// torch.matmul: 1-D and 2-D operands, and batched N-D with broadcast batch dims.
Tensor matmul(const Tensor& a, const Tensor& b);

// ---- operators -------------------------------------------------------------------------
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Tensor& b);

}  // namespace loom
