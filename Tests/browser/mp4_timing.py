#!/usr/bin/python3
"""Checks the timing of MP4s made from animations against references that are not Flipbook's.

  mp4_timing.py [--no-browser] SRC MP4 [SRC MP4 ...]

For each pair, the animation's own timeline comes from ffmpeg's GIF reader for a GIF and from Pillow for
animated WebP and APNG (durations as stored, then the browsers' rule: 10 ms or less plays as 100 ms). Of the MP4 it checks, within 1 ms:
- ffprobe's packets (ffmpeg 5.1's MP4 reader): every packet has a duration, each starts on one of the
  animation's frame boundaries (but for those that repeat the last frame's picture within its stay), they
  add up to its total, and the last ends at the total. Each starts where the one before ends, where ffmpeg
  5.1 can say so: in a stream without composition offsets (`ctts`, B-frames) it reads each sample's own
  duration; with them it reads none and gives every packet one duration from the H.264 timing info, which
  must then be the same for all (the average frame: durations that add up to the total);
- the sample table, read here as a browser reads it (`stts` decode times, `ctts` offsets, the edit list's
  start): each sample is shown from the end of the one before, from 0 to the total, starting on the
  animation's frame boundaries (and the repeats of the last picture);
- the boxes, read here: mvhd, every mdhd and tkhd, and the edit list end at the total;
- `ffmpeg -c copy` into Matroska and an ffmpeg re-encode to MP4 keep the total;
- Chromium (headless, over the DevTools protocol) plays it: readyState reaches 2 or more, its duration
  is the total, and with `loop` set playback wraps from the end to the start.
One line per check ("ok ..." / "FAIL ..."), then "passed N failed M"; exit status 1 if any failed.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Checks  # noqa: E402

from PIL import Image  # noqa: E402

TOLERANCE_MS = 1.0


def reference_timeline(path):
    """Frame start times and the total, in ms, as a browser plays the file. GIF: ffmpeg's GIF reader,
    whose rule for short delays is the browsers' (under 2 cs plays as 10 cs); else Pillow's stored
    durations with that rule."""
    if open(path, "rb").read(3) == b"GIF":
        packets = probe_packets(path)
        if packets:
            return [p[0] for p in packets], packets[-1][0] + packets[-1][1]
    starts, t = [], 0
    with Image.open(path) as im:
        # An APNG's default image (an IDAT before any fcTL) is not part of the animation, for browsers
        # and the APNG specification; Pillow shows it as frame 0.
        first = 1 if im.info.get("default_image") else 0
        for i in range(first, getattr(im, "n_frames", 1)):
            im.seek(i)
            im.load()  # Pillow fills in a WebP frame's duration when it decodes it
            stored = int(im.info.get("duration", 0) or 0)
            starts.append(t)
            t += 100 if stored <= 10 else stored
    return starts, t


def probe_packets(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                          "packet=pts_time,duration_time", "-of", "json", path],
                         check=True, capture_output=True, text=True).stdout
    packets = []
    for p in json.loads(out).get("packets", []):
        pts = float(p.get("pts_time", "nan")) * 1000
        duration = float(p.get("duration_time", "0") or 0) * 1000
        packets.append((pts, duration))
    return sorted(packets)


def guessed_rate(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=r_frame_rate",
                          "-of", "csv=p=0", path], check=True, capture_output=True, text=True).stdout.strip()
    num, _, den = out.partition("/")
    return int(num or 0), int(den or 1)


def probe_duration(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path],
                         check=True, capture_output=True, text=True).stdout.strip()
    return float(out) * 1000


def boxes(data, start, end):
    at = start
    while at + 8 <= end:
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[at + 8:at + 16])[0]
            header = 16
        elif size == 0:
            size = end - at
        if size < header:
            return
        yield kind.decode("latin-1"), at + header, at + size
        at += size


def box_durations(path):
    """(name, ms) for mvhd, each tkhd, mdhd and elst (sum of its segments), read from the file's boxes."""
    data = open(path, "rb").read()
    found = []
    moov = next(((s, e) for k, s, e in boxes(data, 0, len(data)) if k == "moov"), None)
    if moov is None:
        return found
    movie_scale = None
    for kind, s, e in boxes(data, *moov):
        if kind == "mvhd":
            v = data[s]
            scale, duration = (struct.unpack(">IQ", data[s + 20:s + 32]) if v == 1
                               else struct.unpack(">II", data[s + 12:s + 20]))
            movie_scale = scale
            found.append(("mvhd", duration * 1000 / scale))
        if kind != "trak":
            continue
        for tk, ts, te in boxes(data, s, e):
            if tk == "tkhd" and movie_scale:
                v = data[ts]
                duration = struct.unpack(">Q", data[ts + 28:ts + 36])[0] if v == 1 else struct.unpack(">I", data[ts + 20:ts + 24])[0]
                found.append(("tkhd", duration * 1000 / movie_scale))
            if tk == "edts" and movie_scale:
                for ek, es, ee in boxes(data, ts, te):
                    if ek == "elst":
                        v, count = data[es], struct.unpack(">I", data[es + 4:es + 8])[0]
                        total, at = 0, es + 8
                        for _ in range(count):
                            if v == 1:
                                seg, media = struct.unpack(">Qq", data[at:at + 16]); at += 20
                            else:
                                seg, media = struct.unpack(">Ii", data[at:at + 8]); at += 12
                            if media != -1:
                                total += seg
                        found.append(("elst", total * 1000 / movie_scale))
            if tk == "mdia":
                for mk, ms, me in boxes(data, ts, te):
                    if mk == "mdhd":
                        v = data[ms]
                        scale, duration = (struct.unpack(">IQ", data[ms + 20:ms + 32]) if v == 1
                                           else struct.unpack(">II", data[ms + 12:ms + 20]))
                        found.append(("mdhd", duration * 1000 / scale))
    return found


