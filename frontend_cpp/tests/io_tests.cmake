# Tests of loom::io (included by CMakeLists.txt in this folder).
target_sources(loom_frontend_tests PRIVATE
  io_roundtrip_test.cpp
  io_malformed_test.cpp
  io_fixture_test.cpp
  io_fuzz_test.cpp
  serialize_test.cpp)
# The fixture files (and the seed corpus of a future fuzzer of the reader).
target_compile_definitions(loom_frontend_tests PRIVATE
  LOOM_IO_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data/safetensors")
# io_fuzz_test.cpp reads the fuzz corpus and regressions (fuzz_inputs.h).
target_include_directories(loom_frontend_tests PRIVATE ${PROJECT_SOURCE_DIR}/fuzz)
target_compile_definitions(loom_frontend_tests PRIVATE LOOM_FUZZ_DIR="${PROJECT_SOURCE_DIR}/fuzz")

# Python's loom.save / loom.load and loom::io read each other's files: the
# C++ half is a small program the Python script drives. Needs the Python
# package built (LOOM_BUILD_PYTHON), like python.pytest.
add_executable(loom_io_crosscheck io_crosscheck.cpp)
target_link_libraries(loom_io_crosscheck PRIVATE loom::loom)
add_dependencies(loom_io_crosscheck loom_cpu)
if(LOOM_BUILD_PYTHON)
  add_test(NAME frontend.io.python_crosscheck
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/io_python_crosscheck.py
                   $<TARGET_FILE:loom_io_crosscheck>)
  set_tests_properties(frontend.io.python_crosscheck PROPERTIES LABELS "frontend;python"
    ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;PYTHONDONTWRITEBYTECODE=1")
endif()

# loom::save's files load in PyTorch and loom::load reads torch.save's: the
# C++ half is a small program the script (Debian's python3-torch) drives.
add_executable(loom_serialize_crosscheck serialize_crosscheck.cpp)
target_link_libraries(loom_serialize_crosscheck PRIVATE loom::loom)
add_dependencies(loom_serialize_crosscheck loom_cpu)
add_test(NAME frontend.serialize.torch_crosscheck
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/serialize_torch_crosscheck.py
                 $<TARGET_FILE:loom_serialize_crosscheck>)
set_tests_properties(frontend.serialize.torch_crosscheck PROPERTIES LABELS "frontend;python"
  ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
