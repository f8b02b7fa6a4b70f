// Bad input gets a clear error naming what was wrong, never a crash.
#include <catch2/catch.hpp>
#include <loom/loom.h>


using loom::DType;

TEST_CASE("shape errors name the op and both shapes") {
  auto a = loom::ones({2, 3});
  auto b = loom::ones({4});
  CHECK_THROWS_WITH(a + b, Catch::Contains("add: shapes [2, 3] and [4] cannot be broadcast"));
  CHECK_THROWS_WITH(a * loom::ones({3, 3}), Catch::Contains("mul: shapes [2, 3] and [3, 3]"));
  CHECK_THROWS_WITH(a.matmul(loom::ones({2, 5})),
                    Catch::Contains("matmul: shapes cannot be multiplied ([2, 3] and [2, 5])"));
  CHECK_THROWS_WITH(loom::full({}, 1.0).matmul(a), Catch::Contains("at least 1-D"));
  CHECK_THROWS_WITH(a.sum({2}), Catch::Contains("dimension 2 is out of range for a 2-d tensor"));
  CHECK_THROWS_WITH(a.sum({1, -1}), Catch::Contains("appears multiple times"));
  CHECK_THROWS_WITH(loom::empty({-1}), Catch::Contains("negative dimension"));
  CHECK_THROWS_WITH(a.add_(loom::ones({3, 2, 3})), Catch::Contains("doesn't match the broadcast shape"));
}

TEST_CASE("dtype errors say which dtype and why") {
  auto i = loom::ones({2}, DType::Int64);
  CHECK_THROWS_WITH(i.add_(loom::ones({2})), Catch::Contains("Float can't be cast") ||
                                                  Catch::Contains("float32 can't be cast to the output dtype int64"));
  CHECK_THROWS_WITH(-loom::ones({2}, DType::Bool), Catch::Contains("bool"));
  CHECK_THROWS_WITH(loom::add(i, i, 1.5), Catch::Contains("alpha must not be a floating point"));
  CHECK_THROWS_WITH(loom::ones({2}, DType::Bool).matmul(loom::ones({2}, DType::Bool)),
                    Catch::Contains("bool tensors are not supported"));
  CHECK_THROWS_WITH(loom::ones({1}).data_ptr<int32_t>(), Catch::Contains("dtype float32"));
}

TEST_CASE("device errors: unknown types, missing indices, mixed devices") {
  loom::ones({1});  // loads the cpu plugin, so it is listed as registered
  CHECK_THROWS_WITH(loom::Device("tpu"), Catch::Contains("device type 'tpu'") &&
                                             Catch::Contains("no plugin manifest lists") &&
                                             Catch::Contains("registered types: cpu"));
  CHECK_THROWS_WITH(loom::Device("cpu:x"), Catch::Contains("invalid device string 'cpu:x'"));
  CHECK_THROWS_WITH(loom::Device("cpu:3"), Catch::Contains("cpu has 1 device(s)"));
  auto a = loom::ones({2});
  auto s = a.to(loom::Device("sim"));
  CHECK_THROWS_WITH(a + s, Catch::Contains("expected all tensors on the same device, got cpu:0 and sim:0"));
  CHECK_THROWS_WITH(s.data_ptr<float>(), Catch::Contains("needs host memory"));
}

TEST_CASE("an op on a device whose plugin failed to load names the plugin and the reason") {
  // CTest puts a manifest in LOOM_PLUGIN_PATH that claims device type
  // "brokendev" but names a library that does not exist.
  CHECK_THROWS_WITH(loom::ones({2}, DType::Float32, loom::Device("brokendev")),
                    Catch::Contains("device type 'brokendev' is unavailable") &&
                        Catch::Contains("brokendev.json") &&
                        Catch::Contains("libdoes_not_exist.so"));
  // The other plugins are unaffected.
  CHECK((loom::ones({1}) + loom::ones({1})).item<float>() == 2.0f);
}
