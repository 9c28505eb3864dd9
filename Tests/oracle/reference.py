#!/usr/bin/python3
"""Independent reference decoder for Flipbook's tests: Pillow (Debian's python3-pil), not our code.

  reference.py decode SRC OUT [WIDTH HEIGHT]
      Decodes SRC with Pillow, applies EXIF orientation (ImageOps.exif_transpose), converts to RGBA and,
      when a size is given, resizes with Lanczos. Writes OUT as "W H\\n" followed by raw RGBA bytes.
      Exit status 3 if Pillow cannot decode SRC.

  reference.py gif-frames SRC OUT
      Every frame of an animated GIF as Pillow composites it, converted to RGBA. Writes OUT as
      "W H N\n" followed by N raw RGBA frames.

  reference.py animation SRC OUT
      An animated GIF or WebP as Pillow plays it: one JSON line {"format", "width", "height", "frames",
      "loop", "durations", "extents"} (durations in ms; extents: each frame's changed box [x0, y0, x1, y1],
      GIF only), followed by every frame as Pillow composites it, as raw RGB.
      Exit status 3 if Pillow cannot decode SRC.
"""
import json
import sys

from PIL import Image, ImageOps


def decode(src, out, size=None):
    try:
        im = Image.open(src)
        im.load()
    except Exception as error:  # Pillow cannot read it: say so with a distinct status
        print(f"pillow: {error}", file=sys.stderr)
        sys.exit(3)
    im = ImageOps.exif_transpose(im)
    im = im.convert("RGBA")
    if size:
        im = im.resize(size, Image.LANCZOS)
    with open(out, "wb") as f:
        f.write(f"{im.width} {im.height}\n".encode())
        f.write(im.tobytes())


def gif_frames(src, out):
    try:
        im = Image.open(src)
        frames = []
        for i in range(getattr(im, "n_frames", 1)):
            im.seek(i)
            frames.append(im.convert("RGBA").tobytes())
    except Exception as error:
        print(f"pillow: {error}", file=sys.stderr)
        sys.exit(3)
    with open(out, "wb") as f:
        f.write(f"{im.width} {im.height} {len(frames)}\n".encode())
        for frame in frames:
            f.write(frame)


def animation(src, out):
    try:
        im = Image.open(src)
        durations, extents, frames = [], [], []
        for i in range(getattr(im, "n_frames", 1)):
            im.seek(i)
            im.load()  # Pillow fills in a WebP frame's duration when it decodes it
            durations.append(im.info.get("duration"))
            extent = getattr(im, "dispose_extent", None)
            extents.append(list(extent) if extent else None)
            frames.append(im.convert("RGB").tobytes())
    except Exception as error:
        print(f"pillow: {error}", file=sys.stderr)
        sys.exit(3)
    meta = {"format": im.format, "width": im.width, "height": im.height, "frames": len(frames),
            "loop": im.info.get("loop"), "durations": durations, "extents": extents}
    with open(out, "wb") as f:
        f.write((json.dumps(meta) + "\n").encode())
        for frame in frames:
            f.write(frame)


if __name__ == "__main__":
    if sys.argv[1] == "decode":
        size = (int(sys.argv[4]), int(sys.argv[5])) if len(sys.argv) > 5 else None
        decode(sys.argv[2], sys.argv[3], size)
    elif sys.argv[1] == "gif-frames":
        gif_frames(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "animation":
        animation(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"unknown command {sys.argv[1]}")
