// loom/nn.h — loom::nn (being written; see the C++ frontend issue).
#pragma once

#include <loom/state_dict.h>
#include <loom/tensor.h>
