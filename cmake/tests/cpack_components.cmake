# sdk.cpack_components: the per-component packages really are separable.
# cpack -G TGZ makes the runtime and cpu packages from the build tree; both
# are unpacked into one empty prefix, and that prefix's own loom-info must
# list cpu with no setting at all (the cpu package's manifest lands in the
# runtime's manifest directory).
#   -DLOOM_BUILD_DIR=<loom build tree> -DCPACK=<cpack> -DWORK_DIR=<scratch>
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)

if(NOT CPACK OR NOT EXISTS "${CPACK}")
  message("SKIPPED: cpack not found ('${CPACK}')")
  return()
endif()
if(NOT EXISTS "${LOOM_BUILD_DIR}/CPackConfig.cmake")
  message(FATAL_ERROR "no CPackConfig.cmake in ${LOOM_BUILD_DIR}: configure loom first")
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/prefix" "${WORK_DIR}/empty_xdg")

# Only the two components this test needs, without a top-level folder in the
# archives so that they unpack straight into a prefix.
file(WRITE "${WORK_DIR}/CPackTestConfig.cmake"
"include(\"${LOOM_BUILD_DIR}/CPackConfig.cmake\")
set(CPACK_COMPONENTS_ALL runtime cpu)
set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY OFF)
")
run_step("cpack" COMMAND "${CPACK}" --config "${WORK_DIR}/CPackTestConfig.cmake"
         -G TGZ -B "${WORK_DIR}/packages")

foreach(component runtime cpu)
  file(GLOB archive "${WORK_DIR}/packages/*-${component}.tar.gz")
  if(NOT archive)
    file(GLOB made "${WORK_DIR}/packages/*")
    message(FATAL_ERROR "cpack made no ${component} package; made: ${made}")
  endif()
  run_step("unpack ${component}" COMMAND ${CMAKE_COMMAND} -E chdir "${WORK_DIR}/prefix"
           ${CMAKE_COMMAND} -E tar xzf "${archive}")
endforeach()

set(prefix "${WORK_DIR}/prefix")
if(NOT EXISTS "${prefix}/bin/loom-info")
  message(FATAL_ERROR "the runtime package has no bin/loom-info")
endif()
if(EXISTS "${prefix}/include")
  message(FATAL_ERROR "runtime/cpu packages must not carry headers (the sdk package does)")
endif()
# Only the prefix's own manifest directory may count: no LOOM_PLUGIN_PATH, and
# a user data dir that is empty.
run_step("loom-info of the unpacked prefix" OUTPUT info
  ENV --unset=LOOM_PLUGIN_PATH "XDG_DATA_HOME=${WORK_DIR}/empty_xdg"
  COMMAND "${prefix}/bin/loom-info")
expect_listed("${info}" cpu "${prefix}/lib/loom/plugins" "runtime + cpu packages")
message(STATUS "cpu is listed by the packaged loom-info")
