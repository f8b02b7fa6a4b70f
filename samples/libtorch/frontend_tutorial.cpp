// The code of PyTorch's "Using the PyTorch C++ Frontend" tutorial, as a
// reader types it in: a module with register_module / register_parameter,
// printing parameters and named_parameters, module holders with
// TORCH_MODULE, a DCGAN generator and discriminator, the MNIST data
// loader, a training loop with label smoothing and checkpoints, and
// sampling from the trained generator. Written against libtorch; the build
// renames torch:: to loom::.
#include <torch/torch.h>

#include <cstdio>
#include <iostream>
#include <string>

struct Net : torch::nn::Module {
  Net(int64_t N, int64_t M) : linear(register_module("linear", torch::nn::Linear(N, M))) {
    another_bias = register_parameter("b", torch::randn(M));
  }
  torch::Tensor forward(torch::Tensor input) { return linear(input) + another_bias; }
  torch::nn::Linear linear;
  torch::Tensor another_bias;
};

struct DCGANGeneratorImpl : torch::nn::Module {
  DCGANGeneratorImpl(int kNoiseSize)
      : conv1(torch::nn::ConvTranspose2dOptions(kNoiseSize, 256, 4).bias(false)),
        batch_norm1(256),
        conv2(torch::nn::ConvTranspose2dOptions(256, 128, 3).stride(2).padding(1).bias(false)),
        batch_norm2(128),
        conv3(torch::nn::ConvTranspose2dOptions(128, 64, 4).stride(2).padding(1).bias(false)),
        batch_norm3(64),
        conv4(torch::nn::ConvTranspose2dOptions(64, 1, 4).stride(2).padding(1).bias(false)) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv3", conv3);
    register_module("conv4", conv4);
    register_module("batch_norm1", batch_norm1);
    register_module("batch_norm2", batch_norm2);
    register_module("batch_norm3", batch_norm3);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(batch_norm1(conv1(x)));
    x = torch::relu(batch_norm2(conv2(x)));
    x = torch::relu(batch_norm3(conv3(x)));
    x = torch::tanh(conv4(x));
    return x;
  }
  torch::nn::ConvTranspose2d conv1, conv2, conv3, conv4;
  torch::nn::BatchNorm2d batch_norm1, batch_norm2, batch_norm3;
};
TORCH_MODULE(DCGANGenerator);

