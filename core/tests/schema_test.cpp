#include <catch2/catch.hpp>
#include <loom/schema.h>

TEST_CASE("schemas parse into arguments with types, defaults and annotations") {
  auto s = loom::parse_schema(
      "sum(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  CHECK(s.name == "sum");
  REQUIRE(s.args.size() == 4);
  CHECK(s.args[1].type == loom::ArgType::IntList);
  CHECK(s.args[1].optional);
  CHECK(s.args[2].default_value.kind == LOOM_VALUE_BOOL);
  CHECK(s.args[3].kwarg_only);
  CHECK(s.num_tensor_args() == 1);

  auto f = loom::parse_schema("fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)");
  CHECK(f.is_inplace());
  CHECK(f.args[0].alias == "a");
  CHECK(f.returns[0].mutated);

  auto c = loom::parse_schema("conv(Tensor x, int[2] stride=1, float eps=1e-5) -> (Tensor out, Tensor idx)");
  CHECK(c.args[1].default_ints == std::vector<int64_t>{1, 1});
  CHECK(c.args[2].default_value.u.f == Approx(1e-5));
  CHECK(c.returns.size() == 2);
  CHECK(c.returns[1].name == "idx");

  auto o = loom::parse_schema("add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  CHECK(o.full_name() == "add.out");
}

TEST_CASE("malformed schemas are rejected with the position and the problem") {
  CHECK_THROWS_WITH(loom::parse_schema("add(Tensor self"), Catch::Contains("expected ')'"));
  CHECK_THROWS_WITH(loom::parse_schema("add(Tensr self) -> Tensor"), Catch::Contains("unknown type 'Tensr'"));
  CHECK_THROWS_WITH(loom::parse_schema("add(Tensor self) Tensor"), Catch::Contains("expected '->'"));
  CHECK_THROWS_WITH(loom::parse_schema("add(int x=None) -> Tensor"), Catch::Contains("non-optional"));
  CHECK_THROWS_WITH(loom::parse_schema("add(Tensor a, Tensor a) -> Tensor"), Catch::Contains("duplicate"));
  CHECK_THROWS_WITH(loom::parse_schema("(Tensor a) -> Tensor"), Catch::Contains("op name"));
  CHECK_THROWS_WITH(loom::parse_schema("f(bool b=maybe) -> Tensor"), Catch::Contains("True or False"));
  CHECK_THROWS_WITH(loom::parse_schema("f(Tensor a) -> Tensor junk junk"), Catch::Contains("after the return"));
}
