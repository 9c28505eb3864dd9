#!/usr/bin/env python3
"""Writes Sources/flipbook/startup.order: the functions of the `flipbook` executable that its one-shot commands
run, for lld's --symbol-ordering-file (Package.swift, release builds), so that they sit together at the start of
.text instead of scattered through 27 MB of it.

Why: a one-shot command (`poster`, `thumb`, `probe`) runs about 480 KB of our executable's code, spread over
2 MB of distinct pages. The kernel maps file pages 64 KB at a time around each fault (fault-around), so those
scattered functions made 6-7 MB of .text resident in every process: a seventh of a 1080p poster's peak RSS.

How: runs each command below under valgrind's callgrind (every function executed, none missed by sampling)
on samples/, and lists the functions of our executable it saw, those run by the most commands first. Needs a
release build made with function sections (`make release` passes -function-sections), which is what lets lld
move functions one by one. Run it after large changes to the start-up path or the commands:
    scripts/order-startup-code.py [.build/release/flipbook]
A stale list is harmless: lld ignores names that no longer exist, and new functions land after the listed ones.
`make release` relinks when the list is newer than the executable.
"""
import collections
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import callgrind  # noqa: E402
OUT = os.path.join(ROOT, "Sources", "flipbook", "startup.order")


def commands(samples, out):
    """One-shot commands a user runs once per file, over every kind of input in samples/."""
    s = lambda name: os.path.join(samples, name)  # noqa: E731
    o = lambda name: os.path.join(out, name)  # noqa: E731
    return [
        ["probe", s("testsrc2-480x270-4s.mp4")],
        ["probe", "--json", s("mandelbrot-1600x1200.jpg")],
        ["poster", s("testsrc2-480x270-4s.mp4"), "-o", o("poster.jpg"), "--size", "256"],
        ["thumb", s("mandelbrot-1600x1200.jpg"), "-o", o("t1.jpg"), "--size", "256"],
        ["thumb", s("testsrc-rotated-exif6.jpg"), "-o", o("t2.webp"), "--size", "256"],
        ["thumb", s("alpha-640x480.png"), "-o", o("t3.png"), "--size", "256"],
        ["thumb", s("cellauto-400x300.webp"), "-o", o("t4.jpg"), "--size", "256"],
        ["thumb", s("testsrc-160x120-2s.gif"), "-o", o("t5.jpg"), "--size", "64"],
        ["convert", s("box-transparent-120x90.gif"), "-o", o("c.mp4")],
        ["preview", s("testsrc2-480x270-4s.mp4"), "-o", o("preview.mp4")],
        ["storyboard", s("testsrc2-480x270-4s.mp4"), "-o", o("story")],
        ["frames", s("testsrc-160x120-2s.gif"), "-o", o("frames")],
    ]


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "release", "flipbook"))
    work = tempfile.mkdtemp(prefix="flipbook-order-")
    copy = callgrind.without_debug_info(binary, work)
    # Only names defined once. lld orders every section that defines a listed name, and merged functions and
    # value witnesses ("...Tm", "$sSnwxx") exist as local copies in many objects, among them static-library
    # objects with all their code in one section: listing those pulled 1.3 MB of regex and JSON code that no
    # command runs (libswift_RegexParser's and libswift_StringProcessing's whole .text) to the front.
    definitions = collections.Counter(subprocess.run(["nm", "--defined-only", "--format=just-symbols", binary],
                                                     capture_output=True, text=True, check=True).stdout.split())
    defined = {name for name, count in definitions.items() if count == 1}
    counts, first = collections.Counter(), {}
    runs = commands(os.path.join(ROOT, "samples"), work)
    for args in runs:
        _, names = callgrind.count([copy, *args], functions_of=os.path.basename(copy))
        for name in names:
            if name in defined:
                counts[name] += 1
                first.setdefault(name, len(first))
    shutil.rmtree(work, ignore_errors=True)
    names = sorted(counts, key=lambda n: (-counts[n], first[n]))
    with open(OUT, "w") as f:
        f.writelines(n + "\n" for n in names)
    print(f"{OUT}: {len(names)} functions from {len(runs)} commands")


if __name__ == "__main__":
    main()
