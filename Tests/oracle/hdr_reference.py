#!/usr/bin/python3
"""Independent reference for PQ/HLG stills, written from the standards with numpy (not our decoder or
tone mapper): what Flipbook's thumbnail of an AVIF made from SRC16 should look like.

  hdr_reference.py {pq|hlg|naive} SRC16.png OUT WIDTH HEIGHT
      Decodes SRC16 (16-bit BT.2020 RGB, the file given to avifenc) with ffmpeg, then
        pq:    SMPTE ST 2084 EOTF to cd/m^2;
        hlg:   BT.2100 HLG inverse OETF and the OOTF of a 1,000 cd/m^2 display (system gamma 1.2);
      divides by the HDR reference white, 203 cd/m^2 (ITU-R BT.2408), converts BT.2020 to BT.709 primaries
      in linear light (the inverse of BT.2087's matrix), rolls highlights off from 0.75 of reference white to
      the 1,000 cd/m^2 peak (k + (1 - k) s x / (1 + (s - 1) x) on the largest channel, the curve the video
      path documents), and applies the sRGB curve. `naive` shows the signal as if it were sRGB (no tone
      mapping), which the test uses to show the comparison can tell. Lanczos (Pillow) to WIDTH x HEIGHT;
      OUT is "W H\\n" + raw RGBA.
"""
import subprocess
import sys

import numpy as np
from PIL import Image

REFERENCE_WHITE = 203.0
PEAK = 1000.0 / REFERENCE_WHITE
KNEE = 0.75


def pq_eotf(e):
    m1, m2, c1, c2, c3 = 2610 / 16384, 2523 / 4096 * 128, 3424 / 4096, 2413 / 4096 * 32, 2392 / 4096 * 32
    p = np.maximum(e, 0) ** (1 / m2)
    return 10000 * (np.maximum(p - c1, 0) / (c2 - c3 * p)) ** (1 / m1)


def hlg_display(e):
    a, b, c = 0.17883277, 0.28466892, 0.55991073
    scene = np.where(e <= 0.5, e * e / 3, (np.exp((e - c) / a) + b) / 12)
    ys = scene @ np.array([0.2627, 0.6780, 0.0593])
    return 1000 * scene * np.maximum(ys, 1e-12)[..., None] ** 0.2


def roll_off(m):
    s = (PEAK - KNEE) / (1 - KNEE)
    x = np.clip((m - KNEE) / (PEAK - KNEE), 0, 1)
    return np.where(m > KNEE, KNEE + (1 - KNEE) * s * x / (1 + (s - 1) * x), m)


def srgb(v):
    v = np.clip(v, 0, 1)
    return np.where(v <= 0.0031308, 12.92 * v, 1.055 * v ** (1 / 2.4) - 0.055)


def main():
    mode, src, out, width, height = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                            "-of", "csv=p=0", src], capture_output=True, text=True, check=True)
    w, h = (int(v) for v in probe.stdout.strip().split(","))
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", src, "-f", "rawvideo", "-pix_fmt", "rgb48le", "-"],
                         capture_output=True, check=True).stdout
    signal = np.frombuffer(raw, dtype="<u2").reshape(h, w, 3).astype(np.float64) / 65535
    if mode == "naive":
        encoded = signal
    else:
        light = (pq_eotf(signal) if mode == "pq" else hlg_display(signal)) / REFERENCE_WHITE
        bt709_to_2020 = np.array([[0.6274, 0.3293, 0.0433], [0.0691, 0.9195, 0.0114], [0.0164, 0.0880, 0.8956]])
        linear = np.maximum(light @ np.linalg.inv(bt709_to_2020).T, 0)
        m = linear.max(axis=-1)
        scale = np.where(m > KNEE, roll_off(m) / np.maximum(m, 1e-12), 1)
        encoded = srgb(linear * scale[..., None])
    im = Image.fromarray((np.clip(encoded, 0, 1) * 255 + 0.5).astype(np.uint8), "RGB").resize((width, height), Image.LANCZOS)
    im = im.convert("RGBA")
    with open(out, "wb") as f:
        f.write(f"{im.width} {im.height}\n".encode())
        f.write(im.tobytes())


if __name__ == "__main__":
    main()
