# Sources of loom::nn (owned by that area; included by ../../CMakeLists.txt).
target_sources(loom PRIVATE
  src/nn/activation.cpp
  src/nn/attention.cpp
  src/nn/container.cpp
  src/nn/conv.cpp
  src/nn/dropout.cpp
  src/nn/functional.cpp
  src/nn/init.cpp
  src/nn/linear.cpp
  src/nn/module.cpp
  src/nn/module_state.cpp
  src/nn/normalization.cpp
  src/nn/pooling.cpp
  src/nn/rnn.cpp
  src/nn/rnn_packing.cpp
  src/nn/transformer.cpp
  src/nn/upsampling.cpp)
