// data_loader_test.cpp — loom::data: TensorDataset, make_data_loader's
// batching, drop_last, samplers, worker threads (same batches, early break,
// errors from a worker), Dataset<Self> with map and the transforms, MNIST.
#include <loom/data.h>
#include <loom/loom.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
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
template <class Loader>
std::vector<std::vector<int64_t>> epoch_targets(Loader& loader) {
  std::vector<std::vector<int64_t>> out;
  for (auto& batch : loader) out.push_back(batch.target.template to_vector<int64_t>());
  return out;
}

// The same rows one example at a time (Dataset<Self>), optionally failing.
// Copies share the call counter, as the loader holds its own copy.
class SlowDataset : public Dataset<SlowDataset> {
 public:
  explicit SlowDataset(int64_t n, int64_t fail_at = -1) : inner_(numbered(n)), fail_at_(fail_at) {}
  Example<> get(size_t index) override {
    ++*calls;
    if (static_cast<int64_t>(index) == fail_at_) throw std::runtime_error("sample " + std::to_string(index) + " is corrupt");
    return inner_.get(index);
  }
  std::optional<size_t> size() const override { return inner_.size(); }
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);

 private:
  TensorDataset inner_;
  int64_t fail_at_;
};

auto slow_stacked(int64_t n, int64_t fail_at = -1) { return SlowDataset(n, fail_at).map(transforms::Stack<>()); }

}  // namespace

TEST_CASE("TensorDataset indexes rows and checks its tensors") {
  TensorDataset ds = numbered(5);
  CHECK(ds.size() == 5u);
  CHECK(ds.get(3).data.to_vector<float>() == std::vector<float>{3, 13});
  CHECK(ds.get(3).target.item<int64_t>() == 3);
  CHECK_THROWS_WITH(ds.get(5), Catch::Contains("index 5 out of range"));
  CHECK_THROWS_WITH(TensorDataset(loom::zeros({3, 2}), loom::zeros({4})), Catch::Contains("3 rows but target has 4"));
}

TEST_CASE("make_data_loader batches in the sampler's order, with and without drop_last") {
  auto loader = make_data_loader<samplers::SequentialSampler>(numbered(10), DataLoaderOptions().batch_size(4));
  CHECK(loader->size() == 3);
  std::vector<std::vector<int64_t>> want = {{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}};
  CHECK(epoch_targets(*loader) == want);
  for (auto& batch : *loader) {
    CHECK(batch.data.size(1) == 2);
    CHECK(batch.data.select(1, 0).to_vector<float>()[0] == static_cast<float>(batch.target.to_vector<int64_t>()[0]));
  }
  auto dropping = make_data_loader<samplers::SequentialSampler>(numbered(10), DataLoaderOptions(4).drop_last(true));
  CHECK(dropping->size() == 2);
  CHECK(epoch_targets(*dropping).size() == 2);
  auto empty = make_data_loader(numbered(3), DataLoaderOptions().batch_size(4).drop_last(true));
  CHECK(epoch_targets(*empty).empty());
}

TEST_CASE("RandomSampler follows the global seed; SeededRandomSampler only its own") {
  auto sorted = [](std::vector<std::vector<int64_t>> batches) {
    std::vector<int64_t> all;
    for (const auto& b : batches) all.insert(all.end(), b.begin(), b.end());
    std::sort(all.begin(), all.end());
    return all;
  };
  std::vector<int64_t> every(20);
  std::iota(every.begin(), every.end(), 0);

  loom::manual_seed(3);
  auto a = make_data_loader(numbered(20), 5);  // RandomSampler, libtorch's default
  const auto a1 = epoch_targets(*a), a2 = epoch_targets(*a);
  loom::manual_seed(3);
  auto b = make_data_loader(numbered(20), 5);
  CHECK(epoch_targets(*b) == a1);
  CHECK(epoch_targets(*b) == a2);
  CHECK(a1 != a2);
  CHECK(sorted(a1) == every);

  auto s = make_data_loader(numbered(20), samplers::SeededRandomSampler(20, 7), 5);
  auto t = make_data_loader(numbered(20), samplers::SeededRandomSampler(20, 7), 5);
  auto other = make_data_loader(numbered(20), samplers::SeededRandomSampler(20, 8), 5);
  const auto s1 = epoch_targets(*s), s2 = epoch_targets(*s);
  loom::manual_seed(99);  // no effect on a seeded sampler
  CHECK(epoch_targets(*t) == s1);
  CHECK(epoch_targets(*t) == s2);
  CHECK(s1 != s2);
  CHECK(s1 != epoch_targets(*other));
  CHECK(sorted(s1) == every);
}

