#!/usr/bin/env python3
"""Posters over five encodings (scripts/make-poster-bench.sh: 1080p x264 ultrafast -g 60, 1080p x264 veryfast
with B-frames, 4K HEVC, 720p VP9, a rotated phone clip): `flipbook poster --size 256` against
`ffmpegthumbnailer -s 256`, one process each, alternating (order swapped each round), median of N runs.
Prints each row and the geomeans of the wall and peak-RSS ratios against their targets (issue 21: geomean
<= 0.5x wall and <= 0.75x RSS, no row above 0.7x / 0.9x). `make bench` runs it; by hand:
    bench/posters.py [BIN] [runs]        (default .build/release/flipbook, 7 runs)
    bench/posters.py --ab BEFORE AFTER [runs]   two builds side by side against the peer, same rounds"""
import math
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import callgrind  # noqa: E402
from compare import FLIPBOOK, ROOT, run  # noqa: E402

WALL_GEOMEAN, RSS_GEOMEAN, WALL_ROW, RSS_ROW = 0.5, 0.75, 0.7, 0.9
# The functions a release build puts first in .text (Package.swift): what the one-shot commands run.
with open(os.path.join(ROOT, "Sources", "flipbook", "startup.order")) as _f:
    STARTUP_ORDER = set(_f.read().split())


def clips():
    """The five videos, made (or found complete from an earlier run of the same recipe) by the script."""
    out = subprocess.run([os.path.join(ROOT, "scripts", "make-poster-bench.sh")], capture_output=True, text=True, check=True)
    return [line for line in out.stdout.splitlines() if line]


def medians(commands, runs):
    """Runs every command once to warm the page cache, then `runs` rounds, the order rotated each round;
    returns each one's median (wall ms, peak RSS MB)."""
    names = list(commands)
    results = {k: [] for k in names}
    for i in range(runs + 1):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            t, rss, code = run(commands[name])
            if code != 0:
                sys.exit(f"{name}: {' '.join(commands[name])} exited {code}")
            if i > 0:
                results[name].append((t, rss))
    return {k: (statistics.median(x[0] for x in v) * 1000, statistics.median(x[1] for x in v)) for k, v in results.items()}


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def table(builds, runs):
    """builds: {label: binary}. One table row per clip and build; geomeans per build."""
    out = tempfile.mkdtemp(prefix="flipbook-posters-")
    videos = clips()
    print(f"\n## Video posters over five encodings, 256 px, one process each: median of {runs} alternating runs\n")
    print("Inputs from scripts/make-poster-bench.sh (ffmpeg's testsrc2). Targets: geomean <= "
          f"{WALL_GEOMEAN}x wall and <= {RSS_GEOMEAN}x RSS of ffmpegthumbnailer, no row above {WALL_ROW}x / {RSS_ROW}x.\n")
    print("Instructions: one run of each under valgrind's callgrind (user space, every thread; valgrind offers no")
    print("AVX-512, so both sides take their AVX2 paths there).\n")
    print("| clip | build | flipbook | ffmpegthumbnailer | wall ratio | flipbook RSS | peer RSS | RSS ratio | instructions ratio |")
    print("|---|---|---|---|---|---|---|---|---|", flush=True)
    ratios = {label: ([], []) for label in builds}
    counted = {label: [] for label in builds}
    functions = {label: set() for label in builds}
    stripped = {label: callgrind.without_debug_info(binary, out) for label, binary in builds.items()} if callgrind.available() else {}
    for v in videos:
        commands = {label: [binary, "poster", v, "-o", os.path.join(out, f"{i}.jpg"), "--size", "256"]
                    for i, (label, binary) in enumerate(builds.items())}
        commands["peer"] = ["ffmpegthumbnailer", "-i", v, "-o", os.path.join(out, "peer.jpg"), "-s", "256"]
        med = medians(commands, runs)
        peer = med["peer"]
        for label in builds:
            wall, rss = med[label][0] / peer[0], med[label][1] / peer[1]
            ratios[label][0].append(wall)
            ratios[label][1].append(rss)
            flag = " (over)" if wall > WALL_ROW or rss > RSS_ROW else ""
            if stripped:
                ours, ran = callgrind.count([stripped[label], *commands[label][1:]], functions_of=os.path.basename(stripped[label]))
                functions[label].update(ran)
                theirs = callgrind.count(commands["peer"])
                counted[label].append(ours / theirs)
                counts = f" {ours / 1e6:,.0f}M / {theirs / 1e6:,.0f}M: {ours / theirs:.2f}x |"
            else:
                counts = " not counted (no valgrind) |"
            print(f"| {os.path.basename(v)} | {label} | {med[label][0]:.1f} ms | {peer[0]:.1f} ms | {wall:.2f}x | "
                  f"{med[label][1]:.1f} MB | {peer[1]:.1f} MB | {rss:.2f}x{flag} |{counts}", flush=True)
    for label, (walls, rsses) in ratios.items():
        gw, gr = geomean(walls), geomean(rsses)
        verdict = "met" if gw <= WALL_GEOMEAN and gr <= RSS_GEOMEAN and max(walls) <= WALL_ROW and max(rsses) <= RSS_ROW else "missed"
        print(f"\n{label}: geomean wall {gw:.2f}x (target <= {WALL_GEOMEAN}x), geomean RSS {gr:.2f}x (target <= {RSS_GEOMEAN}x); "
              f"worst row {max(walls):.2f}x wall, {max(rsses):.2f}x RSS: {verdict}")
        if counted[label]:
            print(f"{label}: instructions geomean {geomean(counted[label]):.2f}x, worst row {max(counted[label]):.2f}x the peer's")
        if functions[label]:
            # Code the order file misses is scattered through .text again, and paged in 64 KB at a time.
            listed = functions[label] & STARTUP_ORDER
            print(f"{label}: {len(listed)} of the {len(functions[label])} functions of the executable these posters ran are in "
                  f"Sources/flipbook/startup.order ({100 * len(listed) / len(functions[label]):.0f}%; "
                  f"scripts/order-startup-code.py refreshes it)")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--ab"]:
        table({"before": args[1], "after": args[2]}, int(args[3]) if len(args) > 3 else 7)
    else:
        table({"flipbook": args[0] if args else FLIPBOOK}, int(args[1]) if len(args) > 1 else 7)
