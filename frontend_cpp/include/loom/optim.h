// loom/optim.h — loom::optim (being written; see the C++ frontend issue).
#pragma once

#include <loom/state_dict.h>
#include <loom/tensor.h>