TEST_CASE("DistributedRandomSampler: one replica is SeededRandomSampler; replicas split its order by stride") {
  auto whole = [](size_t n, uint64_t seed, size_t epoch) {
    samplers::SeededRandomSampler s(n, seed);
    for (size_t e = 0; e <= epoch; ++e) s.reset();
    std::vector<size_t> out;
    while (auto b = s.next(4)) out.insert(out.end(), b->begin(), b->end());
    return out;
  };
  auto share = [](samplers::DistributedRandomSampler& s, size_t epoch) {
    s.set_epoch(epoch);
    s.reset();
    std::vector<size_t> out;
    while (auto b = s.next(3)) out.insert(out.end(), b->begin(), b->end());
    return out;
  };
  for (size_t epoch : {0, 1, 2}) {
    const std::vector<size_t> order = whole(17, 5, epoch);
    samplers::DistributedRandomSampler one(17, 1, 0, true, 5);
    CHECK(share(one, epoch) == order);
    for (bool pad : {false, true}) {
      std::vector<std::vector<size_t>> shares;
      for (size_t r = 0; r < 3; ++r) {
        samplers::DistributedRandomSampler s(17, 3, r, pad, 5);
        shares.push_back(share(s, epoch));
        CHECK(shares.back().size() == s.local_sample_count());
      }
      CHECK(shares[0].size() == 6);
      CHECK(shares[2].size() == (pad ? 6 : 5));
      for (size_t i = 0; i < 17; ++i) CHECK(shares[i % 3][i / 3] == order[i]);  // element i goes to rank i % 3
      if (pad) CHECK(shares[2][5] == order[0]);  // padded by repeating the start
    }
  }
  samplers::DistributedRandomSampler s(17, 3, 1, true, 5);
  CHECK(share(s, 0) != share(s, 1));
  CHECK_THROWS_WITH(samplers::DistributedRandomSampler(17, 3, 3), Catch::Contains("rank 3 is not in [0, 2]"));
}

TEST_CASE("workers give the same batches as the loop thread, for the fast path and get()", "[concurrency]") {
  for (size_t workers : {1, 2, 4}) {
    auto opts = DataLoaderOptions().batch_size(3);
    auto serial = make_data_loader(numbered(17), samplers::SeededRandomSampler(17, 1), opts);
    auto threaded =
        make_data_loader(numbered(17), samplers::SeededRandomSampler(17, 1), DataLoaderOptions(opts).workers(workers).prefetch(1));
    auto threaded_slow =
        make_data_loader(slow_stacked(17), samplers::SeededRandomSampler(17, 1), DataLoaderOptions(opts).workers(workers));
    for (int epoch = 0; epoch < 2; ++epoch) {
      const auto want = epoch_targets(*serial);
      CHECK(epoch_targets(*threaded) == want);
      CHECK(epoch_targets(*threaded_slow) == want);
    }
    std::vector<float> serial_data, threaded_data;
    for (auto& batch : *serial) {
      auto v = batch.data.to_vector<float>();
      serial_data.insert(serial_data.end(), v.begin(), v.end());
    }
    for (auto& batch : *threaded_slow) {
      auto v = batch.data.to_vector<float>();
      threaded_data.insert(threaded_data.end(), v.begin(), v.end());
    }
    CHECK(serial_data == threaded_data);
  }
}

TEST_CASE("breaking out of the loop stops the workers; the next epoch starts afresh", "[concurrency]") {
  SlowDataset slow(100);
  auto calls = slow.calls;
  auto loader = make_data_loader<samplers::SequentialSampler>(slow.map(transforms::Stack<>()),
                                                              DataLoaderOptions().batch_size(2).workers(2).prefetch(2));
  int seen = 0;
  for (auto& batch : *loader) {
    CHECK(batch.target.to_vector<int64_t>() == std::vector<int64_t>{0, 1});
    if (++seen == 1) break;
  }
  // The workers stopped after at most workers * prefetch batches ahead.
  CHECK(calls->load() <= 2 * (1 + 2 * 2 + 2));
  const auto next = epoch_targets(*loader);
  CHECK(next.size() == 50);
  CHECK(next.front() == std::vector<int64_t>{0, 1});
  {
    auto abandoned = make_data_loader<samplers::SequentialSampler>(slow_stacked(100), DataLoaderOptions(2).workers(3));
    auto it = abandoned->begin();  // destroyed mid-epoch along with the loader
    CHECK(it->target.to_vector<int64_t>() == std::vector<int64_t>{0, 1});
  }
}

