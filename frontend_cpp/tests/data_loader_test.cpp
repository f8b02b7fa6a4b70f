// data_loader_test.cpp — loom::data: TensorDataset, DataLoader batching,
// drop_last, seeded shuffling, worker threads (same batches, early break,
// errors from a worker) and a generic Dataset.
#include <loom/data.h>
#include <loom/loom.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <vector>

namespace {

using loom::Tensor;
using namespace loom::data;

// Rows [i, 10 + i] with target i, for i in 0..n-1.
TensorDataset numbered(int64_t n) {
  std::vector<float> data;
  std::vector<int64_t> target;
  for (int64_t i = 0; i < n; ++i) {
    data.push_back(static_cast<float>(i));
    data.push_back(static_cast<float>(10 + i));
    target.push_back(i);
  }
  return TensorDataset(loom::from_vector(data, {n, 2}), loom::from_vector(target, {n}));
}

// Every target of one epoch, batch by batch.
std::vector<std::vector<int64_t>> epoch_targets(DataLoader& loader) {
  std::vector<std::vector<int64_t>> out;
  for (const Example& batch : loader) out.push_back(batch.target.to_vector<int64_t>());
  return out;
}

// The same rows through get() only (no batch fast path), optionally failing.
class SlowDataset : public Dataset {
 public:
  explicit SlowDataset(int64_t n, int64_t fail_at = -1) : inner_(numbered(n)), fail_at_(fail_at) {}
  size_t size() const override { return inner_.size(); }
  Example get(size_t index) const override {
    ++calls;
    if (static_cast<int64_t>(index) == fail_at_) throw std::runtime_error("sample " + std::to_string(index) + " is corrupt");
    return inner_.get(index);
  }
  mutable std::atomic<int> calls{0};

 private:
  TensorDataset inner_;
  int64_t fail_at_;
};

}  // namespace

TEST_CASE("TensorDataset indexes rows and checks its tensors") {
  TensorDataset ds = numbered(5);
  CHECK(ds.size() == 5);
  CHECK(ds.get(3).data.to_vector<float>() == std::vector<float>{3, 13});
  CHECK(ds.get(3).target.item<int64_t>() == 3);
  CHECK_THROWS_WITH(ds.get(5), Catch::Contains("index 5 out of range"));
  CHECK_THROWS_WITH(TensorDataset(loom::zeros({3, 2}), loom::zeros({4})), Catch::Contains("3 rows but target has 4"));
}

TEST_CASE("DataLoader batches in order, with and without drop_last") {
  DataLoader loader(numbered(10), DataLoaderOptions().batch_size(4));
  CHECK(loader.size() == 3);
  std::vector<std::vector<int64_t>> want = {{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}};
  CHECK(epoch_targets(loader) == want);
  for (const Example& batch : loader) {
    CHECK(batch.data.shape()[1] == 2);
    CHECK(batch.data.select(1, 0).to_vector<float>()[0] == static_cast<float>(batch.target.to_vector<int64_t>()[0]));
  }
  DataLoader dropping(numbered(10), DataLoaderOptions().batch_size(4).drop_last(true));
  CHECK(dropping.size() == 2);
  CHECK(epoch_targets(dropping).size() == 2);
  DataLoader empty(numbered(3), DataLoaderOptions().batch_size(4).drop_last(true));
  CHECK(epoch_targets(empty).empty());
}

TEST_CASE("shuffling is a permutation, repeats from the seed and changes per epoch") {
  auto opts = DataLoaderOptions().batch_size(5).shuffle(true).seed(7);
  DataLoader a(numbered(20), opts), b(numbered(20), opts), other(numbered(20), opts.seed(8));
  const auto a1 = epoch_targets(a), a2 = epoch_targets(a);
  CHECK(a1 == epoch_targets(b));
  CHECK(a2 == epoch_targets(b));
  CHECK(a1 != a2);
  CHECK(a1 != epoch_targets(other));
  std::vector<int64_t> all;
  for (const auto& batch : a1) all.insert(all.end(), batch.begin(), batch.end());
  std::sort(all.begin(), all.end());
  for (int64_t i = 0; i < 20; ++i) CHECK(all[static_cast<size_t>(i)] == i);
}

TEST_CASE("workers give the same batches as the loop thread, for the fast path and get()", "[concurrency]") {
  for (size_t workers : {1, 2, 4}) {
    auto opts = DataLoaderOptions().batch_size(3).shuffle(true).seed(1);
    DataLoader serial(numbered(17), opts);
    DataLoader threaded(numbered(17), DataLoaderOptions(opts).workers(workers).prefetch(1));
    auto slow = std::make_shared<SlowDataset>(17);
    DataLoader threaded_slow(slow, DataLoaderOptions(opts).workers(workers));
    for (int epoch = 0; epoch < 2; ++epoch) {
      const auto want = epoch_targets(serial);
      CHECK(epoch_targets(threaded) == want);
      CHECK(epoch_targets(threaded_slow) == want);
    }
    std::vector<float> serial_data, threaded_data;
    for (const Example& batch : serial) {
      auto v = batch.data.to_vector<float>();
      serial_data.insert(serial_data.end(), v.begin(), v.end());
    }
    for (const Example& batch : threaded_slow) {
      auto v = batch.data.to_vector<float>();
      threaded_data.insert(threaded_data.end(), v.begin(), v.end());
    }
    CHECK(serial_data == threaded_data);
  }
}

TEST_CASE("breaking out of the loop stops the workers; the next epoch starts afresh", "[concurrency]") {
  auto slow = std::make_shared<SlowDataset>(100);
  DataLoader loader(slow, DataLoaderOptions().batch_size(2).workers(2).prefetch(2));
  int seen = 0;
  for (const Example& batch : loader) {
    CHECK(batch.target.to_vector<int64_t>() == std::vector<int64_t>{0, 1});
    if (++seen == 1) break;
  }
  // The workers stopped after at most workers * prefetch batches ahead.
  CHECK(slow->calls.load() <= 2 * (1 + 2 * 2 + 2));
  const auto next = epoch_targets(loader);
  CHECK(next.size() == 50);
  CHECK(next.front() == std::vector<int64_t>{0, 1});
  {
    DataLoader abandoned(slow, DataLoaderOptions().batch_size(2).workers(3));
    auto it = abandoned.begin();  // destroyed mid-epoch along with the loader
    CHECK(it->target.to_vector<int64_t>() == std::vector<int64_t>{0, 1});
  }
}

TEST_CASE("an error building a batch reaches the loop with the batch index", "[concurrency]") {
  for (size_t workers : {0, 2}) {
    auto bad = std::make_shared<SlowDataset>(10, /*fail_at=*/5);
    DataLoader loader(bad, DataLoaderOptions().batch_size(2).workers(workers));
    std::vector<std::vector<int64_t>> seen;
    auto run = [&] {
      for (const Example& batch : loader) seen.push_back(batch.target.to_vector<int64_t>());
    };
    CHECK_THROWS_WITH(run(), Catch::Contains("batch 2 failed") && Catch::Contains("sample 5 is corrupt"));
    CHECK(seen.size() == 2);
  }
}

TEST_CASE("DataLoader rejects bad options") {
  CHECK_THROWS_WITH(DataLoader(numbered(3), DataLoaderOptions().batch_size(0)), Catch::Contains("batch_size"));
  CHECK_THROWS_WITH(DataLoader(std::shared_ptr<const Dataset>()), Catch::Contains("needs a dataset"));
}
