#!/usr/bin/env python3
"""Poster A/B: two Flipbook builds and ffmpegthumbnailer on the 1080p 60 s H.264 clip, alternating in one
run (order rotated each round), median of N runs (default 7). Usage:
    bench/posters.py BEFORE_BIN AFTER_BIN [runs]
Prints wall and peak RSS medians and each build's ratios to ffmpegthumbnailer (as `make bench` does), then
AFTER_BIN's `storyboard --count 10` against its own poster on the corpus's 8-frame 8K HEVC clip (issue 14:
dense storyboards within 3x the poster's time), the two alternating in one run."""
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import CORPUS, WORK, run  # noqa: E402

before, after = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 7
video = os.path.join(WORK, "testsrc2-1080p-60s.mp4")
out = tempfile.mkdtemp(prefix="flipbook-posters-")
cmds = {
    "before": [before, "poster", video, "-o", os.path.join(out, "a.jpg"), "--size", "256"],
    "after": [after, "poster", video, "-o", os.path.join(out, "b.jpg"), "--size", "256"],
    "ffmpegthumbnailer": ["ffmpegthumbnailer", "-i", video, "-o", os.path.join(out, "c.jpg"), "-s", "256"],
}


def medians(commands, runs, orders):
    """Runs each command `runs` times (after one warm-up round), in the order `orders(i)` gives for round i;
    returns each one's median (wall ms, peak RSS MB)."""
    results = {k: [] for k in commands}
    for i in range(runs + 1):
        for name in orders(i):
            t, rss, code = run(commands[name])
            if code != 0:
                sys.exit(f"{name} exited {code}")
            if i > 0:
                results[name].append((t, rss))
    return {k: (statistics.median(x[0] for x in v) * 1000, statistics.median(x[1] for x in v)) for k, v in results.items()}


names = list(cmds)
med = medians(cmds, runs, lambda i: names[i % 3:] + names[:i % 3])
peer = med["ffmpegthumbnailer"]
print(f"1080p 60 s H.264 poster, 256 px, median of {runs} alternating runs")
for k in names:
    print(f"- {k}: {med[k][0]:.1f} ms, {med[k][1]:.1f} MB" +
          ("" if k == "ffmpegthumbnailer" else f"; vs ffmpegthumbnailer: wall {med[k][0] / peer[0]:.2f}x, RSS {med[k][1] / peer[1]:.2f}x"))

clip = os.path.join(CORPUS, "video", "androidx-media", "8k24fps_300ms.mp4")
if os.path.exists(clip):
    pair = {
        "poster": [after, "poster", clip, "-o", os.path.join(out, "p8k.jpg"), "--size", "256"],
        "storyboard": [after, "storyboard", clip, "-o", os.path.join(out, "sb8k"), "--count", "10"],
        "storyboard --threads 2": [after, "storyboard", clip, "-o", os.path.join(out, "sb8k2"), "--count", "10", "--threads", "2"],
    }
    keys = list(pair)
    m = medians(pair, runs, lambda i: keys[i % 3:] + keys[:i % 3])
    print(f"8K HEVC, 8 frames (after): poster {m['poster'][0]:.1f} ms, {m['poster'][1]:.1f} MB")
    for k in keys[1:]:
        print(f"- {k} --count 10: {m[k][0]:.1f} ms, {m[k][1]:.1f} MB; storyboard/poster {m[k][0] / m['poster'][0]:.2f}x")
