#!/usr/bin/env python3
"""Chooses GIFTuning's settings by cross-validation: no setting is taken for winning on the GIFs it was chosen on.

  bench/gif_cv.py FLIPBOOK [--dir DIR]... [--variants NAME,NAME...] [--crfs drawn=24-28,shaded=23-27,photo=22-26]
                  [--splits 20] [--seed 46] [--s2-instants 8] [--jobs 2] [--only-encode] [--check-defaults] [--policy NAME:D:S:P]
                  [--skip NAME,NAME...] [--peer-on-reference] [--confidence Z]

GIFs: every one bench/gif2mp4.py finds (scripts/make-bench-gifs.py's, the corpus's animated GIFs of 5 frames or
more) plus every GIF in each --dir (all frames counts), scored against Chromium's rendering (Tests/oracle), the
peer being ffmpeg's `-tune animation` recipe at its default crf 23 (bench/gif2mp4.py's PEER).

A policy is what GIFTuning decides per GIF: the kind of picture (drawn, shaded, photographic: the first frame's
flatness, bench/gif_shape.py) picks a crf, and a variant of the x264 settings (VARIANTS, each GIFTuning's
automatic settings with one change) adds to them. Every GIF is encoded once per variant and per crf of its
kind (`flipbook convert --crf C --x264-params P`, which is what the automatic settings run), timed, and scored:
SSIM (ffmpeg's, yuv444p, all planes) over every 10 ms instant, SSIMULACRA2 at --s2-instants evenly spaced
instants (the same ones for the peer; bench/gif2mp4.py scores every frame pair, this is for choosing).

Cross-validation: --splits random halves of the GIFs (seeded). On each tuning half the policy chosen is the one
with the fewest bytes (geometric mean of the ratio to the peer) among those that meet every target there:
mean SSIM and mean SSIMULACRA2 at least the peer's, no GIF more than 0.005 SSIM under it, none over 1.2x its
bytes (if none meets them all, the one with the fewest misses, each GIF under the SSIM or over the bytes
limit counting as one, then the fewest bytes). With --confidence Z a mean target counts as met on the tuning half
only when the mean of the per-GIF differences is at least Z standard errors above zero (1.28: a one-sided 90%
bound); the held-out half is judged on the plain means. Its figures on the held-out
half are printed per split and summarised (mean, spread, range, how many splits meet each target), with the pooled
held-out means (every GIF of every held-out half, at the policy chosen without it: the cross-validated estimate of
the mean targets, steadier than one half's mean). Then the policy the same rule picks on every GIF, which is what
GIFTuning ships, with its tuning-half and held-out
geomeans per split (a policy that wins where it was chosen and loses held out shows here), and its five worst
GIFs by bytes, SSIM and SSIMULACRA2 with their shapes.

ffmpeg does not decode every GIF as Chromium does (restore-to-previous frames, transparent pixels shown in the
palette's colour instead of the page's white): each GIF's own ffmpeg decode, kept losslessly, is scored like an
encode, and those under MISDECODE_SSIM are listed. There the peer encodes a different picture, and its bytes and
scores say nothing about ours at the same look; --peer-on-reference gives its recipe Chromium's frames of those
GIFs instead (reference_video), so that every comparison is of one picture.

Caches (bench/work/, safe to delete): Chromium's frames per GIF (refs/), every scored encode keyed by the GIF's
hash, the flipbook binary's size and mtime (or ffmpeg's), the command and the S2 instants (cv-scores.json).
Long: run under `nice`. --only-encode fills the cache and stops; --no-encode analyses the cache as it is; --policy scores one given policy only; --skip
leaves out GIFs by file name (each is listed as excluded); --check-defaults also converts every GIF with flipbook's
defaults and checks that `base` at the shipped crfs gives the same bytes (that VARIANTS mirrors GIFTuning).
"""
import concurrent.futures
import hashlib
import itertools
import json
import math
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "oracle"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import gif2mp4  # noqa: E402
import gif_shape  # noqa: E402

