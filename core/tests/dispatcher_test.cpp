// def / impl / fallback from C++ (LOOM_LIBRARY), and the dispatch order.
#include <catch2/catch.hpp>
#include <loom/loom.h>
#include <loom/plugin.hpp>
#include <loom/did_you_mean.h>
#include <loom/op_call.h>
#include <loom/plugin_host.h>

#include <atomic>
#include <thread>

using loom::DType;

namespace {

// A custom op with its own CPU kernel: out = self * factor.
void scale_kernel(const LoomKernelCall& c) {
  const double f = loom::plugin::value_float(c, 0);
  const auto& in = c.inputs[0];
  const auto& out = c.outputs[0];
  if (in.dtype != LOOM_DTYPE_FLOAT32 || !loom::plugin::is_contiguous(in))
    throw loom::plugin::Failure(LOOM_STATUS_UNSUPPORTED, "float32 contiguous only");
  const float* x = loom::plugin::data_ptr<float>(in);
  float* y = loom::plugin::data_ptr<float>(out);
  for (int64_t i = 0; i < loom::plugin::numel(in); ++i) y[i] = static_cast<float>(x[i] * f);
}

std::atomic<int> boxed_calls{0};
LoomError* counting_fallback(const LoomKernelCall* c) {
  ++boxed_calls;
  return loom::plugin::make_error(LOOM_STATUS_UNSUPPORTED,
                                  std::string("boxed fallback saw op ") +
                                      loom::host_api()->op_name(c->op));
}

}  // namespace

LOOM_LIBRARY(dispatcher_test, m) {
  m.def("dtest_scale(Tensor self, float factor=2.0) -> Tensor");
  m.impl("dtest_scale", "cpu", loom::CppKernel(scale_kernel),
         {LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32), 0});
  m.def("dtest_nokernel(Tensor self) -> Tensor");
  // The same kernel, declared contiguous-only: the core adapts every call.
  m.def("dtest_cscale(Tensor self, float factor=2.0) -> Tensor");
  m.impl("dtest_cscale", "cpu", loom::CppKernel(scale_kernel),
         {LOOM_DTYPE_BIT(LOOM_DTYPE_FLOAT32), LOOM_KERNEL_CONTIGUOUS_ONLY});
  m.def("dtest_cfill_(Tensor(a!) self) -> Tensor(a!)");
  m.impl("dtest_cfill_", "cpu",
         loom::CppKernel([](const LoomKernelCall& c) {
           if (!loom::plugin::is_contiguous(c.outputs[0]))
             throw loom::plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, "not contiguous");
           float* y = loom::plugin::data_ptr<float>(c.outputs[0]);
           for (int64_t i = 0; i < loom::plugin::numel(c.outputs[0]); ++i) y[i] = 7;
         }),
         {0, LOOM_KERNEL_CONTIGUOUS_ONLY});
}

namespace {
loom::Tensor call1(const char* op, const loom::Tensor& t, std::vector<LoomValue> values = {}) {
  loom::OpCall call(loom::Dispatcher::instance().op(op));
  call.args.push_back(&t);
  for (auto& v : values) call.values.push_back(v);
  loom::dispatch(call);
  return call.result();
}
LoomValue fval(double f) {
  LoomValue v{};
  v.kind = LOOM_VALUE_FLOAT;
  v.u.f = f;
  return v;
}
}  // namespace

TEST_CASE("LOOM_LIBRARY defines an op and its CPU kernel") {
  auto x = loom::from_vector<float>({1, 2, 3}, {3});
  CHECK(call1("dtest_scale", x, {fval(3)}).to_vector<float>() == std::vector<float>{3, 6, 9});
  const auto& op = loom::Dispatcher::instance().op("dtest_scale");
  CHECK(op.schema().args[1].default_value.u.f == 2.0);
  CHECK(op.kernel(loom::cpu_device().type)->provider == "C++ library 'dispatcher_test'");
  CHECK_THAT(op.kernel(loom::cpu_device().type)->where, Catch::Contains("dispatcher_test.cpp"));
}

