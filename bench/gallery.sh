#!/usr/bin/env bash
# `make bench-gallery`: the browser test's scenario (2,000 entries, chromium headless over CDP, a real
# `flipbook serve` with a cold cache each run) on the release build, RUNS times (default 3). Prints each
# run's time from navigation start to the first playing preview (the page's own clock and the harness's
# wall clock), the JS heap after scrolling to the end and the 206 responses, then the medians.
set -euo pipefail
bin=${1:-.build/release/flipbook}
py=${2:-.build/venv/bin/python3}
runs=${RUNS:-3}
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
for i in $(seq 1 "$runs"); do
  "$py" Tests/browser/gallery_browser.py --flipbook "$bin" --json "$out/run$i.json" > "$out/run$i.log" || { cat "$out/run$i.log"; exit 1; }
  echo "run $i: $(cat "$out/run$i.json")"
done
"$py" - "$out" "$runs" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
rows = [json.load(open(f"{out}/run{i}.json")) for i in range(1, runs + 1)]
def med(key): return statistics.median(r[key] for r in rows if r.get(key) is not None)
print(f"gallery, 2,000 entries, cold cache, median of {runs}: first play {med('first_play_ms'):.0f} ms after navigation start "
      f"(harness wall clock {med('first_play_ms_wall'):.0f} ms), JS heap at the end {med('js_heap_mb'):.1f} MB, "
      f"{med('responses_206'):.0f} responses 206")
PY
