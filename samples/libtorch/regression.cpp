// Fits a degree-4 polynomial with one Linear layer, as pytorch/examples'
// cpp/regression does: random batches, smooth L1 loss, plain SGD, until
// the loss is below 1e-3. Written against libtorch; the build renames
// torch:: to loom::.
#include <torch/torch.h>

#include <iostream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

constexpr int64_t kDegree = 4;

// Columns [x, x^2, x^3, x^4].
torch::Tensor make_features(torch::Tensor x) {
  x = x.unsqueeze(1);
  std::vector<torch::Tensor> powers;
  for (int64_t i = 0; i < kDegree; ++i) powers.push_back(x.pow(i + 1));
  return torch::cat(powers, 1);
}

torch::Tensor target_function(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  return x.mm(w) + b.item();
}

std::string describe(torch::Tensor w, torch::Tensor b) {
  std::ostringstream out;
  out << "y = ";
  for (int64_t i = 0; i < w.size(0); ++i) out << w[i].item<float>() << " x^" << i + 1 << " ";
  out << "+ " << b[0].item<float>();
  return out.str();
}

std::pair<torch::Tensor, torch::Tensor> get_batch(torch::Tensor w, torch::Tensor b, int64_t batch_size = 32) {
  auto x = make_features(torch::randn({batch_size}));
  return std::make_pair(x, target_function(x, w, b));
}

int main() {
  torch::manual_seed(0);
  auto w_target = torch::randn({kDegree, 1}) * 5;
  auto b_target = torch::randn({1}) * 5;

  auto fc = torch::nn::Linear(w_target.size(0), 1);
  torch::optim::SGD optim(fc->parameters(), .1);

  float loss = 0;
  int64_t batch_idx = 0;
  while (++batch_idx) {
    torch::Tensor batch_x, batch_y;
    std::tie(batch_x, batch_y) = get_batch(w_target, b_target);
    optim.zero_grad();
    auto output = torch::smooth_l1_loss(fc(batch_x), batch_y);
    loss = output.item<float>();
    output.backward();
    optim.step();
    if (loss < 1e-3f) break;
  }

  std::cout << "Loss: " << loss << " after " << batch_idx << " batches" << std::endl;
  std::cout << "==> Learned function:\t" << describe(fc->weight.view({-1}), fc->bias) << std::endl;
  std::cout << "==> Actual function:\t" << describe(w_target.view({-1}), b_target) << std::endl;
  return 0;
}
