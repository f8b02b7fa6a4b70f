// generator.cpp — Generator, the default generators and the seeding calls
// (loom/generator.h).
#include "random_state.h"

#include <loom/error.h>
#include <loom/generator.h>
#include <loom/ops.h>

#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <random>

namespace loom {
namespace detail {

struct GeneratorImpl : std::enable_shared_from_this<GeneratorImpl> {
  explicit GeneratorImpl(Device d, uint64_t s) : device(d), seed(s) {}
  const Device device;
  std::mutex mutex;
  uint64_t seed;
  uint64_t offset = 0;
};

namespace {

constexpr uint64_t kNewGeneratorSeed = 67280421310721ull;  // PyTorch's, for torch.Generator()

uint64_t nondeterministic_seed() {
  std::random_device rd;
  const uint64_t hi = rd(), lo = rd();
  const auto now = static_cast<uint64_t>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
  return ((hi << 32) | lo) ^ now;
}

// The default generators, by device, and the seed the next one starts with
// (none until manual_seed or seed is called: each then draws its own).
struct Defaults {
  std::mutex mutex;
  std::map<std::pair<int16_t, int16_t>, std::shared_ptr<GeneratorImpl>> by_device;
  bool seeded = false;
  uint64_t seed = 0;
};

Defaults& defaults() {
  static auto* d = new Defaults;  // outlives static destruction: ops may run at exit
  return *d;
}

void reseed(GeneratorImpl& g, uint64_t seed) {
  std::lock_guard lock(g.mutex);
  g.seed = seed;
  g.offset = 0;
}

}  // namespace

std::pair<uint64_t, uint64_t> take_random_counters(const LoomValue& generator, const Tensor& like, int64_t n,
                                                   const std::string& op) {
  if (generator.kind == LOOM_VALUE_INT_LIST) {  // counters a composite reserved already
    LOOM_CHECK(generator.u.ints.size == 2, op, ": expected a {seed, offset} list for the generator");
    return {static_cast<uint64_t>(generator.u.ints.data[0]), static_cast<uint64_t>(generator.u.ints.data[1])};
  }
  if (std::optional<Generator> g = generator_arg(generator, like, op)) return g->take(n);
  return default_generator(like.device()).take(n);
}

std::optional<Generator> generator_arg(const LoomValue& generator, const Tensor& like, const std::string& op) {
  if (generator.kind == LOOM_VALUE_NONE) return std::nullopt;
  LOOM_CHECK(generator.kind == kValueGenerator, op, ": 'generator' must be a loom Generator or None");
  Generator g = generator_from_impl(reinterpret_cast<GeneratorImpl*>(generator.u.i));
  LOOM_CHECK(g.device().type == like.device().type, op, ": expected a generator of device type '",
             like.device().type_name(), "' (the tensor's), but got one of '", g.device().type_name(), "'");
  return g;
}

LoomValue generator_value(const Generator* g) {
  LoomValue v{};
  if (g) {
    v.kind = kValueGenerator;
    v.u.i = reinterpret_cast<int64_t>(g->impl());
  }
  return v;
}

}  // namespace detail

Generator::Generator(Device device) : impl_(std::make_shared<detail::GeneratorImpl>(device, detail::kNewGeneratorSeed)) {}

Device Generator::device() const { return impl_->device; }

Generator& Generator::manual_seed(uint64_t s) {
  detail::reseed(*impl_, s);
  return *this;
}

uint64_t Generator::initial_seed() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->seed;
}

uint64_t Generator::seed() {
  const uint64_t s = detail::nondeterministic_seed();
  detail::reseed(*impl_, s);
  return s;
}

std::pair<uint64_t, uint64_t> Generator::take(int64_t n) {
  std::lock_guard lock(impl_->mutex);
  const uint64_t first = impl_->offset;
  impl_->offset += static_cast<uint64_t>(n);
  return {impl_->seed, first};
}

Tensor Generator::get_state() const {
  uint64_t words[2];
  {
    std::lock_guard lock(impl_->mutex);
    words[0] = impl_->seed;
    words[1] = impl_->offset;
  }
  Tensor state = empty({16}, DType::UInt8, cpu_device());
  auto* bytes = static_cast<uint8_t*>(state.data_ptr());
  for (int w = 0; w < 2; ++w)
    for (int b = 0; b < 8; ++b) bytes[w * 8 + b] = static_cast<uint8_t>(words[w] >> (8 * b));
  return state;
}

void Generator::set_state(const Tensor& state) {
  LOOM_CHECK(state.defined() && state.dtype() == DType::UInt8 && state.device().type_name() == "cpu" &&
                 state.dim() == 1 && state.numel() == 16,
             "Generator.set_state: expected the uint8 CPU tensor of 16 bytes get_state returns, got ",
             state.defined() ? detail::cat(name(state.dtype()), " ", shape_str(state.sizes()), " on ",
                                           state.device().str())
                             : std::string("an undefined tensor"));
  const Tensor bytes_t = state.contiguous();
  const auto* bytes = static_cast<const uint8_t*>(bytes_t.data_ptr());
  uint64_t words[2] = {0, 0};
  for (int w = 0; w < 2; ++w)
    for (int b = 0; b < 8; ++b) words[w] |= static_cast<uint64_t>(bytes[w * 8 + b]) << (8 * b);
  std::lock_guard lock(impl_->mutex);
  impl_->seed = words[0];
  impl_->offset = words[1];
}

Generator default_generator(Device device) {
  auto& d = detail::defaults();
  std::lock_guard lock(d.mutex);
  auto& slot = d.by_device[{device.type, device.index}];
  if (!slot)
    slot = std::make_shared<detail::GeneratorImpl>(device, d.seeded ? d.seed : detail::nondeterministic_seed());
  return Generator(slot);
}

Generator generator_from_impl(detail::GeneratorImpl* impl) { return Generator(impl->shared_from_this()); }

void manual_seed(uint64_t s) {
  auto& d = detail::defaults();
  std::lock_guard lock(d.mutex);
  d.seeded = true;
  d.seed = s;
  for (auto& [device, g] : d.by_device) detail::reseed(*g, s);
}

uint64_t seed() {
  const uint64_t s = detail::nondeterministic_seed();
  manual_seed(s);
  return s;
}

uint64_t initial_seed() { return default_generator(cpu_device()).initial_seed(); }

}  // namespace loom
