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
