# Sources of loom::serialize (owned by that area; included by ../../CMakeLists.txt).
target_sources(loom PRIVATE
  src/serialize/archive.cpp
  src/serialize/values.cpp)
