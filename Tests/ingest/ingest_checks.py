"""Independent checks for the ingestion stage, run by Tests/FlipbookIngestTests.

    ingest_checks.py placeholders MANIFEST.json   BlurHash equals PyPI `blurhash` for the same pixels; the
                                                  ThumbHash decodes (PyPI `thumbhash-python`) to the source's
                                                  aspect ratio and average colour (the source read by Pillow)
    ingest_checks.py metadata FILE...             no EXIF, GPS or XMP in images (Pillow and the bytes) nor
                                                  location or other tags in MP4s (ffprobe and the bytes)
    ingest_checks.py tagged-jpeg OUT              a JPEG with EXIF (orientation 6, GPS) and an XMP packet
    ingest_checks.py vips MAX MIN DERIV SRC FIT.. each derivative against vipsthumbnail's thumbnail of its
                                                  source at the derivative's size (fit inside or cover; a
                                                  tagged source to sRGB; upright): mean absolute difference
                                                  at most MAX, ffmpeg's SSIM at least MIN
    ingest_checks.py thumbhash SRC THUMBHASH      the ThumbHash's average colour against the whole source's
                                                  (numpy over Pillow's decode, upright)

Exit 0 = pass; anything else prints why.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile

import blurhash
from PIL import Image, ImageOps
from thumbhash.hash import Hash
from thumbhash import thumbhash_to_image


def average_rgb(image):
    """Alpha-weighted average colour, 0..1, of a Pillow image (first frame), as ThumbHash defines it."""
    rgba = image.convert("RGBA")
    total = [0.0, 0.0, 0.0]
    weight = 0.0
    for r, g, b, a in rgba.getdata():
        w = a / 255
        total[0] += w * r / 255
        total[1] += w * g / 255
        total[2] += w * b / 255
        weight += w
    return [t / weight for t in total] if weight else [0.0, 0.0, 0.0]


def thumbhash_average(decoded):
    """The average colour a ThumbHash carries (its DC terms), by the format's LPQ -> RGB mapping."""
    l, p, q = decoded.l_dc, decoded.p_dc, decoded.q_dc
    b = l - 2 / 3 * p
    r = (3 * l - b + q) / 2
    g = r - q
    return [max(0.0, min(1.0, v)) for v in (r, g, b)]


def placeholders(manifest):
    entries = json.load(open(manifest))
    failures = []
    for e in entries:
        w, h = e["width"], e["height"]
        raw = open(e["rgb"], "rb").read()
        rows = [[raw[(y * w + x) * 3:(y * w + x) * 3 + 3] for x in range(w)] for y in range(h)]
        expected = blurhash.encode(rows, 4, 3)
        if expected != e["blurhash"]:
            failures.append(f"{e['name']}: blurhash {e['blurhash']} != PyPI blurhash {expected}")
        # The source as an independent reader sees it: Pillow, upright by its EXIF orientation; or the raw
        # RGBA pixels the test made.
        if e.get("source"):
            source = ImageOps.exif_transpose(Image.open(e["source"]))
        else:
            source = Image.frombytes("RGBA", (e["sourceWidth"], e["sourceHeight"]), open(e["rgba"], "rb").read())
        sw, sh = source.size
        hashed = base64.b64decode(e["thumbhash"])
        decoded = Hash.decode(hashed, 1.25)
        picture = thumbhash_to_image(hashed)
        pw, ph = picture.size
        if (sw > sh) != (pw > ph) and sw != sh:
            failures.append(f"{e['name']}: thumbhash decodes to {pw}x{ph}, the source is {sw}x{sh}")
        # The format keeps the aspect ratio as the count of luminance terms along the shorter side.
        limit = 5 if decoded.has_alpha else 7
        shorter = max(1, int(limit * min(sw, sh) / max(sw, sh) + 0.5))
        if decoded.l_count != (shorter if sw != sh else limit):
            failures.append(f"{e['name']}: thumbhash aspect {decoded.l_count}/{limit}, source {sw}x{sh} wants {shorter}/{limit}")
        want = average_rgb(source)
        got = thumbhash_average(decoded)
        if max(abs(a - b) for a, b in zip(want, got)) > 0.06:
            failures.append(f"{e['name']}: thumbhash average {got} vs the source's {want}")
        print(f"{e['name']}: blurhash {e['blurhash']} ok; thumbhash {pw}x{ph}, average "
              f"{[round(v, 3) for v in got]} vs {[round(v, 3) for v in want]}")
    return failures


def metadata(paths):
    failures = []
    for path in paths:
        data = open(path, "rb").read()
        if path.endswith(".mp4"):
            out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format_tags:stream_tags", "-of", "json", path],
                                 check=True, capture_output=True, text=True).stdout
            tags = json.loads(out)
            kept = {k for k in tags.get("format", {}).get("tags", {}) if k not in ("major_brand", "minor_version", "compatible_brands", "encoder", "loop_count")}
            for stream in tags.get("streams", []):
                kept |= {k for k in stream.get("tags", {}) if k not in ("language", "handler_name", "vendor_id")}
            if kept or b"\xa9xyz" in data or b"ISO6709" in data:
                failures.append(f"{path}: MP4 carries {sorted(kept)} or a location atom")
        elif path.endswith((".jpg", ".png", ".webp")):
            image = Image.open(path)
            if len(image.getexif()) or "exif" in image.info or "xmp" in image.info or "XML:com.adobe.xmp" in image.info:
                failures.append(f"{path}: image carries {sorted(k for k in image.info if k in ('exif', 'xmp', 'XML:com.adobe.xmp'))} / {dict(image.getexif())}")
            for marker in (b"Exif\x00\x00", b"http://ns.adobe.com/xap", b"EXIF", b"XMP "):
                if marker in data:
                    failures.append(f"{path}: contains {marker!r}")
        print(f"{path}: no EXIF, GPS or XMP")
    return failures