WORK = os.path.join(ROOT, "bench", "work")
REFS = os.path.join(WORK, "refs")
KINDS = ("drawn", "shaded", "photo")
SHIPPED_CRFS = {"drawn": 28, "shaded": 27, "photo": 25}  # GIFTuning.Kind.crf
MISDECODE_SSIM = 0.99  # ffmpeg's lossless decode of a GIF under this SSIM against Chromium's: not the same picture

# GIFTuning.automatic as it ships (the Swift source is the authority; --check-defaults compares bytes), and the
# variants measured against it. Each variant is a function of (kind, input bytes, pixels x frames) -> x264 params.
ANALYSIS_BUDGET = 256 << 10
SEARCH_BUDGET = 2 << 20


def base_params(kind, input_bytes, pixel_frames, cqo=-4, qcomp_drawn=0.75, flat=True, exhaustive=True, merange=None, refs=8,
                subme=10, trellis=2, parts="all", extra=""):
    analysis = ""
    if input_bytes <= ANALYSIS_BUDGET:
        analysis = "subme=9:trellis=2" if kind == "photo" or not flat else f"subme={subme}:trellis={trellis}:ref={refs}:partitions={parts}"
        search_range = merange or {"drawn": 24, "shaded": 16}.get(kind)
        search = f"me=esa:merange={search_range}" if exhaustive and kind != "photo" and pixel_frames <= SEARCH_BUDGET else "me=umh"
        analysis = search + ":" + analysis
    curve = f"qcomp={qcomp_drawn}" if kind == "drawn" and qcomp_drawn != 0.6 else ""
    chroma = f"chroma-qp-offset={cqo}" if cqo is not None else ""
    return ":".join(p for p in (analysis, curve, chroma, extra) if p)


VARIANTS = {
    "base": lambda k, b, pf: base_params(k, b, pf),
    "cqo-2": lambda k, b, pf: base_params(k, b, pf, cqo=None),
    "cqo-3": lambda k, b, pf: base_params(k, b, pf, cqo=-3),
    "qcomp0.6": lambda k, b, pf: base_params(k, b, pf, qcomp_drawn=0.6),
    "psy0.2": lambda k, b, pf: base_params(k, b, pf, extra="psy-rd=0.2,0"),
    "psy0.6": lambda k, b, pf: base_params(k, b, pf, extra="psy-rd=0.6,0"),
    "aq0.4": lambda k, b, pf: base_params(k, b, pf, extra="aq-strength=0.4"),
    "aq0.8": lambda k, b, pf: base_params(k, b, pf, extra="aq-strength=0.8"),
    "bf3": lambda k, b, pf: base_params(k, b, pf, extra="bframes=3"),
    "no-analysis": lambda k, b, pf: base_params(k, 1 << 40, pf),
    # The motion search and references (base: esa over 24 pixels for drawn GIFs, 16 for shaded, 8 references).
    "esa32-ref16": lambda k, b, pf: base_params(k, b, pf, merange=32, refs=16),  # shipped until 2026-11-29
    "esa32": lambda k, b, pf: base_params(k, b, pf, merange=32),
    "esa24": lambda k, b, pf: base_params(k, b, pf, merange=24),
    "esa16": lambda k, b, pf: base_params(k, b, pf, merange=16),
    "esa16-ref16": lambda k, b, pf: base_params(k, b, pf, merange=16, refs=16),
    "ref16": lambda k, b, pf: base_params(k, b, pf, refs=16),
    "ref4": lambda k, b, pf: base_params(k, b, pf, refs=4),
    "no-esa": lambda k, b, pf: base_params(k, b, pf, exhaustive=False),
    "no-esa-ref16": lambda k, b, pf: base_params(k, b, pf, exhaustive=False, refs=16),
    # The analysis of drawn and shaded GIFs.
    "subme9": lambda k, b, pf: base_params(k, b, pf, subme=9),
    "subme9-trellis1": lambda k, b, pf: base_params(k, b, pf, subme=9, trellis=1),
    "no-p4x4": lambda k, b, pf: base_params(k, b, pf, parts="p8x8,b8x8,i8x8,i4x4"),
    # The loop filter: x264's -tune animation raises it to 1:1 (smoother, fewer blocks); SSIMULACRA2 prefers less.
    "deblock0": lambda k, b, pf: base_params(k, b, pf, extra="deblock=0,0"),
    "deblock0-1": lambda k, b, pf: base_params(k, b, pf, extra="deblock=0,0" if k == "drawn" else "deblock=-1,-1"),
}


