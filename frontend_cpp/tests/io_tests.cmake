# Tests of loom::io (included by CMakeLists.txt in this folder).
target_sources(loom_frontend_tests PRIVATE
  io_roundtrip_test.cpp
  io_malformed_test.cpp
  io_fixture_test.cpp)
# The fixture files (and the seed corpus of a future fuzzer of the reader).
target_compile_definitions(loom_frontend_tests PRIVATE
  LOOM_IO_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data/safetensors")
