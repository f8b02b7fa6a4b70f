// autocast.cpp — loom/autocast.h: the per-op policy table and the casts the
// dispatcher applies (detail::autocast_call, called from dispatch()).
#include "autocast_call.h"

#include <loom/autocast.h>
#include <loom/error.h>
#include <loom/ops.h>

#include <array>
#include <unordered_map>

namespace loom::autocast {
namespace {

// PyTorch's CUDA autocast lists (torch/amp: autocast_mode.cpp), for the ops
// loom's catalog has.
const std::unordered_map<std::string_view, Policy>& table() {
  static const auto* t = new std::unordered_map<std::string_view, Policy>{
      // lower precision
      {"matmul", Policy::LowerPrecision}, {"mm", Policy::LowerPrecision}, {"bmm", Policy::LowerPrecision},
      {"addmm", Policy::LowerPrecision}, {"baddbmm", Policy::LowerPrecision}, {"linear", Policy::LowerPrecision},
      {"conv1d", Policy::LowerPrecision}, {"conv2d", Policy::LowerPrecision},
      {"conv_transpose2d", Policy::LowerPrecision}, {"scaled_dot_product_attention", Policy::LowerPrecision},
      {"lstm_cell", Policy::LowerPrecision}, {"gru_cell", Policy::LowerPrecision},
      {"rnn_tanh_cell", Policy::LowerPrecision}, {"rnn_relu_cell", Policy::LowerPrecision},
      {"outer", Policy::LowerPrecision},
      // float32
      {"exp", Policy::Float32}, {"expm1", Policy::Float32}, {"log", Policy::Float32}, {"log2", Policy::Float32},
      {"log1p", Policy::Float32}, {"reciprocal", Policy::Float32}, {"rsqrt", Policy::Float32},
      {"tan", Policy::Float32}, {"pow", Policy::Float32}, {"softplus", Policy::Float32},
      {"layer_norm", Policy::Float32}, {"group_norm", Policy::Float32}, {"norm", Policy::Float32},
      {"softmax", Policy::Float32}, {"log_softmax", Policy::Float32}, {"cumsum", Policy::Float32},
      {"cumprod", Policy::Float32}, {"sum", Policy::Float32}, {"prod", Policy::Float32},
      {"logsumexp", Policy::Float32}, {"nll_loss", Policy::Float32}, {"cross_entropy", Policy::Float32},
      {"mse_loss", Policy::Float32}, {"l1_loss", Policy::Float32}, {"smooth_l1_loss", Policy::Float32},
      {"huber_loss", Policy::Float32}, {"binary_cross_entropy_with_logits", Policy::Float32},
      {"std", Policy::Float32}, {"var", Policy::Float32},
      // promote
      {"cat", Policy::Promote}, {"stack", Policy::Promote}, {"atan2", Policy::Promote},
      {"dot", Policy::Promote}, {"scatter_add", Policy::Promote},
      {"lerp", Policy::Promote},
      // refused
      {"binary_cross_entropy", Policy::Refused},
  };
  return *t;
}

struct TypeState {
  bool enabled = false;
  std::optional<DType> dtype;  // unset: the device type's default
};

// Indexed by device slot; `active` counts enabled entries so dispatch's
// test is one thread-local load.
struct ThreadState {
  std::array<TypeState, 64> types{};
  int active = 0;
  bool suspended = false;
};

ThreadState& state() {
  thread_local ThreadState s;
  return s;
}

DType default_dtype(std::string_view type) {
  return type == "cuda" || type == "hip" ? DType::Float16 : DType::BFloat16;
}

TypeState& type_state(const std::string& device_type) {
  const int slot = device_type_slot(device_type);
  LOOM_CHECK(slot >= 0 && slot < 64, "autocast: device type '", device_type, "' has no slot");
  return state().types[static_cast<size_t>(slot)];
}

}  // namespace

Policy policy(std::string_view op) {
  const auto& t = table();
  auto it = t.find(op);
  return it == t.end() ? Policy::None : it->second;
}

bool is_enabled(const std::string& device_type) { return type_state(device_type).enabled; }

void set_enabled(const std::string& device_type, bool enabled) {
  TypeState& s = type_state(device_type);
  if (s.enabled != enabled) state().active += enabled ? 1 : -1;
  s.enabled = enabled;
}

DType dtype(const std::string& device_type) {
  return type_state(device_type).dtype.value_or(default_dtype(device_type));
}

void set_dtype(const std::string& device_type, DType t) {
  LOOM_CHECK(t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32,
             "autocast: the dtype must be float16, bfloat16 or float32, got ", name(t));
  type_state(device_type).dtype = t;
}

AutocastGuard::AutocastGuard(std::string device_type, std::optional<DType> t, bool enabled)
    : type_(std::move(device_type)), prev_enabled_(is_enabled(type_)), prev_dtype_(autocast::dtype(type_)) {
  if (t) set_dtype(type_, *t);
  set_enabled(type_, enabled);
}

AutocastGuard::~AutocastGuard() {
  set_enabled(type_, prev_enabled_);
  type_state(type_).dtype = prev_dtype_;
}

SuspendGuard::SuspendGuard() : prev_(state().suspended) { state().suspended = true; }
SuspendGuard::~SuspendGuard() { state().suspended = prev_; }

}  // namespace loom::autocast

namespace loom::detail {

bool autocast_active() {
  const auto& s = autocast::state();
  return s.active > 0 && !s.suspended;
}

void autocast_call(OpCall& call, std::vector<Tensor>& casts) {
  auto& s = autocast::state();
  const autocast::TypeState& ts = s.types[static_cast<size_t>(call.device.type)];
  if (!ts.enabled) return;
  const autocast::Policy p = autocast::policy(call.op->name());
  if (p == autocast::Policy::None) return;
  LOOM_CHECK(p != autocast::Policy::Refused, call.op->name(),
             " is unsafe to autocast (its 16-bit results can lose the value); use "
             "binary_cross_entropy_with_logits (BCEWithLogitsLoss), which is safe to autocast, or run it "
             "outside the autocast region");
  DType target = DType::Float32;
  if (p == autocast::Policy::LowerPrecision) {
    target = ts.dtype.value_or(autocast::default_dtype(call.device.type_name()));
  } else if (p == autocast::Policy::Float32) {
    target = DType::Float32;
  } else {  // promote: the widest floating dtype among the inputs
    bool any = false;
    for (const Tensor* t : call.args)
      if (t && t->defined() && t->is_floating_point() && !t->impl()->is_wrapped_number()) {
        target = any ? promote_types(target, t->dtype()) : t->dtype();
        any = true;
      }
    if (!any) return;
  }
  // No in-place op has a policy: every argument may be cast. Reserved, so
  // the pointers into `casts` stay valid.
  casts.reserve(call.args.size());
  for (size_t i = 0; i < call.args.size(); ++i) {
    const Tensor* t = call.args[i];
    if (!t || !t->defined() || !t->is_floating_point() || t->dtype() == target || t->impl()->is_wrapped_number())
      continue;
    // PyTorch casts float64 only up to float32 ops, never down to 16 bits.
    if (p == autocast::Policy::LowerPrecision && t->dtype() == DType::Float64) continue;
    if (p == autocast::Policy::Float32 && t->dtype() == DType::Float64) continue;
    casts.push_back(t->to(target));
    call.args[i] = &casts.back();
  }
}

}  // namespace loom::detail
