#!/usr/bin/env bash
# Before/after check for refactors (issue 14): two flipbook-bench binaries, alternating run by run, on the
# three jobs `make bench` leans on: a 256 px poster of a 1080p 60 s H.264 clip, a 256 px thumbnail of a
# 24 MP JPEG and one GIF (480x480, 400 frames) to MP4. One job per process; wall time and peak RSS from
# /usr/bin/time, and CPU time (user + system), which other load on a shared machine disturbs less than
# wall time. Prints the median of RUNS (default 7) for each and the ratio after/before.
#   bench/shape.sh BEFORE_BENCH AFTER_BENCH [RUNS]
set -euo pipefail
before=$1 after=$2 runs=${3:-7}
work=${BENCH_WORK:-bench/work}
mkdir -p "$work"
. "$(dirname "$0")/inputs.sh"
# The same inputs bench/run.sh makes (reused only when complete and made by the same recipe).
input "$work/photo24-typical.jpg" -f lavfi -i "mandelbrot=size=6000x4000:maxiter=100,noise=alls=5:allf=t,format=yuvj420p" -frames:v 1 -q:v 3
input "$work/testsrc2-1080p-60s.mp4" -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=60" -c:v libx264 -preset veryfast -crf 26 -pix_fmt yuv420p
input "$work/gif-400.gif" -f lavfi -i "testsrc2=size=480x480:rate=10:duration=40" -vf "split[a][b];[a]palettegen[p];[b][p]paletteuse"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
jobs=("poster $work/testsrc2-1080p-60s.mp4 $out/p.jpg" "thumb $work/photo24-typical.jpg $out/t.jpg" "convert $work/gif-400.gif $out/c.mp4")
declare -A wall rss cpu
for ((i = 0; i <= runs; i++)); do  # run 0 warms the page cache and is not counted
  for j in "${jobs[@]}"; do
    name=${j%% *}
    order=("before" "after"); ((i % 2)) && order=("after" "before")
    for which in "${order[@]}"; do
      bin=$before; [ "$which" = after ] && bin=$after
      read -r e u s k < <( { /usr/bin/time -f "%e %U %S %M" "$bin" $j >/dev/null; } 2>&1 | tail -1)
      ((i > 0)) && { wall[$name.$which]+="$e "; rss[$name.$which]+="$k "; cpu[$name.$which]+="$(echo "$u + $s" | bc -l) "; }
    done
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf "%-8s %12s %12s %7s %12s %12s %7s %14s %14s %7s\n" job "wall before" "wall after" ratio "CPU before" "CPU after" ratio "RSS before MB" "RSS after MB" ratio
for j in "${jobs[@]}"; do
  name=${j%% *}
  wb=$(echo "${wall[$name.before]}" | median); wa=$(echo "${wall[$name.after]}" | median)
  cb=$(echo "${cpu[$name.before]}" | median); ca=$(echo "${cpu[$name.after]}" | median)
  rb=$(echo "${rss[$name.before]}" | median); ra=$(echo "${rss[$name.after]}" | median)
  printf "%-8s %11.2fs %11.2fs %6.2fx %11.2fs %11.2fs %6.2fx %14.1f %14.1f %6.2fx\n" "$name" "$wb" "$wa" "$(echo "$wa / $wb" | bc -l)" \
    "$cb" "$ca" "$(echo "$ca / $cb" | bc -l)" \
    "$(echo "$rb / 1024" | bc -l)" "$(echo "$ra / 1024" | bc -l)" "$(echo "$ra / $rb" | bc -l)"
done
