#!/usr/bin/python3
"""Makes the still inputs the corpus lacks, with Pillow (Debian's python3-pil, Little CMS inside) and numpy.

  make_still_inputs.py icc OUT.icc {display-p3|adobe-rgb}
      A matrix/TRC ICC v2 RGB profile written from the published primaries (Display P3: DCI-P3 primaries,
      D65, sRGB curve; Adobe RGB (1998): its primaries, D65, gamma 563/256), colorants adapted to D50 by
      Bradford as ICC requires. Written here from the specifications, not copied from anyone's file.
  make_still_inputs.py photo OUT.png WIDTH HEIGHT [rgba]
      A photo-like test picture (smooth colour fields, edges, fine texture, noise), RGB or RGBA.
  make_still_inputs.py tag SRC.png PROFILE.icc OUT.jpg
      SRC (taken as sRGB) converted into PROFILE's space by Little CMS and saved as JPEG with PROFILE embedded.
  make_still_inputs.py cmyk SRC.png CMYK.icc OUT.jpg
      SRC converted to CMYK through CMYK.icc and saved as an Adobe CMYK JPEG with that profile embedded.
  make_still_inputs.py embed SRC.jpg PROFILE.icc OUT.jpg
      SRC's bytes with PROFILE inserted after SOI as APP2 "ICC_PROFILE" segments (several when it is over
      65,519 bytes), pixels untouched: how a YCCK JPEG gets its CMYK profile when no tool here writes YCCK.
  make_still_inputs.py hdr SRC.png {pq|hlg} OUT.png
      SRC (sRGB) as a 16-bit BT.2020 PQ or HLG PNG for avifenc --cicp 9/16/9 or 9/18/9: SRC's white at the
      HDR reference white, 203 cd/m^2 (ITU-R BT.2408), the right third three times brighter (609 cd/m^2) so
      highlights reach the roll-off; HLG through the inverse BT.2100 OOTF of a 1,000 cd/m^2 display.
      Written from the standards' formulas; the 16-bit PNG by hand (Pillow has no 16-bit RGB mode).
  make_still_inputs.py heic-grid SRC.png COLUMNS ROWS OUT.heic
      SRC cut into COLUMNS x ROWS tiles, each encoded by heif-enc (x265), assembled here into one HEIF whose
      primary item is a 'grid' of the tiles, as Apple's cameras write (libheif 1.15's heif-enc cannot write
      grids and nothing else installed writes HEIF; ISO/IEC 23008-12 boxes written by hand: hidden hvc1 tile
      items, a 'dimg' reference, the grid descriptor in 'idat', 'ispe' for tiles and canvas).
  make_still_inputs.py webp SRC.png OUT.webp / png SRC.png OUT.png
      Re-encodes (WebP lossy q80, method 0; PNG zlib level 6).
"""
import io
import struct
import sys
import zlib

import numpy as np
from PIL import Image, ImageCms

Image.MAX_IMAGE_PIXELS = None

PRIMARIES = {
    "display-p3": ((0.680, 0.320), (0.265, 0.690), (0.150, 0.060), "srgb", "Display P3 (Flipbook test)"),
    "adobe-rgb": ((0.640, 0.330), (0.210, 0.710), (0.150, 0.060), 563 / 256, "Adobe RGB 1998 compatible (Flipbook test)"),
}
D65 = (0.3127, 0.3290)
D50_XYZ = np.array([0.9642, 1.0, 0.8249])


def xyz(xy):
    x, y = xy
    return np.array([x / y, 1.0, (1 - x - y) / y])


