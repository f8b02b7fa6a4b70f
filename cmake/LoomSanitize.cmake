# LOOM_SANITIZE: a comma-separated list for -fsanitize= (e.g. "address,undefined"
# or "thread"), applied to every C and C++ target of the build (libraries,
# plugins, tests, samples), compile and link alike.
#
# Sanitizer builds are for host code: the GPU plugins, the benchmarks and the
# Python module default to OFF there. CUDA device code cannot be instrumented,
# and the Python extension would need libasan LD_PRELOADed into an
# uninstrumented interpreter (its tests are covered by the normal build).
#
# UBSan findings abort (-fno-sanitize-recover), so undefined behaviour fails
# the test that hit it instead of printing a line nobody reads.
set(LOOM_SANITIZE "" CACHE STRING
    "Sanitizers for every C/C++ target (-fsanitize= list, e.g. address,undefined or thread)")

if(LOOM_SANITIZE)
  set(_loom_host_default OFF)
else()
  set(_loom_host_default ON)
endif()

# Called after the LOOM_* options exist (they take these defaults only on a
# fresh cache); refuses the combinations that cannot work.
macro(loom_apply_sanitizers)
  if(LOOM_SANITIZE)
    if(LOOM_WITH_CUDA)
      message(FATAL_ERROR "LOOM_SANITIZE=${LOOM_SANITIZE} needs -DLOOM_WITH_CUDA=OFF "
                          "(device code cannot be instrumented)")
    endif()
    message(STATUS "loom: sanitizers ${LOOM_SANITIZE} on every C/C++ target")
    set(_loom_san_flags -fsanitize=${LOOM_SANITIZE} -fno-omit-frame-pointer)
    if(LOOM_SANITIZE MATCHES "undefined")
      list(APPEND _loom_san_flags -fno-sanitize-recover=undefined)
    endif()
    add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${_loom_san_flags}>")
    add_link_options(${_loom_san_flags})
  endif()
endmacro()