def take_option(argv, name, default):
    """The value after `name` in argv, taking both out; `default` when it is not there."""
    if name in argv:
        i = argv.index(name)
        value = argv[i + 1]
        del argv[i:i + 2]
        return value
    return default


def bench_gifs(dirs):
    """Every GIF of the set: scripts/make-bench-gifs.py's (made into bench/work/gifs), bench/gif2mp4.py's corpus
    GIFs, and every GIF in each of `dirs`."""
    made = os.path.join(WORK, "gifs")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make-bench-gifs.py"), made], check=True, capture_output=True)
    gifs = sorted(os.path.join(made, f) for f in os.listdir(made) if f.endswith(".gif")) + gif2mp4.corpus_gifs()
    for d in dirs:
        gifs += sorted(os.path.join(d, f) for f in os.listdir(d) if f.lower().endswith(".gif"))
    return gifs


def kind_of(flatness):
    """GIFTuning.Kind of a first frame's flatness."""
    return "drawn" if flatness >= 0.9 else "shaded" if flatness >= 0.5 else "photo"


def mean_sd(values):
    """The mean and the sample standard deviation (0 for fewer than two values)."""
    n = len(values)
    mean = sum(values) / n
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0


def parse_range(text):
    a, _, b = text.partition("-")
    return list(range(int(a), int(b or a) + 1))


def program_stamp(program):
    path = program if os.path.isfile(program) else shutil.which(program)
    st = os.stat(path)
    return f"{st.st_size}:{st.st_mtime_ns}"


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:32]


def s2_sampled(ref, video, instants):
    """Mean SSIMULACRA2 of the reference and the video at `instants` evenly spaced instants (frame on screen at
    each, the video's last frame held), and SSIM over every 10 ms instant: (ssim, s2)."""
    import gif_score
    vframes, vtimes = gif_score.video_frames(video, ref.width, ref.height)
    counts = gif_score.pairs(ref, vtimes)
    ssim = gif_score.ssim(ref, vframes, counts)["ssim"]
    total, scores = ref.total_ms, []
    for j in range(instants):
        t = int((j + 0.5) * total / instants) // 10 * 10
        vi = 0
        while vi + 1 < len(vtimes) and vtimes[vi + 1] <= t + 1e-6:
            vi += 1
        scores.append(gif_score.ssimulacra2(ref.frames[ref.index_at(t)], vframes[vi]))
    return ssim, sum(scores) / len(scores)


def reference_video(ref, folder):
    """Chromium's frames of a GIF as a lossless NUT file with each frame's time: what the peer's recipe reads as
    {reference} when it cannot decode the GIF itself. The frames go in as PPM files through the concat demuxer,
    each read at 1000 fps (the image demuxer's 25 fps would round every duration to 40 ms), and come out as
    rawvideo in NUT; the command then gives the encoder the frame rate ffmpeg's GIF reader reports
    (`-r {rate}`, guessed_rate), as it would have from the GIF: the rate x264 is told changes its frame types and
    rate control (giflib's welcome2.gif, one picture a second, took 8,020 B told 1000 fps and 23,645 B told 1 fps,
    against 23,818 B from the GIF itself), and the ticks it rounds each time to are the peer's own."""
    lines = ["ffconcat version 1.0"]
    for i, (frame, ms) in enumerate(zip(ref.frames, ref.durations)):
        name = f"f{i}.ppm"
        with open(os.path.join(folder, name), "wb") as f:
            f.write(b"P6 %d %d 255\n" % (frame.shape[1], frame.shape[0]) + frame.tobytes())
        lines += [f"file {name}", "option framerate 1000", f"duration {ms / 1000:.3f}"]
    listing, video = os.path.join(folder, "frames.ffconcat"), os.path.join(folder, "frames.nut")
    with open(listing, "w") as f:
        f.write("\n".join(lines) + "\n")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "concat", "-safe", "0", "-i", listing, "-fps_mode", "passthrough",
                    "-c:v", "rawvideo", "-f", "nut", video], check=True)
    return video


