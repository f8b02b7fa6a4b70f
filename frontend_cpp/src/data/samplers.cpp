// samplers.cpp — SequentialSampler, RandomSampler, SeededRandomSampler,
// DistributedRandomSampler.
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

// 0 .. size - 1 shuffled by Fisher-Yates over mt19937_64 seeded from
// (seed, epoch): the same on every platform and every rank.
std::vector<size_t> seeded_permutation(size_t size, uint64_t seed, uint64_t epoch) {
  std::vector<size_t> order(size);
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + epoch);
  for (size_t i = size; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
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
  order_ = seeded_permutation(size_, seed_, epoch_++);
  index_ = 0;
}

std::optional<std::vector<size_t>> SeededRandomSampler::next(size_t batch_size) {
  if (order_.size() != size_) reset();  // next() before the first reset()
  return take(order_, index_, batch_size);
}

DistributedRandomSampler::DistributedRandomSampler(size_t size, size_t num_replicas, size_t rank,
                                                   bool allow_duplicates, uint64_t seed)
    : size_(size), num_replicas_(num_replicas), rank_(rank), allow_duplicates_(allow_duplicates), seed_(seed) {
  LOOM_CHECK(num_replicas >= 1, "data: DistributedRandomSampler: num_replicas must be at least 1, got ",
             num_replicas);
  LOOM_CHECK(rank < num_replicas, "data: DistributedRandomSampler: rank ", rank, " is not in [0, ",
             num_replicas - 1, "]");
}

size_t DistributedRandomSampler::local_sample_count() const {
  if (allow_duplicates_) return (size_ + num_replicas_ - 1) / num_replicas_;
  return size_ / num_replicas_ + (rank_ < size_ % num_replicas_ ? 1 : 0);
}

void DistributedRandomSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  std::vector<size_t> all = seeded_permutation(size_, seed_, epoch_);
  if (allow_duplicates_ && size_ > 0) {
    const size_t total = local_sample_count() * num_replicas_;
    for (size_t i = 0; all.size() < total; ++i) all.push_back(all[i]);
  }
  order_.clear();
  for (size_t i = rank_; i < all.size(); i += num_replicas_) order_.push_back(all[i]);
  index_ = 0;
  started_ = true;
}

std::optional<std::vector<size_t>> DistributedRandomSampler::next(size_t batch_size) {
  if (!started_) reset();  // next() before the first reset()
  return take(order_, index_, batch_size);
}

}  // namespace loom::data::samplers
