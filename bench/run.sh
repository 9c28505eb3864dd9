#!/usr/bin/env bash
# make bench: builds in release mode (the Makefile does), makes the inputs, then runs Flipbook and its
# peer alternately on the same inputs and prints medians and ratios of wall time and peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
work=bench/work
mkdir -p "$work"
. bench/inputs.sh

# 24-megapixel JPEGs from ffmpeg's mandelbrot source. Noise makes them photo-like in entropy:
# "typical" ~1.7 MB (a phone photo's density), "dense" ~9.6 MB (grainy, low-compression).
input "$work/photo24-typical.jpg" -f lavfi -i "mandelbrot=size=6000x4000:maxiter=100,noise=alls=5:allf=t,format=yuvj420p" -frames:v 1 -q:v 3
input "$work/photo24-dense.jpg" -f lavfi -i "mandelbrot=size=6000x4000:maxiter=100,noise=alls=12:allf=t,format=yuvj420p" -frames:v 1 -q:v 2
# 20 different 24 MP images for the batch run (five pictures, each at four zooms of the set).
mkdir -p "$work/batch"
for i in $(seq 0 19); do
  f="$work/batch/img$(printf %02d "$i").jpg"
  input "$f" -f lavfi -i "mandelbrot=size=6000x4000:maxiter=80:start_scale=$(echo "3 - $i * 0.12" | bc -l),noise=alls=5:allf=t,format=yuvj420p" -frames:v 1 -q:v 3
done

# The poster benchmark's five encodings (bench/posters.py makes them with scripts/make-poster-bench.sh).

# Same 480x480 canvas, 10 and 400 frames: the GIF decoder's peak memory must not depend on the count.
input "$work/gif-10.gif" -f lavfi -i "testsrc2=size=480x480:rate=10:duration=1" -vf "split[a][b];[a]palettegen[p];[b][p]paletteuse"
input "$work/gif-400.gif" -f lavfi -i "testsrc2=size=480x480:rate=10:duration=40" -vf "split[a][b];[a]palettegen[p];[b][p]paletteuse"

# AVIF, HEIC, wide-gamut and CMYK JPEGs, a 144 MP WebP and 24 MP PNGs for the still-colour section.
scripts/make-still-bench.sh "$work/stills" >/dev/null

# Debian's interpreter: python3-pil (installed by the Makefile) lives there, whatever else is on PATH.
exec /usr/bin/python3 bench/compare.py "$@"
