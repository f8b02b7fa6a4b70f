# Shared by the SDK test scripts (cmake -P).
#
# run_step(<what> [ENV <VAR=value|--unset=VAR>...] [OUTPUT <var>] COMMAND <cmd>...)
# Runs one command (through `cmake -E env` when ENV is given) and stops the
# test with <what>, the command line and its output when it fails. OUTPUT
# receives stdout and stderr together.
function(run_step what)
  cmake_parse_arguments(S "" "OUTPUT" "ENV;COMMAND" ${ARGN})
  set(cmd ${S_COMMAND})
  if(S_ENV)
    set(cmd ${CMAKE_COMMAND} -E env ${S_ENV} ${S_COMMAND})
  endif()
  list(JOIN cmd " " shown)
  message(STATUS "${what}: ${shown}")
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit status ${rc}):\n  ${shown}\n${out}")
  endif()
  if(S_OUTPUT)
    set(${S_OUTPUT} "${out}" PARENT_SCOPE)
  endif()
endfunction()

# expect_listed(<loom-info output> <plugin name> <library dir> <context>):
# loom-info's table must show the plugin as loaded from a library under
# <library dir> (so a copy found elsewhere, say the build tree, does not count).
function(expect_listed output name library_dir context)
  if(NOT output MATCHES "\n  ${name} +[^\n]* loaded +[0-9]+ +[0-9]+ +([^\n]*)")
    message(FATAL_ERROR "${context}: loom-info does not list '${name}' as loaded:\n${output}")
  endif()
  set(library "${CMAKE_MATCH_1}")
  string(FIND "${library}" "${library_dir}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "${context}: loom-info loaded '${name}' from ${library}, "
                        "not from under ${library_dir}:\n${output}")
  endif()
endfunction()

# install_loom(<prefix>): loom's runtime, sdk and cpu components from
# LOOM_BUILD_DIR into <prefix>, as `make install` lays them out (minus
# Python and the samples).
function(install_loom prefix)
  foreach(component runtime sdk cpu)
    run_step("install ${component}" COMMAND ${CMAKE_COMMAND} --install "${LOOM_BUILD_DIR}"
             --prefix "${prefix}" --component ${component})
  endforeach()
endfunction()

# build_against_sdk(<source dir> <build dir> <loom prefix> <install prefix>):
# configures a project against the loom prefix alone (GENERATOR, CCACHE),
# builds it and installs it into its own prefix.
function(build_against_sdk source build loom_prefix install_prefix)
  set(args -S "${source}" -B "${build}" -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release
      "-DCMAKE_PREFIX_PATH=${loom_prefix}" "-DCMAKE_INSTALL_PREFIX=${install_prefix}")
  if(CCACHE)
    list(APPEND args "-DCMAKE_CXX_COMPILER_LAUNCHER=${CCACHE}")
  endif()
  run_step("configure ${source} against the SDK" COMMAND ${CMAKE_COMMAND} ${args})
  run_step("build it" COMMAND ${CMAKE_COMMAND} --build "${build}" -j 2)
  run_step("install it" COMMAND ${CMAKE_COMMAND} --install "${build}")
endfunction()
