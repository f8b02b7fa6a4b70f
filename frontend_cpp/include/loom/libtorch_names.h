// loom/libtorch_names.h — libtorch's spellings that a mechanical port
// (<torch/torch.h> -> <loom/loom.h>, torch:: -> loom::) leaves in place:
// the TORCH_* / AT_* macros (macros have no namespace, so the rename does
// not touch them), the grad-mode guards under loom::, and the enum-like
// constants (loom::kSum, loom::kBilinear, loom::kFanOut ...), which are
// the strings loom's options take.
#pragma once

#include <loom/autograd.h>
#include <loom/error.h>
#include <loom/nn/holder.h>
#include <loom/options.h>
#include <loom/ops/loss.h>

#include <optional>
#include <sstream>
#include <string>

// TORCH_MODULE(Net) declares holder Net of NetImpl (LOOM_MODULE).
#ifndef TORCH_MODULE
#define TORCH_MODULE(Name) LOOM_MODULE(Name)
#endif
// TORCH_ARG(T, name) inside an options struct (LOOM_ARG).
#ifndef TORCH_ARG
#define TORCH_ARG(T, name) LOOM_ARG(T, name)
#endif
// TORCH_CHECK(cond, message parts...) throws loom::Error when cond is false.
#ifndef TORCH_CHECK
#define TORCH_CHECK(cond, ...) LOOM_CHECK(cond, "Expected " #cond " to be true, but got false. " __VA_OPT__(, ) __VA_ARGS__)
#endif
#ifndef AT_ASSERT
#define AT_ASSERT(cond, ...) LOOM_CHECK(cond, "Expected " #cond " to be true, but got false. " __VA_OPT__(, ) __VA_ARGS__)
#endif
#ifndef TORCH_INTERNAL_ASSERT
#define TORCH_INTERNAL_ASSERT(cond, ...) AT_ASSERT(cond __VA_OPT__(, ) __VA_ARGS__)
#endif

namespace loom {

// Grad mode for a scope, under libtorch's names.
using autograd::NoGradGuard;
// Sets grad mode to `enabled` for its scope (torch::AutoGradMode).
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(autograd::GradMode::is_enabled()) {
    autograd::GradMode::set_enabled(enabled);
  }
  ~AutoGradMode() { autograd::GradMode::set_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};
// torch::InferenceMode: no graph is recorded in its scope. (loom has no
// separate inference tensors; this is grad mode off, which is what it
// saves in libtorch too.)
class InferenceMode : public AutoGradMode {
 public:
  explicit InferenceMode(bool enabled = true) : AutoGradMode(!enabled) {}
};

// Reductions: .reduction(loom::kSum).
inline constexpr const char* kNone = "none";
inline constexpr const char* kMean = "mean";
inline constexpr const char* kSum = "sum";
// Interpolation modes.
inline constexpr const char* kNearest = "nearest";
inline constexpr const char* kNearestExact = "nearest-exact";
inline constexpr const char* kLinear = "linear";
inline constexpr const char* kBilinear = "bilinear";
inline constexpr const char* kTrilinear = "trilinear";
inline constexpr const char* kArea = "area";
// Padding modes (F::pad, Conv*Options::padding_mode).
inline constexpr const char* kConstant = "constant";
inline constexpr const char* kReflect = "reflect";
inline constexpr const char* kReplicate = "replicate";
inline constexpr const char* kZeros = "zeros";
// Initialisation: fan modes and nonlinearities (nn::init), activations
// (TransformerEncoderLayerOptions::activation).
inline constexpr const char* kFanIn = "fan_in";
inline constexpr const char* kFanOut = "fan_out";
inline constexpr const char* kReLU = "relu";
inline constexpr const char* kLeakyReLU = "leaky_relu";
inline constexpr const char* kTanh = "tanh";
inline constexpr const char* kSigmoid = "sigmoid";
inline constexpr const char* kGELU = "gelu";
inline constexpr const char* kConv1D = "conv1d";
inline constexpr const char* kConv2D = "conv2d";
inline constexpr const char* kConv3D = "conv3d";

// torch::optional / torch::nullopt (std's, as in libtorch today).
using std::nullopt;
using std::optional;
// torch::ExpandingArray<2>({2, 2}): a size per spatial dimension.
using nn::ExpandingArray;

// torch::str: the arguments streamed into one string.
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

}  // namespace loom

// Reduction::Sum unqualified, as libtorch programs write it
// (torch::nll_loss(out, target, {}, Reduction::Sum)): libtorch's headers make
// ATen's Reduction visible from the global namespace, so a ported program
// needs loom's there too.
namespace Reduction = loom::Reduction;
