#!/usr/bin/python3
"""SSIM between a video and the GIF it was made from, by ffmpeg's ssim filter, aligned by time.

  video_ssim.py VIDEO GIF [BACKGROUND]      prints the mean SSIM ("All") on one line

The GIF (decoded by ffmpeg) is composited over BACKGROUND (#RRGGBB, default #FFFFFF; use #000000 for a
converter that drops alpha, as `ffmpeg -pix_fmt yuv420p` does) on a 100 fps timeline: GIF delays are
whole centiseconds, so every frame change is sampled and the average is weighted by display time. The
video is cropped to the GIF's size if it was padded, or the reference scaled to the video's if it was
shrunk. Used by Flipbook's tests and `make bench`."""
import json
import re
import subprocess
import sys


def size(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                          "-of", "json", path], capture_output=True, text=True, check=True).stdout
    s = json.loads(out)["streams"][0]
    return s["width"], s["height"]


def ssim(video, gif, background="#FFFFFF"):
    vw, vh = size(video)
    gw, gh = size(gif)
    colour = background.lstrip("#")
    ref = f"color=c=0x{colour}:s={gw}x{gh}:r=100[bg];[1:v]format=rgba[g];[bg][g]overlay=shortest=1:eof_action=endall,format=rgb24"
    if vw >= gw and vh >= gh:
        graph = f"{ref}[ref];[0:v]crop={gw}:{gh}:0:0[v];[v][ref]ssim"
    else:
        graph = f"{ref},scale={vw}:{vh}:flags=lanczos[ref];[0:v][ref]ssim"
    run = subprocess.run(["ffmpeg", "-v", "info", "-nostats", "-i", video, "-i", gif, "-lavfi", graph, "-f", "null", "-"],
                         capture_output=True, text=True)
    m = re.search(r"All:([0-9.]+)", run.stderr)
    if not m:
        raise SystemExit(f"no SSIM for {video}: {run.stderr[-500:]}")
    return float(m.group(1))


if __name__ == "__main__":
    print(ssim(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "#FFFFFF"))
