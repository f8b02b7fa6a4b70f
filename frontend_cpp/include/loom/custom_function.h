// loom/custom_function.h — differentiable functions with a hand-written
// backward, as libtorch's torch::autograd::Function:
//
//   struct MulConstant : loom::autograd::Function<MulConstant> {
//     static loom::Tensor forward(loom::autograd::AutogradContext* ctx, loom::Tensor x, double c) {
//       ctx->saved_data["c"] = c;
//       return x * c;
//     }
//     static loom::autograd::tensor_list backward(loom::autograd::AutogradContext* ctx,
//                                                 loom::autograd::tensor_list grads) {
//       return {grads[0] * ctx->saved_data["c"].toDouble(), loom::Tensor()};
//     }
//   };
//   auto y = MulConstant::apply(x, 2.0);
//
// forward runs with grad mode off and returns a Tensor or a tensor_list;
// backward gets one gradient per output (zeros where none arrived, unless
// set_materialize_grads(false)) and returns one per forward argument
// (undefined for non-tensors and for no gradient). Built on
// loom::autograd::record_custom_function, as Python's Function is.
#pragma once

#include <loom/autograd.h>
#include <loom/detail/type_name.h>
#include <loom/error.h>
#include <loom/ops.h>
#include <loom/tensor.h>

#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

namespace loom::autograd {

using variable_list = std::vector<Tensor>;
using tensor_list = std::vector<Tensor>;

// A value kept in AutogradContext::saved_data (at::IValue's common kinds).
class IValue {
 public:
  IValue() = default;
  IValue(bool v) : v_(v) {}                        // NOLINT: implicit, as at::IValue
  IValue(int v) : v_(static_cast<int64_t>(v)) {}   // NOLINT
  IValue(int64_t v) : v_(v) {}                     // NOLINT
  IValue(double v) : v_(v) {}                      // NOLINT
  IValue(std::string v) : v_(std::move(v)) {}      // NOLINT
  IValue(const char* v) : v_(std::string(v)) {}    // NOLINT
  IValue(Tensor v) : v_(std::move(v)) {}           // NOLINT
  IValue(std::vector<Tensor> v) : v_(std::move(v)) {}   // NOLINT
  IValue(std::vector<int64_t> v) : v_(std::move(v)) {}  // NOLINT
  IValue(std::vector<double> v) : v_(std::move(v)) {}   // NOLINT

  bool isNone() const { return v_.index() == 0; }
  bool isBool() const { return std::holds_alternative<bool>(v_); }
  bool isInt() const { return std::holds_alternative<int64_t>(v_); }
  bool isDouble() const { return std::holds_alternative<double>(v_); }
  bool isString() const { return std::holds_alternative<std::string>(v_); }
  bool isTensor() const { return std::holds_alternative<Tensor>(v_); }
  bool isTensorList() const { return std::holds_alternative<std::vector<Tensor>>(v_); }

  bool toBool() const { return get<bool>("bool"); }
  int64_t toInt() const { return get<int64_t>("int"); }
  // An int converts, as at::IValue's toDouble does not (ints saved for a
  // double multiplier are common; the value is exact).
  double toDouble() const { return isInt() ? static_cast<double>(toInt()) : get<double>("double"); }
  const std::string& toStringRef() const { return get<std::string>("string"); }
  Tensor toTensor() const { return get<Tensor>("Tensor"); }
  std::vector<Tensor> toTensorVector() const { return get<std::vector<Tensor>>("Tensor list"); }
  std::vector<int64_t> toIntVector() const { return get<std::vector<int64_t>>("int list"); }
  std::vector<double> toDoubleVector() const { return get<std::vector<double>>("double list"); }

 private:
  template <class T>
  const T& get(const char* what) const {
    const T* p = std::get_if<T>(&v_);
    LOOM_CHECK(p, "IValue: expected a ", what, ", but the saved value is a ", kind());
    return *p;
  }
  const char* kind() const {
    static const char* names[] = {"None",   "bool",        "int",      "double",     "string",
                                  "Tensor", "Tensor list", "int list", "double list"};
    return names[v_.index()];
  }
  std::variant<std::monostate, bool, int64_t, double, std::string, Tensor, std::vector<Tensor>, std::vector<int64_t>,
               std::vector<double>>
      v_;
};

// What forward and backward of one call share.
class AutogradContext {
 public:
  // Tensors for backward (get_saved_variables). An output saved here is
  // kept without its history (holding it whole would be a cycle: output ->
  // node -> context -> output).
  void save_for_backward(variable_list to_save) { saved_ = std::move(to_save); }
  variable_list get_saved_variables() const { return saved_; }
  // Inputs forward modified in place (accepted; loom's version counters
  // already see the change).
  void mark_dirty(const variable_list& inputs) { (void)inputs; }
  // Outputs that get no gradient (indices, masks).
  void mark_non_differentiable(const variable_list& outputs) {
    for (const Tensor& t : outputs) non_differentiable_.insert(t.impl());
  }
  // false: undefined gradients reach backward as undefined, not as zeros.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  // Whether forward argument `index` is a tensor that requires grad.
  bool needs_input_grad(size_t index) const { return index < needs_grad_.size() && needs_grad_[index]; }

