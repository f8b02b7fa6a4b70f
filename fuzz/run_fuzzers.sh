#!/usr/bin/env bash
# run_fuzzers.sh BUILD_DIR SECONDS TARGET... — what `make fuzz` runs after
# building: each fuzz_<target> for SECONDS, on a fresh copy of its seed corpus
# and regression inputs (so the repo's corpus never changes), with its
# dictionary. Fails if any target crashes, hangs, leaks or breaks an
# invariant, printing the path of the input that did it.
set -uo pipefail
build=$1 seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
failed=()
for target in "$@"; do
  exe=$build/bin/fuzz_$target
  work=$build/fuzz-run/$target
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  cp "$here/corpus/$target"/* "$work/corpus/"
  cp "$here/regressions/$target"/* "$work/corpus/" 2>/dev/null || true
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$work/artifacts/")
  [ -f "$here/dict/$target.dict" ] && args+=(-dict="$here/dict/$target.dict")
  echo "== fuzz_$target: ${seconds}s on $(ls "$work/corpus" | wc -l) seeds (log: $work/fuzz.log)"
  "$exe" "${args[@]}" "$work/corpus" >"$work/fuzz.log" 2>&1
  status=$?
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$work/fuzz.log" | sed 's/^/   /'
  crashes=$(find "$work/artifacts" -type f)
  if [ $status -ne 0 ] || [ -n "$crashes" ]; then
    echo "!! fuzz_$target FAILED (exit $status). Last lines of its log:"
    tail -n 30 "$work/fuzz.log" | sed 's/^/   /'
    for f in $crashes; do
      echo "!! input that failed: $f"
      echo "!!   reproduce: $exe $f"
      echo "!!   then fix the bug and copy it into fuzz/regressions/$target/"
    done
    failed+=("$target")
  fi
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "make fuzz: FAILED: ${failed[*]}"
  exit 1
fi
echo "make fuzz: all targets ran ${seconds}s without a crash: $*"