def guessed_rate(gif):
    """The frame rate ffmpeg's GIF reader reports for a GIF (r_frame_rate), which the ffmpeg command line makes
    the encoder's: x264 is told it, and every timestamp is rounded to its ticks."""
    return subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=r_frame_rate",
                           "-of", "csv=p=0", gif], capture_output=True, text=True, check=True).stdout.strip()


def job(args):
    """Encode (timed) and score one GIF with one command; runs in a worker process. A command that reads
    {reference} gets Chromium's frames of the GIF instead of the GIF (reference_video)."""
    from gif_reference import Reference
    gif, cmd, instants, key = args
    ref = Reference.cached(gif, "browser", None, REFS)
    with tempfile.TemporaryDirectory(prefix="flipbook-cv-") as tmp:
        out = os.path.join(tmp, "out.mp4")
        reference, rate = (reference_video(ref, tmp), guessed_rate(gif)) if "{reference}" in cmd else ("", "")
        start = time.perf_counter()
        run = subprocess.run(cmd.format(**{"in": shlex.quote(gif), "out": shlex.quote(out), "reference": shlex.quote(reference),
                                           "rate": rate}), shell=True, capture_output=True)
        seconds = time.perf_counter() - start
        if run.returncode != 0 or not os.path.exists(out):
            return key, None
        ssim, s2 = s2_sampled(ref, out, instants)
        return key, [os.path.getsize(out), ssim, s2, seconds]


