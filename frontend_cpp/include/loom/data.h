// loom/data.h — loom::data: Dataset, TensorDataset and DataLoader (batching,
// seeded shuffling, background prefetching threads).
#pragma once

#include <loom/data/data_loader.h>
#include <loom/data/dataset.h>
