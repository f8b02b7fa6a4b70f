// The CUDA plugin seen through loom. On a machine without a GPU (CI) the
// plugin must load, report zero devices with a reason, and using a cuda
// device must fail with an error that carries that reason. With a GPU,
// tensors round-trip through the device with fill_ and copy_ (casts,
// strided and overlapping copies) running natively.
#include <catch2/catch.hpp>
#include <loom/loom.h>

#include <algorithm>
#include <string>

// The device type under test: "cuda", or "hip" when plugins/hip/tests
// builds this file for the HIP plugin (built from the same sources).
#ifndef LOOM_TEST_GPU
#define LOOM_TEST_GPU "cuda"
#endif

namespace {

int gpu_devices() {
  // The name resolves through the registry (loading the plugin); the
  // count is the plugin's.
  (void)loom::device_type_names();
  return loom::device_count(LOOM_TEST_GPU);
}

}  // namespace

TEST_CASE("the GPU plugin loads and registers its device type") {
  // Parsing a device string loads its plugin on first use; with zero
  // devices that is an error naming the reason, not a crash.
  try {
    (void)loom::Device(LOOM_TEST_GPU);
  } catch (const loom::Error&) {
  }
  const auto names = loom::device_type_names();
  CHECK(std::find(names.begin(), names.end(), LOOM_TEST_GPU) != names.end());
}

TEST_CASE("without a GPU: zero devices, a reason, and a clear error") {
  (void)loom::device_type_slot(LOOM_TEST_GPU);
  if (gpu_devices() > 0) {
    WARN("skipped: this machine has " << gpu_devices() << " " LOOM_TEST_GPU " device(s)");
    return;
  }
  const std::string reason = loom::device_unavailable_reason(LOOM_TEST_GPU);
  INFO("reason: " << reason);
  CHECK_FALSE(reason.empty());
  CHECK_THROWS_WITH(loom::Device(LOOM_TEST_GPU ":0"),
                    Catch::Contains("device '" LOOM_TEST_GPU ":0' does not exist: " LOOM_TEST_GPU " has 0 device(s)") &&
                        Catch::Contains(reason));
  CHECK_THROWS_WITH(loom::ones({2, 2}).to(std::string(LOOM_TEST_GPU)),
                    Catch::Contains(LOOM_TEST_GPU " has 0 device(s)"));
}

TEST_CASE("with a GPU: fill_, copy_ and casts round-trip through the device") {
  (void)loom::device_type_slot(LOOM_TEST_GPU);
  if (gpu_devices() == 0) {
    WARN("skipped: no " LOOM_TEST_GPU " device (" << loom::device_unavailable_reason(LOOM_TEST_GPU) << ")");
    return;
  }
  const loom::Device dev(LOOM_TEST_GPU ":0");
  const loom::Tensor x = loom::arange(0, 24, 1, loom::DType::Float32).view({2, 3, 4});
  const loom::Tensor d = x.to(dev);
  CHECK(d.device() == dev);
  CHECK(d.cpu().to_vector<float>() == x.to_vector<float>());
  // Strided source (a transpose), dtype conversions both ways.
  CHECK(d.transpose(0, 2).contiguous().cpu().to_vector<float>() == x.transpose(0, 2).contiguous().to_vector<float>());
  CHECK(d.to(loom::DType::Int32).cpu().to_vector<int32_t>() == x.to(loom::DType::Int32).to_vector<int32_t>());
  CHECK(d.to(loom::DType::BFloat16).to(loom::DType::Float32).cpu().to_vector<float>() ==
        x.to(loom::DType::BFloat16).to(loom::DType::Float32).to_vector<float>());
  // fill_ and an overlapping in-place copy (x[1:] = x[:-1]).
  loom::Tensor f = loom::empty({5}, loom::DType::Float64, dev);
  f.fill_(2.5);
  CHECK(f.cpu().to_vector<double>() == std::vector<double>(5, 2.5));
  loom::Tensor r = loom::arange(0, 6, 1, loom::DType::Int64).to(dev);
  r.narrow(0, 1, 5).copy_(r.narrow(0, 0, 5));
  CHECK(r.cpu().to_vector<int64_t>() == std::vector<int64_t>{0, 0, 1, 2, 3, 4});
}
