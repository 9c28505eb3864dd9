#!/usr/bin/env python3
"""Sweeps encoder settings on bench/gif2mp4.py's GIFs, each variant against the peer recipe, in one run.

  bench/gif_sweep.py [--ref pillow|browser] [--s2] [--only SUBSTR[,SUBSTR...]] [--half tuning|held-out] [--dir DIR]
                     [--rows] [--fresh] 'NAME::COMMAND' ...

COMMAND is a shell command with {in} and {out} (e.g. '.build/release/flipbook convert {in} -o {out} --crf 26'
or 'ffmpeg -v error -y -i {in} ... {out}'). Inputs and peer are those of bench/gif2mp4.py; the reference is
Pillow by default (quicker, for sweeping; bench/gif2mp4.py confirms a choice against Chromium). Per variant it
prints the geometric mean of per-GIF byte ratios against the peer, mean SSIM (yuv444p, all planes; and
SSIMULACRA2 with --s2) for the variant and the peer, the largest per-GIF SSIM shortfall and total encode time.
With --rows it also prints each GIF's line. --half keeps one half of bench/gif2mp4.py's split (tune on
`tuning` only); --dir sweeps the GIFs of a folder instead (all held out).

Caches (bench/work/, safe to delete): reference frames per GIF and reference kind (refs/), and each scored
encode per GIF, reference, command and, for a command whose first word is a file (a flipbook binary), that
file's size and mtime (scores.json): re-running a sweep with one new variant encodes only that variant.
Cached rows keep the encode time of the run that made them; --fresh ignores the score cache.
"""
import hashlib
import shutil
import json
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


def run(cmd, src, out):
    start = time.perf_counter()
    r = subprocess.run(cmd.format(**{"in": shlex.quote(src), "out": shlex.quote(out)}), shell=True, capture_output=True)
    if r.returncode != 0:
        raise RuntimeError(f"{cmd}: exit {r.returncode}: {r.stderr.decode()[-300:]}")
    return time.perf_counter() - start


WORK = os.path.join(ROOT, "bench", "work")


def cache_key(gif, kind, with_s2, cmd):
    with open(gif, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:32]
    # The program itself (a path, or a name found on PATH such as ffmpeg): a rebuilt or upgraded binary is a
    # new key, so no score from an earlier run of another build is reused. Leading VAR=value words (an
    # environment for the program) are skipped: the program is the first word after them.
    words = shlex.split(cmd)
    first = next((w for w in words if not ("=" in w and w.split("=", 1)[0].isidentifier())), words[0])
    program = first if os.path.isfile(first) else shutil.which(first)
    stamp = ""
    if program:
        st = os.stat(program)
        stamp = f"{st.st_size}:{st.st_mtime_ns}"
    return f"{digest}|{kind}|{int(with_s2)}|{stamp}|{cmd}"


