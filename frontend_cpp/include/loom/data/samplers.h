// loom/data/samplers.h — the order in which a DataLoader visits a dataset
// (torch::data::samplers): each epoch starts with reset(size), then next()
// hands out the indices of one batch at a time until it returns nullopt.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace loom::data::samplers {

class Sampler {
 public:
  using BatchRequestType = std::vector<size_t>;
  virtual ~Sampler() = default;
  // Starts an epoch over `new_size` examples (the size given at
  // construction when nullopt).
  virtual void reset(std::optional<size_t> new_size = std::nullopt) = 0;
  // The next (at most) batch_size indices, nullopt when the epoch is over.
  virtual std::optional<std::vector<size_t>> next(size_t batch_size) = 0;
};

// 0, 1, ..., size - 1.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(size_t size) : size_(size) {}
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return index_; }

 private:
  size_t size_, index_ = 0;
};

// A new permutation each epoch from loom::randperm on the default CPU
// generator, as libtorch's: loom::manual_seed(s) makes runs repeat.
class RandomSampler : public Sampler {
 public:
  explicit RandomSampler(int64_t size);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return index_; }

 private:
  std::vector<size_t> order_;
  size_t index_ = 0;
};

// A permutation per epoch that depends only on (seed, epoch): a Fisher-Yates
// shuffle over mt19937_64, the same on every platform, untouched by other
// users of the global generator. (loom's; libtorch has no such sampler.)
class SeededRandomSampler : public Sampler {
 public:
  SeededRandomSampler(size_t size, uint64_t seed) : size_(size), seed_(seed) {}
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  uint64_t epoch() const noexcept { return epoch_; }  // epochs started

 private:
  size_t size_;
  uint64_t seed_, epoch_ = 0;
  std::vector<size_t> order_;
  size_t index_ = 0;
};

// This rank's share of a dataset for data-parallel training
// (torch::data::samplers::DistributedRandomSampler's constructor): every
// epoch all ranks shuffle the same order — SeededRandomSampler's for
// (seed, epoch), so one replica visits what a SeededRandomSampler(size,
// seed) does — and rank r takes its elements r, r + num_replicas, ... (as
// PyTorch's Python DistributedSampler), so the ranks' k-th batches of b
// together are the one-process k-th batch of num_replicas * b. With
// allow_duplicates the order is padded by repeating its start until every
// rank has the same count; without, the first ranks get one more. Call
// set_epoch(e) before each epoch for a new order (reset() keeps the epoch).
class DistributedRandomSampler : public Sampler {
 public:
  DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true,
                           uint64_t seed = 0);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void set_epoch(size_t epoch) { epoch_ = epoch; }
  size_t epoch() const noexcept { return epoch_; }
  // How many indices this rank visits per epoch.
  size_t local_sample_count() const;

 private:
  size_t size_, num_replicas_, rank_;
  bool allow_duplicates_;
  uint64_t seed_;
  size_t epoch_ = 0;
  std::vector<size_t> order_;
  size_t index_ = 0;
  bool started_ = false;
};

}  // namespace loom::data::samplers