def check_shipped(flipbook, gifs, facts):
    """`base` at SHIPPED_CRFS against `flipbook convert` with no settings, byte for byte, on every GIF: whether this
    file's mirror of GIFTuning.automatic is what the Swift code does."""
    work = tempfile.mkdtemp(prefix="flipbook-cv-check-")
    try:
        differ = []
        for gif in gifs:
            f = facts[gif]
            crf = SHIPPED_CRFS[f["kind"]]
            sizes = []
            for i, extra in enumerate((["--crf", str(crf), "--x264-params", VARIANTS["base"](f["kind"], f["bytes"], f["pixel_frames"])], [])):
                out = os.path.join(work, f"{i}.mp4")
                subprocess.run([flipbook, "convert", gif, "-o", out, "--jobs", "1"] + extra, check=True, capture_output=True)
                sizes.append(os.path.getsize(out))
                os.remove(out)
            if sizes[0] != sizes[1]:
                differ.append(f"{os.path.basename(gif)} ({f['kind']}): base {sizes[0]} B, defaults {sizes[1]} B")
        print(f"--check-defaults: base at {SHIPPED_CRFS} matches flipbook's defaults byte for byte on "
              f"{len(gifs) - len(differ)} of {len(gifs)} GIFs" + "".join(f"\n  differs: {d}" for d in differ), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    argv = sys.argv[1:]

    def option(name, default):
        return take_option(argv, name, default)
    dirs = []
    while "--dir" in argv:
        dirs.append(option("--dir", None))
    variant_names = option("--variants", "base").split(",")
    crf_text = option("--crfs", "drawn=24-28,shaded=23-27,photo=22-26")
    crfs = {k: parse_range(v) for k, v in (p.split("=") for p in crf_text.split(","))}
    splits = int(option("--splits", "20"))
    seed = int(option("--seed", "46"))
    instants = int(option("--s2-instants", "8"))
    jobs = int(option("--jobs", "2"))
    only_encode = "--only-encode" in argv
    no_encode = "--no-encode" in argv  # analyse what the cache holds; GIFs missing a row are left out
    check_defaults = "--check-defaults" in argv
    fixed_policy = option("--policy", None)
    peer_on_reference = "--peer-on-reference" in argv
    confidence = float(option("--confidence", "0"))
    skip = set(option("--skip", "").split(",")) - {""}
    argv = [a for a in argv if a not in ("--only-encode", "--no-encode", "--check-defaults", "--peer-on-reference")]
    flipbook = os.path.abspath(argv[0])

    gifs = bench_gifs(dirs)

    # References first, in one browser; GIFs Chromium cannot decode or too small for SSIM are left out.
    from gif_reference import Browser, Reference
    browser, usable = None, []
    excluded = [(g, "left out (--skip)") for g in gifs if os.path.basename(g) in skip]
    gifs = [g for g in gifs if os.path.basename(g) not in skip]

    def start():
        nonlocal browser
        browser = Browser()
        return browser
    try:
        for gif in gifs:
            try:
                ref = Reference.cached(gif, "browser", None, REFS, lambda: browser or start())
            except Exception as error:
                excluded.append((gif, f"Chromium does not decode it ({str(error)[:60]})"))
                continue
            if ref.width < 8 or ref.height < 8:
                excluded.append((gif, f"{ref.width}x{ref.height}: under 8 px a side"))
                continue
            usable.append(gif)
            print(f"reference {len(usable)}/{len(gifs)}: {os.path.basename(gif)}", file=sys.stderr, flush=True)
    finally:
        if browser:
            browser.close()

    facts = {}
    for gif in usable:
        s = gif_shape.shape(gif)
        f = gif_shape.flatness(gif)
        kind = kind_of(f)
        facts[gif] = {"kind": kind, "bytes": os.path.getsize(gif), "pixel_frames": s["width"] * s["height"] * s["frames"],
                      "shape": gif_shape.describe(s), "flatness": f}

    scores_path = os.path.join(WORK, "cv-scores.json")
    scores = json.load(open(scores_path)) if os.path.exists(scores_path) else {}
    fb_stamp, ff_stamp = program_stamp(flipbook), program_stamp("ffmpeg")
    peer_cmd = "ffmpeg -v error -y -i {in} " + " ".join(shlex.quote(a) for a in gif2mp4.PEER) + " {out}"

    def command(gif, variant, crf):
        f = facts[gif]
        params = VARIANTS[variant](f["kind"], f["bytes"], f["pixel_frames"])
        return f"{shlex.quote(flipbook)} convert {{in}} -o {{out}} --jobs 1 --crf {crf}" + (
            f" --x264-params {shlex.quote(params)}" if params else "")

    def key(gif, cmd, stamp):
        return f"{sha(gif)}|{stamp}|{instants}|{cmd.replace(flipbook, 'FLIPBOOK')}"

    # ffmpeg's own decode of each GIF, kept losslessly, scored like an encode: where it is not Chromium's picture
    # (restore-to-previous frames, transparency shown as the palette's colour), the peer encodes something else.
    # Timed in the GIF reader's own 1/100 s (-enc_time_base -1): not in the encoder's ticks of the guessed frame
    # rate, which move frames (pillow's dispose_prev.gif: 100 ms then 1 s each, guessed 2 fps; a mis-timing the
    # peer's recipe has, but not a decoding one).
    decode_cmd = "ffmpeg -v error -y -i {in} -fps_mode passthrough -enc_time_base -1 -c:v libx264rgb -qp 0 -pix_fmt rgb24 -an {out}"
    reference_cmd = peer_cmd.replace("-i {in}", "-i {reference} -r {rate}")
    wanted = {}
    for gif in usable:
        wanted[(gif, "peer", 0)] = key(gif, peer_cmd, ff_stamp), peer_cmd
        wanted[(gif, "decode", 0)] = key(gif, decode_cmd, ff_stamp), decode_cmd
        wanted[(gif, "peer-on-reference", 0)] = key(gif, reference_cmd, ff_stamp), reference_cmd
        for variant in variant_names:
            for crf in crfs[facts[gif]["kind"]]:
                cmd = command(gif, variant, crf)
                wanted[(gif, variant, crf)] = key(gif, cmd, fb_stamp), cmd
    todo = [] if no_encode else [(gif, cmd, instants, k) for (gif, _, _), (k, cmd) in wanted.items() if k not in scores]
    print(f"{len(usable)} GIFs, {len(wanted)} encodes, {len(todo)} to run", file=sys.stderr, flush=True)

    def save():
        merged = {**(json.load(open(scores_path)) if os.path.exists(scores_path) else {}), **scores}
        tmp = f"{scores_path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(merged, f)
        os.replace(tmp, scores_path)
    done, last_save = 0, time.time()
    with concurrent.futures.ProcessPoolExecutor(jobs) as pool:
        for k, value in pool.map(job, todo, chunksize=1):
            scores[k] = value
            done += 1
            if time.time() - last_save > 30:
                save()
                last_save = time.time()
                print(f"{done}/{len(todo)}", file=sys.stderr, flush=True)
    save()
    if check_defaults:
        check_shipped(flipbook, usable, facts)
    if only_encode:
        return

    results = {}  # gif -> {(variant, crf): (bytes, ssim, s2, seconds)}, "peer": ...
    for (gif, variant, crf), (k, _) in wanted.items():
        if scores.get(k) is not None:
            results.setdefault(gif, {})[(variant, crf)] = scores[k]
    complete = {g for g in usable if all(results.get(g, {}).get((v, c)) is not None
                                         for v in variant_names for c in crfs[facts[g]["kind"]])}
    names = [g for g in usable if ("peer", 0) in results.get(g, {}) and g in complete]
    for gif in usable:
        if gif not in names:
            excluded.append((gif, "the peer failed" if gif in complete else "not every encode is scored yet"))
    misdecoded = sorted((results[g][("decode", 0)][1], g) for g in names
                        if ("decode", 0) in results[g] and results[g][("decode", 0)][1] < MISDECODE_SSIM)
    if peer_on_reference:
        for _, g in misdecoded:
            if results[g].get(("peer-on-reference", 0)) is not None:
                results[g][("peer", 0)] = results[g][("peer-on-reference", 0)]

    policies = []
    if fixed_policy:
        v, d, s, p = fixed_policy.split(":")
        policies.append((v, int(d), int(s), int(p)))
    else:
        for v in variant_names:
            for d, s, p in itertools.product(crfs["drawn"], crfs["shaded"], crfs["photo"]):
                policies.append((v, d, s, p))

    def row(policy, gif):
        v, d, s, p = policy
        crf = {"drawn": d, "shaded": s, "photo": p}[facts[gif]["kind"]]
        return results[gif].get((v, crf))

    def lower_bound(differences, z):
        """The mean of per-GIF differences minus z standard errors (z = 0: the mean)."""
        mean, sd = mean_sd(differences)
        return mean - z * sd / math.sqrt(len(differences)) if z else mean

    def evaluate(policy, subset, z=0.0):
        rows = [(g, row(policy, g), results[g][("peer", 0)]) for g in subset]
        if any(r is None for _, r, _ in rows):
            return None
        n = len(rows)
        geo = math.exp(sum(math.log(r[0] / p[0]) for _, r, p in rows) / n)
        ssim, pssim = sum(r[1] for _, r, _ in rows) / n, sum(p[1] for _, _, p in rows) / n
        s2, ps2 = sum(r[2] for _, r, _ in rows) / n, sum(p[2] for _, _, p in rows) / n
        differences = [(r[1] - p[1], r[2] - p[2]) for _, r, p in rows]
        # With z > 0 (--confidence) a mean target holds only when it holds by z standard errors of the per-GIF
        # differences: a policy that only just meets it on the GIFs it is chosen on meets it on others half the time.
        ssim_short = lower_bound([d[0] for d in differences], z) < 0
        s2_short = lower_bound([d[1] for d in differences], z) < 0
        worst_ssim = min(rows, key=lambda x: x[1][1] - x[2][1])
        worst_bytes = max(rows, key=lambda x: x[1][0] / x[2][0])
        under = sum(r[1] - p[1] < -0.005 for _, r, p in rows)
        over = sum(r[0] / p[0] > 1.2 for _, r, p in rows)
        misses = (ssim < pssim) + (s2 < ps2) + (under > 0) + (over > 0)
        # What the choice minimises first: missed mean targets, and each GIF that misses a per-GIF one (so a
        # GIF no setting can fix does not make every setting alike and let the most bytes-saving one win).
        violations = ssim_short + s2_short + under + over
        return {"geo": geo, "ssim": ssim, "pssim": pssim, "s2": s2, "ps2": ps2, "misses": misses, "violations": violations,
                "worst_ssim": (worst_ssim[0], worst_ssim[1][1] - worst_ssim[2][1]),
                "worst_bytes": (worst_bytes[0], worst_bytes[1][0] / worst_bytes[2][0]),
                "seconds": sum(r[3] for _, r, _ in rows), "peer_seconds": sum(p[3] for _, _, p in rows),
                "differences": differences}

    def choose(subset):
        best = None
        for policy in policies:
            e = evaluate(policy, subset, confidence)
            if e is None:
                continue
            rank = (e["violations"], e["geo"])
            if best is None or rank < best[0]:
                best = (rank, policy, e)
        return best[1], best[2]

    def label(p):
        return f"{p[0]} drawn {p[1]} shaded {p[2]} photo {p[3]}"

    def short(g):
        return gif2mp4.half_name(g) if g.startswith(gif2mp4.CORPUS) else os.path.basename(g)

    print(f"## ffmpeg's own decode against Chromium's: {len(misdecoded)} of {len(names)} GIFs under {MISDECODE_SSIM} SSIM"
          + (", where the peer encodes Chromium's frames instead (--peer-on-reference)" if peer_on_reference else
             ", where the peer encodes what ffmpeg decodes (--peer-on-reference gives it Chromium's frames)") + "\n")
    # The substitute checked where it is not needed: on the GIFs ffmpeg decodes as Chromium does, the peer on
    # Chromium's frames should be the peer on the GIF.
    wrong = {g for _, g in misdecoded}
    same = [(results[g][("peer-on-reference", 0)], results[g][("peer", 0)]) for g in names
            if g not in wrong and results[g].get(("peer-on-reference", 0))]
    if same:
        print(f"The peer on Chromium's frames against the peer on the GIF, on the {len(same)} GIFs ffmpeg decodes as "
              f"Chromium does: {math.exp(sum(math.log(r[0] / p[0]) for r, p in same) / len(same)):.3f}x the bytes "
              f"(range {min(r[0] / p[0] for r, p in same):.2f}x-{max(r[0] / p[0] for r, p in same):.2f}x), SSIM "
              f"{sum(r[1] - p[1] for r, p in same) / len(same):+.4f}, SSIMULACRA2 {sum(r[2] - p[2] for r, p in same) / len(same):+.2f}\n")
    for ssim, g in misdecoded:
        d, r = results[g][("peer", 0)] if not peer_on_reference else None, results[g].get(("peer-on-reference", 0))
        print(f"- {short(g)}: decode SSIM {ssim:.4f} ({facts[g]['shape']}); the peer on Chromium's frames: "
              + (f"{r[0]} B, SSIM {r[1]:.4f}, S2 {r[2]:.2f}" if r else "not scored")
              + (f"; on its own decode: {d[0]} B, SSIM {d[1]:.4f}, S2 {d[2]:.2f}" if d else ""))
    print()

    rng = random.Random(seed)
    held_figures = []
    pooled = []  # (SSIM, S2) difference from the peer of every GIF in every split where it was held out
    print(f"## Cross-validation: {len(names)} GIFs, {splits} random halves (seed {seed}), {len(policies)} policies, "
          f"SSIMULACRA2 at {instants} instants a GIF" + (f", mean targets chosen with {confidence} standard errors to spare"
                                                 if confidence else "") + "\n")
    print("| split | policy chosen on the tuning half | tuning bytes | held-out bytes | held-out SSIM (peer) | "
          "held-out S2 (peer) | worst held-out SSIM | worst held-out bytes | targets met |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in range(splits):
        order = names[:]
        rng.shuffle(order)
        tuning, held = order[:len(order) // 2], order[len(order) // 2:]
        policy, t = choose(tuning)
        h = evaluate(policy, held)
        held_figures.append(h)
        pooled += h["differences"]
        print(f"| {k + 1} | {label(policy)} | {t['geo']:.3f}x | **{h['geo']:.3f}x** | {h['ssim']:.4f} ({h['pssim']:.4f}) | "
              f"{h['s2']:.2f} ({h['ps2']:.2f}) | {short(h['worst_ssim'][0])} {h['worst_ssim'][1]:+.4f} | "
              f"{short(h['worst_bytes'][0])} {h['worst_bytes'][1]:.2f}x | {4 - h['misses']}/4 |", flush=True)
    geos = [h["geo"] for h in held_figures]
    mean = sum(geos) / len(geos)
    sd = math.sqrt(sum((g - mean) ** 2 for g in geos) / max(1, len(geos) - 1))
    print(f"\nheld-out bytes over {splits} splits: mean {mean:.3f}x, sd {sd:.3f}, range {min(geos):.3f}x-{max(geos):.3f}x; "
          f"splits meeting: mean SSIM {sum(h['ssim'] >= h['pssim'] for h in held_figures)}/{splits}, "
          f"mean S2 {sum(h['s2'] >= h['ps2'] for h in held_figures)}/{splits}, "
          f"every GIF within 0.005 SSIM {sum(h['worst_ssim'][1] >= -0.005 for h in held_figures)}/{splits}, "
          f"every GIF at most 1.2x bytes {sum(h['worst_bytes'][1] <= 1.2 for h in held_figures)}/{splits}, "
          f"geomean at most 0.8x {sum(g <= 0.8 for g in geos)}/{splits}")
    # The cross-validated estimate of the mean targets: every held-out GIF of every split, at the policy chosen
    # without it. One half's mean moves by about a standard error with which GIFs fall in it, so a rule that
    # stops where the tuning half just meets a mean target meets it on about half of the held-out halves.
    for i, name in ((0, "SSIM"), (1, "SSIMULACRA2")):
        m, sd = mean_sd([d[i] for d in pooled])
        print(f"pooled held-out {name} against the peer ({len(pooled)} GIF-splits): mean {m:+.4f} "
              f"(one held-out half's standard error {sd / math.sqrt(len(names) - len(names) // 2):.4f})")

    final, everything = choose(names)
    print(f"\nchosen on all {len(names)} GIFs: {label(final)}: {everything['geo']:.3f}x, SSIM {everything['ssim']:.4f} "
          f"({everything['pssim']:.4f}), S2 {everything['s2']:.2f} ({everything['ps2']:.2f}), encode time "
          f"{everything['seconds']:.1f} s ({everything['peer_seconds']:.1f} s the peer's, one process per file)")
    rng = random.Random(seed)
    pairs = []
    for k in range(splits):
        order = names[:]
        rng.shuffle(order)
        tuning, held = order[:len(order) // 2], order[len(order) // 2:]
        pairs.append((evaluate(final, tuning)["geo"], evaluate(final, held)["geo"]))
    print("that policy per split, tuning half / held-out half: " + ", ".join(f"{a:.3f}/{b:.3f}" for a, b in pairs))

    per_gif = [(g, row(final, g), results[g][("peer", 0)]) for g in names]
    print("\nfive worst bytes ratios: " + "; ".join(
        f"{short(g)} {r[0] / p[0]:.2f}x ({facts[g]['shape']}, {facts[g]['kind']})"
        for g, r, p in sorted(per_gif, key=lambda x: -x[1][0] / x[2][0])[:5]))
    print("five worst SSIM deficits: " + "; ".join(
        f"{short(g)} {r[1] - p[1]:+.4f} ({facts[g]['shape']}, {facts[g]['kind']})"
        for g, r, p in sorted(per_gif, key=lambda x: x[1][1] - x[2][1])[:5]))
    print("five worst SSIMULACRA2 deficits: " + "; ".join(
        f"{short(g)} {r[2] - p[2]:+.2f} ({facts[g]['shape']}, {facts[g]['kind']})"
        for g, r, p in sorted(per_gif, key=lambda x: x[1][2] - x[2][2])[:5]))
    for gif, why in excluded:
        print(f"excluded: {short(gif)}: {why}")


if __name__ == "__main__":
    main()
