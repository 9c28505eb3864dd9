#!/usr/bin/python3
"""Makes GIFs that look like the ones real libraries hold, for `make bench` (GIF to MP4).

  make-bench-gifs.py OUTDIR

Writes three files (skipping any that exist), each made the way such GIFs are usually made:
- logo-static.gif: a flat-colour logo with anti-aliased text, a short "shine" sweep and then long static
  stretches (held frames repeated, as screen-capture and banner tools write them), optimised by gifsicle -O3
  (transparent unchanged pixels, cropped frames).
- pixel-art.gif: a 64x64 16-colour sprite scene drawn with sharp edges, enlarged 4x with nearest neighbour,
  a character walking and a rotating gem; palette-exact, no dithering.
- photo-loop.gif: a photographic loop (ffmpeg's mandelbrot zoom with film grain) reduced to 256 colours by
  ffmpeg's palettegen/paletteuse with Floyd-Steinberg dithering, so consecutive frames dither differently.

Tools: Debian's python3-pil, gifsicle and ffmpeg (all in the Makefile's APT_PACKAGES). Deterministic.
"""
import math
import os
import subprocess
import sys

from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"


def logo(path):
    w, h = 360, 120
    frames, delays = [], []
    try:
        font = ImageFont.truetype(FONT, 44)
    except OSError:
        font = ImageFont.load_default()

    def base():
        im = Image.new("RGB", (w, h), (250, 250, 252))
        d = ImageDraw.Draw(im)
        d.rounded_rectangle((10, 14, 106, 106), radius=18, fill=(232, 76, 61))
        d.ellipse((34, 38, 82, 86), fill=(255, 255, 255))
        d.polygon([(50, 48), (50, 76), (74, 62)], fill=(232, 76, 61))
        d.text((122, 30), "flipbook", font=font, fill=(44, 62, 80))
        d.line((124, 92, 340, 92), fill=(52, 152, 219), width=4)
        return im

    for i in range(14):  # the shine: a soft bright band across the logo
        im = base()
        band = Image.new("L", (w, h), 0)
        bd = ImageDraw.Draw(band)
        x = -60 + i * 34
        bd.polygon([(x, 0), (x + 40, 0), (x + 10, h), (x - 30, h)], fill=110)
        im.paste((255, 255, 255), mask=band)
        frames.append(im)
        delays.append(40)
    for _ in range(30):  # held for 3 s as 30 repeated 10 cs frames, as many tools write a pause
        frames.append(base())
        delays.append(100)
    for i in range(6):  # a blink of the underline
        im = base()
        if i % 2 == 0:
            ImageDraw.Draw(im).line((124, 92, 340, 92), fill=(250, 250, 252), width=4)
        frames.append(im)
        delays.append(200)
    save_gif(frames, delays, path, colours=64)
    subprocess.run(["gifsicle", "-O3", "-b", path], check=True)


def pixel_art(path):
    palette = [(20, 12, 28), (68, 36, 52), (48, 52, 109), (78, 74, 78), (133, 76, 48), (52, 101, 36),
               (208, 70, 72), (117, 113, 97), (89, 125, 206), (210, 125, 44), (133, 149, 161), (109, 170, 44),
               (210, 170, 153), (109, 194, 202), (218, 212, 94), (222, 238, 214)]  # DawnBringer 16
    frames, delays = [], []
    for f in range(24):
        im = Image.new("RGB", (64, 64), palette[2])
        d = ImageDraw.Draw(im)
        d.rectangle((0, 44, 63, 63), fill=palette[5])
        for x in range(0, 64, 8):
            d.rectangle((x, 44, x + 3, 45), fill=palette[11])
        for s in range(6):  # stars
            d.point(((s * 23 + f) % 64, (s * 7) % 30), fill=palette[15])
        px = 8 + f  # a walking figure
        leg = f % 4 < 2
        d.rectangle((px + 2, 26, px + 7, 31), fill=palette[12])
        d.rectangle((px + 1, 32, px + 8, 39), fill=palette[6])
        d.rectangle((px + 2, 40, px + 3, 43 if leg else 42), fill=palette[0])
        d.rectangle((px + 6, 40, px + 7, 42 if leg else 43), fill=palette[0])
        a = f * 2 * math.pi / 24  # a rotating gem
        pts = [(48 + 8 * math.cos(a + k * math.pi / 2), 16 + 8 * math.sin(a + k * math.pi / 2)) for k in range(4)]
        d.polygon([(round(x), round(y)) for x, y in pts], fill=palette[13], outline=palette[8])
        frames.append(im.resize((256, 256), Image.NEAREST))
        delays.append(80)
    save_gif(frames, delays, path, colours=16)


def photo_loop(path):
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                    "mandelbrot=size=320x240:rate=15:start_scale=0.6:end_scale=0.3:maxiter=200,"
                    "noise=alls=8:allf=t,gblur=sigma=0.6,trim=duration=3",
                    "-vf", "split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=floyd_steinberg",
                    path], check=True)


def save_gif(frames, delays, path, colours):
    quantised = [f.quantize(colors=colours, method=Image.MEDIANCUT, dither=Image.NONE) for f in frames]
    quantised[0].save(path, save_all=True, append_images=quantised[1:], duration=[d for d in delays], loop=0,
                      optimize=False, disposal=1)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in (("logo-static.gif", logo), ("pixel-art.gif", pixel_art), ("photo-loop.gif", photo_loop)):
        path = os.path.join(out, name)
        if not os.path.exists(path):
            make(path)
        print(path)


if __name__ == "__main__":
    main()