  std::unordered_map<std::string, IValue> saved_data;

 private:
  template <class T>
  friend struct Function;
  variable_list saved_;
  std::unordered_set<const void*> non_differentiable_;
  bool materialize_grads_ = true;
  std::vector<bool> needs_grad_;
};

template <class T>
struct Function {
  // Runs T::forward(ctx, args...) without recording, then records one node
  // whose backward is T::backward.
  template <class... Args>
  static auto apply(Args&&... args) {
    auto ctx = std::make_shared<AutogradContext>();
    variable_list inputs;
    std::vector<size_t> tensor_positions;
    size_t position = 0;
    auto note = [&](const auto& a) {
      if constexpr (std::is_same_v<std::decay_t<decltype(a)>, Tensor>) {
        inputs.push_back(a);
        tensor_positions.push_back(position);
        ctx->needs_grad_.push_back(a.defined() && a.requires_grad());
      } else {
        ctx->needs_grad_.push_back(false);
      }
      ++position;
    };
    (note(args), ...);
    static constexpr size_t num_args = sizeof...(Args);

    using Result = decltype(T::forward(ctx.get(), std::forward<Args>(args)...));
    static_assert(std::is_same_v<Result, Tensor> || std::is_same_v<Result, variable_list>,
                  "autograd::Function: forward must return a Tensor or a tensor_list");
    variable_list outputs;
    {
      NoGradGuard no_grad;
      if constexpr (std::is_same_v<Result, Tensor>)
        outputs.push_back(T::forward(ctx.get(), std::forward<Args>(args)...));
      else
        outputs = T::forward(ctx.get(), std::forward<Args>(args)...);
    }
    // An input handed back unchanged gets its own handle, so the function's
    // history goes on that handle and not on the input.
    for (Tensor& out : outputs)
      for (const Tensor& in : inputs)
        if (out.defined() && in.defined() && out.is_same(in)) out = out.detach();

    variable_list differentiable;
    std::vector<size_t> differentiable_index;
    for (size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i].defined() && !ctx->non_differentiable_.count(outputs[i].impl())) {
        differentiable.push_back(outputs[i]);
        differentiable_index.push_back(i);
      }
    for (Tensor& s : ctx->saved_)
      for (const Tensor& out : differentiable)
        if (s.defined() && s.is_same(out)) s = s.detach();

    struct OutputShape {
      DimVector sizes;
      DType dtype;
      Device device;
    };
    // Every output's shape: backward gets one gradient per output, the
    // non-differentiable ones included (zeros, or undefined).
    std::vector<OutputShape> shapes;
    for (const Tensor& out : outputs)
      shapes.push_back({out.defined() ? DimVector(out.sizes()) : DimVector(), out.defined() ? out.dtype() : kFloat,
                        out.defined() ? out.device() : cpu_device()});
    const std::string name = loom::detail::unqualified_type_name(typeid(T)) + "Backward";
    record_custom_function(
        name, inputs, differentiable,
        [ctx, shapes, differentiable_index, tensor_positions, name](const std::vector<Tensor>& grads) {
          tensor_list g(shapes.size());
          for (size_t i = 0; i < grads.size(); ++i) g[differentiable_index[i]] = grads[i];
          if (ctx->materialize_grads_)
            for (size_t i = 0; i < g.size(); ++i)
              if (!g[i].defined()) g[i] = zeros(shapes[i].sizes, shapes[i].dtype, shapes[i].device);
          tensor_list result = T::backward(ctx.get(), std::move(g));
          LOOM_CHECK(result.size() >= num_args, name, ": backward returned ", result.size(),
                     " gradients, expected one per forward argument (", num_args, ")");
          for (size_t i = num_args; i < result.size(); ++i)
            LOOM_CHECK(!result[i].defined(), name, ": backward returned ", result.size(), " gradients for ", num_args,
                       " forward arguments, and the extra ones are not undefined");
          std::vector<Tensor> out;
          for (size_t p : tensor_positions) out.push_back(result[p]);
          return out;
        });
    if constexpr (std::is_same_v<Result, Tensor>)
      return outputs[0];
    else
      return outputs;
  }
};

}  // namespace loom::autograd
