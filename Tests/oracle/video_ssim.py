#!/usr/bin/python3
"""SSIM between a video and the GIF it was made from, by ffmpeg's ssim filter, aligned by time.

  video_ssim.py VIDEO GIF                      reference: the GIF as ffmpeg's own decoder renders it
  video_ssim.py VIDEO GIF --browser FLIPBOOK   reference: the GIF as browsers render it

Prints the mean SSIM ("All"), or "nan" for frames too small for the filter (under 8 pixels a side).

Both references are composited over white (ffmpeg's GIF decoder gives transparent pixels as white, so
its `-pix_fmt yuv420p` recipe flattens onto white too, as Flipbook does by default) and sampled on a
100 fps timeline: GIF delays are whole centiseconds, so every change is sampled and the mean is weighted
by display time. The video is cropped to the GIF's size if padded, or the reference scaled if shrunk.

Why two references: ffmpeg's decoder (and Pillow's) paints disposal-2 areas with the GIF's background
colour and plays 0-delay frames differently; browsers clear to transparent and play <= 1 cs as 100 ms.
The browser reference uses `flipbook frames` (whose frames match Pillow and ffmpeg pixel for pixel
wherever those two agree; see GIFReferenceTests) and Pillow's per-frame delays with the browser rule, so
it measures what encoding lost, not a disagreement about what the GIF shows."""
import json
import os
import re
import subprocess
import sys
import tempfile

from PIL import Image


# Both sides are brought to the same geometry in RGB (yuv420p cannot be cropped to odd sizes), then
# compared as yuv420p, the video's own format: SSIM "All" weights Y 4/6 and each chroma plane 1/6.
COMPARE = "[v]format=yuv420p[v2];[ref]format=yuv420p[r2];[v2][r2]ssim"


def size(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                          "-of", "json", path], capture_output=True, text=True, check=True).stdout
    s = json.loads(out)["streams"][0]
    return s["width"], s["height"]


def parse(stderr, video):
    m = re.search(r"All:(-?[0-9.]+|inf|-nan|nan)", stderr)
    if not m:
        raise SystemExit(f"no SSIM for {video}: {stderr[-400:]}")
    value = m.group(1)
    if value == "inf":
        return 1.0  # identical
    if "nan" in value:
        return float("nan")
    return float(value)


def video_side(vw, vh, gw, gh):
    if vw >= gw and vh >= gh:
        return f"[0:v]format=rgb24,crop={gw}:{gh}:0:0[v]", ""  # RGB first: yuv420p cannot be cropped to odd sizes
    return "[0:v]format=rgb24[v]", f",scale={vw}:{vh}:flags=lanczos"


def ssim_ffmpeg_reference(video, gif):
    vw, vh = size(video)
    gw, gh = size(gif)
    crop, scale = video_side(vw, vh, gw, gh)
    graph = (f"color=c=white:s={gw}x{gh}:r=100[bg];[1:v]format=rgba[g];"
             f"[bg][g]overlay=shortest=1:eof_action=endall:format=rgb,format=rgb24{scale}[ref];{crop};{COMPARE}")
    run = subprocess.run(["ffmpeg", "-v", "info", "-nostats", "-i", video, "-i", gif, "-lavfi", graph, "-f", "null", "-"],
                         capture_output=True, text=True)
    return parse(run.stderr, video)


def ssim_browser_reference(video, gif, flipbook):
    vw, vh = size(video)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([flipbook, "frames", gif, "-o", tmp, "--format", "png"], check=True, capture_output=True)
        frames = sorted(f for f in os.listdir(tmp) if f.endswith(".png"))
        pil = Image.open(gif)
        delays = []
        for i in range(len(frames)):
            pil.seek(min(i, pil.n_frames - 1))
            cs = round(pil.info.get("duration", 0) / 10)
            delays.append(100 if cs <= 1 else cs * 10)  # the browser rule, in ms
        first = Image.open(os.path.join(tmp, frames[0]))
        gw, gh = first.size
        crop, scale = video_side(vw, vh, gw, gh)
        graph = f"[1:v]format=rgb24{scale}[ref];{crop};{COMPARE}"
        proc = subprocess.Popen(["ffmpeg", "-v", "info", "-nostats", "-i", video, "-f", "rawvideo", "-pix_fmt", "rgb24",
                                 "-s", f"{gw}x{gh}", "-framerate", "100", "-i", "-", "-lavfi", graph, "-f", "null", "-"],
                                stdin=subprocess.PIPE, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
        try:
            for name, ms in zip(frames, delays):
                im = Image.open(os.path.join(tmp, name)).convert("RGBA")
                canvas = Image.new("RGBA", im.size, (255, 255, 255, 255))
                canvas.alpha_composite(im)
                data = canvas.convert("RGB").tobytes()
                for _ in range(max(1, ms // 10)):
                    proc.stdin.write(data)
            proc.stdin.close()
        except BrokenPipeError:
            pass  # ffmpeg stops reading once the video ends; what it compared is in its log
        stderr = proc.stderr.read().decode(errors="replace")
        proc.wait()
        return parse(stderr, video)


if __name__ == "__main__":
    if len(sys.argv) > 4 and sys.argv[3] == "--browser":
        print(ssim_browser_reference(sys.argv[1], sys.argv[2], sys.argv[4]))
    else:
        print(ssim_ffmpeg_reference(sys.argv[1], sys.argv[2]))
