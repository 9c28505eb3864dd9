#!/usr/bin/env python3
"""How RGB becomes 4:2:0 in a GIF's MP4, judged by what Chromium shows on both sides.

  bench/chroma_check.py FLIPBOOK GIF...

For each GIF, lossless H.264 (x264 --qp 0, so only the colour conversion differs) of its frames converted to
YUV 4:2:0 three ways by libswscale (ffmpeg's `-sws_flags`):
- `bicubic+accurate_rnd+full_chroma_inp`: what Flipbook's FrameEncoder used before issue 46's chroma change;
- `bicubic`: ffmpeg's default, the peer's (`ffmpeg -tune animation`);
- `area+accurate_rnd`: Flipbook's FrameEncoder now (2x2 means);
then FLIPBOOK's own `flipbook convert` at its defaults and the peer's recipe at its default crf.

Both sides come from Chromium (headless, software): the GIF's frames from WebCodecs' ImageDecoder
(Tests/oracle/gif_reference.py), the video's from a <video> element seeked to the middle of each GIF frame's
stay and drawn to a canvas. SSIM: gif_score.ssim (ffmpeg's ssim filter on yuv444p: All, Y, U, V), each frame
weighted by its display time. gif_score.py, which turns the video into RGB with ffmpeg instead, ranks them the same way.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "oracle"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from gif_reference import Browser, Reference  # noqa: E402
import gif2mp4  # noqa: E402
import gif_score  # noqa: E402

CONVERSIONS = ["bicubic+accurate_rnd+full_chroma_inp", "bicubic", "area+accurate_rnd"]

GRAB_JS = """(async () => {
  const bytes = Uint8Array.from(atob(window.__b64), c => c.charCodeAt(0));
  window.__b64 = null;
  const url = URL.createObjectURL(new Blob([bytes], {type: 'video/mp4'}));
  const v = document.createElement('video');
  v.muted = true; v.preload = 'auto'; v.src = url;
  await new Promise((ok, bad) => { v.onloadeddata = ok; v.onerror = () => bad(new Error('video: ' + (v.error && v.error.message))); });
  const times = %s, w = %d, h = %d;
  const canvas = document.createElement('canvas'); canvas.width = w; canvas.height = h;
  const g = canvas.getContext('2d', {willReadFrequently: true});
  const out = [];
  for (const t of times) {
    v.currentTime = t;
    await new Promise(ok => { v.onseeked = ok; });
    await new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(ok)));  // the sought frame, not the last
    g.drawImage(v, 0, 0, w, h, 0, 0, w, h);
    const rgba = g.getImageData(0, 0, w, h).data;
    const rgb = new Uint8Array(w * h * 3);
    for (let p = 0, q = 0; p < rgba.length; p += 4, q += 3) { rgb[q] = rgba[p]; rgb[q + 1] = rgba[p + 1]; rgb[q + 2] = rgba[p + 2]; }
    let s = '';
    for (let k = 0; k < rgb.length; k += 32768) s += String.fromCharCode.apply(null, rgb.subarray(k, k + 32768));
    out.push(btoa(s));
  }
  URL.revokeObjectURL(url);
  return JSON.stringify(out);
})()"""


def rendered(browser, video, times, w, h):
    with open(video, "rb") as f:
        browser.evaluate(f"window.__b64 = '{base64.b64encode(f.read()).decode()}'")
    got = json.loads(browser.evaluate(GRAB_JS % (json.dumps(times), w, h), await_promise=True))
    return [np.frombuffer(base64.b64decode(g), np.uint8).reshape(h, w, 3) for g in got]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    flipbook, gifs = os.path.abspath(sys.argv[1]), sys.argv[2:]
    even = ["-vf", "scale=trunc(iw/2)*2:trunc(ih/2)*2"]
    print("| GIF | conversion | bytes | SSIM | Y | U | V |\n|---|---|---|---|---|---|---|")
    with Browser() as browser, tempfile.TemporaryDirectory(prefix="flipbook-chroma-") as tmp:
        for gif in gifs:
            frames, durations = browser.decode(gif)
            h, w = frames[0].shape[:2]
            # Odd sizes: the peer rounds down, Flipbook pads; score the even top-left area both have.
            ew, eh = w - w % 2, h - h % 2
            ref = Reference([f[:eh, :ew] for f in frames], durations)
            times = [(s + d / 2) / 1000 for s, d in zip(ref.starts, durations)]
            pairs = {(i, i): d for i, d in enumerate(durations)}  # each GIF frame with the video's at its middle
            videos = []
            for flags in CONVERSIONS:
                out = os.path.join(tmp, f"{flags}.mp4")
                subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", gif, "-fps_mode", "passthrough", "-c:v", "libx264",
                                "-qp", "0", "-sws_flags", flags, "-pix_fmt", "yuv420p", *even, "-an", out], check=True)
                videos.append((f"lossless, {flags}", out))
            ours, peer = os.path.join(tmp, "flipbook.mp4"), os.path.join(tmp, "peer.mp4")
            for stale in (ours, peer):  # `flipbook convert` leaves an output newer than its input as it is
                if os.path.exists(stale):
                    os.remove(stale)
            subprocess.run([flipbook, "convert", gif, "-o", ours], check=True, capture_output=True)
            subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", gif, *gif2mp4.PEER, peer], check=True)
            videos += [("flipbook convert (defaults)", ours), ("peer, ffmpeg -tune animation crf 23", peer)]
            for label, video in videos:
                got = [f[:eh, :ew] for f in rendered(browser, video, times, w, h)]
                s = gif_score.ssim(ref, got, pairs)
                print(f"| {os.path.basename(gif)} | {label} | {os.path.getsize(video)} | {s['ssim']:.4f} | {s['y']:.4f} | "
                      f"{s['u']:.4f} | {s['v']:.4f} |", flush=True)


if __name__ == "__main__":
    main()
