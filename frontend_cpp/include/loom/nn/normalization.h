// loom/nn/normalization.h — BatchNorm1d/2d, LayerNorm, GroupNorm.
//
// BatchNorm in training normalises with the batch statistics and updates
// running_mean / running_var (unbiased variance, momentum 0.1) and
// num_batches_tracked; in eval it uses the running statistics. With
// momentum = nullopt the running stats are a cumulative average.
#pragma once

#include <loom/nn/module.h>

#include <optional>
#include <vector>

namespace loom::nn {

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  LOOM_ARG(int64_t, num_features);
  LOOM_ARG(double, eps) = 1e-5;
  LOOM_ARG(std::optional<double>, momentum) = 0.1;
  LOOM_ARG(bool, affine) = true;
  LOOM_ARG(bool, track_running_stats) = true;
};

namespace detail {
class BatchNormBase : public Module {
 public:
  Tensor forward(const Tensor& input);
  void reset_running_stats();
  void reset_parameters();
  std::string extra_repr() const override;

  BatchNormOptions options;
  Tensor weight, bias;                                       // [C] when affine
  Tensor running_mean, running_var, num_batches_tracked;     // when tracking

 protected:
  BatchNormBase(const char* type_name, const BatchNormOptions& options, int64_t min_dim,
                int64_t max_dim);

 private:
  int64_t min_dim_, max_dim_;
};
}  // namespace detail

// Over (N, C) or (N, C, L).
class BatchNorm1dImpl : public detail::BatchNormBase {
 public:
  explicit BatchNorm1dImpl(const BatchNormOptions& options)
      : BatchNormBase("BatchNorm1d", options, 2, 3) {}
  LOOM_CLONE_FROM_OPTIONS(BatchNorm1dImpl)
};
LOOM_MODULE(BatchNorm1d);

// Over (N, C, H, W).
class BatchNorm2dImpl : public detail::BatchNormBase {
 public:
  explicit BatchNorm2dImpl(const BatchNormOptions& options)
      : BatchNormBase("BatchNorm2d", options, 4, 4) {}
  LOOM_CLONE_FROM_OPTIONS(BatchNorm2dImpl)
};
LOOM_MODULE(BatchNorm2d);

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape)  // NOLINT
      : normalized_shape_(std::move(normalized_shape)) {}
  LOOM_ARG(std::vector<int64_t>, normalized_shape);
  LOOM_ARG(double, eps) = 1e-5;
  LOOM_ARG(bool, elementwise_affine) = true;
};

// Normalises over the trailing normalized_shape dims; weight ones, bias zeros.
class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(const LayerNormOptions& options);
  LOOM_CLONE_FROM_OPTIONS(LayerNormImpl)
  Tensor forward(const Tensor& input);
  void reset_parameters();
  std::string extra_repr() const override;

  LayerNormOptions options;
  Tensor weight, bias;
};
LOOM_MODULE(LayerNorm);

struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels)
      : num_groups_(num_groups), num_channels_(num_channels) {}
  LOOM_ARG(int64_t, num_groups);
  LOOM_ARG(int64_t, num_channels);
  LOOM_ARG(double, eps) = 1e-5;
  LOOM_ARG(bool, affine) = true;
};

// input (N, C, *): statistics per sample over groups of C / num_groups channels.
class GroupNormImpl : public Module {
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels)
      : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  explicit GroupNormImpl(const GroupNormOptions& options);
  LOOM_CLONE_FROM_OPTIONS(GroupNormImpl)
  Tensor forward(const Tensor& input);
  void reset_parameters();
  std::string extra_repr() const override;

  GroupNormOptions options;
  Tensor weight, bias;
};
LOOM_MODULE(GroupNorm);

}  // namespace loom::nn
