#!/usr/bin/env python3
"""What an x264 setting of GIFTuning costs: `flipbook convert` under bench/gif_cv.py's VARIANTS, side by side.

  bench/gif_variant_time.py FLIPBOOK VARIANT,VARIANT... [--rounds 2] [--dir DIR]... [--callgrind N]

On every GIF of bench/gif_cv.py's set (bench/gif2mp4.py's plus each --dir) where the variants' settings differ,
each variant converts the GIF in turn (`--crf` of its kind as shipped, `--x264-params` of the variant), the order
rotating and reversing each round; prints each GIF's CPU (user + system of the child, every thread) and bytes,
then per variant the geomeans against the first: wall, CPU, bytes. --callgrind N also counts instructions
(valgrind's callgrind, every thread) on the first N of those GIFs, which no load on the machine changes;
valgrind cannot read the release build's debug information, so a stripped copy runs there.
"""
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "oracle"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import gif2mp4  # noqa: E402
import gif_cv  # noqa: E402
import gif_shape  # noqa: E402


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


def main():
    argv = sys.argv[1:]
    dirs = []
    while "--dir" in argv:
        dirs.append(gif_cv.take_option(argv, "--dir", None))
    rounds = int(gif_cv.take_option(argv, "--rounds", "2"))
    callgrind = int(gif_cv.take_option(argv, "--callgrind", "0"))
    flipbook, variants = os.path.abspath(argv[0]), argv[1].split(",")
    gifs = gif_cv.bench_gifs(dirs)

    work = tempfile.mkdtemp(prefix="flipbook-variant-time-")
    try:
        cases = []
        for gif in gifs:
            s = gif_shape.shape(gif)
            if s["width"] < 8 or s["height"] < 8:
                continue
            kind = gif_cv.kind_of(gif_shape.flatness(gif))
            params = {v: gif_cv.VARIANTS[v](kind, os.path.getsize(gif), s["width"] * s["height"] * s["frames"]) for v in variants}
            if len(set(params.values())) > 1:
                cases.append((gif, kind, params))

        def command(binary, gif, kind, params, out):
            return [binary, "convert", gif, "-o", out, "--jobs", "1", "--crf", str(gif_cv.SHIPPED_CRFS[kind]), "--x264-params", params]

        rows = []
        print("| GIF | kind | " + " | ".join(f"{v}: CPU, bytes" for v in variants) + " |")
        print("|---|---|" + "---|" * len(variants))
        for gif, kind, params in cases:
            times = {v: [0.0, 0.0] for v in variants}
            sizes = {}
            for r in range(rounds):
                order = variants[r % len(variants):] + variants[:r % len(variants)]
                for v in (order[::-1] if r % 2 else order):
                    out = os.path.join(work, f"{v}.mp4")
                    if os.path.exists(out):
                        os.remove(out)  # convert leaves an up-to-date output alone
                    wall, cpu, status = gif2mp4.timed(command(flipbook, gif, kind, params[v], out))
                    if status != 0:
                        sys.exit(f"{gif}: {v} failed")
                    times[v][0] += wall / rounds
                    times[v][1] += cpu / rounds
                    sizes[v] = os.path.getsize(out)
            rows.append((gif, times, sizes))
            print(f"| {os.path.basename(gif)} | {kind} | "
                  + " | ".join(f"{times[v][1] * 1000:.0f} ms, {sizes[v]} B" for v in variants) + " |", flush=True)
        first = variants[0]
        print(f"\n{len(rows)} GIFs where the settings differ, {rounds} rounds:")
        for v in variants:
            print(f"  {v}: wall {geomean([t[v][0] / t[first][0] for _, t, _ in rows]):.3f}x, "
                  f"CPU {geomean([t[v][1] / t[first][1] for _, t, _ in rows]):.3f}x, "
                  f"bytes {geomean([s[v] / s[first] for _, _, s in rows]):.3f}x of {first}")

        if callgrind:
            stripped = os.path.join(work, "flipbook")
            subprocess.run(["strip", "-o", stripped, flipbook], check=True)
            counts = []
            print(f"\ninstructions (callgrind, every thread), first {callgrind} GIFs:")
            for gif, kind, params in cases[:callgrind]:
                ir = {}
                for v in variants:
                    out = os.path.join(work, "ir.mp4")
                    if os.path.exists(out):
                        os.remove(out)
                    run = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
                                         + command(stripped, gif, kind, params[v], out), capture_output=True, text=True)
                    ir[v] = int(re.search(r"Collected : (\d+)", run.stderr).group(1))
                counts.append(ir)
                print(f"| {os.path.basename(gif)} | " + " | ".join(f"{v} {ir[v] / 1e6:.0f} M" for v in variants) + " |", flush=True)
            for v in variants:
                print(f"  {v}: {geomean([c[v] / c[first] for c in counts]):.3f}x the instructions of {first}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
