// loom/nn.h — loom::nn: modules, layers, losses and initialisers, in the
// shape of libtorch's torch::nn (holders with -> access, option builders).
//
//   namespace nn = loom::nn;
//   nn::Sequential net(nn::Linear(784, 128), nn::ReLU(), nn::Linear(128, 10));
//   auto loss = nn::functional::cross_entropy(net(x), y);
//   loss.backward();
//   loom::io::save_file(net->state_dict(), "net.safetensors");
//
// docs/cpp_frontend.md ("Modules (loom::nn)") is the guide.
#pragma once

#include <loom/state_dict.h>
#include <loom/tensor.h>

#include <loom/nn/activation.h>
#include <loom/nn/any.h>
#include <loom/nn/attention.h>
#include <loom/nn/cloneable.h>
#include <loom/nn/container.h>
#include <loom/nn/conv.h>
#include <loom/nn/dropout.h>
#include <loom/nn/functional.h>
#include <loom/nn/holder.h>
#include <loom/nn/init.h>
#include <loom/nn/linear.h>
#include <loom/nn/loss.h>
#include <loom/nn/module.h>
#include <loom/nn/normalization.h>
#include <loom/nn/pooling.h>
#include <loom/nn/rnn.h>
#include <loom/nn/transformer.h>
#include <loom/nn/upsampling.h>
