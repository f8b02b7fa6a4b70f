# Runs loom-conformance and checks its exit status and JSON-lines report.
#   -DTOOL=<loom-conformance> -DMODE=cpu|sim|badconf -DOUT=<dir>
#   [-DPLUGIN=<manifest>] [-DEXPECT=<expectations file>] [-DCASE_TIMEOUT=<s> (badconf; default 1)]
file(MAKE_DIRECTORY ${OUT})
if(NOT DEFINED CASE_TIMEOUT)
  set(CASE_TIMEOUT 1)
endif()
set(report ${OUT}/report.jsonl)

function(run_tool rc_var)
  execute_process(COMMAND ${TOOL} ${ARGN} --report ${report}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "loom-conformance ${ARGN}: exit ${rc}\n${out}${err}")
  set(${rc_var} ${rc} PARENT_SCOPE)
endfunction()

# Runs the tool and fails with `why` unless it exits with `want`.
function(run_expecting want why)
  run_tool(rc ${ARGN})
  if(NOT rc EQUAL want)
    message(FATAL_ERROR "${why} (exit ${rc}, expected ${want})")
  endif()
endfunction()

# The status of the case `id` in the report, or "" when absent.
function(status_of id var)
  file(STRINGS ${report} lines)
  set(found "")
  foreach(line IN LISTS lines)
    string(JSON case_id GET "${line}" id)
    if(case_id STREQUAL id)
      string(JSON found GET "${line}" status)
    endif()
  endforeach()
  set(${var} "${found}" PARENT_SCOPE)
endfunction()

function(expect_status id want)
  status_of("${id}" got)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "case ${id}: expected ${want}, the report says '${got}'")
  endif()
endfunction()

# Every case of an op (by op name) has status `want`, and there is one.
function(expect_op_statuses op variant dtype want)
  file(STRINGS ${report} lines)
  set(n 0)
  foreach(line IN LISTS lines)
    string(JSON o GET "${line}" op)
    string(JSON v GET "${line}" variant)
    string(JSON d GET "${line}" dtype)
    if(o STREQUAL op AND v MATCHES "${variant}" AND d MATCHES "${dtype}")
      string(JSON s GET "${line}" status)
      string(JSON id GET "${line}" id)
      if(NOT s STREQUAL want)
        message(FATAL_ERROR "case ${id}: expected ${want}, the report says ${s}")
      endif()
      math(EXPR n "${n} + 1")
    endif()
  endforeach()
  if(n EQUAL 0)
    message(FATAL_ERROR "no ${op} ${variant} ${dtype} case in the report")
  endif()
endfunction()

# The whole quick tier must pass; the statuses are then checked on a run of
# the few ops they name (the whole report is thousands of lines, slow to
# walk in CMake, and labels may hold characters CMake lists split on).
if(MODE STREQUAL "cpu")
  run_expecting(0 "the quick tier on cpu must pass" --device cpu -j 2)
  run_expecting(0 "add and matmul on cpu must pass" --device cpu -j 2 -o add,matmul)
  expect_op_statuses(add "contiguous|noncontiguous|out" "float32|int64|bool" PASS)
  expect_op_statuses(matmul "contiguous|noncontiguous|out" "float32" PASS)
  # Gradients: backward on cpu against cpu in float64.
  run_expecting(0 "--grad on cpu must pass" --device cpu -o add,matmul,dropout --grad --case "*/grad")
  expect_op_statuses(matmul grad "float32|bfloat16" PASS)
  # Random ops draw the same numbers for the reference and the device run.
  expect_op_statuses(dropout grad "float32|bfloat16" PASS)
elseif(MODE STREQUAL "sim")
  run_expecting(0 "the quick tier on sim must pass (fallbacks allowed)" --device sim -j 2)
  run_expecting(0 "add, sum and matmul on sim must pass (fallbacks allowed)" --device sim -j 2 -o add,sum,matmul)
  # sim's own kernel: add for float32 (and bool) runs natively ...
  expect_op_statuses(add "^(contiguous|noncontiguous|out)$" "float32|bool|bfloat16" PASS)
  # ... int64 is not in its kernel's dtypes, and the rest has no sim kernel.
  expect_op_statuses(add "contiguous" "int64" FALLBACK)
  expect_op_statuses(sum ".*" ".*" FALLBACK)
  expect_op_statuses(matmul ".*" ".*" FALLBACK)
  # With --no-fallback-ok the same run fails.
  run_expecting(1 "--no-fallback-ok must fail a run with FALLBACK cases" --device sim -o matmul --no-fallback-ok)
  # The per-op summary a vendor acts on: add's int64 cases fall back, with
  # the dispatcher's reason in the case's message.
  execute_process(COMMAND ${TOOL} --device sim -o add,sum --report ${report} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT out MATCHES "per op \\(cases native / tested\\):" OR
     NOT out MATCHES "\n  add +[0-9]+/[0-9]+ native, [0-9]+ fall back \\(dtypes int64;")
    message(FATAL_ERROR "the summary lacks add's per-op line:\n${out}")
  endif()
  file(STRINGS ${report} why REGEX "but not for dtype int64")
  if(NOT why)
    message(FATAL_ERROR "no FALLBACK message gives the kernel's missing dtype")
  endif()
  # Selections with no case are errors that say why, and typos get a guess.
  run_expecting(2 "a --case matching nothing must be a usage error" --device sim -o add --case "no-such-case*")
  execute_process(COMMAND ${TOOL} --device sim -o mull ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "did you mean 'mul'")
    message(FATAL_ERROR "-o mull: exit ${rc}, no suggestion:\n${err}")
  endif()
elseif(MODE STREQUAL "badconf")
  set(args --device badconf --plugin ${PLUGIN} -o add,sum,matmul,cat
           --case "*/float32/contiguous" --timeout ${CASE_TIMEOUT} -j 2)
  run_expecting(1 "a broken backend must fail the run" ${args})
  expect_op_statuses(add contiguous float32 FAIL_VALUE)
  expect_op_statuses(sum contiguous float32 CRASH)
  expect_op_statuses(matmul contiguous float32 TIMEOUT)
  expect_op_statuses(cat contiguous float32 ERROR)
  # The same failures, known and explained, no longer fail the run.
  run_expecting(0 "expected failures must not fail the run" ${args} --expect ${EXPECT})
else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()
