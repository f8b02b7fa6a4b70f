// gen_tensor_methods_test.cpp — the generator's rules, on small inputs:
// which declarations count as hand-written, how a schema becomes a method
// (or why it cannot), and when two overloads could take the same call.
// Whether the committed files match the catalog is the ctest
// core.tensor_methods_generated_fresh; whether the methods compute the right
// thing, core/tests/tensor_methods_generated_test.cpp.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "hand_written_methods.h"
#include "method_from_schema.h"

#include <fstream>
#include <sstream>

using namespace loom::tools;

namespace {

std::string declaration_of(const std::string& schema, bool number_form = false) {
  std::string why;
  const auto m = method_from_schema(loom::parse_schema(schema), number_form, why);
  return m ? m->declaration() : "skipped: " + why;
}

std::string definition_of(const std::string& schema) {
  std::string why;
  const auto m = method_from_schema(loom::parse_schema(schema), false, why);
  return m ? m->definition() : "skipped: " + why;
}

Signature sig(std::vector<std::string> types, size_t required) { return Signature{std::move(types), required}; }

}  // namespace

TEST_CASE("the scan of class Tensor finds declarations, inline bodies and table rows") {
  const std::string header = R"(
class Tensor;  // a forward declaration is not the class
class Tensor {
 public:
  // Tensor commented_out(int x);
  Tensor() = default;
  explicit Tensor(detail::IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}
  bool defined() const { return static_cast<bool>(impl_); }
  Tensor sum(IntArrayRef dim, bool keepdim = false) const;
  Tensor amax(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor& div_(const Tensor& other, const std::optional<std::string>& rounding_mode = std::nullopt);
#define LOOM_PREDICATE_METHODS(op) Tensor op() const;
  LOOM_PREDICATE_OPS(LOOM_PREDICATE_METHODS)
#undef LOOM_PREDICATE_METHODS
  Tensor operator[](int64_t index) const;
  template <class T, size_t N>
  TensorAccessor<T, N> accessor() && = delete;
 private:
  TensorImpl* checked() const {
    LOOM_CHECK(impl_, "a { brace ( in a string");
    return impl_.get();
  }
  int64_t count_{0};
};
Tensor after_the_class(int x);
)";
  const MethodSet m = scan_hand_written_methods(header);
  REQUIRE(m.count("sum"));
  CHECK(m.at("sum")[0].types == std::vector<std::string>{"IntArrayRef", "bool"});
  CHECK(m.at("sum")[0].required == 1);
  CHECK(m.at("amax")[0].required == 0);
  CHECK(m.at("div_")[0].types == std::vector<std::string>{"const Tensor&", "const std::optional<std::string>&"});
  CHECK(m.count("isnan"));  // a row of LOOM_PREDICATE_OPS
  CHECK(m.count("defined"));
  CHECK(m.count("checked"));
  CHECK(m.count("accessor"));
  CHECK_FALSE(m.count("commented_out"));
  CHECK_FALSE(m.count("LOOM_CHECK"));  // inside a body
  CHECK_FALSE(m.count("after_the_class"));
  CHECK_FALSE(m.count("operator"));
}

TEST_CASE("an X-macro table the scan does not know fails it") {
  CHECK_THROWS_WITH(scan_hand_written_methods("class Tensor {\n  LOOM_NEW_OPS(LOOM_NEW_METHODS)\n};"),
                    Catch::Contains("LOOM_NEW_OPS"));
  CHECK_THROWS(scan_hand_written_methods("class Other {};"));
}

TEST_CASE("the real tensor.h: hand-written names, including the table rows") {
  std::ifstream in(LOOM_CORE_DIR "/include/loom/tensor.h");
  std::ostringstream text;
  text << in.rdbuf();
  const MethodSet m = scan_hand_written_methods(text.str());
  CHECK(m.count("lerp_"));
  CHECK_FALSE(m.count("lerp"));  // generated
  CHECK(m.at("sum").size() == 2);
  CHECK(m.count("abs_"));        // LOOM_UNARY_OPS
  CHECK(m.count("fmod_"));       // LOOM_BINARY_OPS, inplace 1
  CHECK_FALSE(m.count("eq_"));   // LOOM_BINARY_OPS, inplace 0
  CHECK(m.count("logical_not"));  // LOOM_PREDICATE_OPS
  CHECK_FALSE(m.count("cumsum"));  // generated, so not in the scan
}

