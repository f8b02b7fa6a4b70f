// generator_test.cpp — loom/generator.h: default generators per device,
// manual_seed over every device (also ones first used later), Generator
// objects as independent streams, state save/restore, and the ops that
// take a generator (randperm, multinomial, dropout through its schema).
#include <catch2/catch.hpp>
#include <loom/loom.h>

#include <algorithm>
#include <numeric>

using loom::DType;

TEST_CASE("generator: manual_seed seeds the default generator of every device") {
  loom::manual_seed(5);
  const auto cpu = loom::rand({8}).to_vector<float>();
  loom::manual_seed(5);
  // sim's generator did not exist before this seed, or was reseeded by it:
  // either way it starts where the CPU's did.
  const auto sim = loom::rand({8}, DType::Float32, loom::Device("sim")).cpu().to_vector<float>();
  CHECK(sim == cpu);
  CHECK(loom::initial_seed() == 5);
  CHECK(loom::default_generator(loom::Device("sim")).initial_seed() == 5);
  CHECK_FALSE(loom::default_generator() == loom::default_generator(loom::Device("sim")));
}

TEST_CASE("generator: objects are streams of their own") {
  loom::Generator g;
  CHECK(g.initial_seed() == 67280421310721ull);
  g.manual_seed(3);
  const auto a = loom::rand({6}, DType::Float32, loom::cpu_device(), g).to_vector<float>();
  loom::Generator h = loom::Generator().manual_seed(3);
  (void)loom::rand({100});  // the default stream moves; h does not
  CHECK(loom::rand({6}, DType::Float32, loom::cpu_device(), h).to_vector<float>() == a);
  loom::Generator copy = h;  // a handle: both advance one stream
  const auto next = loom::rand({2}, DType::Float32, loom::cpu_device(), copy).to_vector<float>();
  CHECK(loom::rand({2}, DType::Float32, loom::cpu_device(), h).to_vector<float>() != next);
}

TEST_CASE("generator: the state is seed and offset, and restores the stream") {
  loom::Generator g;
  g.manual_seed(11);
  (void)loom::randn({3}, DType::Float32, loom::cpu_device(), g);
  const loom::Tensor state = g.get_state();
  CHECK(state.dtype() == DType::UInt8);
  CHECK(state.numel() == 16);
  CHECK(state.to_vector<int64_t>()[0] == 11);  // the seed's low byte
  CHECK(state.to_vector<int64_t>()[8] == 3);   // three counters drawn
  const auto a = loom::rand({4}, DType::Float32, loom::cpu_device(), g).to_vector<float>();
  g.set_state(state);
  CHECK(loom::rand({4}, DType::Float32, loom::cpu_device(), g).to_vector<float>() == a);
  CHECK_THROWS_WITH(g.set_state(loom::zeros({16})), Catch::Contains("uint8 CPU tensor of 16 bytes"));
  CHECK_THROWS_WITH(g.set_state(loom::zeros({4}, DType::UInt8)), Catch::Contains("got uint8 [4]"));
}

TEST_CASE("generator: seed() draws a fresh seed for every device") {
  const uint64_t s = loom::seed();
  CHECK(loom::initial_seed() == s);
  CHECK(loom::seed() != s);
}

TEST_CASE("generator: a generator of another device type is refused, naming both") {
  loom::Generator sim_gen(loom::Device("sim"));
  CHECK_THROWS_WITH(loom::rand({3}, DType::Float32, loom::cpu_device(), sim_gen),
                    Catch::Contains("generator of device type 'cpu'") && Catch::Contains("'sim'"));
  CHECK_NOTHROW(loom::rand({3}, DType::Float32, loom::Device("sim"), sim_gen));
}

TEST_CASE("randperm: every permutation of 0..n-1, in the dtype asked for") {
  loom::manual_seed(1);
  auto p = loom::randperm(500).to_vector<int64_t>();
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> want(500);
  std::iota(want.begin(), want.end(), 0);
  CHECK(sorted == want);
  CHECK(p != want);
  CHECK(loom::randperm(0).numel() == 0);
  CHECK_THROWS_WITH(loom::randperm(-1), Catch::Contains("non-negative"));
  CHECK_THROWS_WITH(loom::randperm(200, DType::Int8), Catch::Contains("do not fit in int8"));
}

TEST_CASE("multinomial: frequencies, zero weights, without replacement, errors") {
  loom::manual_seed(2);
  const auto probs = loom::from_vector<float>({1, 0, 3}, {3});
  const auto draws = loom::multinomial(probs, 8000, true).to_vector<int64_t>();
  const auto n1 = std::count(draws.begin(), draws.end(), 1);
  const auto n2 = std::count(draws.begin(), draws.end(), 2);
  CHECK(n1 == 0);
  CHECK(static_cast<double>(n2) / 8000 == Approx(0.75).margin(0.02));
  auto all = loom::multinomial(loom::ones({2, 5}), 5).to_vector<int64_t>();
  std::sort(all.begin(), all.begin() + 5);
  CHECK(std::vector<int64_t>(all.begin(), all.begin() + 5) == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK_THROWS_WITH(loom::multinomial(probs, 3), Catch::Contains("not enough non-negative category"));
  CHECK_THROWS_WITH(loom::multinomial(probs, 0), Catch::Contains("n_sample <= 0"));
  CHECK_THROWS_WITH(loom::multinomial(loom::zeros({3}, DType::Int64), 1), Catch::Contains("floating point"));
  // On another device: the composite runs there and draws the CPU's numbers.
  loom::manual_seed(4);
  const auto cpu = loom::multinomial(loom::ones({20}), 5).to_vector<int64_t>();
  loom::manual_seed(4);
  CHECK(loom::multinomial(loom::ones({20}).to(loom::Device("sim")), 5).cpu().to_vector<int64_t>() == cpu);
}
