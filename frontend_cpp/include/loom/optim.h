// loom/optim.h — loom::optim: optimizers (SGD, Adam, AdamW, RMSprop,
// Adagrad) with parameter groups and state_dict, learning-rate schedulers,
// and gradient clipping. Shaped like libtorch's torch::optim:
//
//   loom::optim::Adam opt(model->parameters(), loom::optim::AdamOptions(1e-3).betas({0.9, 0.999}));
//   loom::optim::StepLR sched(opt, /*step_size=*/10, /*gamma=*/0.5);
//   for (...) { opt.zero_grad(); loss.backward();
//               loom::optim::clip_grad_norm_(model->parameters(), 1.0); opt.step(); }
//   sched.step();  // once per epoch
#pragma once

#include <loom/optim/adagrad.h>
#include <loom/optim/adam.h>
#include <loom/optim/optimizer.h>
#include <loom/optim/rmsprop.h>
#include <loom/optim/sgd.h>
#include <loom/optim/clip_grad.h>
#include <loom/optim/lbfgs.h>
#include <loom/optim/lr_scheduler.h>
