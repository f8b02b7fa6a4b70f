// loom/nn/upsampling.h — Upsample, as libtorch's torch::nn::Upsample:
//
//   loom::nn::Upsample up(loom::nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}).mode(loom::kNearest));
//
// Its forward is functional::interpolate (the catalog's `upsample` op):
// exactly one of size and scale_factor, modes "nearest", "linear",
// "bilinear", "trilinear"; align_corners only with the linear modes.
#pragma once

#include <loom/nn/functional.h>
#include <loom/nn/module.h>

#include <optional>
#include <string>
#include <vector>

namespace loom::nn {

struct UpsampleOptions {
  LOOM_ARG(std::optional<std::vector<int64_t>>, size);
  LOOM_ARG(std::optional<std::vector<double>>, scale_factor);
  LOOM_ARG(std::string, mode) = "nearest";
  LOOM_ARG(std::optional<bool>, align_corners);
};

class UpsampleImpl : public Module {
 public:
  explicit UpsampleImpl(const UpsampleOptions& options = {}) : Module("Upsample"), options(options) {}
  LOOM_CLONE_FROM_OPTIONS(UpsampleImpl)
  Tensor forward(const Tensor& input) {
    return functional::interpolate(input, functional::InterpolateFuncOptions()
                                              .size(options.size())
                                              .scale_factor(options.scale_factor())
                                              .mode(options.mode())
                                              .align_corners(options.align_corners()));
  }
  std::string extra_repr() const override;

  UpsampleOptions options;
};
LOOM_MODULE(Upsample);

}  // namespace loom::nn
