# Tests of loom::optim (included by CMakeLists.txt in this folder).
target_sources(loom_frontend_tests PRIVATE
  optim_trajectory_test.cpp
  optim_state_dict_test.cpp
  optim_lr_scheduler_test.cpp
  optim_clip_grad_test.cpp)
