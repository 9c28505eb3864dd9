#!/usr/bin/env bash
# `make sanitize`: the test suite under AddressSanitizer (LeakSanitizer on: Linux ASan checks leaks at
# exit), each in its own scratch path so normal builds are untouched; then the concurrent parts, parallel
# `convert` and `thumb`, in a ThreadSanitizer build of the CLI. Logs go to .build-asan/ and .build-tsan/.
# SANITIZE_FILTER narrows the ASan test run (a `swift test --filter` pattern).
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
PY=${FLIPBOOK_PYTHON:-$PWD/.build/venv/bin/python3}
status=0

echo "== AddressSanitizer: swift test --sanitize=address (.build-asan)"
[ -n "${SANITIZE_SKIP_BUILD:-}" ] || $SWIFT build --build-tests --sanitize=address --scratch-path .build-asan 2>&1 | grep -E "warning:|error:|Compiling|Build" | tail -3
mkdir -p .build-asan
# The sweep runs the normal CLI in subprocesses, so it adds nothing under ASan; it is skipped here.
filter=()
[ -n "${SANITIZE_FILTER:-}" ] && filter=(--filter "$SANITIZE_FILTER")
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0 LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp:print_suppressions=0 FLIPBOOK_PYTHON=$PY \
  $SWIFT test --skip-build --sanitize=address --scratch-path .build-asan --skip SweepTests "${filter[@]}" \
  > .build-asan/test.log 2>&1
asan=$?
scripts/test-summary.sh .build-asan/test.log || true
if grep -qE "ERROR: (AddressSanitizer|LeakSanitizer)" .build-asan/test.log; then
  grep -E -A12 "ERROR: (AddressSanitizer|LeakSanitizer)" .build-asan/test.log | head -60
  echo "sanitize: AddressSanitizer/LeakSanitizer reported errors (.build-asan/test.log)"; status=1
elif [ $asan -ne 0 ]; then
  echo "sanitize: the suite failed under ASan (.build-asan/test.log)"; status=1
else
  echo "sanitize: ASan + LSan clean"
fi

echo "== ThreadSanitizer: parallel convert and thumb (.build-tsan)"
$SWIFT build --sanitize=thread --scratch-path .build-tsan --product flipbook 2>&1 | grep -E "warning:|error:|Build" | tail -3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bin=.build-tsan/debug/flipbook
export TSAN_OPTIONS=halt_on_error=0:exitcode=66:report_signal_unsafe=0
: > .build-tsan/tsan.log
$bin convert samples -o "$out/video" --jobs 4 --preset ultrafast --max-size 160 --report "$out/report.jsonl" >> .build-tsan/tsan.log 2>&1
c=$?
$bin thumb samples/* -o "$out/thumbs" --size 96 --jobs 4 >> .build-tsan/tsan.log 2>&1
t=$?
if [ ! -x "$bin" ]; then
  echo "sanitize: the ThreadSanitizer build failed"; status=1
elif grep -q "WARNING: ThreadSanitizer" .build-tsan/tsan.log || [ $c -eq 66 ] || [ $t -eq 66 ]; then
  grep -A20 "WARNING: ThreadSanitizer" .build-tsan/tsan.log | head -60
  echo "sanitize: ThreadSanitizer reported races (.build-tsan/tsan.log)"; status=1
else
  [ $c -eq 0 ] && [ $t -eq 0 ] || { echo "sanitize: convert/thumb failed under TSan (.build-tsan/tsan.log)"; status=1; }
  echo "sanitize: no TSan reports (convert exit $c, thumb exit $t; $(ls "$out/video" | wc -l) videos, $(ls "$out/thumbs" | wc -l) thumbnails)"
fi
exit $status
