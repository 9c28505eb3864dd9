#!/usr/bin/env bash
# Per-process start cost of a GIF conversion (issue 10's speed target): CPU time (task-clock, which other load
# disturbs less than wall time) and page faults, mean of RUNS (default 20) runs each, from perf stat, of
#   - flipbook --help (the Swift binary alone, no libav loaded),
#   - flipbook convert and the peer recipe (ffmpeg -tune animation) on a 5-frame 100x100 GIF,
#   - dlopen of libx264 alone, and of libavutil + libswscale + libavcodec (+ libavformat), as Flipbook's
#     loader opens them (bench/dlopen_cost.c, built here into .build/bench/).
#   bench/start_cost.sh FLIPBOOK [RUNS]        (make bench-start-cost, after make release)
set -euo pipefail
flipbook=$1 runs=${2:-20}
corpus=${FLIPBOOK_CORPUS:-$(dirname "$PWD")/shared/corpus}
gif=$corpus/gif/pillow/dispose_none.gif
mkdir -p .build/bench
cc -O2 bench/dlopen_cost.c -o .build/bench/dlopen_cost -ldl
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
so() { basename "$(ls /usr/lib/*-linux-gnu/"$1".so.* | sort | head -1 | sed 's/\(\.so\.[0-9]*\).*/\1/')"; }
x264=$(so libx264) avutil=$(so libavutil) swscale=$(so libswscale) avcodec=$(so libavcodec) avformat=$(so libavformat)
measure() {  # NAME COMMAND...
  local name=$1; shift
  perf stat -r "$runs" -x, -e task-clock,page-faults "$@" 2>&1 >/dev/null | awk -F, -v n="$name" '
    $3 == "task-clock" { ms = $1 } $3 == "page-faults" { pf = $1 } END { printf "| %s | %.1f ms | %d |\n", n, ms, pf }'
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| process | CPU time (mean of $runs) | page faults |"
echo "|---|---|---|"
measure "flipbook --help" "$flipbook" --help
measure "flipbook convert $(basename "$gif")" sh -c "rm -f $out/a.mp4; exec $flipbook convert $gif -o $out/a.mp4 --jobs 1"
measure "peer recipe on $(basename "$gif")" ffmpeg -v error -y -i "$gif" -fps_mode passthrough -c:v libx264 -tune animation \
  -movflags +faststart -pix_fmt yuv420p -vf "scale=trunc(iw/2)*2:trunc(ih/2)*2" -an "$out/b.mp4"
measure "dlopen nothing" .build/bench/dlopen_cost
measure "dlopen $x264" .build/bench/dlopen_cost "$x264"
measure "dlopen $avutil $swscale $avcodec" .build/bench/dlopen_cost "$avutil" "$swscale" "$avcodec"
measure "dlopen $avutil $swscale $avcodec $avformat" .build/bench/dlopen_cost "$avutil" "$swscale" "$avcodec" "$avformat"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