def sample_times(path):
    """Presentation start of every sample (ms, sorted) and the end of the edit list, from the boxes alone:
    stts decode times plus ctts offsets minus the edit list's media time; None without a sample table.
    Also whether the table has composition offsets."""
    data = open(path, "rb").read()

    def child(start, end, name):
        return next(((s, e) for k, s, e in boxes(data, start, end) if k == name), None)

    moov = child(0, len(data), "moov")
    mvhd = moov and child(*moov, "mvhd")
    trak = moov and child(*moov, "trak")
    mdia = trak and child(*trak, "mdia")
    mdhd = mdia and child(*mdia, "mdhd")
    stbl = mdia and child(*mdia, "minf")
    stbl = stbl and child(*stbl, "stbl")
    stts = stbl and child(*stbl, "stts")
    if not (mvhd and mdhd and stts):
        return None
    v = data[mdhd[0]]
    scale = struct.unpack(">I", data[mdhd[0] + (20 if v == 1 else 12):][:4])[0]
    v = data[mvhd[0]]
    movie_scale = struct.unpack(">I", data[mvhd[0] + (20 if v == 1 else 12):][:4])[0]
    dts, t = [], 0
    count = struct.unpack(">I", data[stts[0] + 4:stts[0] + 8])[0]
    for i in range(count):
        n, delta = struct.unpack(">II", data[stts[0] + 8 + 8 * i:stts[0] + 16 + 8 * i])
        for _ in range(n):
            dts.append(t)
            t += delta
    offsets = [0] * len(dts)
    ctts = child(*stbl, "ctts")
    if ctts:
        version, at, k = data[ctts[0]], ctts[0] + 8, 0
        for _ in range(struct.unpack(">I", data[ctts[0] + 4:ctts[0] + 8])[0]):
            n, offset = struct.unpack(">Ii" if version == 1 else ">II", data[at:at + 8])
            at += 8
            for _ in range(n):
                if k < len(offsets):
                    offsets[k] = offset
                k += 1
    media_start, edit_end = 0, None
    edts = child(*trak, "edts")
    elst = edts and child(*edts, "elst")
    if elst:
        version, at = data[elst[0]], elst[0] + 8
        for _ in range(struct.unpack(">I", data[elst[0] + 4:elst[0] + 8])[0]):
            segment, media = struct.unpack(">Qq", data[at:at + 16]) if version == 1 else struct.unpack(">Ii", data[at:at + 8])
            at += 20 if version == 1 else 12
            if media != -1:
                media_start, edit_end = media, (edit_end or 0) + segment * 1000 / movie_scale
    starts = sorted((d + o - media_start) * 1000 / scale for d, o in zip(dts, offsets))
    return starts, edit_end, bool(ctts)


