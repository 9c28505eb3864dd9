#!/usr/bin/env bash
# Makes the five videos the poster benchmark times (bench/posters.py, `make bench`), from ffmpeg's test
# sources: encodings a poster service meets, each with its own decoder cost and keyframe spacing.
# Usage: scripts/make-poster-bench.sh [DIR]   (default bench/work/posters); prints the paths, one a line.
#
#   h264-1080p-ultrafast-g60.mp4   1920x1080 30 fps 60 s, x264 ultrafast (no B-frames, CAVLC), -g 60
#   h264-1080p-veryfast-bframes.mp4 1920x1080 30 fps 60 s, x264 veryfast crf 26 (3 B-frames, keyint 250)
#   hevc-2160p.mp4                 3840x2160 24 fps 12 s, x265 superfast, keyint 48, tagged hvc1
#   vp9-720p.webm                  1280x720 30 fps 30 s, libvpx-vp9 realtime, 1.5 Mbit/s, keyint 120
#   phone-rotated.mp4              1920x1080 30 fps 20 s as a phone writes it: x264 main, 1 s keyint, film
#                                  grain, AAC stereo, rotation 90 in the track header (shown as 1080x1920)
#
# Each file is reused only if an earlier run completed it with the same recipe (bench/inputs.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/bench/work/posters}"
mkdir -p "$out"

. "$root/bench/inputs.sh"
# clip NAME ARGS...: `input` (bench/inputs.sh) into $out, then the path.
clip() { local name="$1"; shift; input "$out/$name" "$@"; echo "$out/$name"; }

clip h264-1080p-ultrafast-g60.mp4 -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=60" \
  -c:v libx264 -preset ultrafast -g 60 -crf 23 -pix_fmt yuv420p -movflags +faststart
clip h264-1080p-veryfast-bframes.mp4 -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=60" \
  -c:v libx264 -preset veryfast -crf 26 -pix_fmt yuv420p
clip hevc-2160p.mp4 -f lavfi -i "testsrc2=size=3840x2160:rate=24:duration=12" \
  -c:v libx265 -preset superfast -x265-params "keyint=48:log-level=error" -crf 28 -pix_fmt yuv420p -tag:v hvc1
clip vp9-720p.webm -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=30" \
  -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -row-mt 1 -b:v 1500k -g 120 -pix_fmt yuv420p
clip phone-rotated.mp4 -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=20,noise=alls=8:allf=t" \
  -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=20" \
  -c:v libx264 -profile:v main -preset veryfast -b:v 12M -g 30 -pix_fmt yuv420p -c:a aac -ac 2 -b:a 128k \
  -metadata:s:v:0 rotate=90 -shortest