TEST_CASE("a missing kernel names the op, the device and where kernels exist") {
  auto x = loom::ones({2});
  CHECK_THROWS_WITH(call1("dtest_nokernel", x),
                    Catch::Contains("op 'dtest_nokernel' has no kernel on device 'cpu'") &&
                        Catch::Contains("(no device)"));
  // A dtype the only kernel does not take: named too.
  CHECK_THROWS_WITH(call1("dtest_scale", loom::ones({2}, DType::Float64), {fval(1)}),
                    Catch::Contains("has a kernel on device 'cpu' for float32 but not for dtype float64"));
  // On sim the op goes to the CPU fallback, which has no CPU kernel either.
  CHECK_THROWS_WITH(call1("dtest_nokernel", x.to(loom::Device("sim"))),
                    Catch::Contains("no CPU kernel to fall back to"));
}

TEST_CASE("a kernel that declines (UNSUPPORTED) hands the call on") {
  auto x = loom::arange(6, DType::Float32).view({2, 3}).t();  // not contiguous: declined
  // With nothing after it on the CPU, the error quotes the kernel's reason.
  CHECK_THROWS_WITH(call1("dtest_scale", x, {fval(2)}),
                    Catch::Contains("the kernel for op 'dtest_scale' on device 'cpu'") &&
                        Catch::Contains("declined this float32 call: float32 contiguous only"));
}

TEST_CASE("contiguous-only kernels get contiguous inputs and outputs, written back") {
  auto x = loom::arange(6, DType::Float32).view({2, 3}).t();  // transposed
  CHECK(call1("dtest_cscale", x, {fval(2)}).to_vector<float>() ==
        std::vector<float>{0, 6, 2, 8, 4, 10});
  auto base = loom::zeros({2, 3});
  auto col = base.select(1, 1);  // strided: the kernel writes a stand-in
  call1("dtest_cfill_", col);
  CHECK(base.to_vector<float>() == std::vector<float>{0, 7, 0, 0, 7, 0});
}

TEST_CASE("defining an op twice is an error naming both places") {
  CHECK_THROWS_WITH(loom::Dispatcher::instance().def("dtest_scale(Tensor self) -> Tensor", "here"),
                    Catch::Contains("already defined") && Catch::Contains("here"));
  CHECK_THROWS_WITH(loom::Library("x", "f.cpp", 1).impl("no_such_op", "cpu", &counting_fallback),
                    Catch::Contains("unknown op 'no_such_op'") && Catch::Contains("f.cpp:1"));
}

TEST_CASE("registration is safe while other threads dispatch", "[concurrency]") {
  auto x = loom::from_vector<float>({1, 2}, {2});
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&] {
      while (!stop) {
        try {
          auto y = x + x;
          if (y.to_vector<float>()[1] != 4.0f) ++errors;
        } catch (...) {
          ++errors;
        }
      }
    });
  loom::Library lib("thread_test", __FILE__, __LINE__);
  for (int i = 0; i < 200; ++i) {
    const std::string name = "dtest_threaded_" + std::to_string(i);
    lib.def(name + "(Tensor self) -> Tensor");
    lib.impl(name, "cpu", loom::CppKernel(scale_kernel));
  }
  stop = true;
  for (auto& w : workers) w.join();
  CHECK(errors == 0);
}

TEST_CASE("a mistyped op name gets a suggestion") {
  CHECK_THROWS_WITH(loom::Dispatcher::instance().op("matmull"),
                    Catch::Contains("unknown op 'matmull'") && Catch::Contains("did you mean 'matmul'?"));
  CHECK_THROWS_WITH(loom::Dispatcher::instance().op("sofmtax"), Catch::Contains("did you mean 'softmax'?"));
  // Far from every name: no guess.
  CHECK_THROWS_WITH(loom::Dispatcher::instance().op("zzzzzzzz"), !Catch::Contains("did you mean"));
  CHECK(loom::closest_name("Relu", {"relu", "selu"}) == "relu");
  CHECK(loom::closest_name("ab", {"xy"}).empty());
}
