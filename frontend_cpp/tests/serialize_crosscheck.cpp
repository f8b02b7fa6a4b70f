// serialize_crosscheck.cpp — the C++ half of serialize_torch_crosscheck.py:
//   loom_serialize_crosscheck write <dir>   trains nothing: builds the model
//       below with fixed weights and writes model.pt (loom::save of the
//       module), input.pt and output.pt (its input and eval output) and
//       list.pt (an int64, a float16 and a float64 tensor)
//   loom_serialize_crosscheck check <dir>   loom::load's what PyTorch wrote
//       there (torch_model.pt: the same architecture's state dict with
//       random weights; torch_input.pt / torch_output.pt; torch_list.pt) and
//       checks that the loaded model reproduces PyTorch's output
// Exits 1 naming every difference.
#include <loom/loom.h>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

namespace {

loom::nn::Sequential make_model() {
  return loom::nn::Sequential(loom::nn::Conv2d(loom::nn::Conv2dOptions(2, 3, 3).padding(1)),
                              loom::nn::BatchNorm2d(3), loom::nn::ReLU(), loom::nn::Flatten(),
                              loom::nn::Linear(3 * 4 * 4, 5));
}

loom::Tensor ramp(std::vector<int64_t> shape, double scale) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return (loom::arange(n, loom::kFloat).reshape(shape).sin() * scale);
}

double max_abs_diff(const loom::Tensor& a, const loom::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: loom_serialize_crosscheck write|check <dir>\n";
    return 2;
  }
  const std::string mode = argv[1], dir = argv[2];
  try {
    if (mode == "write") {
      auto model = make_model();
      {
        loom::NoGradGuard no_grad;
        double scale = 0.3;
        for (auto& p : model->parameters()) p.copy_(ramp(p.sizes().vec(), scale)), scale += 0.1;
      }
      model->forward(ramp({4, 2, 4, 4}, 1.0));  // moves the running statistics
      model->eval();
      const loom::Tensor input = ramp({2, 2, 4, 4}, 0.7);
      loom::save(model, dir + "/model.pt");
      loom::save(input, dir + "/input.pt");
      loom::save(model->forward(input), dir + "/output.pt");
      loom::save(std::vector<loom::Tensor>{loom::tensor(std::vector<int64_t>{3, -4, 5}),
                                           loom::full({2, 2}, 1.5, loom::kHalf), loom::eye(3, loom::kDouble)},
                 dir + "/list.pt");
      return 0;
    }
    int bad = 0;
    auto model = make_model();
    loom::load(model, dir + "/torch_model.pt");
    model->eval();
    loom::Tensor input, expected;
    loom::load(input, dir + "/torch_input.pt");
    loom::load(expected, dir + "/torch_output.pt");
    const double diff = max_abs_diff(model->forward(input), expected);
    if (!(diff < 1e-5)) std::cerr << "torch_model: output differs from PyTorch's by " << diff << "\n", ++bad;
    std::vector<loom::Tensor> list;
    loom::load(list, dir + "/torch_list.pt");
    if (list.size() != 2 || list[0].dtype() != loom::kLong || list[1].dtype() != loom::kBFloat16)
      std::cerr << "torch_list: wrong count or dtypes\n", ++bad;
    else if (list[0].sum().item<int64_t>() != 6 || list[1].sum().item<double>() != 2.0)
      std::cerr << "torch_list: wrong values\n", ++bad;
    return bad == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