TEST_CASE("an error building a batch reaches the loop with the batch index", "[concurrency]") {
  for (size_t workers : {0, 2}) {
    auto loader =
        make_data_loader<samplers::SequentialSampler>(slow_stacked(10, /*fail_at=*/5), DataLoaderOptions(2).workers(workers));
    std::vector<std::vector<int64_t>> seen;
    auto run = [&] {
      for (auto& batch : *loader) seen.push_back(batch.target.to_vector<int64_t>());
    };
    CHECK_THROWS_WITH(run(), Catch::Contains("batch 2 failed") && Catch::Contains("sample 5 is corrupt"));
    CHECK(seen.size() == 2);
  }
}

TEST_CASE("make_data_loader rejects bad options") {
  CHECK_THROWS_WITH(make_data_loader(numbered(3), DataLoaderOptions().batch_size(0)), Catch::Contains("batch_size"));
  CHECK_THROWS_WITH(make_data_loader(numbered(3), DataLoaderOptions(1).max_jobs(0)), Catch::Contains("max_jobs"));
}

TEST_CASE("Dataset<Self> batches are vectors of examples until a transform stacks them") {
  auto loader = make_data_loader<samplers::SequentialSampler>(SlowDataset(5), 2);
  std::vector<size_t> sizes;
  for (std::vector<Example<>>& batch : *loader) sizes.push_back(batch.size());
  CHECK(sizes == std::vector<size_t>{2, 2, 1});

  // Normalize then Stack, as libtorch's MNIST example maps its dataset.
  auto mapped = SlowDataset(4)
                    .map(transforms::Lambda<Example<>>([&](Example<> e) { return Example<>(e.data.view({2, 1, 1}), e.target); }))
                    .map(transforms::Normalize<>(1.0, 2.0))
                    .map(transforms::Stack<>());
  auto stacked = make_data_loader<samplers::SequentialSampler>(std::move(mapped), 4);
  for (auto& batch : *stacked) {
    CHECK(batch.data.sizes() == loom::DimVector{4, 2, 1, 1});
    CHECK(batch.data.view({-1}).to_vector<float>() == std::vector<float>{-0.5, 4.5, 0, 5, 0.5, 5.5, 1, 6});
  }
  // Per-channel statistics broadcast over (C, H, W).
  transforms::Normalize<> per_channel({0.0, 1.0, 2.0}, {1.0, 1.0, 2.0});
  CHECK(per_channel(loom::ones({3, 1, 1})).view({-1}).to_vector<float>() == std::vector<float>{1, 0, -0.5});
}

TEST_CASE("MNIST reads IDX files and names a bad one") {
  const std::string root = "loom_mnist_test";
  std::filesystem::create_directories(root);
  auto write = [](const std::string& path, std::vector<uint8_t> bytes) {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  };
  // Three 2x2 images (pixels 0, 51, 102 ...) and their labels 7, 0, 3.
  std::vector<uint8_t> images = {0, 0, 8, 3, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 2};
  for (int i = 0; i < 12; ++i) images.push_back(static_cast<uint8_t>(i * 17));
  write(root + "/t10k-images-idx3-ubyte", images);
  write(root + "/t10k-labels-idx1-ubyte", {0, 0, 8, 1, 0, 0, 0, 3, 7, 0, 3});
  datasets::MNIST test(root, datasets::MNIST::Mode::kTest);
  CHECK(!test.is_train());
  CHECK(test.size() == 3u);
  CHECK(test.images().sizes() == loom::DimVector{3, 1, 2, 2});
  CHECK(test.get(1).data.view({-1}).to_vector<float>() ==
        std::vector<float>{68.f / 255, 85.f / 255, 102.f / 255, 119.f / 255});
  CHECK(test.targets().to_vector<int64_t>() == std::vector<int64_t>{7, 0, 3});

  CHECK_THROWS_WITH(datasets::MNIST(root), Catch::Contains("train-images-idx3-ubyte"));
  write(root + "/t10k-labels-idx1-ubyte", {0, 0, 8, 1, 0, 0, 0, 2, 7, 0});
  CHECK_THROWS_WITH(datasets::MNIST(root, datasets::MNIST::Mode::kTest), Catch::Contains("3 images but"));
  images.pop_back();
  write(root + "/t10k-images-idx3-ubyte", images);
  CHECK_THROWS_WITH(datasets::MNIST(root, datasets::MNIST::Mode::kTest), Catch::Contains("27 bytes; its header describes 28"));
  write(root + "/t10k-images-idx3-ubyte", {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK_THROWS_WITH(datasets::MNIST(root, datasets::MNIST::Mode::kTest), Catch::Contains("gzip"));
  std::filesystem::remove_all(root);
}
