#!/usr/bin/env bash
# make bench: builds in release mode (the Makefile does), makes the inputs, then runs Flipbook and its
# peer alternately on the same inputs and prints medians and ratios of wall time and peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
work=bench/work
mkdir -p "$work"
ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }

# 24-megapixel JPEGs from ffmpeg's mandelbrot source. Noise makes them photo-like in entropy:
# "typical" ~1.7 MB (a phone photo's density), "dense" ~9.6 MB (grainy, low-compression).
[ -f "$work/photo24-typical.jpg" ] || ff -f lavfi -i "mandelbrot=size=6000x4000:maxiter=100,noise=alls=5:allf=t,format=yuvj420p" -frames:v 1 -q:v 3 "$work/photo24-typical.jpg"
[ -f "$work/photo24-dense.jpg" ] || ff -f lavfi -i "mandelbrot=size=6000x4000:maxiter=100,noise=alls=12:allf=t,format=yuvj420p" -frames:v 1 -q:v 2 "$work/photo24-dense.jpg"
# 20 different 24 MP images for the batch run (five pictures, each at four zooms of the set).
mkdir -p "$work/batch"
for i in $(seq 0 19); do
  f="$work/batch/img$(printf %02d "$i").jpg"
  [ -f "$f" ] || ff -f lavfi -i "mandelbrot=size=6000x4000:maxiter=80:start_scale=$(echo "3 - $i * 0.12" | bc -l),noise=alls=5:allf=t,format=yuvj420p" -frames:v 1 -q:v 3 "$f"
done

# A 1080p, 60 s H.264 file for the poster benchmark.
[ -f "$work/testsrc2-1080p-60s.mp4" ] || ff -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=60" -c:v libx264 -preset veryfast -crf 26 -pix_fmt yuv420p "$work/testsrc2-1080p-60s.mp4"

# Same 480x480 canvas, 10 and 400 frames: the GIF decoder's peak memory must not depend on the count.
[ -f "$work/gif-10.gif" ] || ff -f lavfi -i "testsrc2=size=480x480:rate=10:duration=1" -vf "split[a][b];[a]palettegen[p];[b][p]paletteuse" "$work/gif-10.gif"
[ -f "$work/gif-400.gif" ] || ff -f lavfi -i "testsrc2=size=480x480:rate=10:duration=40" -vf "split[a][b];[a]palettegen[p];[b][p]paletteuse" "$work/gif-400.gif"

# AVIF, HEIC, wide-gamut and CMYK JPEGs, a 144 MP WebP and 24 MP PNGs for the still-colour section.
scripts/make-still-bench.sh "$work/stills" >/dev/null

# Debian's interpreter: python3-pil (installed by the Makefile) lives there, whatever else is on PATH.
exec /usr/bin/python3 bench/compare.py "$@"
