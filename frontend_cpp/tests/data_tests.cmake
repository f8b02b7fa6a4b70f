# Tests of loom::data (included by CMakeLists.txt in this folder). The
# DataLoader's [concurrency] cases live here: an object library, linked into
# loom_frontend_tests and into loom_frontend_thread_tests (the small binary
# frontend.concurrency runs), so the file is compiled once.
add_library(loom_frontend_thread_test_objects OBJECT data_loader_test.cpp)
target_link_libraries(loom_frontend_thread_test_objects PRIVATE loom::loom Catch2::Catch2)
target_link_libraries(loom_frontend_tests PRIVATE loom_frontend_thread_test_objects)
