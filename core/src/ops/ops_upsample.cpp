// ops_upsample.cpp — resizing the spatial dims of an (N, C, d1, ...) tensor:
// the op behind torch.nn.functional.interpolate (nearest, nearest-exact,
// linear / bilinear / trilinear, area).
//
// The op takes the output size and, optionally, the user's scale factors
// (which PyTorch uses, rather than in/out, to place output pixels when the
// size came from them). Its composite works one spatial dim at a time, the
// last first: nearest is an index_select, linear a weighted sum of two, so
// every device runs it and autograd differentiates it through those parts.
// Source positions follow ATen's upsample kernels (UpSample.h:
// nearest_idx, area_pixel_compute_source_index), computed in float for
// float32 / float16 / bfloat16 inputs and in double for float64 (ATen's
// opmath type; nearest is always float, as ATen's), so the selected pixels
// and weights are PyTorch's.
#include "core_op.h"
#include "nn_loss.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace loom {
namespace {

using detail::str_of;

enum class Mode { Nearest, NearestExact, Linear, Area };

struct ModeInfo {
  Mode mode;
  int spatial_dims;  // 0: any of 1..3
};

ModeInfo parse_mode(std::string_view m) {
  if (m == "nearest") return {Mode::Nearest, 0};
  if (m == "nearest-exact") return {Mode::NearestExact, 0};
  if (m == "linear") return {Mode::Linear, 1};
  if (m == "bilinear") return {Mode::Linear, 2};
  if (m == "trilinear") return {Mode::Linear, 3};
  if (m == "area") return {Mode::Area, 0};
  throw Error(detail::cat("interpolate: mode '", m,
                          "' is not supported (expected 'nearest', 'nearest-exact', 'linear', 'bilinear', "
                          "'trilinear' or 'area'; 'bicubic' is not implemented)"));
}

IntArrayRef ints_of(const LoomValue& v) { return {v.u.ints.data, static_cast<size_t>(v.u.ints.size)}; }

// values: [0] output_size, [1] mode, [2] align_corners, [3] scales (or None).
void prepare_upsample(OpCall& call) {
  const Tensor& x = call.arg(0);
  const ModeInfo info = parse_mode(str_of(call.values[1]));
  const IntArrayRef size = ints_of(call.values[0]);
  const int64_t spatial = x.dim() - 2;
  LOOM_CHECK(spatial >= 1 && spatial <= 3, "interpolate: expected a 3-D, 4-D or 5-D input (N, C, spatial...), got ",
             x.dim(), "-D input ", shape_str(x.sizes()));
  LOOM_CHECK(info.spatial_dims == 0 || info.spatial_dims == spatial, "interpolate: got ", x.dim(), "D input, but ",
             str_of(call.values[1]), " mode needs ", info.spatial_dims + 2, "D input");
  LOOM_CHECK(static_cast<int64_t>(size.size()) == spatial, "interpolate: output size ", shape_str(size), " has ",
             size.size(), " values for ", spatial, " spatial dims of input ", shape_str(x.sizes()));
  for (int64_t s : size) LOOM_CHECK(s > 0, "interpolate: output size ", shape_str(size), " must be positive");
  for (int64_t d = 2; d < x.dim(); ++d)
    LOOM_CHECK(x.size(d) > 0, "interpolate: input ", shape_str(x.sizes()), " has an empty spatial dim");
  if (call.values[3].kind != LOOM_VALUE_NONE)
    LOOM_CHECK(call.values[3].u.floats.size == spatial, "interpolate: ", call.values[3].u.floats.size,
               " scale factors for ", spatial, " spatial dims");
  LOOM_CHECK(info.mode != Mode::Linear || x.is_floating_point(), "interpolate: ", str_of(call.values[1]),
             " mode needs a floating point input, got ", name(x.dtype()));
  auto& plan = call.outputs.emplace_back();
  plan.dtype = x.dtype();
  plan.sizes = DimVector{x.size(0), x.size(1)};
  for (int64_t s : size) plan.sizes.push_back(s);
  call.compute_dtype = x.dtype();
}

// ATen's compute_scales_value: the inverse of the user's scale when given,
// else in / out.
template <class T>
T source_scale(std::optional<double> scale, int64_t in, int64_t out) {
  return scale && *scale > 0 ? static_cast<T>(1.0 / *scale) : static_cast<T>(in) / static_cast<T>(out);
}

// In float for every dtype, as ATen's nearest_idx.
std::vector<int64_t> nearest_indices(int64_t in, int64_t out, std::optional<double> scale, bool exact) {
  using T = float;
  std::vector<int64_t> idx(static_cast<size_t>(out));
  const T s = source_scale<T>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    int64_t i;
    if (exact)
      i = static_cast<int64_t>(std::floor((static_cast<T>(o) + T(0.5)) * s));
    else if (out == in)
      i = o;
    else if (out == 2 * in)
      i = o >> 1;
    else
      i = static_cast<int64_t>(std::floor(static_cast<T>(o) * s));
    idx[static_cast<size_t>(o)] = std::min(i, in - 1);
  }
  return idx;
}

