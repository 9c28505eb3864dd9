#!/usr/bin/env python3
"""Writes a large GIF fast (a test and bench input, not a reference): FRAMES frames of 1000x1000 palette noise
cycling through PICTURES different pictures, undisposed, 40 ms each. Noise does not compress, so each frame
costs about 1.37 MB: 20 frames make a 27 MB GIF, 146 frames a 200 MB one.

    noise_gif.py PATH FRAMES PICTURES
"""
import os, sys

import numpy as np
from PIL import Image

path, frames, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(7)
palette = [v for i in range(256) for v in (i, i * 7 % 256, i * 13 % 256)]
pictures = []
for _ in range(count):
    picture = Image.fromarray(rng.integers(0, 256, (1000, 1000), dtype=np.uint8), "P")
    picture.putpalette(palette)
    pictures.append(picture)
sequence = [pictures[i % count] for i in range(frames)]
sequence[0].save(path + ".tmp", format="GIF", save_all=True, append_images=sequence[1:], duration=40, loop=0,
                 optimize=False, disposal=1)
os.replace(path + ".tmp", path)
