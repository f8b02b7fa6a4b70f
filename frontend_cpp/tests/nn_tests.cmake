# Tests of loom::nn (included by CMakeLists.txt in this folder).
target_sources(loom_frontend_tests PRIVATE
  nn_init_test.cpp
  nn_layers_test.cpp
  nn_module_test.cpp
  nn_transformer_test.cpp
  libtorch_compat_test.cpp)
