# Sources of loom::data (owned by that area; included by ../../CMakeLists.txt).
target_sources(loom PRIVATE
  src/data/dataset.cpp
  src/data/data_loader.cpp)
