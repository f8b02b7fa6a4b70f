// fused_cases.h — random fused elementwise regions (plugin_api.h's
// LoomFusedRegion) offered to a device's fused_* slots, each compared with
// the same region run op by op on the CPU.
#pragma once

#include <loom/device.h>
#include <loom/fusion.h>
#include <loom/tensor.h>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace loom::conformance {

struct FusedReport {
  size_t cases = 0;     // regions generated and offered
  size_t matched = 0;   // compiled, ran and matched
  size_t declined = 0;  // the device declined (or has no fused_* slots)
  size_t skipped = 0;   // the reference itself failed (an integer division by zero ...)
  std::string declined_reason;        // the first decline's message
  std::vector<std::string> failures;  // region text, dtype and what differed
  bool failed() const { return !failures.empty(); }
};

// One random region over `dtype`, reproducible from `seed`, and CPU inputs
// for it (also what a plugin's own tests can feed its region compiler).
struct RandomRegion {
  std::unique_ptr<fusion::RegionBuilder> builder = std::make_unique<fusion::RegionBuilder>();
  std::vector<Tensor> inputs;
};
RandomRegion random_region(DType dtype, uint64_t seed);

// `per_dtype` regions for every dtype, reproducible from `seed`.
FusedReport run_fused_cases(Device device, int per_dtype, uint64_t seed = 1);

void print_fused_report(std::ostream& os, const std::string& device, const FusedReport& r);

}  // namespace loom::conformance