TEST_CASE("schema types and defaults map to the hand-written API's C++ types") {
  CHECK(declaration_of("lerp(Tensor self, Tensor end, Tensor weight) -> Tensor") ==
        "Tensor lerp(const Tensor& end, const Tensor& weight) const;");
  CHECK(declaration_of("prod(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor") ==
        "Tensor prod(std::optional<IntArrayRef> dim = std::nullopt, bool keepdim = false, "
        "std::optional<DType> dtype = std::nullopt) const;");
  CHECK(declaration_of("f(Tensor self, int[2] stride=1, str mode='x', Scalar? p=2, float eps=1e-05, "
                       "Tensor? w=None, Device? d=None) -> Tensor") ==
        "Tensor f(IntArrayRef stride = {1, 1}, const std::string& mode = \"x\", std::optional<Scalar> p = 2, "
        "double eps = 1e-05, const std::optional<Tensor>& w = std::nullopt, std::optional<Device> d = std::nullopt) "
        "const;");
  CHECK(declaration_of("g(Tensor self, int k, *, Generator? generator=None) -> (Tensor values, Tensor indices)") ==
        "std::tuple<Tensor, Tensor> g(int64_t k, const std::optional<Generator>& generator = std::nullopt) const;");
  CHECK(declaration_of("h(Tensor self, int chunks) -> Tensor[]") == "std::vector<Tensor> h(int64_t chunks) const;");
  // A C++ keyword as an argument name gets an underscore.
  CHECK(declaration_of("k(Tensor self, int default) -> Tensor") == "Tensor k(int64_t default_) const;");
}

TEST_CASE("in-place methods are non-const and return *this") {
  CHECK(declaration_of("tril_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)") == "Tensor& tril_(int64_t diagonal = 0);");
  const std::string body = definition_of("tril_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)");
  CHECK_THAT(body, Catch::Contains("static const OpDef& op = find_op(\"tril_\");"));
  CHECK_THAT(body, Catch::Contains("detail::run_op(op, {this}, {int_value(diagonal)});"));
  CHECK_THAT(body, Catch::Contains("return *this;"));
}

TEST_CASE("the number form takes the last tensor argument as a Scalar, wrapped on self's device") {
  CHECK(declaration_of("lerp(Tensor self, Tensor end, Tensor weight) -> Tensor", true) ==
        "Tensor lerp(const Tensor& end, Scalar weight) const;");
  CHECK(declaration_of("add_(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", true) ==
        "Tensor& add_(Scalar other, Scalar alpha = 1);");
  std::string why;
  const auto m = method_from_schema(loom::parse_schema("fmod(Tensor self, Tensor other) -> Tensor"), true, why);
  REQUIRE(m);
  CHECK_THAT(m->definition(), Catch::Contains("loom::scalar_tensor(other, this->device())"));
}

TEST_CASE("arguments with no C++ mapping skip the op, saying why") {
  CHECK_THAT(declaration_of("f(Tensor self, Tensor[] others) -> Tensor"), Catch::Contains("skipped: argument 'others' is a Tensor[]"));
  CHECK_THAT(declaration_of("f(Tensor self, float[] scales) -> Tensor"), Catch::Contains("skipped: argument 'scales' is a float[]"));
  CHECK_THAT(declaration_of("f(Tensor self, Generator g) -> Tensor"), Catch::Contains("skipped: argument 'g' is a Generator"));
  CHECK_THAT(declaration_of("f_(Tensor(a!) self, Tensor(b!) other) -> Tensor(a!)"),
             Catch::Contains("skipped: writes its argument 'other'"));
}

TEST_CASE("overloads that a call could match both are ambiguous") {
  // Tensor handles and numbers never convert into each other.
  CHECK_FALSE(may_be_ambiguous(sig({"const Tensor&"}, 1), sig({"Scalar"}, 1)));
  CHECK_FALSE(may_be_ambiguous(sig({"const Tensor&", "const Tensor&"}, 2), sig({"const Tensor&", "Scalar"}, 2)));
  // x.sum(): both take no arguments.
  CHECK(may_be_ambiguous(sig({}, 0), sig({"std::optional<IntArrayRef>", "bool"}, 0)));
  // x.pow(2): both take one number.
  CHECK(may_be_ambiguous(sig({"Scalar"}, 1), sig({"Scalar"}, 1)));
  // Different arities without overlap.
  CHECK_FALSE(may_be_ambiguous(sig({"int64_t"}, 1), sig({"int64_t", "bool"}, 2)));
  CHECK(normalise_type(" const  std::optional< Tensor > & ") == "const std::optional<Tensor>&");
}
