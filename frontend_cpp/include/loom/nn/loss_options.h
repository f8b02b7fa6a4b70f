// loom/nn/loss_options.h — options of the losses, shared by the loss
// modules (loom/nn/loss.h) and loom::nn::functional (loom/nn/functional.h).
// reduction is "mean" (default), "sum" or "none"; an undefined weight means
// none. Defaults are PyTorch's.
#pragma once

#include <loom/nn/holder.h>
#include <loom/tensor.h>

#include <string>

namespace loom::nn {

// MSELoss, L1Loss: only a reduction.
struct ReductionOptions {
  LOOM_ARG(std::string, reduction) = "mean";
};
using MSELossOptions = ReductionOptions;
using L1LossOptions = ReductionOptions;

struct SmoothL1LossOptions {
  LOOM_ARG(std::string, reduction) = "mean";
  // Where the loss turns from quadratic to linear; 0 is L1, < 0 an error.
  LOOM_ARG(double, beta) = 1.0;
};

struct NLLLossOptions {
  // Per-class weights [C].
  LOOM_ARG(Tensor, weight);
  LOOM_ARG(int64_t, ignore_index) = -100;
  LOOM_ARG(std::string, reduction) = "mean";
};

struct CrossEntropyLossOptions {
  LOOM_ARG(Tensor, weight);
  LOOM_ARG(int64_t, ignore_index) = -100;
  LOOM_ARG(std::string, reduction) = "mean";
  // In [0, 1]: mixes the target with the uniform distribution.
  LOOM_ARG(double, label_smoothing) = 0.0;
};

struct BCELossOptions {
  // Broadcasts to the input's shape.
  LOOM_ARG(Tensor, weight);
  LOOM_ARG(std::string, reduction) = "mean";
};

struct BCEWithLogitsLossOptions {
  LOOM_ARG(Tensor, weight);
  // Weight of the positive class, per class (broadcasts over the last dim).
  LOOM_ARG(Tensor, pos_weight);
  LOOM_ARG(std::string, reduction) = "mean";
};

}  // namespace loom::nn
