# sdk.custom_backend_out_of_tree: the backend guide's result, as a vendor
# ships it (samples/custom_backend, the mydev device with its own runtime
# library).
#  1. install loom (runtime, sdk, cpu components) into a scratch prefix;
#  2. build the sample against that prefix alone and install it into a
#     SEPARATE prefix: the plugin, its manifest and its runtime library;
#  3. the installed loom-info lists mydev as loaded from that prefix — its
#     runtime found through the plugin's install RPATH, with no
#     LD_LIBRARY_PATH — and mydev_check runs on it;
#  4. loom-conformance --quick: every case of add, mul and relu in the dtypes
#     mydev registered passes natively, in-place and out= forms included
#     (the kernels are functional only), and the matrix says so;
#  5. with the runtime library removed, loom-info reports the plugin failed
#     and says the missing library is a dependency, with the ldd hint.
#   -DLOOM_BUILD_DIR=<loom build tree> -DSAMPLE_DIR=<samples/custom_backend>
#   -DWORK_DIR=<scratch> -DGENERATOR=<cmake generator> [-DCCACHE=<ccache>]
cmake_minimum_required(VERSION 3.25)  # list() keeps the matrix's empty cells (CMP0007)
include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)

file(REMOVE_RECURSE "${WORK_DIR}")
set(loom_prefix "${WORK_DIR}/loom")
set(plugin_prefix "${WORK_DIR}/mydev")
set(build "${WORK_DIR}/build")
file(MAKE_DIRECTORY "${WORK_DIR}/empty_xdg")

# 1. The SDK; 2. the sample against it alone, in its own prefix.
install_loom("${loom_prefix}")
if(NOT EXISTS "${loom_prefix}/share/doc/loom/plugin_api_CHANGELOG.md")
  message(FATAL_ERROR "the SDK does not install the plugin ABI's changelog")
endif()
build_against_sdk("${SAMPLE_DIR}" "${build}" "${loom_prefix}" "${plugin_prefix}")
file(GLOB runtime_lib "${plugin_prefix}/lib*/libmydev_runtime.so")
if(NOT runtime_lib OR NOT EXISTS "${plugin_prefix}/share/loom/plugins/mydev.json")
  message(FATAL_ERROR "the sample's install lacks its runtime library or manifest")
endif()

# 3. Installed, from its own prefix, no LD_LIBRARY_PATH.
set(env --unset=LD_LIBRARY_PATH "LOOM_PLUGIN_PATH=${plugin_prefix}/share/loom/plugins"
    "XDG_DATA_HOME=${WORK_DIR}/empty_xdg")
run_step("loom-info with the installed mydev" OUTPUT info ENV ${env} COMMAND "${loom_prefix}/bin/loom-info")
expect_listed("${info}" mydev "${plugin_prefix}/lib" "installed mydev")
run_step("mydev_check on the installed plugin" OUTPUT out ENV ${env} COMMAND "${build}/mydev_check")
message(STATUS "${out}")

# 4. Conformance of the functional kernels, every form.
set(report "${WORK_DIR}/mydev.jsonl")
set(matrix "${WORK_DIR}/mydev.md")
run_step("loom-conformance on mydev" OUTPUT out ENV ${env}
         COMMAND "${loom_prefix}/bin/loom-conformance" --device mydev -o add,mul,relu,sum,copy_ -j 2
                 --report "${report}" --matrix "${matrix}")
message(STATUS "${out}")
set(checked 0)
file(STRINGS "${report}" lines)
foreach(line IN LISTS lines)
  string(JSON op GET "${line}" op)
  string(JSON dtype GET "${line}" dtype)
  string(JSON variant GET "${line}" variant)
  string(JSON status GET "${line}" status)
  set(registered FALSE)
  if(op MATCHES "^(add|mul)$" AND dtype MATCHES "^(float32|float64|int64)$")
    set(registered TRUE)
  elseif(op STREQUAL "relu" AND dtype MATCHES "^(float32|float64)$")
    set(registered TRUE)
  elseif(op STREQUAL "copy_")
    set(registered TRUE)
  endif()
  if(registered AND NOT status STREQUAL "UNSUPPORTED")
    if(NOT status STREQUAL "PASS")
      message(FATAL_ERROR "mydev's own ${op} kernel did not run natively for ${dtype} ${variant}:\n${line}")
    endif()
    math(EXPR checked "${checked} + 1")
  endif()
endforeach()
foreach(form inplace out)
  file(STRINGS "${report}" form_lines REGEX "\"op\":\"add\",\"dtype\":\"float64\",\"variant\":\"${form}\"")
  if(NOT form_lines)
    message(FATAL_ERROR "no ${form} case of add in float64 (a dtype only mydev registers) in the quick tier")
  endif()
endforeach()
# The matrix: the cell of each registered dtype is ✅ (no fallback at all).
file(STRINGS "${matrix}" rows ENCODING UTF-8 REGEX "^\\| ")
list(GET rows 0 header)
string(REPLACE "|" ";" columns "${header}")
foreach(row IN LISTS rows)
  string(REPLACE "|" ";" cells "${row}")
  list(GET cells 1 op_cell)
  string(STRIP "${op_cell}" op_cell)
  list(LENGTH columns n)
  math(EXPR last "${n} - 2")
  foreach(i RANGE 2 ${last})
    list(GET columns ${i} dtype)
    list(GET cells ${i} cell)
    string(STRIP "${dtype}" dtype)
    string(STRIP "${cell}" cell)
    if((op_cell MATCHES "^`(add|mul)`$" AND dtype MATCHES "^(int64|float32|float64)$") OR
       (op_cell STREQUAL "`relu`" AND dtype MATCHES "^(float32|float64)$") OR op_cell STREQUAL "`copy_`")
      if(NOT cell STREQUAL "✅")
        message(FATAL_ERROR "the matrix shows ${op_cell} ${dtype} as '${cell}', not native:\n${row}")
      endif()
    endif()
  endforeach()
endforeach()
# sum declines partial reductions: the report quotes the reason.
file(STRINGS "${report}" declined REGEX "declined this [a-z0-9]+ call: mydev sum: reduces over every dim only")
if(NOT declined)
  message(FATAL_ERROR "no sum case quotes the kernel's reason for declining")
endif()
message(STATUS "${checked} cases of mydev's functional kernels passed natively, in every form")

# 5. A missing dependency is named as one.
file(REMOVE ${runtime_lib})
run_step("loom-info without the runtime library" OUTPUT info ENV ${env} COMMAND "${loom_prefix}/bin/loom-info")
if(NOT info MATCHES "libmydev_runtime.so' is a library the plugin depends on" OR NOT info MATCHES "ldd ")
  message(FATAL_ERROR "loom-info does not explain the missing dependency:\n${info}")
endif()
