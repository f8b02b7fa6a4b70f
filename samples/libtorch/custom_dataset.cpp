// A custom dataset as pytorch/examples' cpp/custom-dataset writes one: a
// Dataset<Self> whose get() builds an image tensor with from_blob and a
// label, a Stack transform, SequentialSampler loaders and an AlexNet-style
// network built by subclassing SequentialImpl with Functional layers
// (max_pool2d with bound arguments, reshape, log_softmax). The images are
// made in memory here (a bright square whose corner is the class), not
// read with OpenCV, and are 64x64 rather than 224x224 so the test is
// quick. Written against libtorch; the build renames torch:: to loom::.
#include <torch/torch.h>

#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

struct Options {
  int image_size = 64;
  size_t train_batch_size = 8;
  size_t test_batch_size = 50;
  size_t iterations = 6;
  size_t log_interval = 10;
  torch::DeviceType device = torch::kCPU;
};

static Options options;

// (seed of the picture, label): four classes, one per corner.
using Data = std::vector<std::pair<uint32_t, long>>;

class CustomDataset : public torch::data::datasets::Dataset<CustomDataset> {
  using Example = torch::data::Example<>;
  Data data;

 public:
  CustomDataset(const Data& data) : data(data) {}

  Example get(size_t index) {
    const int n = options.image_size, half = n / 2;
    std::vector<uint8_t> rgb(3 * n * n);
    std::mt19937 noise(data[index].first);
    const long label = data[index].second;
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x) {
          const bool inside = (y < half) == (label < 2) && (x < half) == (label % 2 == 0);
          rgb[(c * n + y) * n + x] = static_cast<uint8_t>((inside ? 160 : 40) + noise() % 60);
        }
    auto tdata = torch::from_blob(rgb.data(), {3, n, n}, torch::kUInt8).to(torch::kFloat).div(255);
    auto tlabel = torch::from_blob(&data[index].second, {1}, torch::kLong).clone();
    return {tdata, tlabel};
  }

  torch::optional<size_t> size() const { return data.size(); }
};

std::pair<Data, Data> make_info() {
  Data train, test;
  for (uint32_t i = 0; i < 160; ++i) train.emplace_back(i, static_cast<long>(i % 4));
  for (uint32_t i = 0; i < 40; ++i) test.emplace_back(1000 + i, static_cast<long>(i % 4));
  std::shuffle(train.begin(), train.end(), std::mt19937(0));
  return std::make_pair(train, test);
}

struct NetworkImpl : torch::nn::SequentialImpl {
  NetworkImpl() {
    using namespace torch::nn;
    auto stride = torch::ExpandingArray<2>({2, 2});
    torch::ExpandingArray<2> shape({-1, 64 * 3 * 3});
    push_back(Conv2d(Conv2dOptions(3, 32, 11).stride(4).padding(2)));
    push_back(Functional(torch::relu));
    push_back(Functional(torch::max_pool2d, 3, stride, 0, 1, false));
    push_back(Conv2d(Conv2dOptions(32, 64, 5).padding(2)));
    push_back(Functional(torch::relu));
    push_back(Functional(torch::max_pool2d, 3, stride, 0, 1, false));
    push_back(Conv2d(Conv2dOptions(64, 64, 3).padding(1)));
    push_back(Functional(torch::relu));
    push_back(Functional(torch::reshape, shape));
    push_back(Dropout());
    push_back(Linear(64 * 3 * 3, 128));
    push_back(Functional(torch::relu));
    push_back(Linear(128, 4));
    push_back(Functional(torch::log_softmax, 1, torch::nullopt));
  }
};
TORCH_MODULE(Network);

template <typename DataLoader>
void train(Network& network, DataLoader& loader, torch::optim::Optimizer& optimizer, size_t epoch,
           size_t data_size) {
  size_t index = 0;
  network->train();
  float total_loss = 0, total_correct = 0;
  for (auto& batch : loader) {
    auto data = batch.data.to(options.device);
    auto targets = batch.target.to(options.device).view({-1});
    auto output = network->forward(data);
    auto loss = torch::nll_loss(output, targets);
    AT_ASSERT(!std::isnan(loss.template item<float>()));
    auto acc = output.argmax(1).eq(targets).sum();
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    total_loss += loss.template item<float>();
    total_correct += acc.template item<float>();
    if (index++ % options.log_interval == 0) {
      auto end = std::min(data_size, (index + 1) * options.train_batch_size);
      std::cout << "Train Epoch: " << epoch << " " << end << "/" << data_size << "\tLoss: " << total_loss / index
                << "\tAcc: " << total_correct / end << std::endl;
    }
  }
}

template <typename DataLoader>
float test(Network& network, DataLoader& loader, size_t data_size) {
  network->eval();
  torch::NoGradGuard no_grad;
  float total_loss = 0, total_correct = 0;
  for (const auto& batch : loader) {
    auto data = batch.data.to(options.device);
    auto targets = batch.target.to(options.device).view({-1});
    auto output = network->forward(data);
    total_loss += torch::nll_loss(output, targets, {}, torch::Reduction::Sum).template item<float>();
    total_correct += output.argmax(1).eq(targets).sum().template item<float>();
  }
  std::cout << "Test Loss: " << total_loss / data_size << "\tAcc: " << total_correct / data_size << std::endl;
  return total_correct / data_size;
}

int main() {
  torch::manual_seed(1);
  if (torch::cuda::is_available()) options.device = torch::kCUDA;
  std::cout << "Running on: " << (options.device == torch::kCUDA ? "CUDA" : "CPU") << std::endl;

  auto data = make_info();
  auto train_set = CustomDataset(data.first).map(torch::data::transforms::Stack<>());
  auto train_size = train_set.size().value();
  auto train_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(train_set), options.train_batch_size);
  auto test_set = CustomDataset(data.second).map(torch::data::transforms::Stack<>());
  auto test_size = test_set.size().value();
  auto test_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(test_set), options.test_batch_size);

  Network network;
  network->to(options.device);
  torch::optim::SGD optimizer(network->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));

  float accuracy = 0;
  for (size_t i = 0; i < options.iterations; ++i) {
    train(network, *train_loader, optimizer, i + 1, train_size);
    accuracy = test(network, *test_loader, test_size);
  }
  std::cout << "Final test accuracy: " << accuracy << std::endl;
  return accuracy >= 0.9 ? 0 : 1;
}
