#!/usr/bin/python3
"""Independent colour references for Flipbook's tests: Pillow with its Little CMS (ImageCms), not our code.

  colour_reference.py cms SRC OUT WIDTH HEIGHT
      Decodes SRC with Pillow, converts its embedded ICC profile to sRGB (relative colorimetric, as
      libvips's thumbnail does), resizes with Lanczos. Writes OUT as "W H\\n" + raw RGBA.
  colour_reference.py transpose SRC OUT WIDTH HEIGHT OP
      Decodes SRC, applies Pillow's Image.transpose(OP) (ROTATE_90, FLIP_LEFT_RIGHT, ...), resizes with
      Lanczos. Same output format.
  colour_reference.py icc SRC OUT
      Writes the ICC profile Pillow finds in SRC to OUT (exit status 3 if there is none).
"""
import io
import sys

from PIL import Image, ImageCms

Image.MAX_IMAGE_PIXELS = None


def write(im, out):
    im = im.convert("RGBA")
    with open(out, "wb") as f:
        f.write(f"{im.width} {im.height}\n".encode())
        f.write(im.tobytes())


def main():
    cmd, src, out = sys.argv[1], sys.argv[2], sys.argv[3]
    im = Image.open(src)
    im.load()
    if cmd == "icc":
        icc = im.info.get("icc_profile")
        if not icc:
            sys.exit(3)
        open(out, "wb").write(icc)
        return
    size = (int(sys.argv[4]), int(sys.argv[5]))
    if cmd == "cms":
        profile = ImageCms.ImageCmsProfile(io.BytesIO(im.info["icc_profile"]))
        im = ImageCms.profileToProfile(im, profile, ImageCms.createProfile("sRGB"), renderingIntent=1, outputMode="RGB")
    elif cmd == "transpose":
        im = im.transpose(getattr(Image.Transpose, sys.argv[6]))
    write(im.resize(size, Image.LANCZOS), out)


if __name__ == "__main__":
    main()