def icc_profile(kind):
    r, g, b, curve, name = PRIMARIES[kind]
    m = np.stack([xyz(r), xyz(g), xyz(b)], axis=1)
    s = np.linalg.solve(m, xyz(D65))
    colorants = m * s  # columns: XYZ of R, G, B at full, white = D65
    bradford = np.array([[0.8951, 0.2664, -0.1614], [-0.7502, 1.7135, 0.0367], [0.0389, -0.0685, 1.0296]])
    w_src, w_dst = bradford @ xyz(D65), bradford @ D50_XYZ
    adapt = np.linalg.inv(bradford) @ np.diag(w_dst / w_src) @ bradford
    colorants = adapt @ colorants

    def s15(v):
        return struct.pack(">i", int(round(v * 65536)))

    def xyz_tag(v):
        return b"XYZ " + b"\0" * 4 + b"".join(s15(c) for c in v)

    def desc_tag(text):
        t = text.encode() + b"\0"
        return b"desc" + b"\0" * 4 + struct.pack(">I", len(t)) + t + b"\0" * 4 + b"\0" * 4 + b"\0" * 2 + b"\0" + b"\0" * 67

    if curve == "srgb":
        # parametric curve type 3 (IEC 61966-2.1): g, a, b, c, d
        params = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
        trc = b"para" + b"\0" * 4 + struct.pack(">HH", 3, 0) + b"".join(s15(p) for p in params)
    else:
        trc = b"curv" + b"\0" * 4 + struct.pack(">I", 1) + struct.pack(">H", int(round(curve * 256)))
    tags = [(b"desc", desc_tag(name)), (b"cprt", b"text" + b"\0" * 4 + b"No copyright, test profile\0"),
            (b"wtpt", xyz_tag(D50_XYZ)), (b"rXYZ", xyz_tag(colorants[:, 0])), (b"gXYZ", xyz_tag(colorants[:, 1])),
            (b"bXYZ", xyz_tag(colorants[:, 2])), (b"rTRC", trc), (b"gTRC", trc), (b"bTRC", trc)]
    offset = 128 + 4 + 12 * len(tags)
    table, data = b"", b""
    for sig, body in tags:
        while len(body) % 4:
            body += b"\0"
        table += sig + struct.pack(">II", offset + len(data), len(body))
        data += body
    size = offset + len(data)
    header = struct.pack(">I", size) + b"lcms" + bytes([2, 0x40, 0, 0]) + b"mntrRGB XYZ " + struct.pack(">6H", 2026, 1, 1, 0, 0, 0)
    header += b"acsp" + b"APPL" + b"\0" * 4 + b"\0" * 4 + b"\0" * 4 + b"\0" * 8 + struct.pack(">I", 0)
    header += b"".join(s15(c) for c in D50_XYZ) + b"\0" * 4 + b"\0" * 16 + b"\0" * 28
    assert len(header) == 128, len(header)
    return header + struct.pack(">I", len(tags)) + table + data


def photo(width, height, alpha=False):
    rng = np.random.default_rng(13)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    u, v = x / width, y / height
    r = 0.5 + 0.45 * np.sin(6.0 * u + 2.0 * np.sin(5 * v))
    g = 0.5 + 0.45 * np.sin(4.0 * v + 3.0 * u * v + 1.0)
    b = 0.5 + 0.45 * np.cos(7.0 * (u - v) ** 2 * 3)
    rgb = np.stack([r, g, b], axis=-1)
    # saturated patches (wide-gamut content matters most there) and sharp edges
    rgb[(u > 0.1) & (u < 0.3) & (v > 0.6) & (v < 0.9)] = [0.95, 0.05, 0.1]
    rgb[(u > 0.7) & (u < 0.9) & (v > 0.1) & (v < 0.35)] = [0.05, 0.85, 0.2]
    texture = 0.06 * np.sin(x * 0.9) * np.sin(y * 0.7)
    rgb += texture[..., None] + rng.normal(0, 0.02, (height, width, 1)).astype(np.float32)
    out = (np.clip(rgb, 0, 1) * 255 + 0.5).astype(np.uint8)
    if alpha:
        a = (np.clip(1.2 - 2.0 * np.hypot(u - 0.5, v - 0.5), 0, 1) * 255).astype(np.uint8)
        out = np.dstack([out, a])
    return Image.fromarray(out, "RGBA" if alpha else "RGB")


