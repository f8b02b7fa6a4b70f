// random_state.h (core-internal) — the default generator for ops other than
// uniform_/normal_ that draw random numbers (dropout).
#pragma once

#include <cstdint>
#include <utility>

namespace loom::detail {
// Reserves `n` Philox counters of the default generator; returns
// {seed, first counter} (docs/kernel_conventions.md, "Random numbers").
std::pair<uint64_t, uint64_t> take_random_counters(int64_t n);
}  // namespace loom::detail