struct LinearTaps {
  std::vector<int64_t> lo, hi;
  std::vector<double> w_lo, w_hi;
};

template <class T>
LinearTaps linear_taps(int64_t in, int64_t out, std::optional<double> scale, bool align_corners) {
  LinearTaps taps;
  // area_pixel_compute_scale, then area_pixel_compute_source_index (linear).
  T s;
  if (align_corners)
    s = out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  else
    s = source_scale<T>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    T src = align_corners ? s * static_cast<T>(o) : std::max(s * (static_cast<T>(o) + T(0.5)) - T(0.5), T(0));
    const int64_t i0 = static_cast<int64_t>(src);
    const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
    const T l1 = src - static_cast<T>(i0);
    taps.lo.push_back(i0);
    taps.hi.push_back(i1);
    taps.w_lo.push_back(static_cast<double>(T(1) - l1));
    taps.w_hi.push_back(static_cast<double>(l1));
  }
  return taps;
}

Tensor index_tensor(const std::vector<int64_t>& idx, Device device) {
  return from_vector(idx, {static_cast<int64_t>(idx.size())}, device);
}

// A weight per position along dim d, shaped to broadcast against x.
Tensor weights_along(const std::vector<double>& w, const Tensor& x, int64_t d) {
  DimVector shape(static_cast<size_t>(x.dim()), 1);
  shape[static_cast<size_t>(d)] = static_cast<int64_t>(w.size());
  return from_vector(w, {static_cast<int64_t>(w.size())}).to(x.device(), x.dtype()).view(shape);
}

void upsample_composite(OpCall& call) {
  const Tensor& input = call.arg(0);
  const Mode mode = parse_mode(str_of(call.values[1])).mode;
  const bool align_corners = call.values[2].u.i != 0;
  const IntArrayRef size = ints_of(call.values[0]);
  const int64_t spatial = input.dim() - 2;
  auto scale_of = [&](int64_t k) -> std::optional<double> {
    if (call.values[3].kind == LOOM_VALUE_NONE) return std::nullopt;
    return call.values[3].u.floats.data[k];
  };
  const bool in_double = input.dtype() == DType::Float64;
  if (mode == Mode::Area) {
    // Area is adaptive average pooling to the output size.
    Tensor x = input;
    if (spatial == 1) x = x.unsqueeze(2);
    LOOM_CHECK(spatial <= 2, "interpolate: 'area' mode supports 3-D and 4-D inputs, got ", shape_str(input.sizes()));
    Tensor y = adaptive_avg_pool2d(x, spatial == 1 ? IntArrayRef{1, size[0]} : size);
    call.result() = spatial == 1 ? y.squeeze(2) : y;
    return;
  }
  Tensor x = input;
  for (int64_t k = spatial - 1; k >= 0; --k) {
    const int64_t d = 2 + k, in = input.size(d), out = size[static_cast<size_t>(k)];
    if (mode == Mode::Nearest || mode == Mode::NearestExact) {
      const bool exact = mode == Mode::NearestExact;
      const auto idx = nearest_indices(in, out, scale_of(k), exact);
      x = x.index_select(d, index_tensor(idx, x.device()));
    } else {
      const LinearTaps t = in_double ? linear_taps<double>(in, out, scale_of(k), align_corners)
                                     : linear_taps<float>(in, out, scale_of(k), align_corners);
      x = add(mul(weights_along(t.w_lo, x, d), x.index_select(d, index_tensor(t.lo, x.device()))),
              mul(weights_along(t.w_hi, x, d), x.index_select(d, index_tensor(t.hi, x.device()))));
    }
  }
  call.result() = x.is_same(input) ? input.clone() : x;
}

}  // namespace

