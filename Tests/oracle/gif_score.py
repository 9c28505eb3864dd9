#!/usr/bin/python3
"""Scores videos against what a GIF looks like in a browser (or Pillow), sampled at the same instants.

  gif_score.py GIF VIDEO... [--ref browser|pillow] [--no-s2]
      One JSON line per VIDEO: {"video", "ssim", "y", "u", "v", "s2", "video_ms", "gif_ms"}.

- Instants: every 10 ms from 0 to the GIF's displayed length (browser delays; GIF delays are whole
  centiseconds, so every change is sampled and each frame weighs by its display time). At each instant the
  reference frame on screen is paired with the video frame on screen (the last whose presentation time is at
  or before it, times taken from the video's own timestamps, relative to its first frame).
- SSIM: ffmpeg's ssim filter on yuv444p, all planes ("All", and Y, U, V), one comparison per distinct pair,
  weighted by how many instants the pair covers.
- SSIMULACRA2 (PyPI ssimulacra2, XYB, multi-scale; 90 visually lossless, 70 high, 50 medium), the same pairs
  and weights. --no-s2 skips it (it is the slow part).
- Geometry: a padded video (at least the GIF's size) is cropped at the top left; a smaller one (the peer
  rounds odd sizes down) is scaled back up with Lanczos. The video is turned into RGB by ffmpeg honouring its
  matrix and range tags, as a browser does.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gif_reference import Reference  # noqa: E402


def probe_size(video):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                          "-of", "csv=p=0", video], capture_output=True, text=True, check=True).stdout
    w, h = out.strip().split("\n")[0].split(",")[:2]
    return int(w), int(h)


def video_frames(video, width, height):
    """Every decoded frame of the video as (H, W, 3) RGB at the reference's size, with its time in ms."""
    times = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                            "frame=best_effort_timestamp_time", "-of", "csv=p=0", video],
                           capture_output=True, text=True, check=True).stdout.split()
    times = [float(t.strip(",")) * 1000 for t in times if t.strip(",") not in ("", "N/A")]
    vw, vh = probe_size(video)
    fit = f"crop={width}:{height}:0:0" if vw >= width and vh >= height else f"scale={width}:{height}:flags=lanczos"
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", video, "-fps_mode", "passthrough", "-vf", f"format=rgb24,{fit}",
                          "-f", "rawvideo", "-pix_fmt", "rgb24", "-"], capture_output=True, check=True).stdout
    frames = np.frombuffer(raw, np.uint8).reshape(-1, height, width, 3)
    n = min(len(frames), len(times))
    start = times[0] if times else 0.0
    return [frames[i] for i in range(n)], [t - start for t in times[:n]]


def pairs(ref, vtimes):
    """(reference index, video index) -> number of 10 ms instants it covers."""
    counts = {}
    j = 0
    for k in range(max(1, round(ref.total_ms / 10))):
        t = k * 10
        while j + 1 < len(vtimes) and vtimes[j + 1] <= t + 1e-6:
            j += 1
        key = (ref.index_at(t), j)
        counts[key] = counts.get(key, 0) + 1
    return counts


def ssim(ref, vframes, counts):
    keys = list(counts)
    h, w = ref.height, ref.width
    if w < 8 or h < 8:
        return {"ssim": None, "y": None, "u": None, "v": None}
    with tempfile.TemporaryDirectory() as tmp:
        a, b, stats = (os.path.join(tmp, n) for n in ("a.rgb", "b.rgb", "stats.txt"))
        with open(a, "wb") as fa, open(b, "wb") as fb:
            for ri, vi in keys:
                fa.write(np.ascontiguousarray(ref.frames[ri]).tobytes())
                fb.write(np.ascontiguousarray(vframes[vi]).tobytes())
        raw = ["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w}x{h}", "-r", "25"]
        subprocess.run(["ffmpeg", "-v", "error", *raw, "-i", a, *raw, "-i", b, "-lavfi",
                        f"[0:v]format=yuv444p[r];[1:v]format=yuv444p[d];[r][d]ssim=stats_file={stats}", "-f", "null", "-"],
                       check=True)
        rows = open(stats).read().strip().split("\n")
    values = {"y": [], "u": [], "v": [], "ssim": []}
    for row in rows:
        for key, name in (("y", "Y"), ("u", "U"), ("v", "V"), ("ssim", "All")):
            m = re.search(rf"\b{name}:([0-9.]+|inf)", row)
            values[key].append(1.0 if m.group(1) == "inf" else float(m.group(1)))
    weights = np.array([counts[k] for k in keys], dtype=np.float64)
    return {k: float(np.dot(v, weights) / weights.sum()) for k, v in values.items()}


def ssimulacra2(a, b):
    """SSIMULACRA2 of two RGB arrays, through the PyPI package's own steps (it only reads files itself)."""
    from ssimulacra2 import ssimulacra2 as S
    lin = [S.srgb_to_linear(x.astype(np.float64)) for x in (a, b)]
    xyb = [S.make_positive_xyb(S.linear_rgb_to_xyb(x)) for x in lin]
    ms = S.Msssim()
    for scale in range(S.kNumScales):
        if xyb[0].shape[0] < 8 or xyb[0].shape[1] < 8:
            break
        i1, i2 = xyb
        mu1, mu2 = S.blur_image(i1), S.blur_image(i2)
        data = S.MsssimScale()
        data.avg_ssim = S.ssim_map(mu1, mu2, S.blur_image(i1 * i1), S.blur_image(i2 * i2), S.blur_image(i1 * i2))
        data.avg_edgediff = S.edge_diff_map(i1, mu1, i2, mu2)
        ms.scales.append(data)
        if scale < S.kNumScales - 1:
            lin = [S.downsample(x, 2, 2) for x in lin]
            xyb = [S.make_positive_xyb(S.linear_rgb_to_xyb(x)) for x in lin]
    return float(ms.score())


def s2(ref, vframes, counts):
    if ref.width < 8 or ref.height < 8:
        return None
    total = weight = 0.0
    for (ri, vi), n in counts.items():
        total += ssimulacra2(ref.frames[ri], vframes[vi]) * n
        weight += n
    return total / weight


def score(ref, video, with_s2=True):
    vframes, vtimes = video_frames(video, ref.width, ref.height)
    if not vframes:
        raise SystemExit(f"{video}: no frames decoded")
    counts = pairs(ref, vtimes)
    result = {"video": video, **ssim(ref, vframes, counts)}
    result["s2"] = s2(ref, vframes, counts) if with_s2 else None
    result["gif_ms"] = ref.total_ms
    dur = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", video],
                         capture_output=True, text=True).stdout.strip()
    result["video_ms"] = round(float(dur) * 1000) if dur not in ("", "N/A") else None
    return result


if __name__ == "__main__":
    argv = sys.argv[1:]
    kind = "browser"
    if "--ref" in argv:
        i = argv.index("--ref")
        kind = argv[i + 1]
        del argv[i:i + 2]
    with_s2 = "--no-s2" not in argv
    argv = [a for a in argv if a != "--no-s2"]
    reference = Reference.load(argv[0], kind)
    for v in argv[1:]:
        print(json.dumps(score(reference, v, with_s2)), flush=True)
