#!/usr/bin/env bash
# Reads a `swift test` log and prints Swift Testing's own per-test outcomes as one plain line:
# "tests: N passed, N failed, N skipped". Skipped tests (corpus absent, tool missing) are never counted as
# passed. Exits 1 when any test failed or the log holds no test run at all.
set -euo pipefail
log=${1:-.build/test.log}
passed=$(grep -Ec '^✔ Test .* passed after' "$log" | tr -d ' ' || true)
runs=$(grep -Ec '^. Test run with' "$log" || true)
failed=$(grep -E '^✘ Test .* failed after' "$log" | grep -vc '^✘ Test run with' || true)
skipped=$(grep -Ec '^➜ Test .* skipped' "$log" || true)
# "✔ Test run with N tests ... passed" matches the passed pattern too: take it back out.
passed=$((passed - $(grep -Ec '^✔ Test run with' "$log" || true)))
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$runs" -gt 0 ] && [ "$failed" -eq 0 ]
