#!/usr/bin/python3
"""Makes small APNG and animated WebP test files with Pillow's writers (Debian's python3-pil), exercising what
the corpus lacks: APNG dispose PREVIOUS and BACKGROUND, blend OVER with partial alpha, sub-frame offsets, a
default image that is not part of the animation, a 0 ms frame and a finite loop count; the same frames as an
animated WebP (libwebp's encoder, through Pillow).

  make_anim_fixtures.py OUTDIR    writes OUTDIR/{compose,default-image}.png and OUTDIR/compose.webp
"""
import os
import sys

from PIL import Image, ImageDraw, PngImagePlugin


def frames(w=64, h=48):
    """Six RGBA frames: a gradient backdrop with holes, then translucent and opaque shapes moving over it."""
    out = []
    base = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    d = ImageDraw.Draw(base)
    for x in range(w):
        d.line([(x, 0), (x, h // 2)], fill=(4 * x % 256, 80, 255 - 4 * x % 256, 255))
    d.rectangle([20, 8, 30, 18], fill=(0, 0, 0, 0))
    out.append(base)
    for k in range(1, 6):
        im = base.copy()
        d = ImageDraw.Draw(im)
        d.ellipse([6 * k, 10 + 3 * k, 6 * k + 16, 26 + 3 * k], fill=(255, 40 * k, 0, 110 + 25 * k))
        d.rectangle([40, 30, 40 + 3 * k, 33 + k], fill=(30, 200, 30, 255))
        out.append(im)
    return out


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    f = frames()
    ND, BG, PREV = PngImagePlugin.Disposal.OP_NONE, PngImagePlugin.Disposal.OP_BACKGROUND, PngImagePlugin.Disposal.OP_PREVIOUS
    SRC, OVER = PngImagePlugin.Blend.OP_SOURCE, PngImagePlugin.Blend.OP_OVER
    f[0].save(os.path.join(outdir, "compose.png"), save_all=True, append_images=f[1:],
              duration=[120, 0, 80, 200, 50, 300], loop=3,
              disposal=[ND, PREV, BG, PREV, ND, PREV], blend=[SRC, OVER, OVER, SRC, OVER, OVER])
    # default_image: the first image is the IDAT default image, shown only by viewers without APNG.
    still = Image.new("RGBA", f[0].size, (255, 0, 255, 255))
    still.save(os.path.join(outdir, "default-image.png"), save_all=True, append_images=f[1:4], default_image=True,
               duration=[0, 100, 150, 200], loop=0, disposal=[ND, ND, PREV, BG], blend=[SRC, OVER, OVER, OVER])
    f[0].save(os.path.join(outdir, "compose.webp"), save_all=True, append_images=f[1:], duration=[120, 40, 80, 200, 50, 300],
              loop=2, lossless=True)


if __name__ == "__main__":
    main(sys.argv[1])