int main() {
  // Part one: a module, its parameters, a forward pass.
  Net net(4, 5);
  for (const auto& p : net.parameters()) std::cout << p << std::endl;
  for (const auto& pair : net.named_parameters()) std::cout << pair.key() << ": " << pair.value() << std::endl;
  std::cout << net.forward(torch::ones({2, 4})) << std::endl;
  std::cout << net << std::endl;

  // Part two: the DCGAN.
  torch::manual_seed(1);
  const int64_t kNoiseSize = 100, kBatchSize = 64, kNumberOfEpochs = 1, kCheckpointEvery = 5;
  torch::Device device = torch::kCPU;
  if (torch::cuda::is_available()) device = torch::kCUDA;

  DCGANGenerator generator(kNoiseSize);
  torch::nn::Sequential discriminator(
      torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 64, 4).stride(2).padding(1).bias(false)),
      torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(64, 128, 4).stride(2).padding(1).bias(false)),
      torch::nn::BatchNorm2d(128),
      torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(128, 256, 4).stride(2).padding(1).bias(false)),
      torch::nn::BatchNorm2d(256),
      torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(256, 1, 3).stride(1).padding(0).bias(false)),
      torch::nn::Sigmoid());
  generator->to(device);
  discriminator->to(device);

  auto dataset = torch::data::datasets::MNIST("./data")
                     .map(torch::data::transforms::Normalize<>(0.5, 0.5))
                     .map(torch::data::transforms::Stack<>());
  const int64_t batches_per_epoch = (dataset.size().value() + kBatchSize - 1) / kBatchSize;
  auto data_loader = torch::data::make_data_loader(std::move(dataset),
                                                   torch::data::DataLoaderOptions().batch_size(kBatchSize).workers(2));
  for (torch::data::Example<>& batch : *data_loader) {
    std::cout << "Batch size: " << batch.data.size(0) << " | Labels: ";
    for (int64_t i = 0; i < batch.data.size(0); ++i) std::cout << batch.target[i].item<int64_t>() << " ";
    std::cout << std::endl;
    break;
  }

  torch::optim::Adam generator_optimizer(generator->parameters(),
                                         torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.5)));
  torch::optim::Adam discriminator_optimizer(discriminator->parameters(),
                                             torch::optim::AdamOptions(5e-4).betas(std::make_tuple(0.5, 0.5)));

  int64_t checkpoint_counter = 0;
  for (int64_t epoch = 1; epoch <= kNumberOfEpochs; ++epoch) {
    int64_t batch_index = 0;
    for (torch::data::Example<>& batch : *data_loader) {
      discriminator->zero_grad();
      torch::Tensor real_images = batch.data.to(device);
      torch::Tensor real_labels = torch::empty(batch.data.size(0), device).uniform_(0.8, 1.0);
      torch::Tensor real_output = discriminator->forward(real_images).reshape(real_labels.sizes());
      torch::Tensor d_loss_real = torch::binary_cross_entropy(real_output, real_labels);
      d_loss_real.backward();

      torch::Tensor noise = torch::randn({batch.data.size(0), kNoiseSize, 1, 1}, device);
      torch::Tensor fake_images = generator->forward(noise);
      torch::Tensor fake_labels = torch::zeros(batch.data.size(0), device);
      torch::Tensor fake_output = discriminator->forward(fake_images.detach()).reshape(fake_labels.sizes());
      torch::Tensor d_loss_fake = torch::binary_cross_entropy(fake_output, fake_labels);
      d_loss_fake.backward();
      torch::Tensor d_loss = d_loss_real + d_loss_fake;
      discriminator_optimizer.step();

      generator->zero_grad();
      fake_labels.fill_(1);
      fake_output = discriminator->forward(fake_images).reshape(fake_labels.sizes());
      torch::Tensor g_loss = torch::binary_cross_entropy(fake_output, fake_labels);
      g_loss.backward();
      generator_optimizer.step();

      std::printf("\r[%2ld/%2ld][%3ld/%3ld] D_loss: %.4f | G_loss: %.4f\n", static_cast<long>(epoch),
                  static_cast<long>(kNumberOfEpochs), static_cast<long>(++batch_index),
                  static_cast<long>(batches_per_epoch), d_loss.item<float>(), g_loss.item<float>());
      if (batch_index % kCheckpointEvery == 0) {
        torch::save(generator, "generator-checkpoint.pt");
        torch::save(generator_optimizer, "generator-optimizer-checkpoint.pt");
        torch::save(discriminator, "discriminator-checkpoint.pt");
        torch::save(discriminator_optimizer, "discriminator-optimizer-checkpoint.pt");
        torch::Tensor samples = generator->forward(torch::randn({8, kNoiseSize, 1, 1}, device));
        torch::save((samples + 1.0) / 2.0, torch::str("dcgan-sample-", checkpoint_counter, ".pt"));
        std::cout << "\n-> checkpoint " << ++checkpoint_counter << '\n';
      }
    }
  }

  // Restore and sample, as the tutorial's last section does.
  DCGANGenerator restored(kNoiseSize);
  torch::load(restored, "generator-checkpoint.pt");
  restored->eval();
  torch::Tensor samples = restored->forward(torch::randn({4, kNoiseSize, 1, 1}, device));
  std::cout << "Samples: " << samples.sizes() << " in [" << samples.min().item<float>() << ", "
            << samples.max().item<float>() << "]" << std::endl;
  std::cout << "Training complete!" << std::endl;
}