def hdr_png(src, transfer, out):
    srgb = np.asarray(Image.open(src).convert("RGB"), dtype=np.float64) / 255
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    bt709_to_2020 = np.array([[0.6274, 0.3293, 0.0433], [0.0691, 0.9195, 0.0114], [0.0164, 0.0880, 0.8956]])
    nits = 203 * (linear @ bt709_to_2020.T)
    nits[:, nits.shape[1] * 2 // 3:] *= 3
    if transfer == "pq":
        m1, m2, c1, c2, c3 = 2610 / 16384, 2523 / 4096 * 128, 3424 / 4096, 2413 / 4096 * 32, 2392 / 4096 * 32
        y = np.clip(nits / 10000, 0, 1) ** m1
        signal = ((c1 + c2 * y) / (1 + c3 * y)) ** m2
    else:
        display = np.clip(nits / 1000, 0, 1)
        yd = display @ np.array([0.2627, 0.6780, 0.0593])
        ys = np.maximum(yd, 1e-12) ** (1 / 1.2)
        scene = display / np.maximum(ys, 1e-12)[..., None] ** 0.2
        a, b, c = 0.17883277, 0.28466892, 0.55991073
        signal = np.where(scene <= 1 / 12, np.sqrt(3 * scene), a * np.log(np.maximum(12 * scene - b, 1e-12)) + c)
    samples = (np.clip(signal, 0, 1) * 65535 + 0.5).astype(">u2")
    h, w = samples.shape[:2]
    rows = b"".join(b"\0" + samples[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    with open(out, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))


def box(kind, payload, version=None, flags=0):
    head = b"" if version is None else struct.pack(">I", (version << 24) | flags)
    return struct.pack(">I", 8 + len(head) + len(payload)) + kind + head + payload


def children(data, start, end):
    """(type, payload start, box end) of the boxes in data[start:end]."""
    while start < end:
        size, kind = struct.unpack(">I4s", data[start:start + 8])
        yield kind, start + 8, start + size
        start += size


def heif_tile(path):
    """The hvcC box and the coded bytes of the single image heif-enc wrote to `path`."""
    data = open(path, "rb").read()
    meta = next((s, e) for k, s, e in children(data, 0, len(data)) if k == b"meta")
    parts = {k: (s, e) for k, s, e in children(data, meta[0] + 4, meta[1])}
    ipco = next((s, e) for k, s, e in children(data, *parts[b"iprp"]) if k == b"ipco")
    hvcc = next(data[s - 8:e] for k, s, e in children(data, *ipco) if k == b"hvcC")
    s, _ = parts[b"iloc"]
    version = data[s]
    sizes, p = data[s + 4], s + 6
    offset_size, length_size, base_size = sizes >> 4, sizes & 15, data[s + 5] >> 4
    count = struct.unpack(">H", data[p:p + 2])[0]
    assert count == 1, "expected one item"
    p += 4 + (2 if version >= 1 else 0) + 2

    def read(n):
        nonlocal p
        p += n
        return int.from_bytes(data[p - n:p], "big") if n else 0

    base = read(base_size)
    extents = [(base + read(offset_size), read(length_size)) for _ in range(read(2))]
    return hvcc, b"".join(data[o:o + n] for o, n in extents)


def heic_grid(src, columns, rows, out):
    import os
    import subprocess
    import tempfile
    im = Image.open(src).convert("RGB")
    tw, th = im.width // columns, im.height // rows
    tiles = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rows):
            for c in range(columns):
                png, heic = os.path.join(tmp, f"{r}-{c}.png"), os.path.join(tmp, f"{r}-{c}.heic")
                im.crop((c * tw, r * th, (c + 1) * tw, (r + 1) * th)).save(png)
                subprocess.run(["heif-enc", "-q", "85", png, "-o", heic], check=True, capture_output=True)
                tiles.append(heif_tile(heic))
    n = len(tiles)
    ids = list(range(2, n + 2))
    grid = struct.pack(">BBBBHH", 0, 0, rows - 1, columns - 1, tw * columns, th * rows)
    infe = [box(b"infe", struct.pack(">HH4s", 1, 0, b"grid") + b"\0", version=2)]
    infe += [box(b"infe", struct.pack(">HH4s", i, 0, b"hvc1") + b"\0", version=2, flags=1) for i in ids]
    iinf = box(b"iinf", struct.pack(">H", n + 1) + b"".join(infe), version=0)
    iref = box(b"iref", box(b"dimg", struct.pack(">HH", 1, n) + b"".join(struct.pack(">H", i) for i in ids)), version=0)
    # Properties: 1 canvas ispe, 2 tile ispe, then one hvcC per tile (3...).
    ipco = box(b"ipco", box(b"ispe", struct.pack(">II", tw * columns, th * rows), version=0)
               + box(b"ispe", struct.pack(">II", tw, th), version=0) + b"".join(h for h, _ in tiles))
    entries = [struct.pack(">HBB", 1, 1, 1)]
    entries += [struct.pack(">HBBB", i, 2, 0x80 | (3 + k), 2) for k, i in enumerate(ids)]
    ipma = box(b"ipma", struct.pack(">I", n + 1) + b"".join(entries), version=0)
    iprp = box(b"iprp", ipco + ipma)

    def meta_with(mdat_start):
        # iloc v1, 4-byte offsets and lengths: the grid descriptor in idat (construction method 1), the
        # tiles in mdat (method 0, absolute offsets).
        items = [struct.pack(">HHHHII", 1, 1, 0, 1, 0, len(grid))]
        offset = mdat_start
        for i, (_, coded) in zip(ids, tiles):
            items.append(struct.pack(">HHHHII", i, 0, 0, 1, offset, len(coded)))
            offset += len(coded)
        iloc = box(b"iloc", bytes([0x44, 0x00]) + struct.pack(">H", n + 1) + b"".join(items), version=1)
        hdlr = box(b"hdlr", b"\0" * 4 + b"pict" + b"\0" * 12 + b"\0", version=0)
        pitm = box(b"pitm", struct.pack(">H", 1), version=0)
        return box(b"meta", hdlr + pitm + iloc + iinf + iref + iprp + box(b"idat", grid), version=0)

    ftyp = box(b"ftyp", b"heic" + struct.pack(">I", 0) + b"mif1heicmiaf")
    size = len(ftyp) + len(meta_with(0)) + 8
    meta = meta_with(size)
    mdat = b"".join(coded for _, coded in tiles)
    with open(out, "wb") as f:
        f.write(ftyp + meta + struct.pack(">I", 8 + len(mdat)) + b"mdat" + mdat)


def main():
    cmd = sys.argv[1]
    if cmd == "icc":
        open(sys.argv[2], "wb").write(icc_profile(sys.argv[3]))
    elif cmd == "photo":
        photo(int(sys.argv[3]), int(sys.argv[4]), len(sys.argv) > 5 and sys.argv[5] == "rgba").save(sys.argv[2], compress_level=1)
    elif cmd == "tag":
        src = Image.open(sys.argv[2]).convert("RGB")
        data = open(sys.argv[3], "rb").read()
        target = ImageCms.ImageCmsProfile(io.BytesIO(data))
        out = ImageCms.profileToProfile(src, ImageCms.createProfile("sRGB"), target, renderingIntent=1)
        out.save(sys.argv[4], quality=92, icc_profile=data)
    elif cmd == "cmyk":
        src = Image.open(sys.argv[2]).convert("RGB")
        data = open(sys.argv[3], "rb").read()
        out = ImageCms.profileToProfile(src, ImageCms.createProfile("sRGB"), ImageCms.ImageCmsProfile(io.BytesIO(data)),
                                        renderingIntent=1, outputMode="CMYK")
        out.save(sys.argv[4], quality=92, icc_profile=data)
    elif cmd == "embed":
        jpeg = open(sys.argv[2], "rb").read()
        profile = open(sys.argv[3], "rb").read()
        chunks = [profile[i:i + 65519] for i in range(0, len(profile), 65519)]
        segments = b"".join(b"\xff\xe2" + struct.pack(">H", 2 + 14 + len(c)) + b"ICC_PROFILE\0" + bytes([n + 1, len(chunks)]) + c
                            for n, c in enumerate(chunks))
        open(sys.argv[4], "wb").write(jpeg[:2] + segments + jpeg[2:])
    elif cmd == "heic-grid":
        heic_grid(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif cmd == "hdr":
        hdr_png(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "webp":
        Image.open(sys.argv[2]).save(sys.argv[3], quality=80, method=0)
    elif cmd == "png":
        Image.open(sys.argv[2]).save(sys.argv[3], compress_level=6)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
