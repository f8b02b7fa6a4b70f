// Continues training, in C++, two models that were made in PyTorch: the
// way a team moves a model from Python to a C++ trainer. A small CNN
// (convolutions, batch norm, pooling) with Adam, and a two-layer LSTM
// sequence model with SGD + momentum and gradient clipping, each loaded
// with torch::load from a state dict that Python's torch.save wrote, and
// trained on data that came the same way. Prints one loss per step, which
// compare_with_pytorch.py checks against PyTorch training the same models
// on the same data. Written against libtorch; the build renames torch:: to
// loom::.
#include <torch/torch.h>

#include <cstdio>
#include <vector>

using torch::indexing::Slice;

struct CNNImpl : torch::nn::Module {
  CNNImpl()
      : conv1(torch::nn::Conv2dOptions(1, 8, 3).padding(1)),
        bn1(8),
        conv2(torch::nn::Conv2dOptions(8, 16, 3).stride(2).padding(1)),
        fc(16 * 7 * 7, 10) {
    register_module("conv1", conv1);
    register_module("bn1", bn1);
    register_module("conv2", conv2);
    register_module("fc", fc);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(bn1(conv1(x))), 2);
    x = torch::relu(conv2(x));
    x = fc(x.flatten(1));
    return torch::log_softmax(x, 1);
  }
  torch::nn::Conv2d conv1;
  torch::nn::BatchNorm2d bn1;
  torch::nn::Conv2d conv2;
  torch::nn::Linear fc;
};
TORCH_MODULE(CNN);

struct SequenceModelImpl : torch::nn::Module {
  SequenceModelImpl()
      : lstm(torch::nn::LSTMOptions(1, 16).num_layers(2).batch_first(true)), head(16, 1) {
    register_module("lstm", lstm);
    register_module("head", head);
  }
  torch::Tensor forward(torch::Tensor x) {
    auto out = std::get<0>(lstm->forward(x));
    return head(out);
  }
  torch::nn::LSTM lstm;
  torch::nn::Linear head;
};
TORCH_MODULE(SequenceModel);

int main() {
  std::vector<torch::Tensor> data;
  torch::load(data, "data.pt");  // images, labels, sequences, next values
  auto images = data[0], labels = data[1], sequences = data[2], targets = data[3];
  const int64_t batch = 32;

  CNN cnn;
  torch::load(cnn, "cnn.pt");
  torch::optim::Adam adam(cnn->parameters(), torch::optim::AdamOptions(1e-3).weight_decay(1e-4));
  cnn->train();
  for (int64_t step = 0; step < images.size(0) / batch; ++step) {
    auto x = images.index({Slice(step * batch, (step + 1) * batch)});
    auto y = labels.index({Slice(step * batch, (step + 1) * batch)});
    adam.zero_grad();
    auto loss = torch::nll_loss(cnn->forward(x), y);
    loss.backward();
    adam.step();
    std::printf("cnn %ld %.9g\n", static_cast<long>(step), loss.item<double>());
  }
  cnn->eval();
  torch::NoGradGuard no_grad_eval;
  std::printf("cnn eval %.9g\n", torch::nll_loss(cnn->forward(images), labels).item<double>());

  SequenceModel model;
  torch::load(model, "sequence.pt");
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  for (int64_t step = 0; step < 15; ++step) {
    torch::AutoGradMode enable_grad(true);
    sgd.zero_grad();
    auto loss = torch::mse_loss(model->forward(sequences), targets);
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 0.5);
    sgd.step();
    std::printf("lstm %ld %.9g\n", static_cast<long>(step), loss.item<double>());
  }
  return 0;
}
