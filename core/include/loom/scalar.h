// loom/scalar.h — a Python-like number: bool, integer or floating.
#pragma once

#include <loom/dtype.h>
#include <loom/plugin_api.h>

#include <cstdint>
#include <ostream>
#include <type_traits>

namespace loom {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool b) : kind_(Kind::Bool) { v_.i = b; }  // NOLINT
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T i) : kind_(Kind::Int) {  // NOLINT
    v_.i = static_cast<int64_t>(i);
  }
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T f) : kind_(Kind::Float) {  // NOLINT
    v_.f = static_cast<double>(f);
  }

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  double to_double() const { return kind_ == Kind::Float ? v_.f : static_cast<double>(v_.i); }
  int64_t to_int() const { return kind_ == Kind::Float ? static_cast<int64_t>(v_.f) : v_.i; }
  template <class T>
  T to() const {
    if constexpr (std::is_floating_point_v<T>) return static_cast<T>(to_double());
    else return static_cast<T>(to_int());
  }

  // The dtype a tensor made from this number gets (torch.tensor(3.0)).
  DType default_dtype() const {
    return kind_ == Kind::Float ? kDefaultFloat : kind_ == Kind::Int ? DType::Int64 : DType::Bool;
  }

  LoomValue abi() const {
    LoomValue v{};
    if (kind_ == Kind::Float) {
      v.kind = LOOM_VALUE_FLOAT;
      v.u.f = v_.f;
    } else {
      v.kind = kind_ == Kind::Int ? LOOM_VALUE_INT : LOOM_VALUE_BOOL;
      v.u.i = v_.i;
    }
    return v;
  }

 private:
  Kind kind_;
  union {
    int64_t i;
    double f;
  } v_;
};

std::ostream& operator<<(std::ostream& os, const Scalar& s);

}  // namespace loom