def check_file(checks, src, mp4, work):
    name = os.path.basename(src)
    starts, total = reference_timeline(src)
    # One frame throughout is written as two samples (a one-sample MP4 never plays in Chromium), split
    # halfway: the only start that is not one of the animation's own.
    boundaries = set(starts) | ({total / 2} if len(starts) == 1 else set())

    def off_timeline(times):
        """Starts on no frame boundary, but for those within the last frame's stay (samples that repeat
        the last picture, so that a B-frame stream's packets, as ffmpeg 5.1 reads them, end at the end)."""
        off = [t for t in times if min(abs(t - b) for b in boundaries) > TOLERANCE_MS]
        return [t for t in off if not starts[-1] < t < total]

    table = sample_times(mp4)
    checks.check(table is not None, f"{name}: the MP4 has a sample table")
    reordered = bool(table and table[2])
    if table:
        shown, edit_end, _ = table
        end = edit_end if edit_end is not None else total
        spans = list(zip(shown, shown[1:] + [end]))
        checks.check(abs(shown[0]) <= TOLERANCE_MS and abs(end - total) <= TOLERANCE_MS and all(b > a for a, b in spans),
                     f"{name}: the sample table shows samples from 0 to {end:.1f} ms one after another, the animation {total} ms")
        off = off_timeline(shown)
        checks.check(not off, f"{name}: the sample table's samples start on the animation's frame boundaries {off[:3]}")
    packets = probe_packets(mp4)
    checks.check(len(packets) >= 2, f"{name}: {len(packets)} packets (a player needs two to advance)")
    zero = [p for p in packets if p[1] <= 0]
    checks.check(not zero, f"{name}: every packet has a duration ({len(zero)} without)")
    if reordered and len({round(p[1], 3) for p in packets}) <= 1 and packets:
        # ffmpeg 5.1 reads no sample's own duration from a stream with composition offsets: it gives all one,
        # from the H.264 timing info. Then the starts cannot follow from the durations; the sample table
        # (checked above) holds them, and the durations must add up to the total (below) and end there.
        last = packets[-1]
        checks.check(abs(last[0] + last[1] - total) <= TOLERANCE_MS,
                     f"{name}: the last packet ends at {last[0] + last[1]:.1f} ms, the animation {total} ms")
    else:
        gaps = [(a, b) for a, b in zip(packets, packets[1:]) if abs(a[0] + a[1] - b[0]) > TOLERANCE_MS]
        checks.check(not gaps, f"{name}: each packet starts where the one before ends {gaps[:2]}")
    off = off_timeline([p[0] for p in packets])
    checks.check(not off, f"{name}: packets start on the animation's frame boundaries {off[:3]}")
    summed = sum(p[1] for p in packets)
    checks.check(abs(summed - total) <= TOLERANCE_MS, f"{name}: packet durations add up to {summed:.1f} ms, the animation {total} ms")
    for box, ms in box_durations(mp4):
        checks.check(abs(ms - total) <= TOLERANCE_MS, f"{name}: {box} says {ms:.1f} ms, the animation {total} ms")
    mkv = os.path.join(work, name + ".mkv")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", mp4, "-c", "copy", mkv], check=True)
    # Matroska's packets carry its DefaultDuration, not their own; its segment Duration is what it kept.
    copied = probe_duration(mkv)
    checks.check(abs(copied - total) <= TOLERANCE_MS, f"{name}: -c copy to Matroska lasts {copied:.1f} ms")
    # ffmpeg 5.1 re-encodes into MP4 at a constant rate: the r_frame_rate it guesses for the input (from
    # the first stts entries, or its "standard rate" search). Where every frame starts on a tick of that
    # rate, the re-encode must last as long as the animation; where it does not (a 100 ms frame among
    # 1000 ms ones guessed as 2 fps), no constant rate ffmpeg picks can, for our file or its own recipe's.
    again = os.path.join(work, name + ".reencoded.mp4")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", mp4, "-c:v", "libx264", "-preset", "ultrafast", again], check=True)
    reencoded = probe_duration(again)
    num, den = guessed_rate(mp4)
    on_ticks = num > 0 and all(abs(b * num / den / 1000 - round(b * num / den / 1000)) < 1e-6 for b in [*boundaries, total])
    if on_ticks:
        checks.check(abs(reencoded - total) <= TOLERANCE_MS, f"{name}: an ffmpeg re-encode at its {num}/{den} fps lasts {reencoded:.1f} ms")
    else:
        print(f"note {name}: ffmpeg guesses {num}/{den} fps, on whose ticks the frames do not start; its re-encode lasts {reencoded:.1f} ms")
    return total


