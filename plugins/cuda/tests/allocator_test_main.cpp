// Catch2's main for cuda_allocator_tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
