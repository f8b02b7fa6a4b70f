# Sources of loom::optim (owned by that area; included by ../../CMakeLists.txt).
target_sources(loom PRIVATE)
