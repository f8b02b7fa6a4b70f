// The C++ autograd tour of pytorch/examples' cpp/autograd: requires_grad
// factories, grad_fn names, vector-Jacobian products, NoGradGuard and
// detach, torch::autograd::grad with create_graph for a gradient penalty,
// and custom Functions with saved tensors and saved data. Written against
// libtorch; the build renames torch:: to loom::.
#include <torch/torch.h>

#include <iostream>

using namespace torch::autograd;

void basic_operations() {
  std::cout << "====== Basic autograd operations ======" << std::endl;
  auto x = torch::ones({2, 2}, torch::requires_grad());
  std::cout << x << std::endl;
  auto y = x + 2;
  std::cout << y << std::endl;
  std::cout << y.grad_fn()->name() << std::endl;

  auto z = y * y * 3;
  auto out = z.mean();
  std::cout << z << std::endl;
  std::cout << z.grad_fn()->name() << std::endl;
  std::cout << out << std::endl;
  std::cout << out.grad_fn()->name() << std::endl;

  auto a = torch::randn({2, 2});
  a = ((a * 3) / (a - 1));
  std::cout << a.requires_grad() << std::endl;
  a.requires_grad_(true);
  std::cout << a.requires_grad() << std::endl;
  auto b = (a * a).sum();
  std::cout << b.grad_fn()->name() << std::endl;

  out.backward();
  std::cout << x.grad() << std::endl;

  x = torch::randn(3, torch::requires_grad());
  y = x * 2;
  while (y.norm().item<double>() < 1000) y = y * 2;
  std::cout << y << std::endl;
  std::cout << y.grad_fn()->name() << std::endl;

  auto v = torch::tensor({0.1, 1.0, 0.0001}, torch::kFloat);
  y.backward(v);
  std::cout << x.grad() << std::endl;

  std::cout << x.requires_grad() << std::endl;
  std::cout << x.pow(2).requires_grad() << std::endl;
  {
    torch::NoGradGuard no_grad;
    std::cout << x.pow(2).requires_grad() << std::endl;
  }
  std::cout << x.requires_grad() << std::endl;
  y = x.detach();
  std::cout << y.requires_grad() << std::endl;
  std::cout << x.eq(y).all().item<bool>() << std::endl;
}

void higher_order_gradients() {
  std::cout << "====== Higher-order gradients ======" << std::endl;
  auto model = torch::nn::Linear(4, 3);
  auto input = torch::randn({3, 4}).requires_grad_(true);
  auto output = model(input);
  auto target = torch::randn({3, 3});
  auto loss = torch::nn::MSELoss()(output, target);

  auto grad_output = torch::ones_like(output);
  auto gradient = torch::autograd::grad({output}, {input}, /*grad_outputs=*/{grad_output}, /*create_graph=*/true)[0];
  auto gradient_penalty = torch::pow((gradient.norm(2, /*dim=*/1) - 1), 2).mean();
  auto combined_loss = loss + gradient_penalty;
  combined_loss.backward();
  std::cout << input.grad() << std::endl;
}

class LinearFunction : public Function<LinearFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor input, torch::Tensor weight,
                               torch::Tensor bias = torch::Tensor()) {
    ctx->save_for_backward({input, weight, bias});
    auto output = input.mm(weight.t());
    if (bias.defined()) output += bias.unsqueeze(0).expand_as(output);
    return output;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto input = saved[0], weight = saved[1], bias = saved[2];
    auto grad_output = grad_outputs[0];
    auto grad_input = grad_output.mm(weight);
    auto grad_weight = grad_output.t().mm(input);
    auto grad_bias = torch::Tensor();
    if (bias.defined()) grad_bias = grad_output.sum(0);
    return {grad_input, grad_weight, grad_bias};
  }
};

class MulConstant : public Function<MulConstant> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor tensor, double constant) {
    ctx->saved_data["constant"] = constant;
    return tensor * constant;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    return {grad_outputs[0] * ctx->saved_data["constant"].toDouble(), torch::Tensor()};
  }
};

void custom_functions() {
  std::cout << "====== Custom autograd functions ======" << std::endl;
  {
    auto x = torch::randn({2, 3}).requires_grad_();
    auto weight = torch::randn({4, 3}).requires_grad_();
    auto bias = torch::randn({4}).requires_grad_();
    auto y = LinearFunction::apply(x, weight);
    y.sum().backward();
    std::cout << x.grad() << std::endl;
    std::cout << weight.grad() << std::endl;
    // With the bias, the gradients are the sums PyTorch's linear gives.
    auto with_bias = LinearFunction::apply(x, weight, bias);
    with_bias.sum().backward();
    std::cout << "bias grad matches: " << torch::allclose(bias.grad(), torch::full({4}, 2.0)) << std::endl;
  }
  {
    auto x = torch::randn({2}).requires_grad_();
    auto y = MulConstant::apply(x, 5.5);
    y.sum().backward();
    std::cout << x.grad() << std::endl;
  }
}

int main() {
  std::cout << std::boolalpha;
  basic_operations();
  std::cout << "\n";
  higher_order_gradients();
  std::cout << "\n";
  custom_functions();
}
