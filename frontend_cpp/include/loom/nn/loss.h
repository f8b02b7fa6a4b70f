// loom/nn/loss.h — losses as modules: forward(input, target) calls the
// loom::nn::functional loss with the module's options. Class weights
// (weight, pos_weight) are registered as buffers, as PyTorch does, so they
// follow to() and appear in state_dict().
//
//   loom::nn::CrossEntropyLoss ce(loom::nn::CrossEntropyLossOptions().ignore_index(0));
//   auto loss = ce(logits, target);
#pragma once

#include <loom/nn/functional.h>
#include <loom/nn/module.h>

namespace loom::nn {
namespace detail {

template <class Options, Tensor (*Fn)(const Tensor&, const Tensor&, const Options&)>
class LossBase : public Module {
 public:
  Tensor forward(const Tensor& input, const Tensor& target) { return Fn(input, target, options); }
  Options options;

 protected:
  LossBase(const char* type_name, Options o) : Module(type_name), options(std::move(o)) {
    if constexpr (requires { options.weight(); })
      options.weight(register_buffer("weight", options.weight()));
    if constexpr (requires { options.pos_weight(); })
      options.pos_weight(register_buffer("pos_weight", options.pos_weight()));
  }
};

}  // namespace detail

#define LOOM_DEFINE_LOSS(Name, OptionsType, fn)                                              \
  class Name##Impl : public detail::LossBase<OptionsType, &functional::fn> {                 \
   public:                                                                                   \
    explicit Name##Impl(OptionsType options = {}) : LossBase(#Name, std::move(options)) {}   \
    LOOM_CLONE_FROM_OPTIONS(Name##Impl)                                                      \
  };                                                                                         \
  LOOM_MODULE(Name)

LOOM_DEFINE_LOSS(MSELoss, MSELossOptions, mse_loss);
LOOM_DEFINE_LOSS(L1Loss, L1LossOptions, l1_loss);
LOOM_DEFINE_LOSS(SmoothL1Loss, SmoothL1LossOptions, smooth_l1_loss);
LOOM_DEFINE_LOSS(NLLLoss, NLLLossOptions, nll_loss);
LOOM_DEFINE_LOSS(CrossEntropyLoss, CrossEntropyLossOptions, cross_entropy);
LOOM_DEFINE_LOSS(BCELoss, BCELossOptions, binary_cross_entropy);
LOOM_DEFINE_LOSS(BCEWithLogitsLoss, BCEWithLogitsLossOptions, binary_cross_entropy_with_logits);

#undef LOOM_DEFINE_LOSS

}  // namespace loom::nn
