#!/usr/bin/python3
"""Makes GIFs that look like the ones real libraries hold, for `make bench` (GIF to MP4).

  make-bench-gifs.py OUTDIR

Writes these files (skipping any that exist), each made the way such GIFs are usually made:
- logo-static.gif: a flat-colour logo with anti-aliased text, a short "shine" sweep and then long static
  stretches (held frames repeated, as screen-capture and banner tools write them), optimised by gifsicle -O3
  (transparent unchanged pixels, cropped frames).
- pixel-art.gif: a 64x64 16-colour sprite scene drawn with sharp edges, enlarged 4x with nearest neighbour,
  a character walking and a rotating gem; palette-exact, no dithering.
- photo-loop.gif: a photographic loop (ffmpeg's mandelbrot zoom with film grain) reduced to 256 colours by
  ffmpeg's palettegen/paletteuse with Floyd-Steinberg dithering, so consecutive frames dither differently.
- sticker.gif: a chat sticker: a cartoon face with a white die-cut border that bounces and squashes on a
  transparent background, hard-edged alpha, each frame disposed to background (disposal 2).
- screen-recording.gif: a terminal session typed line by line with a blinking cursor and a scroll, anti-aliased
  monospace text, held frames, optimised by gifsicle -O3 as screen recorders' output usually is.
- photo-pan.gif: a camera pan across a painted landscape (gradient sky, layered shaded hills with grain),
  ffmpeg's palettegen/paletteuse with Floyd-Steinberg dithering.
- globe.gif: a shaded planet turning over a star field, a local palette per frame with Floyd-Steinberg
  dithering (Pillow), like the rotating-globe GIFs of image libraries' test suites.
- pixel-scroll.gif: a 128x128 PICO-8-palette parallax scene (clouds, hills, tiled ground at three speeds)
  enlarged 3x with nearest neighbour.

And eleven more, made for cross-validating the settings (bench/gif_cv.py), most with frames that last
unalike, as GIF tools write them:
- banner-hold.gif: a 600x200 logo whose letters slide in at 30 ms a frame, then hold for 3 s (the shape of
  a giphy-style logo: a quick animation, one long last frame), gifsicle -O3.
- sprite-vfr.gif: a pixel-art character's idle and attack cycle, each pose with its own delay (100-600 ms),
  enlarged 3x with nearest neighbour.
- cinemagraph.gif: a still dithered photograph in which only a small area moves (water shimmer), 80 ms.
- ticker.gif: a 468x60 web banner with scrolling text at 50 ms, then a 2 s hold on the call to action.
- ui-demo.gif: a screen capture of a flat UI with a moving pointer, hover and a dialog, at a recorder's
  uneven delays (short while moving, long pauses), gifsicle -O3.
- chart.gif: a line and bar chart drawing itself with anti-aliased lines, 40 ms, the finished chart held 1.5 s.
- emoji-bounce.gif: a 128x128 emoji-like face on a transparent background, 20 ms frames, disposal 2.
- video-clip.gif: a 10 fps clip of moving video (ffmpeg's testsrc2 with noise), a palette per frame and
  Bayer dithering, as video-to-GIF sites write.
- spinner.gif: a 64x64 anti-aliased loading spinner over transparency, 12 frames of 80 ms.
- slideshow.gif: three dithered photographs, each held 2 s, with 60 ms cross-fade frames between them.
- typing-vfr.gif: a terminal typed a keystroke a frame at irregular delays (40-400 ms), cursor blinks.

Tools: Debian's python3-pil, python3-numpy, gifsicle and ffmpeg (all in the Makefile's APT_PACKAGES). Deterministic.
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


def sticker(path):
    key = (255, 0, 255)  # the transparent colour: nothing else in the drawing is near it
    frames = []
    for f in range(20):
        im = Image.new("RGB", (240, 240), key)
        d = ImageDraw.Draw(im)
        t = f / 20
        hop = abs(math.sin(t * math.pi * 2))  # two hops per loop
        squash = 1 - 0.18 * max(0.0, 0.35 - hop) / 0.35
        rx, ry = 84 / squash ** 0.5, 84 * squash
        cx, cy = 120, 200 - ry - 70 * hop
        d.ellipse((cx - rx - 8, cy - ry - 8, cx + rx + 8, cy + ry + 8), fill=(255, 255, 255))  # die-cut border
        d.ellipse((cx - rx, cy - ry, cx + rx, cy + ry), fill=(40, 30, 20))
        for k in range(12):  # shading: lighter discs towards the top left
            r = 1 - k / 14
            c = (247, 190 + k * 4, 30 + k * 8)
            ox, oy = -k * rx / 40, -k * ry / 40
            d.ellipse((cx + ox - rx * r + 4, cy + oy - ry * r + 4, cx + ox + rx * r - 4, cy + oy + ry * r - 4), fill=c)
        blink = f in (9, 10)
        for ex in (-30, 30):
            if blink:
                d.line((cx + ex - 12, cy - 18, cx + ex + 12, cy - 18), fill=(40, 30, 20), width=5)
            else:
                d.ellipse((cx + ex - 10, cy - 34, cx + ex + 10, cy - 4), fill=(40, 30, 20))
                d.ellipse((cx + ex - 4, cy - 30, cx + ex + 3, cy - 22), fill=(255, 255, 255))
        d.arc((cx - 40, cy - 10, cx + 40, cy + 44), 20, 160, fill=(40, 30, 20), width=6)
        d.ellipse((cx - 62, cy + 6, cx - 40, cy + 20), fill=(240, 120, 90))
        d.ellipse((cx + 40, cy + 6, cx + 62, cy + 20), fill=(240, 120, 90))
        frames.append(im)
    quantised = [im.quantize(colors=64, method=Image.MEDIANCUT, dither=Image.NONE) for im in frames]
    for q in quantised:  # the key colour's index becomes the transparent one
        pal = q.getpalette()[:192]
        idx = min(range(64), key=lambda i: sum(abs(pal[3 * i + c] - key[c]) for c in range(3)))
        q.info["transparency"] = idx
    quantised[0].save(path, save_all=True, append_images=quantised[1:], duration=60, loop=0, optimize=False,
                      disposal=2, transparency=quantised[0].info["transparency"])


def screen_recording(path):
    try:
        font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", 13)
    except OSError:
        font = ImageFont.load_default()
    script = ["$ make test", "swift build --build-tests", "Building for debugging...", "[412/412] Linking FlipbookPackageTests",
              "Build complete! (38.21s)", "Test Suite 'All tests' started", "  GIFDecoderTests ......... passed",
              "  ConversionTests ......... passed", "  RangeRequestTests ....... passed", "  WorkerTests ............. passed",
              "233 tests: 233 passed, 0 failed, 0 skipped", "$ flipbook convert samples/ -o out/", "converted 4 files in 0.41 s",
              "$ ls out/"]
    colours = {"$": (130, 220, 120), " ": (200, 200, 200), "B": (110, 170, 255), "2": (250, 210, 90)}
    frames, delays, shown = [], [], []

    def draw(lines, partial, cursor):
        im = Image.new("RGB", (480, 300), (30, 32, 40))
        d = ImageDraw.Draw(im)
        d.rectangle((0, 0, 479, 22), fill=(58, 60, 72))
        for i, c in enumerate(((236, 95, 90), (245, 190, 80), (98, 196, 98))):
            d.ellipse((10 + 20 * i, 6, 22 + 20 * i, 18), fill=c)
        d.text((190, 4), "flipbook — bash", font=font, fill=(200, 200, 210))
        rows = (lines + [partial])[-16:]
        for r, text in enumerate(rows):
            d.text((10, 30 + r * 16), text, font=font, fill=colours.get(text[:1], (215, 215, 215)))
        if cursor:
            x = 10 + int(d.textlength(rows[-1], font=font))
            d.rectangle((x + 1, 31 + (len(rows) - 1) * 16, x + 8, 44 + (len(rows) - 1) * 16), fill=(215, 215, 215))
        return im

    for line in script:
        if line.startswith("$"):  # typed, a few characters a frame
            for n in range(2, len(line) + 1, 3):
                frames.append(draw(shown, line[:n], True))
                delays.append(80)
            for k in range(4):  # a pause with the cursor blinking
                frames.append(draw(shown, line, k % 2 == 0))
                delays.append(250)
        shown.append(line)
        frames.append(draw(shown, "", True))
        delays.append(120)
    save_gif(frames, delays, path, colours=32)
    subprocess.run(["gifsicle", "-O3", "-b", path], check=True)


def photo_pan(path):
    import numpy as np
    rng = np.random.default_rng(7)
    w, h = 960, 240
    y = np.arange(h)[:, None].astype(np.float32)
    x = np.arange(w)[None, :].astype(np.float32)
    img = np.zeros((h, w, 3), np.float32)
    sky = np.clip(y / 150, 0, 1)
    img[:] = (np.stack([70 + 150 * sky, 120 + 110 * sky, 200 + 30 * sky], -1)).repeat(w, 1)
    sun = np.exp(-((x - 620) ** 2 + (y - 70) ** 2) / 900)[..., None]
    img = img * (1 - sun) + np.array([255, 240, 200]) * sun
    for k, (base, amp, col) in enumerate(((130, 40, (95, 110, 140)), (160, 30, (70, 100, 70)), (195, 22, (50, 80, 40)))):
        ridge = base - amp * (0.6 * np.sin(x / (90 - 20 * k) + k) + 0.4 * np.sin(x / (37 - 7 * k) + 2 * k))
        mask = (y >= ridge).astype(np.float32)[..., None]
        shade = (1 - 0.5 * np.clip((y - ridge) / 80, 0, 1))[..., None]
        img = img * (1 - mask) + np.array(col) * shade * mask
    img += rng.normal(0, 6, img.shape)
    work = path + ".png"
    Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(work)
    try:
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-loop", "1", "-framerate", "12", "-i", work,
                        "-vf", "crop=320:240:'t*200':0,trim=duration=3,split[a][b];[a]palettegen=stats_mode=diff[p];"
                        "[b][p]paletteuse=dither=floyd_steinberg", path], check=True)
    finally:
        os.remove(work)


def globe(path):
    import numpy as np
    rng = np.random.default_rng(3)
    size, n = 240, 36
    stars = np.zeros((size, size, 3), np.float32)
    for _ in range(120):
        sx, sy = rng.integers(0, size, 2)
        stars[sy, sx] = rng.uniform(120, 255)
    c = (np.arange(size) - size / 2 + 0.5) / (size * 0.42)
    X, Y = np.meshgrid(c, c)
    inside = X ** 2 + Y ** 2 < 1
    Z = np.sqrt(np.clip(1 - X ** 2 - Y ** 2, 0, 1))
    lat = np.arcsin(np.clip(-Y, -1, 1))
    light = np.clip(0.15 + 0.85 * (-0.5 * X - 0.4 * Y + 0.77 * Z), 0.08, 1)[..., None]
    frames = []
    for f in range(n):
        lon = np.arctan2(X, Z) + f * 2 * np.pi / n
        land = np.sin(3 * lon) * np.cos(2 * lat) + 0.6 * np.sin(5 * lon + 1.3) * np.sin(3 * lat + 0.4) > 0.35
        ice = np.abs(lat) > 1.25
        col = np.where(land[..., None], np.array([70, 140, 60]), np.array([30, 70, 160])).astype(np.float32)
        col = np.where(ice[..., None], np.array([235, 240, 245], np.float32), col)
        planet = col * light
        frame = np.where(inside[..., None], planet, stars)
        rim = (X ** 2 + Y ** 2 > 0.9) & inside
        frame[rim] = frame[rim] * 0.6 + np.array([120, 170, 255]) * 0.4
        frames.append(Image.fromarray(np.clip(frame, 0, 255).astype(np.uint8)))
    save_gif(frames, [70] * n, path, colours=256, dither=Image.FLOYDSTEINBERG)


def pixel_scroll(path):
    pico = [(0, 0, 0), (29, 43, 83), (126, 37, 83), (0, 135, 81), (171, 82, 54), (95, 87, 79), (194, 195, 199),
            (255, 241, 232), (255, 0, 77), (255, 163, 0), (255, 236, 39), (0, 228, 54), (41, 173, 255),
            (131, 118, 156), (255, 119, 168), (255, 204, 170)]  # PICO-8
    frames = []
    for f in range(32):
        im = Image.new("RGB", (128, 128), pico[12])
        d = ImageDraw.Draw(im)
        for cx in range(-64, 192, 64):  # clouds, 1 px a frame
            x = cx - (f % 64)
            d.rectangle((x + 8, 18, x + 36, 24), fill=pico[7])
            d.rectangle((x + 14, 13, x + 28, 18), fill=pico[7])
        for hx in range(-48, 176, 48):  # hills, 3 px every 2 frames
            x = hx - (f * 3 // 2) % 48
            d.polygon([(x, 96), (x + 24, 60), (x + 48, 96)], fill=pico[3])
            d.line((x + 24, 60, x + 30, 71), fill=pico[11])
        for tx in range(0, 144, 16):  # ground tiles, 4 px a frame
            x = tx - (f * 4) % 16
            d.rectangle((x, 96, x + 15, 127), fill=pico[4])
            d.rectangle((x, 96, x + 15, 99), fill=pico[11])
            d.rectangle((x + 3, 106, x + 6, 109), fill=pico[5])
            d.rectangle((x + 10, 116, x + 12, 118), fill=pico[9])
        bob = (f // 4) % 2  # a runner in place
        d.rectangle((52, 80 - bob, 59, 87 - bob), fill=pico[15])
        d.rectangle((51, 88 - bob, 60, 93), fill=pico[8])
        d.point((57, 83 - bob), fill=pico[0])
        frames.append(im.resize((384, 384), Image.NEAREST))
    save_gif(frames, [60] * len(frames), path, colours=16)


def banner_hold(path):
    w, h = 600, 200
    try:
        font = ImageFont.truetype(FONT, 64)
    except OSError:
        font = ImageFont.load_default()
    word = "GIPHYLIKE"
    frames, delays = [], []

    def draw(progress):
        im = Image.new("RGB", (w, h), (18, 18, 18))
        d = ImageDraw.Draw(im)
        x = 40
        for i, ch in enumerate(word):
            t = max(0.0, min(1.0, progress * len(word) / 3 - i / 3))
            y = 60 + (1 - t) * 120
            colour = [(0, 255, 153), (0, 204, 255), (153, 51, 255), (255, 102, 102), (255, 243, 92)][i % 5]
            if t > 0:
                d.text((x, y), ch, font=font, fill=colour)
            x += int(d.textlength(ch, font=font)) + 4
        d.rectangle((40, 160, 40 + int(520 * min(1.0, progress * 1.2)), 166), fill=(0, 255, 153))
        return im

    for f in range(40):
        frames.append(draw(f / 39))
        delays.append(30)
    frames.append(draw(1.0))
    delays.append(3000)
    save_gif(frames, delays, path, colours=64)
    subprocess.run(["gifsicle", "-O3", "-b", path], check=True)


def sprite_vfr(path):
    palette = [(26, 28, 44), (93, 39, 93), (177, 62, 83), (239, 125, 87), (255, 205, 117), (167, 240, 112),
               (56, 183, 100), (37, 113, 121), (41, 54, 111), (59, 93, 201), (65, 166, 246), (115, 239, 247),
               (244, 244, 244), (148, 176, 194), (86, 108, 134), (51, 60, 87)]  # Sweetie 16
    frames, delays = [], []
    poses = [(0, 0, 160), (0, 1, 160), (0, 0, 160), (0, 1, 160), (1, 0, 100), (2, 0, 60), (3, 0, 60), (4, 0, 400),
             (1, 0, 120), (0, 0, 600)]
    for pose, bob, delay in poses:
        im = Image.new("RGB", (96, 64), palette[8])
        d = ImageDraw.Draw(im)
        d.rectangle((0, 50, 95, 63), fill=palette[15])
        for x in range(0, 96, 12):
            d.rectangle((x, 50, x + 5, 51), fill=palette[14])
        bx, by = 30, 22 + bob
        d.rectangle((bx, by, bx + 11, by + 11), fill=palette[3])  # head
        d.rectangle((bx + 7, by + 3, bx + 8, by + 5), fill=palette[0])
        d.rectangle((bx - 1, by + 12, bx + 12, by + 25), fill=palette[9])  # body
        d.rectangle((bx + 1, by + 26, bx + 4, by + 28 - bob), fill=palette[0])
        d.rectangle((bx + 7, by + 26, bx + 10, by + 28 - bob), fill=palette[0])
        reach = [0, 4, 10, 18, 22][pose]
        d.rectangle((bx + 12, by + 15, bx + 14 + reach, by + 17), fill=palette[3])  # arm
        if pose >= 2:  # the sword
            d.line((bx + 14 + reach, by + 16, bx + 24 + reach, by + 6 - pose), fill=palette[12], width=2)
        if pose == 4:  # the slash
            d.arc((bx + 10, by - 12, bx + 56, by + 34), 300, 60, fill=palette[11], width=3)
        frames.append(im.resize((288, 192), Image.NEAREST))
        delays.append(delay)
    save_gif(frames, delays, path, colours=16)


def cinemagraph(path):
    import numpy as np
    rng = np.random.default_rng(11)
    w, h = 360, 240
    y = np.arange(h)[:, None].astype(np.float32)
    x = np.arange(w)[None, :].astype(np.float32)
    base = np.zeros((h, w, 3), np.float32)
    base[:] = np.stack([90 + 80 * (y / h), 130 + 60 * (y / h), 170 + 40 * (y / h)], -1).repeat(w, 1)
    cliff = (x < 120 + 30 * np.sin(y / 23)).astype(np.float32)[..., None]
    base = base * (1 - cliff) + cliff * (np.array([110, 96, 80]) * (0.7 + 0.3 * np.sin(x / 9 + y / 17)[..., None]))
    base += rng.normal(0, 7, base.shape)
    frames = []
    for f in range(16):
        img = base.copy()
        water = (y > 170) & (x > 130)
        ripple = 18 * np.sin(x / 6 + f * 2 * np.pi / 16) * np.sin(y / 4 - f * 2 * np.pi / 8)
        img[water] = (np.array([40, 90, 130]) + ripple[..., None] * np.array([1, 1, 1]) + rng.normal(0, 5, img.shape))[water]
        frames.append(Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)))
    save_gif(frames, [80] * len(frames), path, colours=256, dither=Image.FLOYDSTEINBERG)


def ticker(path):
    w, h = 468, 60
    try:
        font = ImageFont.truetype(FONT, 26)
        small = ImageFont.truetype(FONT, 18)
    except OSError:
        font = small = ImageFont.load_default()
    text = "SUMMER SALE  *  50% OFF EVERYTHING  *  FREE SHIPPING  *  "
    frames, delays = [], []
    for f in range(36):
        im = Image.new("RGB", (w, h), (200, 16, 46))
        d = ImageDraw.Draw(im)
        d.text((w - f * 22, 14), text, font=font, fill=(255, 255, 255))
        d.rectangle((0, 0, w - 1, h - 1), outline=(255, 214, 0), width=3)
        frames.append(im)
        delays.append(50)
    im = Image.new("RGB", (w, h), (255, 214, 0))
    d = ImageDraw.Draw(im)
    d.text((120, 18), "SHOP NOW  >", font=small, fill=(200, 16, 46))
    frames.append(im)
    delays.append(2000)
    save_gif(frames, delays, path, colours=32)


def ui_demo(path):
    w, h = 400, 300
    try:
        font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 13)
    except OSError:
        font = ImageFont.load_default()

    def draw(px, py, hover, dialog, pressed):
        im = Image.new("RGB", (w, h), (245, 246, 248))
        d = ImageDraw.Draw(im)
        d.rectangle((0, 0, w, 36), fill=(37, 99, 235))
        d.text((12, 10), "Settings", font=font, fill=(255, 255, 255))
        for i, label in enumerate(("Profile", "Notifications", "Privacy", "Billing")):
            top = 56 + i * 44
            fill = (219, 234, 254) if hover == i else (255, 255, 255)
            d.rounded_rectangle((16, top, 384, top + 34), radius=6, fill=fill, outline=(209, 213, 219))
            d.text((28, top + 9), label, font=font, fill=(17, 24, 39))
            on = (i == 1) != pressed
            d.rounded_rectangle((330, top + 9, 366, top + 25), radius=8, fill=(34, 197, 94) if on or i == 0 else (156, 163, 175))
            knob = 350 if on or i == 0 else 332
            d.ellipse((knob, top + 11, knob + 12, top + 23), fill=(255, 255, 255))
        if dialog:
            d.rectangle((0, 0, w, h), fill=None)
            d.rounded_rectangle((70, 110, 330, 210), radius=10, fill=(255, 255, 255), outline=(148, 163, 184), width=2)
            d.text((90, 128), "Saved. Notifications updated.", font=font, fill=(17, 24, 39))
            d.rounded_rectangle((250, 170, 314, 198), radius=6, fill=(37, 99, 235))
            d.text((268, 176), "OK", font=font, fill=(255, 255, 255))
        d.polygon([(px, py), (px, py + 16), (px + 4, py + 12), (px + 8, py + 19), (px + 10, py + 18), (px + 6, py + 11),
                   (px + 12, py + 11)], fill=(0, 0, 0), outline=(255, 255, 255))
        return im

    frames, delays = [], []
    path_points = [(60 + 12 * k, 250 - 14 * k) for k in range(12)]
    for k, (px, py) in enumerate(path_points):  # the pointer moves up to "Notifications"
        hover = next((i for i in range(4) if 56 + i * 44 <= py <= 90 + i * 44), None)
        frames.append(draw(px, py, hover, False, False))
        delays.append(40 if k % 3 else 70)
    frames.append(draw(340, 118, 1, False, False))
    delays.append(700)
    frames.append(draw(340, 118, 1, False, True))  # clicks the toggle
    delays.append(300)
    frames.append(draw(340, 118, 1, True, True))
    delays.append(1800)
    for k in range(6):
        frames.append(draw(340 - 10 * k, 118 + 12 * k, None, True, True))
        delays.append(50)
    frames.append(draw(280, 184, None, False, True))
    delays.append(1200)
    save_gif(frames, delays, path, colours=64)
    subprocess.run(["gifsicle", "-O3", "-b", path], check=True)


def chart(path):
    w, h = 420, 260
    try:
        font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 11)
    except OSError:
        font = ImageFont.load_default()
    values = [32, 45, 38, 60, 72, 66, 84, 91]
    frames, delays = [], []
    for f in range(30):
        t = min(1.0, (f + 1) / 24)
        big = Image.new("RGB", (w * 2, h * 2), (255, 255, 255))  # drawn at twice the size, then reduced: smooth lines
        d = ImageDraw.Draw(big)
        for gy in range(0, 101, 20):
            yy = 2 * (220 - gy * 2)
            d.line((80, yy, 2 * 400, yy), fill=(229, 231, 235), width=2)
        for i, v in enumerate(values):
            bh = v * 2 * min(1.0, t * 1.4 - i * 0.05) if t * 1.4 - i * 0.05 > 0 else 0
            x0 = 2 * (50 + i * 44)
            d.rectangle((x0, 2 * (220 - bh), x0 + 56, 2 * 220), fill=(147, 197, 253))
        pts = [(2 * (64 + i * 44), 2 * (220 - (v * 0.8 + 20) * 2)) for i, v in enumerate(values)]
        n = t * (len(pts) - 1)
        k = int(n)
        line = pts[:k + 1]
        if k + 1 < len(pts):
            a, b = pts[k], pts[k + 1]
            line.append((a[0] + (b[0] - a[0]) * (n - k), a[1] + (b[1] - a[1]) * (n - k)))
        if len(line) > 1:
            d.line(line, fill=(220, 38, 38), width=6, joint="curve")
        im = big.resize((w, h), Image.LANCZOS)
        dd = ImageDraw.Draw(im)
        dd.text((20, 8), "Monthly active users", font=font, fill=(55, 65, 81))
        for i in range(len(values)):
            dd.text((54 + i * 44, 226), ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug"][i], font=font, fill=(107, 114, 128))
        frames.append(im)
        delays.append(40)
    delays[-1] = 1500
    save_gif(frames, delays, path, colours=128)


def emoji_bounce(path):
    key = (0, 255, 0)
    frames = []
    for f in range(16):
        im = Image.new("RGB", (128, 128), key)
        d = ImageDraw.Draw(im)
        t = f / 16
        dy = 20 * abs(math.sin(t * math.pi * 2))
        cx, cy = 64, 76 - dy
        d.ellipse((cx - 44, cy - 44, cx + 44, cy + 44), fill=(255, 204, 77), outline=(230, 150, 20), width=3)
        d.ellipse((cx - 22, cy - 18, cx - 10, cy - 2), fill=(60, 40, 20))
        d.ellipse((cx + 10, cy - 18, cx + 22, cy - 2), fill=(60, 40, 20))
        d.chord((cx - 26, cy - 6, cx + 26, cy + 30), 0, 180, fill=(120, 40, 30))
        d.ellipse((cx - 40, cy + 2, cx - 26, cy + 12), fill=(255, 150, 130))
        d.ellipse((cx + 26, cy + 2, cx + 40, cy + 12), fill=(255, 150, 130))
        frames.append(im)
    quantised = [im.quantize(colors=32, method=Image.MEDIANCUT, dither=Image.NONE) for im in frames]
    for q in quantised:
        pal = q.getpalette()[:96]
        q.info["transparency"] = min(range(32), key=lambda i: sum(abs(pal[3 * i + c] - key[c]) for c in range(3)))
    quantised[0].save(path, save_all=True, append_images=quantised[1:], duration=20, loop=0, optimize=False,
                      disposal=2, transparency=quantised[0].info["transparency"])


def video_clip(path):
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                    "testsrc2=size=320x180:rate=10,noise=alls=6:allf=t,trim=duration=3",
                    "-vf", "split[a][b];[a]palettegen=stats_mode=single[p];[b][p]paletteuse=new=1:dither=bayer:bayer_scale=3",
                    path], check=True)


def spinner(path):
    key = (255, 0, 255)
    frames = []
    for f in range(12):
        big = Image.new("RGB", (256, 256), key)
        d = ImageDraw.Draw(big)
        for k in range(12):
            a = (k - f) * 2 * math.pi / 12
            shade = int(60 + 180 * ((k % 12) / 11))
            x, y = 128 + 84 * math.cos(a), 128 + 84 * math.sin(a)
            d.ellipse((x - 14, y - 14, x + 14, y + 14), fill=(shade // 3, shade // 2, shade))
        small = big.resize((64, 64), Image.BOX)
        frames.append(small)
    quantised = [im.quantize(colors=64, method=Image.MEDIANCUT, dither=Image.NONE) for im in frames]
    for q in quantised:
        pal = q.getpalette()[:192]
        q.info["transparency"] = min(range(64), key=lambda i: sum(abs(pal[3 * i + c] - key[c]) for c in range(3)))
    quantised[0].save(path, save_all=True, append_images=quantised[1:], duration=80, loop=0, optimize=False,
                      disposal=2, transparency=quantised[0].info["transparency"])


def slideshow(path):
    import numpy as np
    rng = np.random.default_rng(5)
    w, h = 320, 200
    y = np.arange(h)[:, None].astype(np.float32)
    x = np.arange(w)[None, :].astype(np.float32)
    slides = []
    for k in range(3):
        img = np.stack([120 + 90 * np.sin(x / (40 + 10 * k) + k) * np.cos(y / 50),
                        110 + 70 * np.cos(x / 60 - y / (30 + 5 * k)),
                        100 + 80 * np.sin((x + y) / (70 - 10 * k))], -1)
        img += rng.normal(0, 8, img.shape)
        slides.append(np.clip(img, 0, 255))
    frames, delays = [], []
    for k in range(3):
        frames.append(Image.fromarray(slides[k].astype(np.uint8)))
        delays.append(2000)
        nxt = slides[(k + 1) % 3]
        for s in range(1, 6):
            a = s / 6
            frames.append(Image.fromarray((slides[k] * (1 - a) + nxt * a).astype(np.uint8)))
            delays.append(60)
    save_gif(frames, delays, path, colours=256, dither=Image.FLOYDSTEINBERG)


def typing_vfr(path):
    try:
        font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", 14)
    except OSError:
        font = ImageFont.load_default()
    lines = ["$ git commit -m 'fix timing'", "[main 3f2a1c9] fix timing", " 2 files changed, 41 insertions(+)", "$ git push"]
    frames, delays, done = [], [], []
    state = 12345

    def rand():
        nonlocal state
        state = (state * 1103515245 + 12345) % (1 << 31)
        return state / (1 << 31)

    def draw(partial, cursor):
        im = Image.new("RGB", (360, 120), (0, 43, 54))
        d = ImageDraw.Draw(im)
        rows = done + [partial]
        for r, text in enumerate(rows[-6:]):
            d.text((8, 8 + r * 18), text, font=font, fill=(147, 161, 161) if not text.startswith("$") else (181, 137, 0))
        if cursor:
            x = 8 + int(d.textlength(rows[-1], font=font))
            d.rectangle((x, 8 + (min(len(rows), 6) - 1) * 18, x + 7, 24 + (min(len(rows), 6) - 1) * 18), fill=(147, 161, 161))
        return im

    for line in lines:
        if line.startswith("$"):
            for n in range(1, len(line) + 1):
                frames.append(draw(line[:n], True))
                delays.append(40 + 10 * int(rand() * 8) + (300 if rand() < 0.08 else 0))
        done.append(line)
        frames.append(draw("", True))
        delays.append(400)
    frames.append(draw("", False))
    delays.append(500)
    save_gif(frames, delays, path, colours=16)


def save_gif(frames, delays, path, colours, dither=Image.NONE):
    quantised = [f.quantize(colors=colours, method=Image.MEDIANCUT, dither=dither) for f in frames]
    quantised[0].save(path, save_all=True, append_images=quantised[1:], duration=[d for d in delays], loop=0,
                      optimize=False, disposal=1)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in (("logo-static.gif", logo), ("pixel-art.gif", pixel_art), ("photo-loop.gif", photo_loop),
                       ("sticker.gif", sticker), ("screen-recording.gif", screen_recording), ("photo-pan.gif", photo_pan),
                       ("globe.gif", globe), ("pixel-scroll.gif", pixel_scroll), ("banner-hold.gif", banner_hold),
                       ("sprite-vfr.gif", sprite_vfr), ("cinemagraph.gif", cinemagraph), ("ticker.gif", ticker),
                       ("ui-demo.gif", ui_demo), ("chart.gif", chart), ("emoji-bounce.gif", emoji_bounce),
                       ("video-clip.gif", video_clip), ("spinner.gif", spinner), ("slideshow.gif", slideshow),
                       ("typing-vfr.gif", typing_vfr)):
        path = os.path.join(out, name)
        if not os.path.exists(path):
            make(path)
        print(path)


if __name__ == "__main__":
    main()
