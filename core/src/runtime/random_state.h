// random_state.h (core-internal) — how the random ops (uniform_, normal_,
// dropout, ...) get their Philox counters from a generator argument.
#pragma once

#include <loom/op_call.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace loom::detail {
// Reserves `n` counters for an op drawing into tensors like `like`, from
// the op's Generator? argument: None takes them from the default generator
// of like's device; a Generator (kValueGenerator) from it, which must be of
// like's device type; an INT_LIST {seed, offset} (counters a composite
// reserved already) is returned as it is. Returns {seed, first counter}
// (docs/kernel_conventions.md, "Random numbers").
std::pair<uint64_t, uint64_t> take_random_counters(const LoomValue& generator, const Tensor& like, int64_t n,
                                                   const std::string& op);

// The op's Generator? argument for a composite that draws with ops of its
// own: nullopt for None, else the generator (checked against like's device
// type as above).
std::optional<Generator> generator_arg(const LoomValue& generator, const Tensor& like, const std::string& op);
}  // namespace loom::detail
