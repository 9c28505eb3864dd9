#!/usr/bin/env bash
# Makes the still inputs the corpus lacks, for `make bench` and for reading by hand (never committed:
# they are large). Usage: scripts/make-still-bench.sh [DIR]   (default bench/work/stills)
#
#   photo-12mp.png        4032x3024 photo-like picture (scripts/make_still_inputs.py photo), the source below
#   p3.jpg, adobe-rgb.jpg the picture converted to Display P3 / Adobe RGB by Little CMS (Pillow ImageCms),
#                         profiles written from the published primaries (make_still_inputs.py icc)
#   cmyk-profile.jpg      24 MP Adobe CMYK JPEG with libvips's "Chemical proof" CMYK profile embedded (15 APP2
#                         chunks); Pillow writes CMYK, not YCCK
#   ycck-swop.jpg         the corpus's Photoshop YCCK (pil_sample_cmyk.jpg) with Ghostscript's SWOP CMYK
#                         profile inserted (3 APP2 chunks), pixels untouched; only if the corpus is present
#   large.avif            the 12 MP picture through avifenc (libavif, aom), speed 8
#   grid.avif             2048x1536 as a 2x2 grid (avifenc --grid)
#   hdr-pq.avif, hdr-hlg.avif
#                         the 2 MP picture as 16-bit BT.2020 PQ / HLG (make_still_inputs.py hdr: SDR white at
#                         203 cd/m2, highlights to 609) through avifenc -d 10 --cicp 9/16/9 / 9/18/9
#   large.heic            the 12 MP picture through heif-enc (x265), with a 320 px thumbnail item as phones write
#   huge-144mp.webp       16000x9000 lossy WebP (Pillow, libwebp)
#   photo-24mp.png        6000x4000 PNG; photo-24mp-adam7.png the same, Adam7-interlaced (ffmpeg -flags +ildct)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/bench/work/stills}"
mkdir -p "$out"
py=/usr/bin/python3
make_inputs="$py $root/scripts/make_still_inputs.py"
corpus="${FLIPBOOK_CORPUS:-$(dirname "$root")/shared/corpus}"
have() { [ -s "$out/$1" ]; }

have display-p3.icc || $make_inputs icc "$out/display-p3.icc" display-p3
have adobe-rgb.icc || $make_inputs icc "$out/adobe-rgb.icc" adobe-rgb
have photo-12mp.png || $make_inputs photo "$out/photo-12mp.png" 4032 3024
have photo-2mp.png || $make_inputs photo "$out/photo-2mp.png" 1600 1200
have p3.jpg || $make_inputs tag "$out/photo-2mp.png" "$out/display-p3.icc" "$out/p3.jpg"
have adobe-rgb.jpg || $make_inputs tag "$out/photo-2mp.png" "$out/adobe-rgb.icc" "$out/adobe-rgb.jpg"
if ! have cmyk-profile.jpg; then
  $make_inputs photo "$out/photo-24mp-src.png" 6000 4000
  $make_inputs cmyk "$out/photo-24mp-src.png" "$root/Sources/CFlipbookProfiles/cmyk.icm" "$out/cmyk-profile.jpg"
fi
swop=/usr/share/color/icc/ghostscript/default_cmyk.icc
if ! have ycck-swop.jpg && [ -f "$corpus/jpeg/pillow/pil_sample_cmyk.jpg" ] && [ -f "$swop" ]; then
  $make_inputs embed "$corpus/jpeg/pillow/pil_sample_cmyk.jpg" "$swop" "$out/ycck-swop.jpg"
fi
have large.avif || avifenc -s 8 -j 2 --min 18 --max 28 "$out/photo-12mp.png" "$out/large.avif" >/dev/null
if ! have grid.avif; then
  ffmpeg -v error -y -i "$out/photo-12mp.png" -vf scale=2048:1536 "$out/grid-src.png"
  avifenc -s 8 -j 2 --min 18 --max 28 --grid 2x2 "$out/grid-src.png" "$out/grid.avif" >/dev/null
fi
for t in pq:16 hlg:18; do
  if ! have "hdr-${t%:*}.avif"; then
    $make_inputs hdr "$out/photo-2mp.png" "${t%:*}" "$out/hdr-src.png"
    avifenc -s 8 -j 2 -d 10 --min 10 --max 20 --cicp "9/${t#*:}/9" "$out/hdr-src.png" "$out/hdr-${t%:*}.avif" >/dev/null
    rm -f "$out/hdr-src.png"
  fi
done
have large.heic || heif-enc -q 70 -t 320 "$out/photo-12mp.png" -o "$out/large.heic" >/dev/null
if ! have huge-144mp.webp; then
  $make_inputs photo "$out/huge-src.png" 16000 9000
  $make_inputs webp "$out/huge-src.png" "$out/huge-144mp.webp"
  rm -f "$out/huge-src.png"
fi
have photo-24mp.png || { [ -s "$out/photo-24mp-src.png" ] || $make_inputs photo "$out/photo-24mp-src.png" 6000 4000; $make_inputs png "$out/photo-24mp-src.png" "$out/photo-24mp.png"; }
have photo-24mp-adam7.png || ffmpeg -v error -y -i "$out/photo-24mp.png" -flags +ildct -pix_fmt rgb24 "$out/photo-24mp-adam7.png"
rm -f "$out/photo-24mp-src.png"
ls -la "$out"
