// rank_checks.h — what one rank of a multi-process check uses to compare
// its collectives' results (collectives_worker, ddp_worker, and the GPU
// session's nccl_gpu_check): a failure counter, reference values exact in
// every dtype, and an exact comparison across devices.
#pragma once

#include <loom/distributed/distributed.h>
#include <loom/loom.h>

#include <cstdio>
#include <string>
#include <vector>

namespace loom_dist_test {

// Failed checks of this process; its exit status is 1 when non-zero.
inline int failures = 0;

// Counts and prints a failed check, naming the rank.
inline void check(bool ok, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "rank %d: FAILED: %s\n",
               loom::distributed::is_initialized() ? loom::distributed::get_rank() : -1, what.c_str());
}

// Rank r's values: small integers, exact in every dtype (float16 and
// bfloat16 included) through sums and products over 4 ranks.
inline loom::Tensor values(int r, int64_t n, loom::DType dt) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>((r + 1) * (i % 3 + 1) % 5);
  if (dt == loom::DType::Bool)
    for (auto& x : v) x = x > 2 ? 1 : 0;
  return loom::tensor(v).reshape({n}).to(dt);
}

// Same shape, dtype and values, wherever each tensor lives.
inline bool same(const loom::Tensor& a, const loom::Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
  auto host = [](const loom::Tensor& t) { return t.cpu().to(loom::DType::Float64).contiguous().to_vector<double>(); };
  return host(a) == host(b);
}

// "all_reduce float32", for messages.
inline std::string label(const char* op, loom::DType dt) { return std::string(op) + " " + std::string(loom::name(dt)); }

}  // namespace loom_dist_test