def tagged_jpeg(out):
    """A 640x480 scene with orientation 6, a GPS position and an XMP packet, as a phone writes them."""
    image = Image.radial_gradient("L").resize((640, 480)).convert("RGB")
    exif = Image.Exif()
    exif[0x0112] = 6
    exif[0x010F] = "FlipbookTestCamera"
    exif[0x8825] = {1: "N", 2: (40.0, 44.0, 29.0), 3: "W", 4: (73.0, 59.0, 18.0)}
    image.save(out, "JPEG", exif=exif.tobytes(), quality=90)
    data = open(out, "rb").read()
    xmp = b"http://ns.adobe.com/xap/1.0/\x00" + b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF/></x:xmpmeta>'
    segment = b"\xff\xe1" + (len(xmp) + 2).to_bytes(2, "big") + xmp
    open(out, "wb").write(data[:2] + segment + data[2:])
    check = Image.open(out)
    assert check.getexif().get_ifd(0x8825), "Pillow did not write the GPS IFD"
    assert b"ns.adobe.com/xap" in open(out, "rb").read()
    print(f"{out}: EXIF orientation 6, GPS, XMP")
    return []


def ssim(a, b):
    """ffmpeg's SSIM ("All") of two same-size image files."""
    err = subprocess.run(["ffmpeg", "-hide_banner", "-i", a, "-i", b, "-lavfi", "[0]format=rgb24[x];[1]format=rgb24[y];[x][y]ssim",
                          "-f", "null", "-"], capture_output=True, text=True, check=True).stderr
    return float(err.split("All:")[1].split()[0])


def vips(limit, least, triples):
    """Each (derivative, source, fit) against `vipsthumbnail SOURCE` at the derivative's size: inside is an exact
    WxH box, cover a centre crop (--smartcrop centre); a tagged source colour-managed to sRGB, and turned upright,
    as vips does."""
    import numpy as np
    failures = []
    for derivative, source, fit in triples:
        ours = Image.open(derivative)
        w, h = ours.size
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "vips.png")
            size = ["-s", f"{w}x{h}!"] if fit == "inside" else ["-s", f"{w}x{h}", "--smartcrop", "centre"]
            # A profile to convert from: vips 8.14's sRGB export of an untagged source shifts it by ~16 levels.
            export = ["--export-profile", "srgb"] if Image.open(source).info.get("icc_profile") else []
            subprocess.run(["vipsthumbnail", source, *size, *export, "-o", out], check=True)
            reference = Image.open(out).convert("RGB")
            reference.load()
            if reference.size != (w, h):
                failures.append(f"{derivative}: {w}x{h}, vipsthumbnail made {reference.size}")
                continue
            mad = float(np.abs(np.asarray(ours.convert("RGB"), dtype=np.float64) - np.asarray(reference, dtype=np.float64)).mean())
            score = ssim(derivative, out)
        print(f"{derivative}: {w}x{h} ({fit}) against vipsthumbnail: mean absolute difference {mad:.2f} (at most {limit}), "
              f"SSIM {score:.4f} (at least {least})")
        if mad > limit or score < least:
            failures.append(f"{derivative}: mean absolute difference {mad:.2f}, SSIM {score:.4f} from vipsthumbnail")
    return failures


def thumbhash_of(source, hashed):
    """The ThumbHash's average colour (PyPI thumbhash-python) against the source's alpha-weighted average."""
    import numpy as np
    rgba = np.asarray(ImageOps.exif_transpose(Image.open(source)).convert("RGBA"), dtype=np.float64) / 255
    weight = rgba[..., 3].sum()
    want = [float((rgba[..., c] * rgba[..., 3]).sum() / weight) for c in range(3)]
    got = thumbhash_average(Hash.decode(base64.b64decode(hashed), 1.25))
    print(f"{source}: thumbhash average {[round(v, 3) for v in got]} vs the source's {[round(v, 3) for v in want]}")
    return [] if max(abs(a - b) for a, b in zip(want, got)) <= 0.06 else [f"{source}: thumbhash average {got} vs {want}"]


def main():
    command, args = sys.argv[1], sys.argv[2:]
    failures = {"placeholders": lambda: placeholders(args[0]), "metadata": lambda: metadata(args),
                "tagged-jpeg": lambda: tagged_jpeg(args[0]),
                "vips": lambda: vips(float(args[0]), float(args[1]), [args[i:i + 3] for i in range(2, len(args), 3)]),
                "thumbhash": lambda: thumbhash_of(args[0], args[1])}[command]()
    for f in failures:
        print("FAIL", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
