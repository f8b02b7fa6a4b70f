// samplers.cpp — SequentialSampler, RandomSampler, SeededRandomSampler.
#include <loom/data/samplers.h>
#include <loom/error.h>
#include <loom/ops.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace loom::data::samplers {

namespace {
// order[index, index + batch_size), advancing index; nullopt at the end.
std::optional<std::vector<size_t>> take(const std::vector<size_t>& order, size_t& index, size_t batch_size) {
  LOOM_CHECK(batch_size > 0, "data: a sampler's batch_size must be positive");
  if (index >= order.size()) return std::nullopt;
  const size_t end = std::min(order.size(), index + batch_size);
  std::vector<size_t> out(order.begin() + static_cast<std::ptrdiff_t>(index),
                          order.begin() + static_cast<std::ptrdiff_t>(end));
  index = end;
  return out;
}
}  // namespace

void SequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  index_ = 0;
}

std::optional<std::vector<size_t>> SequentialSampler::next(size_t batch_size) {
  LOOM_CHECK(batch_size > 0, "data: a sampler's batch_size must be positive");
  if (index_ >= size_) return std::nullopt;
  const size_t end = std::min(size_, index_ + batch_size);
  std::vector<size_t> out(end - index_);
  std::iota(out.begin(), out.end(), index_);
  index_ = end;
  return out;
}

RandomSampler::RandomSampler(int64_t size) {
  LOOM_CHECK(size >= 0, "data: RandomSampler: size must be non-negative, got ", size);
  order_.resize(static_cast<size_t>(size));
  reset();
}

void RandomSampler::reset(std::optional<size_t> new_size) {
  const size_t n = new_size ? *new_size : order_.size();
  const std::vector<int64_t> perm = randperm(static_cast<int64_t>(n), TensorOptions(kLong)).to_vector<int64_t>();
  order_.assign(perm.begin(), perm.end());
  index_ = 0;
}

std::optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) { return take(order_, index_, batch_size); }

void SeededRandomSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  order_.resize(size_);
  std::iota(order_.begin(), order_.end(), size_t{0});
  std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ULL + epoch_++);
  for (size_t i = size_; i > 1; --i) std::swap(order_[i - 1], order_[rng() % i]);
  index_ = 0;
}

std::optional<std::vector<size_t>> SeededRandomSampler::next(size_t batch_size) {
  if (order_.size() != size_) reset();  // next() before the first reset()
  return take(order_, index_, batch_size);
}

}  // namespace loom::data::samplers