PAGE_SCRIPT = """
(async () => {
  const v = document.createElement('video');
  v.muted = true; v.loop = true; v.preload = 'auto';
  document.body.appendChild(v);
  const outcome = {};
  const until = (test, ms) => new Promise(resolve => {
    const started = performance.now();
    const tick = () => { if (test()) resolve(true); else if (performance.now() - started > ms) resolve(false); else setTimeout(tick, 10); };
    tick();
  });
  v.src = %s;
  outcome.loaded = await until(() => v.readyState >= 2 || v.error, 20000);
  outcome.readyState = v.readyState;
  outcome.error = v.error ? v.error.message || String(v.error.code) : null;
  outcome.duration = v.duration * 1000;
  if (v.readyState >= 2) {
    const from = Math.max(0, v.duration - 0.25);
    v.currentTime = from;
    await until(() => !v.seeking, 10000);
    // A loop is a seek to the start: Chromium fires 'seeked' for it, however short the video.
    let last = v.currentTime, wrapped = false;
    v.addEventListener('seeked', () => { wrapped = true; });
    try { await v.play(); } catch (e) { outcome.error = String(e); }
    outcome.looped = await until(() => {
      const now = v.currentTime;
      if (now + 0.001 < last) wrapped = true;
      last = now;
      return wrapped;
    }, 20000);
    v.pause();
  }
  v.remove();
  return outcome;
})()
"""


def check_browser(checks, pairs, totals):
    from cdp import Browser
    browser = Browser(extra_args=("--autoplay-policy=no-user-gesture-required", "--allow-file-access-from-files"))
    browser.ws.settimeout(120)  # one evaluate waits for loading, a seek and a loop, each up to 20 s
    try:
        page = tempfile.NamedTemporaryFile("w", suffix=".html", delete=False)
        page.write("<!doctype html><body></body>")
        page.close()
        browser.send("Page.enable")
        browser.send("Page.navigate", url="file://" + page.name)
        for _ in range(200):
            if browser.evaluate("document.readyState") == "complete":
                break
        for (src, mp4), total in zip(pairs, totals):
            name = os.path.basename(src)
            outcome = browser.evaluate(PAGE_SCRIPT % json.dumps("file://" + os.path.abspath(mp4)))
            checks.check(outcome.get("readyState", 0) >= 2,
                         f"{name}: Chromium reaches readyState {outcome.get('readyState')} (error {outcome.get('error')})")
            duration = outcome.get("duration") or 0
            checks.check(abs(duration - total) <= TOLERANCE_MS, f"{name}: Chromium's duration {duration:.1f} ms, the animation {total} ms")
            checks.check(bool(outcome.get("looped")), f"{name}: Chromium loops it")
        os.unlink(page.name)
    finally:
        browser.close()


def main():
    args = sys.argv[1:]
    browser = "--no-browser" not in args
    args = [a for a in args if a != "--no-browser"]
    if len(args) < 2 or len(args) % 2:
        print(__doc__, file=sys.stderr)
        return 2
    pairs = list(zip(args[0::2], args[1::2]))
    checks = Checks()
    totals = []
    with tempfile.TemporaryDirectory(prefix="flipbook-mp4-timing-") as work:
        for src, mp4 in pairs:
            totals.append(check_file(checks, src, mp4, work))
    if browser:
        check_browser(checks, pairs, totals)
    print(f"passed {checks.passed} failed {checks.failed}")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
