# Sources of loom::io (owned by that area; included by ../../CMakeLists.txt).
target_sources(loom PRIVATE)
