#!/usr/bin/env bash
# Makes the small media in samples/ from ffmpeg's synthetic sources (no file from elsewhere), so anyone
# can regenerate them: `make samples`. EXIF orientation is added by scripts/exif_orient.py.
set -euo pipefail
out=${1:-samples}
mkdir -p "$out"
ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }

# Stills
ff -f lavfi -i "mandelbrot=size=1600x1200:maxiter=120" -frames:v 1 -q:v 3 "$out/mandelbrot-1600x1200.jpg"
ff -f lavfi -i "testsrc2=size=1200x800" -frames:v 1 -q:v 4 "$out/testsrc-1200x800-upright.jpg"
# The same picture stored rotated 90 degrees counter-clockwise, with EXIF orientation 6 (rotate 90 degrees
# clockwise to display) to turn it back.
ff -f lavfi -i "testsrc2=size=1200x800" -frames:v 1 -vf "transpose=2" -q:v 4 "$out/testsrc-rotated-exif6.jpg"
python3 "$(dirname "$0")/exif_orient.py" "$out/testsrc-rotated-exif6.jpg" 6
ff -f lavfi -i "testsrc2=size=1000x700" -frames:v 1 -pix_fmt gray -q:v 4 "$out/gray-1000x700.jpg"
ff -f lavfi -i "color=c=0x2080C0@0.5:size=640x480,format=rgba,drawbox=x=160:y=120:w=320:h=240:color=0xFF4000@1:t=fill" \
   -frames:v 1 "$out/alpha-640x480.png"
ff -f lavfi -i "cellauto=size=400x300:rule=110,format=rgb24" -frames:v 1 -c:v libwebp -quality 80 "$out/cellauto-400x300.webp"
ff -f lavfi -i "testsrc=size=320x240" -frames:v 1 "$out/testsrc-320x240.bmp"

# Animation and video (for the GIF and video pipelines)
ff -f lavfi -i "testsrc=size=160x120:rate=10:duration=2" -vf "split[a][b];[a]palettegen[p];[b][p]paletteuse" \
   -loop 0 "$out/testsrc-160x120-2s.gif"
# A transparent GIF: an orange square sliding across a transparent background, 3 s at 10 fps.
ff -filter_complex "color=c=black@0:s=120x90:r=10:d=3,format=rgba[bg];color=c=0xFF6600:s=30x30:r=10:d=3,format=rgba[sq];\
[bg][sq]overlay=x='t*30':y=30:format=rgb,split[a][b];[a]palettegen=reserve_transparent=1[p];[b][p]paletteuse=alpha_threshold=128" \
   -loop 0 "$out/box-transparent-120x90.gif"
ff -f lavfi -i "testsrc2=size=480x270:rate=25:duration=4" -c:v libx264 -preset veryfast -crf 30 -pix_fmt yuv420p \
   -movflags +faststart "$out/testsrc2-480x270-4s.mp4"
ls -l "$out"
