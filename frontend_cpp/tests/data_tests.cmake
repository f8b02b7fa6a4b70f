# Tests of loom::data (included by CMakeLists.txt in this folder).
target_sources(loom_frontend_tests PRIVATE
  data_loader_test.cpp)
