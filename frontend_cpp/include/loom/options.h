// loom/options.h — LOOM_ARG, the chained-setter field every options struct
// of the C++ frontend uses (nn layer options, optimizer and scheduler
// options, DataLoaderOptions), as libtorch's TORCH_ARG.
#pragma once

// LOOM_ARG(T, name) inside an options struct: a field `name_` with a chained
// setter `name(v)` (returns the options, the derived type included) and a
// getter `name()`. Follow it with the default: `LOOM_ARG(bool, bias) = true;`.
#define LOOM_ARG(T, name)                          \
 public:                                           \
  auto& name(const T& new_##name) {                \
    this->name##_ = new_##name;                    \
    return *this;                                  \
  }                                                \
  const T& name() const { return this->name##_; } \
                                                   \
 private:                                          \
  T name##_
