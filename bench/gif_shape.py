#!/usr/bin/env python3
"""What a GIF is made of, read from its blocks (no pixels decoded): size, frames, delays, palettes, disposal,
transparency, and the first frame's flatness as Flipbook's GIFContent measures it (the share of equal
horizontal neighbours, RGBA), which picks GIFTuning's kind of picture.

  bench/gif_shape.py GIF...   one line per GIF
"""
import os
import sys
from collections import Counter


def shape(path):
    data = open(path, "rb").read()
    if data[:3] != b"GIF" or len(data) < 13:
        return None
    w, h = data[6] | data[7] << 8, data[8] | data[9] << 8
    flags = data[10]
    global_size = 2 << (flags & 7) if flags & 0x80 else 0
    at = 13 + 3 * global_size
    delays, disposals, local, transparent = [], Counter(), 0, 0
    delay, disposal, trans = 0, 0, False
    while at < len(data):
        b = data[at]
        if b == 0x21 and at + 1 < len(data):
            label = data[at + 1]
            at += 2
            if label == 0xF9 and at + 5 < len(data):
                packed = data[at + 1]
                disposal = (packed >> 2) & 7
                trans = bool(packed & 1)
                delay = data[at + 2] | data[at + 3] << 8
            while at < len(data) and data[at]:
                at += data[at] + 1
            at += 1
        elif b == 0x2C and at + 10 <= len(data):
            packed = data[at + 9]
            at += 10
            if packed & 0x80:
                local += 1
                at += 3 * (2 << (packed & 7))
            at += 1
            while at < len(data) and data[at]:
                at += data[at] + 1
            at += 1
            delays.append(delay * 10 if delay > 1 else 100)  # displayed, browsers' rule
            disposals[disposal] += 1
            transparent += trans
            delay, disposal, trans = 0, 0, False
        else:
            break
    return {"width": w, "height": h, "frames": len(delays), "delays": Counter(delays), "total_ms": sum(delays),
            "global_palette": global_size, "local_palettes": local, "disposal": disposals, "transparent": transparent,
            "bytes": len(data)}


def flatness(path):
    """GIFContent.flatness of the first frame (Pillow's decode, RGBA; rows sampled above 1,024 as Flipbook does)."""
    import numpy as np
    from PIL import Image
    with Image.open(path) as im:
        im.seek(0)
        rgba = np.asarray(im.convert("RGBA")).astype(np.uint32)
    h, w = rgba.shape[:2]
    if w < 2:
        return 1.0
    packed = rgba[..., 0] | rgba[..., 1] << 8 | rgba[..., 2] << 16 | rgba[..., 3] << 24
    rows = packed[::max(1, h // 1024)]
    return float((rows[:, 1:] == rows[:, :-1]).sum()) / (rows.shape[0] * (w - 1))


def describe(s):
    """One compact line: 640x237, 85 fr, 30ms x84 370ms x1, GCT 256 + 3 local, disposal 1:85, 12 transparent."""
    if not s:
        return "not a GIF"
    delays = " ".join(f"{d}ms x{n}" for d, n in sorted(s["delays"].items(), key=lambda kv: -kv[1])[:3])
    if len(s["delays"]) > 3:
        delays += f" (+{len(s['delays']) - 3} more)"
    palette = f"GCT {s['global_palette']}" if s["global_palette"] else "no GCT"
    if s["local_palettes"]:
        palette += f" + {s['local_palettes']} local"
    disposal = ",".join(f"{d}:{n}" for d, n in sorted(s["disposal"].items()))
    return (f"{s['width']}x{s['height']}, {s['frames']} fr, {delays}, {palette}, disposal {disposal}"
            + (f", {s['transparent']} transparent" if s["transparent"] else ""))


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(f"{os.path.basename(p)}: {describe(shape(p))}, flatness {flatness(p):.2f}")
