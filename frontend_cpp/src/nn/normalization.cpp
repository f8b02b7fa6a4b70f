// normalization.cpp — BatchNorm1d/2d, LayerNorm, GroupNorm (loom/nn/normalization.h).
#include <loom/nn/init.h>
#include <loom/nn/normalization.h>
#include <loom/ops.h>

#include <sstream>

#include "layer_util.h"

namespace loom::nn {
namespace detail {

BatchNormBase::BatchNormBase(const char* type_name, const BatchNormOptions& options_, int64_t min_dim,
                             int64_t max_dim)
    : Module(type_name), options(options_), min_dim_(min_dim), max_dim_(max_dim) {
  const int64_t c = options.num_features();
  LOOM_CHECK(c > 0, type_name, ": num_features must be > 0, got ", c);
  if (options.affine()) {
    weight = register_parameter("weight", loom::empty({c}));
    bias = register_parameter("bias", loom::empty({c}));
  }
  if (options.track_running_stats()) {
    running_mean = register_buffer("running_mean", loom::zeros({c}));
    running_var = register_buffer("running_var", loom::ones({c}));
    num_batches_tracked = register_buffer("num_batches_tracked", loom::zeros({}, DType::Int64));
  }
  reset_parameters();
}

void BatchNormBase::reset_running_stats() {
  if (!options.track_running_stats()) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  num_batches_tracked.zero_();
}

void BatchNormBase::reset_parameters() {
  reset_running_stats();
  if (options.affine()) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor BatchNormBase::forward(const Tensor& input) {
  if (input.dim() < min_dim_ || input.dim() > max_dim_) {
    const std::string expected = min_dim_ == max_dim_
                                     ? loom::detail::cat(min_dim_, "D")
                                     : loom::detail::cat(min_dim_, "D or ", max_dim_, "D");
    throw Error(loom::detail::cat(name(), ": expected ", expected, " input (got ", input.dim(),
                                  "D input)"));
  }
  LOOM_CHECK(input.size(1) == options.num_features(), name(), ": expected ", options.num_features(),
             " channels (dim 1), got input of shape ", shape_str(input.sizes()));
  double factor = options.momentum().value_or(0.0);
  if (is_training() && options.track_running_stats()) {
    num_batches_tracked.add_(loom::ones({}, DType::Int64));
    if (!options.momentum())  // cumulative moving average
      factor = 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>());
  }
  // Batch statistics in training, or when there are no running ones.
  const bool use_batch_stats = is_training() || !options.track_running_stats();
  return batch_norm(input, running_mean, running_var, weight, bias, use_batch_stats, factor,
                    options.eps());
}

std::string BatchNormBase::extra_repr() const {
  std::ostringstream os;
  os << options.num_features() << ", eps=" << options.eps() << ", momentum=";
  if (options.momentum())
    os << *options.momentum();
  else
    os << "None";
  os << ", affine=" << py_bool(options.affine())
     << ", track_running_stats=" << py_bool(options.track_running_stats());
  return os.str();
}

}  // namespace detail

LayerNormImpl::LayerNormImpl(const LayerNormOptions& options_) : Module("LayerNorm"), options(options_) {
  LOOM_CHECK(!options.normalized_shape().empty(), "LayerNorm: normalized_shape can't be empty");
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", loom::empty(options.normalized_shape()));
    bias = register_parameter("bias", loom::empty(options.normalized_shape()));
  }
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (!options.elementwise_affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return layer_norm(input, options.normalized_shape(), weight, bias, options.eps());
}

std::string LayerNormImpl::extra_repr() const {
  std::ostringstream os;
  os << "(";
  const auto& s = options.normalized_shape();
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << (s.size() == 1 ? ",)" : ")") << ", eps=" << options.eps()
     << ", elementwise_affine=" << detail::py_bool(options.elementwise_affine());
  return os.str();
}

GroupNormImpl::GroupNormImpl(const GroupNormOptions& options_) : Module("GroupNorm"), options(options_) {
  const int64_t g = options.num_groups(), c = options.num_channels();
  LOOM_CHECK(g > 0 && c > 0 && c % g == 0, "GroupNorm: num_channels (", c,
             ") must be a positive multiple of num_groups (", g, ")");
  if (options.affine()) {
    weight = register_parameter("weight", loom::empty({c}));
    bias = register_parameter("bias", loom::empty({c}));
  }
  reset_parameters();
}

void GroupNormImpl::reset_parameters() {
  if (!options.affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  return group_norm(input, options.num_groups(), weight, bias, options.eps());
}

std::string GroupNormImpl::extra_repr() const {
  return loom::detail::cat(options.num_groups(), ", ", options.num_channels(), ", eps=", options.eps(),
                           ", affine=", detail::py_bool(options.affine()));
}

}  // namespace loom::nn
