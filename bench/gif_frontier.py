#!/usr/bin/env python3
"""Bytes at equal quality for each x264 preset: Flipbook's GIF settings at the highest crf that keeps the peer's look.

  bench/gif_frontier.py FLIPBOOK [--presets P,P,...] [--start CRF|P=CRF,...] [--policy PRESET:CRF[:PARAMS]@MP ...]
                        [--peer-presets] [--rounds N] [--only SUBSTR,...] ['NAME::COMMAND' ...]
                        (make bench-gif-frontier runs it with the venv's python)

For each preset (default: ultrafast superfast veryfast faster fast medium slow) Flipbook runs with GIFTuning's
settings made explicit (`--crf C --x264-params chroma-qp-offset=-4`, and at medium also GIFTuning's analysis
settings `me=umh:subme=9:trellis=2` on the GIFs it gives them to, up to 256 KB; GIFTuning itself only applies
at the default preset without --crf). The crf search starts at --start (26, or per preset) and moves by one to the highest crf
at which quality still holds against the peer (bench/gif2mp4.py's `-tune animation` recipe, crf 23, medium) on
bench/gif2mp4.py's GIFs, scored against Chromium's rendering (bench/gif_sweep.py's reference and score caches):
mean SSIM (yuv444p, all planes) >= the peer's, mean SSIMULACRA2 >= the peer's, and no GIF more than 0.01 SSIM
below the peer's. SSIM brackets the crf first (quick); SSIMULACRA2 (slow) is scored only where SSIM holds.

Then one timing pass: per GIF, each chosen setting, Flipbook's default (`convert` with no settings), any
'NAME::COMMAND' given (a shell command with {in} and {out}, scored but not searched), each --policy (the
settings given for GIFs of at least MP million pixels times frames, as Pillow counts them, and the medium
settings above below it: a rule by size that Flipbook could apply) and the peer run one
process each, one at a time, --rounds times (default 2; 0 skips timing), the order rotated every round. One row per setting:
crf, bytes (geometric mean of per-GIF ratios against the peer), mean SSIM, mean SSIMULACRA2, the worst GIF
against the peer, total wall time of ours and of the peer in the same pass, and their ratio. --peer-presets adds
the peer recipe at each preset (its crf 23) as rows scored and timed the same way.
"""
import math
import os
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "oracle"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from gif_reference import Browser, Reference  # noqa: E402
import gif_score  # noqa: E402
import gif2mp4  # noqa: E402
import gif_sweep  # noqa: E402
from gif_cv import take_option as option  # noqa: E402

PRESETS = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow"]
ANALYSIS = "me=umh:subme=9:trellis=2"  # GIFTuning's thorough analysis, medium only
ANALYSIS_BUDGET = 256 << 10  # GIFTuning.analysisBudget
CRF_RANGE = range(12, 41)


class Scorer:
    """Bytes, SSIM, SSIMULACRA2 and encode time of a command on every GIF, through gif_sweep's score cache."""

    def __init__(self, gifs, refs):
        self.gifs, self.refs = gifs, refs
        self.path = os.path.join(gif_sweep.WORK, "scores.json")
        self.scores = gif_sweep.json.load(open(self.path)) if os.path.exists(self.path) else {}
        self.work = tempfile.mkdtemp(prefix="flipbook-frontier-")
        self.dirty = 0

    def one(self, gif, cmd, with_s2):
        keys = [gif_sweep.cache_key(gif, "browser", True, cmd)]
        if not with_s2:
            keys.append(gif_sweep.cache_key(gif, "browser", False, cmd))
        for key in keys:
            if key in self.scores:
                return tuple(self.scores[key])
        out = os.path.join(self.work, "out.mp4")
        if os.path.exists(out):
            os.remove(out)
        t = gif_sweep.run(cmd, gif, out)
        s = gif_score.score(self.refs[gif], out, with_s2)
        row = (os.path.getsize(out), s["ssim"], s["s2"], t)
        self.scores[keys[-1]] = row
        self.dirty += 1
        if self.dirty >= 10:
            self.save()
        return row

    def all(self, command, with_s2):
        """command: a function of the GIF's path giving the shell command."""
        return [self.one(g, command(g), with_s2) for g in self.gifs]

    def save(self):
        if os.path.exists(self.path):  # another sweep may have added rows meanwhile: keep them
            self.scores = {**gif_sweep.json.load(open(self.path)), **self.scores}
        tmp = f"{self.path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            gif_sweep.json.dump(self.scores, f)
        os.replace(tmp, self.path)
        self.dirty = 0


