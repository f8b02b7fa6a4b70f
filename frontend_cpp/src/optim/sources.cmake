# Sources of loom::optim (owned by that area; included by ../../CMakeLists.txt).
target_sources(loom PRIVATE
  src/optim/optimizer.cpp
  src/optim/optimizer_state_dict.cpp
  src/optim/sgd.cpp
  src/optim/adam.cpp
  src/optim/rmsprop.cpp
  src/optim/adagrad.cpp
  src/optim/lr_scheduler.cpp
  src/optim/one_cycle_lr.cpp
  src/optim/clip_grad.cpp
  src/optim/lbfgs.cpp)
