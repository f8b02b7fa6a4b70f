// loom/generator.h — random number generators, as torch.Generator.
//
// Every generator is Philox4x32-10 keyed by a 64-bit seed, with an offset
// that counts the counters handed out so far (docs/kernel_conventions.md,
// "Random numbers"). The numbers depend only on (seed, offset) and the
// order of calls, never on the device: a tensor drawn on cuda with seed s is
// the tensor drawn on the CPU with seed s.
//
// Each device (cpu, cuda:0, cuda:1, a plugin's device) has a default
// generator, used by random ops not given one. A process that never calls
// manual_seed draws a fresh non-deterministic seed for each, as PyTorch
// does; manual_seed(s) seeds every default generator, including those of
// devices first used later.
#pragma once

#include <loom/device.h>

#include <cstdint>
#include <memory>
#include <utility>

namespace loom {

class Tensor;

namespace detail {
struct GeneratorImpl;
}  // namespace detail

// A handle: copies share one stream, as Python names of a torch.Generator do.
class Generator {
 public:
  // A new generator for random ops on `device`, seeded with PyTorch's default
  // seed for new generators (67280421310721).
  explicit Generator(Device device = cpu_device());

  Device device() const;
  // Restarts the stream at `seed` (offset 0). Returns *this.
  Generator& manual_seed(uint64_t seed);
  // The seed the stream started from.
  uint64_t initial_seed() const;
  // Reseeds with a non-deterministic seed and returns it.
  uint64_t seed();
  // The state as a uint8 CPU tensor of 16 bytes: the seed, then the offset,
  // each a little-endian uint64.
  Tensor get_state() const;
  // Restores a state get_state returned; throws naming what is wrong (not a
  // uint8 CPU tensor of 16 bytes).
  void set_state(const Tensor& state);
  // Reserves `n` counters: returns {seed, first counter} and advances.
  std::pair<uint64_t, uint64_t> take(int64_t n);

  detail::GeneratorImpl* impl() const { return impl_.get(); }
  bool operator==(const Generator& o) const { return impl_ == o.impl_; }

 private:
  explicit Generator(std::shared_ptr<detail::GeneratorImpl> impl) : impl_(std::move(impl)) {}
  friend Generator default_generator(Device device);
  friend Generator generator_from_impl(detail::GeneratorImpl* impl);
  std::shared_ptr<detail::GeneratorImpl> impl_;
};

// The default generator of `device` (created on first use).
Generator default_generator(Device device = cpu_device());
// A handle to the generator `impl` points to (it must be alive).
Generator generator_from_impl(detail::GeneratorImpl* impl);

// Seeds the default generator of every device, existing or created later.
void manual_seed(uint64_t seed);
// Seeds every default generator with one fresh non-deterministic seed;
// returns it (torch.seed).
uint64_t seed();
// The seed of the CPU's default generator (torch.initial_seed).
uint64_t initial_seed();

}  // namespace loom