def main():
    argv = sys.argv[1:]
    kind, with_s2, rows_wanted, only = "pillow", False, False, None
    if "--ref" in argv:
        i = argv.index("--ref")
        kind = argv[i + 1]
        del argv[i:i + 2]
    half, folder = None, None
    if "--half" in argv:
        i = argv.index("--half")
        half = argv[i + 1]
        del argv[i:i + 2]
    if "--dir" in argv:
        i = argv.index("--dir")
        folder = argv[i + 1]
        del argv[i:i + 2]
    if "--only" in argv:
        i = argv.index("--only")
        only = argv[i + 1]
        del argv[i:i + 2]
    with_s2 = "--s2" in argv
    rows_wanted = "--rows" in argv
    variants = [a.split("::", 1) for a in argv if not a.startswith("--")]
    peer_cmd = "ffmpeg -v error -y -i {in} " + " ".join(shlex.quote(a) for a in gif2mp4.PEER) + " {out}"
    made = os.path.join(ROOT, "bench", "work", "gifs")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make-bench-gifs.py"), made], check=True,
                   capture_output=True)
    gifs = sorted(os.path.join(made, f) for f in os.listdir(made) if f.endswith(".gif")) + gif2mp4.corpus_gifs()
    if folder:
        gifs = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.lower().endswith(".gif"))
    elif half:
        gifs = [g for g in gifs if (gif2mp4.half_name(g) in gif2mp4.TUNING) == (half == "tuning")]
    if only:
        gifs = [g for g in gifs if any(o in g for o in only.split(","))]
    fresh = "--fresh" in argv
    argv = [a for a in argv if a != "--fresh"]
    scores_path = os.path.join(WORK, "scores.json")
    scores = {} if fresh or not os.path.exists(scores_path) else json.load(open(scores_path))
    browser = None

    def start():  # Chromium only when a reference is not cached yet
        nonlocal browser
        browser = Browser()
        return browser
    work = tempfile.mkdtemp(prefix="flipbook-sweep-")
    results = {name: [] for name, _ in [("peer", None)] + variants}
    try:
        for i, gif in enumerate(gifs):
            try:
                ref = Reference.cached(gif, kind, None, os.path.join(WORK, "refs"), lambda: browser or start())
            except Exception:
                continue
            if ref.width < 8 or ref.height < 8:
                continue
            row = {}
            for name, cmd in [("peer", peer_cmd)] + variants:
                key = cache_key(gif, kind, with_s2, cmd)
                if key in scores:
                    row[name] = tuple(scores[key])
                    continue
                out = os.path.join(work, f"{i}-{len(row)}.mp4")
                try:
                    t = run(cmd, gif, out)
                except RuntimeError as e:
                    print(f"# {os.path.basename(gif)} {name}: {e}", file=sys.stderr)
                    row = None
                    break
                s = gif_score.score(ref, out, with_s2)
                row[name] = (os.path.getsize(out), s["ssim"], s["s2"], t)
                scores[key] = row[name]
                os.remove(out)
            if row is None:
                continue
            for name in row:
                results[name].append((os.path.basename(gif), *row[name]))
            if rows_wanted:
                print(f"{os.path.basename(gif)[:28]:28} " + " ".join(
                    f"{n}:{v[0] / row['peer'][0]:.2f}x/{v[1]:.4f}" + (f"/{v[2]:.1f}" if with_s2 else "")
                    for n, v in row.items()), flush=True)
    finally:
        if browser:
            browser.close()
        os.makedirs(WORK, exist_ok=True)
        if os.path.exists(scores_path):  # another sweep may have added rows meanwhile: keep them
            scores = {**json.load(open(scores_path)), **scores}
        tmp = f"{scores_path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(scores, f)
        os.replace(tmp, scores_path)
    peer = results["peer"]
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    print(f"{len(peer)} GIFs, reference {kind}")
    print(f"{'variant':24} {'bytes geo':>9} {'SSIM':>7} {'peerSSIM':>8} {'S2':>6} {'peerS2':>6} {'worst':>8} {'<-0.01':>6} {'time':>7}")
    for name, rows in results.items():
        geo = math.exp(mean([math.log(r[1] / p[1]) for r, p in zip(rows, peer)]))
        worst = min(rows, key=lambda r: r[2] - peer[rows.index(r)][2])
        below = sum(1 for r, p in zip(rows, peer) if r[2] < p[2] - 0.01)
        s2 = f"{mean([r[3] for r in rows]):6.2f}" if with_s2 else "     -"
        ps2 = f"{mean([p[3] for p in peer]):6.2f}" if with_s2 else "     -"
        print(f"{name[:24]:24} {geo:9.3f} {mean([r[2] for r in rows]):7.4f} {mean([p[2] for p in peer]):8.4f} {s2} {ps2} "
              f"{worst[2] - peer[rows.index(worst)][2]:+8.4f} {below:6d} {sum(r[4] for r in rows):6.1f}s  ({worst[0]})",
              flush=True)


if __name__ == "__main__":
    main()
