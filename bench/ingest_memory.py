"""`make bench-ingest-memory`: peak resident memory of `flipbook ingest` of one still with the default recipe
against `flipbook thumb` of its largest derivative alone (`large`: 1280 px JPEG at quality 85), the issue-43
target being at most 1.2x for a 12 MP PNG. Inputs, made by ffmpeg: a 12 MP PNG (4032x3024, a phone photo's
size), a 12 MP JPEG and a 640x480 JPEG. Each command runs ROUNDS times (BENCH_INGEST_MEMORY_ROUNDS, default 5),
alternating, each in a fresh process writing to a fresh folder; peak RSS is the child's own ru_maxrss (wait4).
Prints medians (MB) and wall times, and the ratio ingest / thumb.

    bench/ingest_memory.py BINARY [BASELINE]

BASELINE (optional): another build (e.g. main's) measured the same way in the same rounds, for before/after.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BINARY = sys.argv[1] if len(sys.argv) > 1 else ".build/release/flipbook"
BASELINE = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
ROUNDS = int(os.environ.get("BENCH_INGEST_MEMORY_ROUNDS", "5"))
TARGET = 1.2


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True)


def peak(argv):
    """(peak RSS in MB, wall seconds) of `argv` run to completion in a process of its own."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}): {err}")
    return usage.ru_maxrss / 1024, wall


def main():
    work = tempfile.mkdtemp(prefix="flipbook-bench-ingest-memory-")
    try:
        inputs = {"12 MP PNG (4032x3024)": os.path.join(work, "photo.png"),
                  "12 MP JPEG (4032x3024)": os.path.join(work, "photo.jpg"),
                  "640x480 JPEG": os.path.join(work, "small.jpg")}
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=4032x3024", "-frames:v", "1", inputs["12 MP PNG (4032x3024)"])
        ffmpeg("-i", inputs["12 MP PNG (4032x3024)"], "-q:v", "3", inputs["12 MP JPEG (4032x3024)"])
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=640x480", "-frames:v", "1", "-q:v", "3", inputs["640x480 JPEG"])
        builds = [("this build", BINARY)] + ([("baseline", BASELINE)] if BASELINE else [])
        print(f"== peak RSS (MB), median of {ROUNDS} alternating rounds; `ingest FILE` (default recipe: 320 px WebP, "
              f"1280 px JPEG, ThumbHash and BlurHash) against `thumb FILE --size 1280 --quality 85` (its largest output alone)")
        for label, path in inputs.items():
            print(f"{label} ({os.path.getsize(path) / 1e6:.1f} MB file)")
            for name, binary in builds:
                rss = {"ingest": [], "thumb": []}
                wall = {"ingest": [], "thumb": []}
                for r in range(ROUNDS):
                    out = os.path.join(work, f"out-{r}")
                    shutil.rmtree(out, ignore_errors=True)
                    commands = {"ingest": [binary, "ingest", path, "-o", out, "--jobs", "1"],
                                "thumb": [binary, "thumb", path, "-o", os.path.join(work, "large.jpg"), "--size", "1280",
                                          "--quality", "85"]}
                    order = ["ingest", "thumb"] if r % 2 == 0 else ["thumb", "ingest"]
                    for what in order:
                        mb, seconds = peak(commands[what])
                        rss[what].append(mb)
                        wall[what].append(seconds)
                i, t = statistics.median(rss["ingest"]), statistics.median(rss["thumb"])
                verdict = "" if "PNG" not in label else (f" (target <= {TARGET}x: {'met' if i / t <= TARGET else 'NOT met'})")
                print(f"  {name:10s} ingest {i:6.1f} MB ({statistics.median(wall['ingest']) * 1000:5.0f} ms), "
                      f"thumb 1280 {t:6.1f} MB ({statistics.median(wall['thumb']) * 1000:5.0f} ms): "
                      f"ratio {i / t:.2f}x{verdict}   [ingest {min(rss['ingest']):.1f}-{max(rss['ingest']):.1f}, "
                      f"thumb {min(rss['thumb']):.1f}-{max(rss['thumb']):.1f}]")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
