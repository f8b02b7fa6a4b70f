// loom/data.h — loom::data, libtorch's data API: datasets (Dataset,
// BatchDataset, MapDataset, TensorDataset, MNIST), transforms (Normalize,
// Stack, Lambda ...), samplers and make_data_loader (batching in a
// sampler's order, prefetching worker threads).
#pragma once

#include <loom/data/data_loader.h>
#include <loom/data/datasets/base.h>
#include <loom/data/datasets/map.h>
#include <loom/data/datasets/mnist.h>
#include <loom/data/datasets/tensor.h>
#include <loom/data/example.h>
#include <loom/data/samplers.h>
#include <loom/data/transforms.h>

namespace loom::data {
using datasets::BatchDataset;
using datasets::Dataset;
using datasets::TensorDataset;
}  // namespace loom::data
