#!/usr/bin/env python3
"""libheif or libavif for AVIF: the decode step alone on the bench's 12 MP AVIF (bench/work/stills/large.avif),
alternating runs, medians of wall time and peak RSS (GNU time), one process per decode.

  libheif: bench/heif_decode.c (built here into .build/bench/heif_decode), the primary image decoded once
           in the layout libheif picks (planar RGB, converted from YCbCr inside libheif 1.15: what Flipbook
           asks for) or as interleaved 8-bit RGB, with
           Flipbook's dav1d plugin (Sources/CHeifLoader: one frame in flight), libheif's own dav1d plugin
           (dav1d's defaults) or libaom.
  libavif: `avifdec --info` (libavif 0.11, decodes every frame and prints the header, writes nothing;
           its YUV is not converted to RGB, which libheif always does), with the same decoders, -j 2 so
           both use the machine's two cores as libheif's dav1d does.

Then what loading libheif on first use saves processes that never decode HEIF: Flipbook's thumb as built
(libheif opened by dlopen when a HEIF arrives) against the same binary with libheif.so.1 loaded at start
through LD_PRELOAD, as linking it did, on a JPEG, the XYB JPEG and a PNG.

Run: python3 bench/heif_decode.py [FILE.avif]   (`make bench-heif-decode`, after `make release`)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import compare, ROOT, WORK, CORPUS, FLIPBOOK  # noqa: E402

RUNS = int(os.environ.get("BENCH_HEIF_RUNS", "7"))


def build():
    src = os.path.join(ROOT, "bench", "heif_decode.c")
    plugin = os.path.join(ROOT, "Sources", "CHeifLoader", "dav1d_plugin.c")
    out = os.path.join(ROOT, ".build", "bench", "heif_decode")
    if not os.path.exists(out) or os.path.getmtime(out) < max(os.path.getmtime(src), os.path.getmtime(plugin)):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libheif", "dav1d"], capture_output=True, text=True, check=True)
        subprocess.run(["cc", "-O2", "-o", out, "-I", os.path.join(os.path.dirname(plugin), "include"), src, plugin,
                        *flags.stdout.split(), "-lpthread"], check=True)
    return out


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(WORK, "stills", "large.avif")
    if not os.path.exists(path):
        sys.exit(f"missing {path}: run scripts/make-still-bench.sh")
    harness = build()
    print(subprocess.run([harness, "list"], capture_output=True, text=True).stdout.strip().replace("\n", "; "))
    print(f"\n## AVIF decode alone: libheif 1.15 vs libavif 0.11 ({os.path.basename(path)}, median of {RUNS})\n")
    print("| case | libheif | libavif | time ratio | libheif RSS | libavif RSS | RSS ratio | peer |")
    print("|---|---|---|---|---|---|---|---|")
    avifdec = ["avifdec", "-j", "2", "--info"]
    png = "/dev/shm/flipbook-heif-decode.png"
    for title, ours, peer in [
        ("Flipbook's dav1d plugin (one frame in flight), planar RGB", [harness, path, "planar", "flipbook-dav1d"],
         [*avifdec, "-c", "dav1d", path]),
        ("libheif's dav1d plugin, planar RGB", [harness, path, "planar", "dav1d"], [*avifdec, "-c", "dav1d", path]),
        ("Flipbook's dav1d plugin, interleaved RGB; avifdec converting to RGB too (PNG, level 0, in /dev/shm)",
         [harness, path, "rgb", "flipbook-dav1d"], ["avifdec", "-j", "2", "-c", "dav1d", "--png-compress", "0", path, png]),
        ("libheif's dav1d plugin, interleaved RGB", [harness, path, "rgb", "dav1d"], [*avifdec, "-c", "dav1d", path]),
        ("libaom, planar RGB", [harness, path, "planar", "aom"], [*avifdec, "-c", "aom", path]),
    ]:
        compare(title, ours, peer, " ".join(peer[:-1 if peer[-1] == path else -2]).replace(path, "FILE"), runs=RUNS)
    if os.path.exists(png):
        os.unlink(png)
    if not os.path.exists(FLIPBOOK):
        print(f"\n({FLIPBOOK} missing: run `make release` for the start-up comparison)")
        return
    print(f"\n## libheif on first use vs loaded at start (flipbook thumb --size 256, median of {RUNS})\n")
    print("| case | dlopen on first use | libheif at start | time ratio | RSS | RSS | RSS ratio | |")
    print("|---|---|---|---|---|---|---|---|")
    out = "/dev/shm/flipbook-heif-start.jpg"
    stills = os.path.join(WORK, "stills")
    for title, src in [("24 MP CMYK JPEG", os.path.join(stills, "cmyk-profile.jpg")),
                       ("XYB JPEG (corpus)", os.path.join(CORPUS, "jpeg", "libvips", "sample-xyb.jpg")),
                       ("24 MP PNG", os.path.join(stills, "photo-24mp.png"))]:
        if os.path.exists(src):
            thumb = [FLIPBOOK, "thumb", src, "-o", out, "--size", "256"]
            compare(title, thumb, ["/usr/bin/env", "LD_PRELOAD=libheif.so.1", *thumb], "LD_PRELOAD=libheif.so.1", runs=RUNS)
    if os.path.exists(out):
        os.unlink(out)


if __name__ == "__main__":
    main()
