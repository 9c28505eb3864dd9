#!/usr/bin/env bash
# make bench-serve: `flipbook serve` against nginx (Debian's nginx-light, sendfile on) on loopback, and its
# memory and cold-derivative figures. The Makefile builds release first. Inputs are made here with ffmpeg.
set -euo pipefail
cd "$(dirname "$0")/.."
work=bench/work/serve
mkdir -p "$work/root/links" "$work/photos"
. bench/inputs.sh

# A GIF whose MP4 is about 1 MB: 640x360, 12 s of testsrc2 with grain.
input "$work/root/big.gif" -f lavfi -i "testsrc2=size=640x360:rate=20:duration=12,noise=alls=6:allf=t" \
  -vf "split[a][b];[a]palettegen[p];[b][p]paletteuse"
# The memory scenario: one 96-frame 320x180 GIF, 80 symlinks to it, and a photo for 80 thumbnail sizes.
input "$work/root/clip.gif" -f lavfi -i "testsrc2=size=320x180:rate=24:duration=4" \
  -vf "split[a][b];[a]palettegen[p];[b][p]paletteuse" -frames:v 96
for i in $(seq -w 0 79); do ln -sf ../clip.gif "$work/root/links/clip$i.gif"; done
input "$work/root/photo.jpg" -f lavfi -i "mandelbrot=size=3000x2000:maxiter=80,noise=alls=5:allf=t,format=yuvj420p" -frames:v 1 -q:v 3
# 24-megapixel JPEGs for the cold thumbnails (the recipe of bench/run.sh).
for i in $(seq 0 7); do
  f="$work/photos/img$i.jpg"
  input "$f" -f lavfi -i "mandelbrot=size=6000x4000:maxiter=80:start_scale=$(echo "3 - $i * 0.3" | bc -l),noise=alls=5:allf=t,format=yuvj420p" -frames:v 1 -q:v 3
done

exec /usr/bin/python3 bench/serve_bench.py "$@"
