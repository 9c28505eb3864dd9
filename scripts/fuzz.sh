#!/usr/bin/env bash
# Builds the libFuzzer targets (Tests/Fuzz/Targets, -sanitize=fuzzer,address, own scratch path .build-fuzz)
# and runs each for FUZZ_SECONDS (default 60), seeded from the shared corpus by path (never copied).
# New interesting inputs go to .build-fuzz/corpus/<target>; crashes, timeouts and OOMs to
# .build-fuzz/artifacts/<target>/. Minimise a crasher with:
#   .build-fuzz/debug/<target> -minimize_crash=1 -runs=10000 -exact_artifact_path=OUT CRASH
# and put it under Tests/Fuzz/Crashers/<target>/ (FuzzReplayTests replays every file there).
# Usage: scripts/fuzz.sh [target ...]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
CORPUS=${FLIPBOOK_CORPUS:-../shared/corpus}
SCRATCH=.build-fuzz
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz-sniff fuzz-gif fuzz-frames fuzz-jpeg fuzz-png-webp fuzz-probe)
  # The server's Range and path fuzzers, once the server target is in the package (issue 11).
  [ -d Sources/FlipbookServer ] && targets+=(fuzz-range fuzz-path)
fi

seeds() {
  case "$1" in
    fuzz-sniff) echo "$CORPUS/gif $CORPUS/jpeg $CORPUS/png $CORPUS/webp $CORPUS/video" ;;
    fuzz-gif) echo "$CORPUS/gif" ;;
    fuzz-frames) echo "$CORPUS/png $CORPUS/webp" ;;
    fuzz-jpeg) echo "$CORPUS/jpeg" ;;
    fuzz-png-webp) echo "$CORPUS/png $CORPUS/webp" ;;
    fuzz-probe) echo "$CORPUS/video" ;;
    fuzz-range) echo "Tests/Fuzz/Seeds/range" ;;
    fuzz-path) echo "Tests/Fuzz/Seeds/path" ;;
  esac
}
max_len() {
  case "$1" in fuzz-sniff|fuzz-png-webp) echo 4096 ;; fuzz-range|fuzz-path) echo 1024 ;; *) echo 65536 ;; esac
}

for t in "${targets[@]}"; do
  FLIPBOOK_FUZZ=1 swift build --scratch-path "$SCRATCH" --product "$t" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xcc -fsanitize=fuzzer-no-link,address 2>&1 \
    | grep -v "Cannot export local symbol" || true
  [ -x "$SCRATCH/debug/$t" ] || { echo "fuzz: $t did not build" >&2; exit 1; }
done

[ -d "$CORPUS" ] || echo "fuzz: no corpus at $CORPUS (set FLIPBOOK_CORPUS); running unseeded" >&2
status=0
for t in "${targets[@]}"; do
  mkdir -p "$SCRATCH/corpus/$t" "$SCRATCH/artifacts/$t"
  dirs=()
  for d in $(seeds "$t"); do [ -d "$d" ] && dirs+=("$d"); done
  echo "== $t: ${SECONDS_EACH}s, seeds: ${dirs[*]:-none}"
  # Flipbook's own limits bound memory; 2 GB leaves room for ASan's shadow and quarantine.
  if ! ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 "$SCRATCH/debug/$t" \
      -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$t")" \
      -print_final_stats=1 -artifact_prefix="$SCRATCH/artifacts/$t/" \
      "$SCRATCH/corpus/$t" "${dirs[@]}" > "$SCRATCH/$t.log" 2>&1; then
    status=1
    echo "fuzz: $t FOUND A PROBLEM (log: $SCRATCH/$t.log, inputs: $SCRATCH/artifacts/$t/)"
  fi
  grep -E "^(stat::|Done|==[0-9]+==ERROR|SUMMARY)|INFO: Seed|#[0-9]+ *DONE" "$SCRATCH/$t.log" | tail -12
done
exit $status
