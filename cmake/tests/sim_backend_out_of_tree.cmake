# sdk.sim_backend_out_of_tree: a third party needs nothing but the SDK (shown
# with the sim test device, the fullest backend in the tree).
#  1. install loom (runtime, sdk, cpu components) into a scratch prefix;
#  2. configure testing/sim_device against that prefix alone, build it,
#     install the plugin into a SEPARATE prefix of its own;
#  3. the installed loom-info lists sim once LOOM_PLUGIN_PATH points at the
#     plugin's prefix, and not before;
#  4. sim_check (built by the sample project) runs add on sim natively and
#     through the CPU fallback;
#  5. loom-conformance --device sim --quick, when the prefix has it: it must
#     load the plugin, and sim's own kernels must pass.
#   -DLOOM_BUILD_DIR=<loom build tree> -DSAMPLE_DIR=<testing/sim_device>
#   -DWORK_DIR=<scratch> -DGENERATOR=<cmake generator> [-DCCACHE=<ccache>]
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)

file(REMOVE_RECURSE "${WORK_DIR}")
set(loom_prefix "${WORK_DIR}/loom")
set(plugin_prefix "${WORK_DIR}/plugin")
set(build "${WORK_DIR}/build")
file(MAKE_DIRECTORY "${WORK_DIR}/empty_xdg")

# 1. The SDK, as `make install` would lay it out, minus Python and samples.
install_loom("${loom_prefix}")
if(EXISTS "${loom_prefix}/share/loom/plugins/sim.json")
  message(FATAL_ERROR "the loom install already has sim.json: the test would prove nothing")
endif()

# 2. The sample, built against the prefix alone.
build_against_sdk("${SAMPLE_DIR}" "${build}" "${loom_prefix}" "${plugin_prefix}")
foreach(f lib/loom/plugins/libloom_sim.so share/loom/plugins/sim.json)
  if(NOT EXISTS "${plugin_prefix}/${f}")
    message(FATAL_ERROR "the plugin's install lacks ${f}")
  endif()
endforeach()

# 3. loom-info: sim appears only through LOOM_PLUGIN_PATH.
set(isolated --unset=LOOM_PLUGIN_PATH "XDG_DATA_HOME=${WORK_DIR}/empty_xdg")
set(with_sim "LOOM_PLUGIN_PATH=${plugin_prefix}/share/loom/plugins"
    "XDG_DATA_HOME=${WORK_DIR}/empty_xdg")
run_step("loom-info without LOOM_PLUGIN_PATH" OUTPUT info ENV ${isolated}
         COMMAND "${loom_prefix}/bin/loom-info")
if(info MATCHES "\n  sim ")
  message(FATAL_ERROR "loom-info lists sim before LOOM_PLUGIN_PATH names it:\n${info}")
endif()
run_step("loom-info with LOOM_PLUGIN_PATH" OUTPUT info ENV ${with_sim}
         COMMAND "${loom_prefix}/bin/loom-info")
expect_listed("${info}" sim "${plugin_prefix}/lib/loom/plugins" "out-of-tree sim")
expect_listed("${info}" cpu "${loom_prefix}/lib/loom/plugins" "installed cpu")

# 4. An application of the sample project using sim.
run_step("sim_check" OUTPUT out ENV ${with_sim} COMMAND "${build}/sim_check")
message(STATUS "${out}")

# 5. Conformance, once the suite is installed with the SDK. Its exit status
# 1 (unexpected results) is allowed here: cases of ops sim has no kernel for
# test the CPU plugin, which conformance.sim.quick covers in the tree. What
# this test owns: the tool loads the out-of-tree plugin (not 2, no crash),
# and sim's own kernels pass.
set(conformance "${loom_prefix}/bin/loom-conformance")
if(EXISTS "${conformance}")
  set(report "${WORK_DIR}/conformance.jsonl")
  set(shown "${conformance} --device sim --quick --report ${report}")
  message(STATUS "loom-conformance on sim: ${shown}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${with_sim}
                  "${conformance}" --device sim --quick --report "${report}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message(STATUS "exit status ${rc}\n${out}")
  if(NOT rc EQUAL 0 AND NOT rc EQUAL 1)
    message(FATAL_ERROR "loom-conformance could not run against the out-of-tree sim "
                        "(exit status ${rc}):\n  ${shown}\n${out}")
  endif()
  # Every float32 case of sim's own kernels (add, mul) ran natively and passed.
  file(STRINGS "${report}" native
       REGEX "\"op\":\"(add|mul)\",\"dtype\":\"float32\",\"variant\":\"(contiguous|noncontiguous|out)\"")
  list(LENGTH native n)
  if(n EQUAL 0)
    message(FATAL_ERROR "the conformance report has no float32 add/mul case: ${report}")
  endif()
  foreach(line IN LISTS native)
    if(NOT line MATCHES "\"status\":\"PASS\"")
      message(FATAL_ERROR "a case of sim's own kernels did not pass:\n${line}")
    endif()
  endforeach()
  message(STATUS "${n} float32 add/mul cases passed natively on the out-of-tree sim")
else()
  message(STATUS "loom-conformance skipped: ${conformance} is not installed")
endif()
