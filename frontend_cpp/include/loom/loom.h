// loom/loom.h — everything a C++ user of loom needs, in one include.
//
//   #include <loom/loom.h>
//   auto a = loom::rand({2, 3});
//   auto b = loom::ones({3, 4}, loom::DType::Float32, "sim");
//   std::cout << a.matmul(b.cpu()).relu() << "\n";
//
// Devices are plugins: the first use of "cpu", "sim" or "cuda" loads the
// plugin that provides it (see `loom-info`).
#pragma once

#include <loom/accessor.h>
#include <loom/autocast.h>
#include <loom/autograd.h>
#include <loom/device.h>
#include <loom/device_info.h>
#include <loom/library.h>
#include <loom/op_registry.h>
#include <loom/dtype.h>
#include <loom/error.h>
#include <loom/indexing.h>
#include <loom/ops.h>
#include <loom/profiler.h>
#include <loom/registry.h>
#include <loom/scalar.h>
#include <loom/state_dict.h>
#include <loom/stream.h>
#include <loom/tensor.h>
#include <loom/tensor_options.h>

// The libtorch-like frontend: modules, optimizers, safetensors, data loading,
// and torch::cuda's names (loom/cuda.h).
#include <loom/cuda.h>
#include <loom/data.h>
#include <loom/io.h>
#include <loom/nn.h>
#include <loom/optim.h>
#include <loom/libtorch_names.h>
#include <loom/custom_function.h>
#include <loom/serialize.h>

namespace loom {
// Makes sure the plugin registry is the core's device-type resolver.
// Idempotent and cheap after the first call.
void init();

namespace detail {
// Every file that includes loom.h calls init() during static initialisation
// (like <iostream>'s Init object). That keeps libloom linked even under
// --as-needed and installs the registry before main().
[[maybe_unused]] static const bool loom_frontend_initialised = (::loom::init(), true);
}  // namespace detail
}  // namespace loom