LOOM_CORE_OP(upsample_op,
             "upsample(Tensor input, int[] output_size, str mode='nearest', bool align_corners=False, "
             "float[]? scales=None) -> Tensor",
             prepare_upsample, upsample_composite)

Tensor upsample(const Tensor& input, IntArrayRef output_size, const std::string& mode, bool align_corners,
                const std::optional<std::vector<double>>& scales) {
  LoomValue scale_value = detail::none_value();
  if (scales) {
    scale_value.kind = LOOM_VALUE_FLOAT_LIST;
    scale_value.u.floats.data = scales->data();
    scale_value.u.floats.size = static_cast<int64_t>(scales->size());
  }
  return detail::run_op(upsample_op(), {&input},
                        {detail::int_list_value(output_size), detail::string_value(mode),
                         detail::bool_value(align_corners), scale_value});
}

Tensor interpolate(const Tensor& input, std::optional<std::vector<int64_t>> size,
                   std::optional<std::vector<double>> scale_factor, const std::string& mode,
                   std::optional<bool> align_corners, std::optional<bool> recompute_scale_factor) {
  const ModeInfo info = parse_mode(mode);
  const int64_t spatial = input.dim() - 2;
  LOOM_CHECK(spatial >= 1 && spatial <= 3, "interpolate: expected a 3-D, 4-D or 5-D input (N, C, spatial...), got ",
             input.dim(), "-D input ", shape_str(input.sizes()));
  LOOM_CHECK(!(size && scale_factor), "interpolate: only one of size or scale_factor should be defined");
  LOOM_CHECK(size || scale_factor, "interpolate: either size or scale_factor should be defined");
  LOOM_CHECK(info.mode == Mode::Linear || !align_corners.has_value(),
             "interpolate: the align_corners option can only be set with the interpolating modes: linear | "
             "bilinear | bicubic | trilinear (mode is '", mode, "')");
  // One value stands for every spatial dim, as PyTorch's.
  auto expand = [&](auto values, const char* what) {
    if (values.size() == 1) values.resize(static_cast<size_t>(spatial), values[0]);
    LOOM_CHECK(static_cast<int64_t>(values.size()) == spatial, "interpolate: ", what, " has ", values.size(),
               " values; the input ", shape_str(input.sizes()), " has ", spatial, " spatial dims");
    return values;
  };
  std::vector<int64_t> out;
  std::optional<std::vector<double>> scales;
  if (size) {
    out = expand(*size, "size");
  } else {
    scales = expand(*scale_factor, "scale_factor");
    for (int64_t k = 0; k < spatial; ++k)
      out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(input.size(2 + k)) * (*scales)[k])));
    // recompute_scale_factor: place pixels by in / out, not the given scale.
    if (recompute_scale_factor.value_or(false)) scales.reset();
  }
  return upsample(input, out, mode, align_corners.value_or(false), scales);
}

}  // namespace loom