def summary(rows, peer):
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    geo = math.exp(mean([math.log(r[0] / p[0]) for r, p in zip(rows, peer)]))
    deltas = [r[1] - p[1] for r, p in zip(rows, peer)]
    worst = min(range(len(rows)), key=lambda i: deltas[i])
    s2 = mean([r[2] for r in rows]) if all(r[2] is not None for r in rows) else None
    return {"geo": geo, "ssim": mean([r[1] for r in rows]), "s2": s2, "worst": deltas[worst], "worst_i": worst}


def work(gif):
    """Canvas pixels times frames, as Pillow reads the GIF (the logical screen, every image block)."""
    from PIL import Image
    with Image.open(gif) as im:
        return im.size[0] * im.size[1] * getattr(im, "n_frames", 1)


def main():
    argv = sys.argv[1:]
    presets = option(argv, "--presets", ",".join(PRESETS)).split(",")
    starts = dict(kv.split("=") if "=" in kv else ("*", kv) for kv in option(argv, "--start", "26").split(","))
    policies = []
    while "--policy" in argv:
        policies.append(option(argv, "--policy", None))
    rounds = int(option(argv, "--rounds", "2"))
    only = option(argv, "--only", None)
    peer_presets = "--peer-presets" in argv
    argv = [a for a in argv if a != "--peer-presets"]
    flipbook = os.path.abspath(argv[0])
    extra = [a.split("::", 1) for a in argv[1:]]

    made = os.path.join(gif_sweep.WORK, "gifs")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make-bench-gifs.py"), made], check=True,
                   capture_output=True)
    gifs = sorted(os.path.join(made, f) for f in os.listdir(made) if f.endswith(".gif")) + gif2mp4.corpus_gifs()
    if only:
        gifs = [g for g in gifs if any(o in g for o in only.split(","))]
    refs, excluded, browser = {}, [], None

    def open_browser():  # Chromium only when a reference is not cached yet
        nonlocal browser
        browser = Browser()
        return browser
    try:
        for gif in gifs:
            try:
                ref = Reference.cached(gif, "browser", browser, os.path.join(gif_sweep.WORK, "refs"), open_browser)
            except Exception as error:
                excluded.append((gif, f"Chromium does not decode it ({str(error)[:80]})"))
                continue
            if ref.width < 8 or ref.height < 8:
                excluded.append((gif, f"{ref.width}x{ref.height}: under 8 px a side, no SSIM window"))
                continue
            refs[gif] = ref
    finally:
        if browser:
            browser.close()
    gifs = [g for g in gifs if g in refs]
    scorer = Scorer(gifs, refs)

    peer_cmd = "ffmpeg -v error -y -i {in} " + " ".join(shlex.quote(a) for a in gif2mp4.PEER) + " {out}"
    quoted = shlex.quote(flipbook)

    def ours(preset, crf, extra_params=""):
        def command(gif):
            params = "chroma-qp-offset=-4"
            if preset == "medium" and os.path.getsize(gif) <= ANALYSIS_BUDGET:
                params = f"{ANALYSIS}:{params}"
            params = f"{extra_params}:{params}" if extra_params else params
            return f"{quoted} convert {{in}} -o {{out}} --jobs 1 --preset {preset} --crf {crf} --x264-params {params}"
        return command

    def policy(spec):  # PRESET:CRF[:PARAMS]@MP: those settings from MP million pixels x frames, medium's below
        settings, threshold = spec.rsplit("@", 1)
        preset, crf, *params = settings.split(":", 2)
        quick, medium = ours(preset, int(crf), params[0] if params else ""), ours("medium", 26)
        return lambda gif: quick(gif) if work(gif) >= float(threshold) * 1e6 else medium(gif)

    try:
        peer = scorer.all(lambda g: peer_cmd, True)
        base = summary(peer, peer)
        print(f"{len(gifs)} GIFs, reference Chromium; peer: mean SSIM {base['ssim']:.4f}, mean SSIMULACRA2 {base['s2']:.2f}",
              flush=True)

        def holds(s, with_s2):
            ok = s["ssim"] >= base["ssim"] and s["worst"] >= -0.01
            return ok and (not with_s2 or s["s2"] >= base["s2"])

        def check(preset, crf, with_s2):
            s = summary(scorer.all(ours(preset, crf), with_s2), peer)
            print(f"# {preset} crf {crf}: bytes {s['geo']:.3f}, SSIM {s['ssim']:.4f}"
                  + (f", S2 {s['s2']:.2f}" if with_s2 else "")
                  + f", worst {s['worst']:+.4f} ({os.path.basename(gifs[s['worst_i']])}): "
                  + ("holds" if holds(s, with_s2) else "fails"), flush=True)
            return holds(s, with_s2)

        chosen = []  # (name, crf, command)
        for preset in presets:
            crf = int(starts.get(preset, starts.get("*", 26)))  # SSIM first: up while it holds, down until it does
            if check(preset, crf, False):
                while crf + 1 in CRF_RANGE and check(preset, crf + 1, False):
                    crf += 1
            else:
                while crf - 1 in CRF_RANGE and not check(preset, crf - 1, False):
                    crf -= 1
                crf -= 1
            while crf in CRF_RANGE and not check(preset, crf, True):  # then SSIMULACRA2 at that crf and below
                crf -= 1
            if crf in CRF_RANGE:
                chosen.append((preset, crf, ours(preset, crf)))
            else:
                print(f"# {preset}: no crf in {CRF_RANGE.start}-{CRF_RANGE.stop - 1} keeps the peer's quality", flush=True)
        variants = [(f"{p} crf {c}", c, cmd) for p, c, cmd in chosen]
        variants.append(("default", None, lambda g: f"{quoted} convert {{in}} -o {{out}} --jobs 1"))
        variants += [(f"policy {spec}", None, policy(spec)) for spec in policies]
        variants += [(name, None, (lambda c: lambda g: c)(cmd)) for name, cmd in extra]
        if peer_presets:
            variants += [(f"peer {p}", 23, (lambda p: lambda g: peer_cmd.replace("{out}", f"-preset {p} {{out}}"))(p))
                         for p in PRESETS]
        scored = [scorer.all(cmd, True) for _, _, cmd in variants]
    finally:
        scorer.save()

    # Timing: every setting and the peer, one process per file, one at a time, the order rotated each round.
    sides = [("peer", lambda g: peer_cmd)] + [(name, cmd) for name, _, cmd in variants]
    wall = {name: 0.0 for name, _ in sides}
    out = os.path.join(scorer.work, "timed.mp4")
    for gif in gifs if rounds > 0 else []:
        for r in range(rounds):
            k = (r * 3) % len(sides)
            for name, cmd in (sides[k:] + sides[:k])[::(-1 if r % 2 else 1)]:
                if os.path.exists(out):
                    os.remove(out)
                wall[name] += gif_sweep.run(cmd(gif), gif, out) / rounds
    if os.path.exists(out):
        os.remove(out)
    ratio = lambda name: f"{wall[name] / wall['peer']:.2f}x" if rounds > 0 else "-"  # noqa: E731

    load = os.getloadavg()
    print(f"\n{len(gifs)} GIFs, reference Chromium, wall over {rounds} rounds, load average at the end "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print("| setting | crf | bytes (geomean vs peer) | mean SSIM | mean S2 | worst GIF vs peer | wall | peer wall | wall ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| peer (-tune animation, medium) | 23 | 1.000 | {base['ssim']:.4f} | {base['s2']:.2f} | | "
          f"{wall['peer']:.2f} s | {wall['peer']:.2f} s | {ratio('peer')} |")
    for (name, crf, _), rows in zip(variants, scored):
        s = summary(rows, peer)
        print(f"| {name} | {crf if crf is not None else ''} | {s['geo']:.3f} | {s['ssim']:.4f} | {s['s2']:.2f} | "
              f"{s['worst']:+.4f} {os.path.basename(gifs[s['worst_i']])} | {wall[name]:.2f} s | {wall['peer']:.2f} s | "
              f"{ratio(name)} |", flush=True)
    for gif, why in excluded:
        print(f"excluded: {os.path.basename(gif)}: {why}")


if __name__ == "__main__":
    main()
