#!/usr/bin/env python3
"""make bench, still-colour section: Flipbook's thumb against vipsthumbnail (colour-managed, sRGB export) on
the inputs scripts/make-still-bench.sh makes (bench/work/stills) and the corpus's XYB JPEG. Alternating
runs, medians of wall time and peak RSS (GNU time), one process per image, 256 px.

Run alone: python3 bench/still_colour.py (after `make release` and scripts/make-still-bench.sh)."""
import os
import sys
import tempfile
import shutil

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import compare, FLIPBOOK, WORK, CORPUS  # noqa: E402

RUNS = int(os.environ.get("BENCH_STILL_RUNS", "7"))


def section():
    stills = os.path.join(WORK, "stills")
    out = tempfile.mkdtemp(prefix="flipbook-stills-")
    cases = [
        ("24 MP CMYK JPEG + CMYK profile (15 APP2)", os.path.join(stills, "cmyk-profile.jpg"), [], "JPEG: target 0.7x"),
        ("XYB JPEG (corpus, 290x442)", os.path.join(CORPUS, "jpeg", "libvips", "sample-xyb.jpg"), ["--intent", "perceptual"],
         "JPEG: target 0.7x"),
        ("12 MP AVIF (no thumbnail item)", os.path.join(stills, "large.avif"), [], "libheif both: target 1.0x"),
        ("12 MP HEIC (+320 px thumbnail item)", os.path.join(stills, "large.heic"), [], "libheif both: target 1.0x"),
        ("144 MP WebP (16000x9000)", os.path.join(stills, "huge-144mp.webp"), [], "libwebp scaled both: target 1.0x"),
        ("24 MP PNG", os.path.join(stills, "photo-24mp.png"), [], "PNG: target 0.7x"),
        ("24 MP PNG, Adam7", os.path.join(stills, "photo-24mp-adam7.png"), [], "decoded whole by both"),
    ]
    try:
        print(f"\n## Stills: colour management, AVIF/HEIC, huge WebP/PNG (256 px, median of {RUNS} alternating runs)\n")
        print("RSS target everywhere: <= 0.8x vipsthumbnail's.\n")
        print("| case | flipbook | peer | time ratio | flipbook RSS | peer RSS | RSS ratio | peer / target |")
        print("|---|---|---|---|---|---|---|---|")
        for title, path, vips_extra, target in cases:
            if not os.path.exists(path):
                print(f"| {title} | | | | | | | missing {path}: run scripts/make-still-bench.sh |")
                continue
            compare(title, [FLIPBOOK, "thumb", path, "-o", os.path.join(out, "a.jpg"), "--size", "256"],
                    ["vipsthumbnail", path, "-s", "256", "--export-profile", "srgb", *vips_extra,
                     "-o", os.path.join(out, "b.jpg")], f"vipsthumbnail; {target}", runs=RUNS)
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    section()
