#!/usr/bin/env bash
# Does a faster x264 preset pay on large GIFs? Three synthetic GIFs larger than the bench set's one large file
# (ffmpeg testsrc2 480x480 x 400 frames, mandelbrot 400x300 x 200, a 16-colour cellular automaton 640x480 x 300;
# made once into bench/work/large/), each converted by Flipbook at GIFTuning's crf and chroma offset with
# PRESETS (default: medium fast), one process each: bytes, CPU time (user, /usr/bin/time) and ffmpeg's SSIM
# (yuv444p, all planes) against the GIF as ffmpeg decodes it (a quick check, not the browser reference).
#   bench/gif_large_presets.sh FLIPBOOK [PRESETS...]
set -euo pipefail
flipbook=$1; shift
if [ $# -gt 0 ]; then presets=("$@"); else presets=(medium fast); fi
work=${BENCH_WORK:-bench/work}/large
mkdir -p "$work"
. "$(dirname "$0")/inputs.sh"
input "$work/testsrc2.gif" -f lavfi -i "testsrc2=size=480x480:rate=10:duration=40" \
  -vf "split[a][b];[a]palettegen[p];[b][p]paletteuse"
input "$work/mandelbrot.gif" -f lavfi -i "mandelbrot=size=400x300:rate=10,trim=duration=20" \
  -vf "split[a][b];[a]palettegen[p];[b][p]paletteuse"
input "$work/cellauto.gif" -f lavfi -i "cellauto=size=320x240:rate=10:rule=110:seed=1,trim=duration=30,format=rgb24,scale=640:480:flags=neighbor" \
  -vf "split[a][b];[a]palettegen=max_colors=16[p];[b][p]paletteuse=dither=none"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| GIF | preset | bytes | vs ${presets[0]} | CPU (user) | SSIM |"
echo "|---|---|---|---|---|---|"
for gif in "$work"/testsrc2.gif "$work"/mandelbrot.gif "$work"/cellauto.gif; do
  first=
  for preset in "${presets[@]}"; do
    rm -f "$out/v.mp4"
    /usr/bin/time -f "%U" -o "$out/time" "$flipbook" convert "$gif" -o "$out/v.mp4" --jobs 1 --preset "$preset" --crf 26 \
      --x264-params chroma-qp-offset=-4 >/dev/null 2>&1
    bytes=$(stat -c %s "$out/v.mp4")
    first=${first:-$bytes}
    ssim=$(ffmpeg -hide_banner -i "$gif" -i "$out/v.mp4" -lavfi "[0:v]format=yuv444p[a];[1:v]format=yuv444p[b];[a][b]ssim" \
      -f null - 2>&1 | grep -o "All:[0-9.]*" | cut -d: -f2)
    echo "| $(basename "$gif") | $preset | $bytes | $(echo "scale=3; $bytes / $first" | bc -l)x | $(cat "$out/time") s | $ssim |"
  done
done
