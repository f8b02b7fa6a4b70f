# Sources of loom::data (owned by that area; included by ../../CMakeLists.txt).
target_sources(loom PRIVATE
  src/data/tensor_dataset.cpp
  src/data/samplers.cpp
  src/data/mnist.cpp
  src/data/data_loader.cpp)
