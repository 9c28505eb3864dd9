#!/usr/bin/env python3
"""Side-by-side benchmark: Flipbook against its peers, alternating runs in one process, medians and ratios.

Each run is one child process; wall time from a monotonic clock, peak RSS from wait4's rusage. Absolute
numbers drift on shared machines; the ratios, measured alternately in one run, are what to compare."""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "bench", "work")
FLIPBOOK = os.path.join(ROOT, ".build", "release", "flipbook")
BENCH = os.path.join(ROOT, ".build", "release", "flipbook-bench")
CORPUS = os.environ.get("FLIPBOOK_CORPUS") or os.path.join(os.path.dirname(ROOT), "shared", "corpus")
RUNS = int(os.environ.get("BENCH_RUNS", "15"))


def run(argv):
    """Runs argv to completion; returns (seconds, peak RSS in MB, exit status).

    Peak RSS comes from GNU time (a ~1 MB parent), not from this process's wait4: on Linux a child's
    ru_maxrss keeps the high-water mark of the memory image it had before exec, which for a child of
    Python is Python's own ~10 MB."""
    fd, report = tempfile.mkstemp(prefix="flipbook-rss-")
    os.close(fd)
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            os.execv("/usr/bin/time", ["/usr/bin/time", "-f", "%M", "-o", report, *argv])
        finally:
            os._exit(127)
    _, status, _ = os.wait4(pid, 0)
    elapsed = time.perf_counter() - start
    with open(report) as f:
        lines = [l for l in f.read().split() if l.isdigit()]
    os.unlink(report)
    rss = int(lines[-1]) / 1024 if lines else float("nan")
    return elapsed, rss, os.waitstatus_to_exitcode(status)


def compare(title, ours, peer, peer_name, runs=RUNS, setup=None):
    """Alternates ours and peer `runs` times (after one warm-up each); prints and returns medians and ratios."""
    results = {"ours": [], "peer": []}
    for i in range(runs + 1):
        for name, argv in (("ours", ours), ("peer", peer)) if i % 2 == 0 else (("peer", peer), ("ours", ours)):
            if setup:
                setup()
            t, rss, code = run(argv)
            if code != 0:
                sys.exit(f"{title}: {' '.join(argv)} exited {code}")
            if i > 0:
                results[name].append((t, rss))
    med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for k, v in results.items()}
    row = (title, med["ours"][0] * 1000, med["peer"][0] * 1000, med["ours"][0] / med["peer"][0],
           med["ours"][1], med["peer"][1], med["ours"][1] / med["peer"][1], peer_name)
    print(f"| {row[0]} | {row[1]:.1f} ms | {row[2]:.1f} ms | {row[3]:.2f}x | {row[4]:.1f} MB | {row[5]:.1f} MB | {row[6]:.2f}x | {row[7]} |",
          flush=True)
    return row


def animated_corpus_gifs(minimum_frames=2):
    """Corpus GIFs whose MANIFEST note says 'animated, N frames' with N >= minimum_frames."""
    import re
    manifest = os.path.join(CORPUS, "MANIFEST.tsv")
    if not os.path.exists(manifest):
        return []
    found = []
    for line in open(manifest).read().splitlines()[1:]:
        cols = line.split("\t")
        m = re.search(r"animated, (\d+) frames", cols[4]) if len(cols) > 4 else None
        if cols[0].startswith("gif/") and m and int(m.group(1)) >= minimum_frames and "TRUNCATED" not in cols[4]:
            found.append(os.path.join(CORPUS, cols[0]))
    return found


def gif_section():
    gifs = animated_corpus_gifs()
    if not gifs:
        print(f"\n(corpus not found at {CORPUS}: GIF benchmarks skipped)")
        return
    print(f"\n## GIF decoding: {len(gifs)} animated corpus GIFs\n")
    print("In one process, alternating, median of 5 (megapixels composited per second; libavcodec's GIF decoder is")
    print("driven through the same byte source, frames released in place; both single-threaded):\n", flush=True)
    os.system(f"{BENCH} gif-throughput 5 {' '.join(gifs)} | tail -n 1 | sed 's/^/all files: /'")
    os.system(f"{BENCH} gif-throughput 5 {' '.join(g for g in gifs if os.path.getsize(g) > 50000)}")
    print("\nWhole process per file, decode every frame and exit (sums of per-file medians):\n")
    print("| case | flipbook | peer | time ratio | flipbook RSS | peer RSS | RSS ratio | peer |")
    print("|---|---|---|---|---|---|---|---|")
    big = [g for g in gifs if os.path.getsize(g) > 50000]
    ours_t = peer_t = ours_m = peer_m = 0.0
    for g in big:
        row = compare(os.path.basename(g), [BENCH, "gif-decode", g],
                      ["ffmpeg", "-v", "error", "-i", g, "-f", "null", "-"], "ffmpeg -f null", runs=5)
        ours_t += row[1]; peer_t += row[2]; ours_m = max(ours_m, row[4]); peer_m = max(peer_m, row[5])
    print(f"| **sum over {len(big)} files** | {ours_t:.1f} ms | {peer_t:.1f} ms | {ours_t / peer_t:.2f}x | max {ours_m:.1f} MB | max {peer_m:.1f} MB | | |")
    print("\nPeak memory against frame count (same 480x480 canvas):\n")
    for name in ("gif-10.gif", "gif-400.gif"):
        path = os.path.join(WORK, name)
        runs = [run([BENCH, "gif-decode", path]) for _ in range(5)]
        print(f"- {name}: peak RSS {statistics.median(r[1] for r in runs):.1f} MB, "
              f"{statistics.median(r[0] for r in runs) * 1000:.0f} ms")


def convert_section():
    """GIF to MP4: bench/gif2mp4.py (Flipbook against ffmpeg's -tune animation recipe, scored against Chromium's
    rendering; needs the venv), then flat memory over a library."""
    venv = os.path.join(ROOT, ".build", "venv", "bin", "python3")
    print()
    if os.path.exists(venv):
        subprocess.run([venv, os.path.join(ROOT, "bench", "gif2mp4.py"), FLIPBOOK])
    else:
        print("(no venv at .build/venv: GIF to MP4 quality table skipped; run `make venv`)")
    work = tempfile.mkdtemp(prefix="flipbook-convert-")
    try:
        # Flat memory over a library: the same GIF 10 and 1000 times (hard links), one process each time.
        sample = os.path.join(ROOT, "samples", "box-transparent-120x90.gif")
        peaks = {}
        for count in (10, 1000):
            lib = os.path.join(work, f"lib{count}")
            os.makedirs(lib)
            for i in range(count):
                os.link(sample, os.path.join(lib, f"{i:04d}.gif"))
            t, rss, code = run([FLIPBOOK, "convert", lib, "-o", os.path.join(work, f"out{count}")])
            peaks[count] = (t, rss, code)
        print("\nMemory over a library (samples/box-transparent-120x90.gif, 30 frames, converted N times in one process):\n")
        for count, (t, rss, code) in peaks.items():
            print(f"- {count} GIFs: peak RSS {rss:.1f} MB, {t:.2f} s, exit status {code}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def poster_section():
    """Poster frames, one process per video: the five encodings of bench/posters.py against ffmpegthumbnailer
    (the issue-21 targets), then the corpus's videos against ffmpegthumbnailer and ffmpeg -ss."""
    import posters
    posters.table({"flipbook": FLIPBOOK}, 7)
    videos = []
    video_dir = os.path.join(CORPUS, "video")
    if os.path.isdir(video_dir):
        for root, _, files in os.walk(video_dir):
            for f in sorted(files):
                if "afconvert" in f or "invalid-bitstream" in f:
                    continue  # no picture to make: both tools fail
                videos.append(os.path.join(root, f))
    out = tempfile.mkdtemp(prefix="flipbook-poster-")
    try:
        def probe_duration(v):
            r = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", v],
                               capture_output=True, text=True)
            try:
                return float(r.stdout.strip())
            except ValueError:
                return 0.0
        if not videos:
            print(f"\n(corpus not found at {CORPUS}: the corpus videos' poster rows skipped)")
            return
        print(f"\n## Video posters: the corpus's {len(videos)} videos, 256 px, one process each\n")
        print("| case | flipbook | peer | time ratio | flipbook RSS | peer RSS | RSS ratio | peer |")
        print("|---|---|---|---|---|---|---|---|")
        sums = {"thumbnailer": [0.0, 0.0, 0.0, 0.0], "ffmpeg": [0.0, 0.0, 0.0, 0.0]}
        for v in videos:
            name = os.path.basename(v)
            ours = [FLIPBOOK, "poster", v, "-o", os.path.join(out, "a.jpg"), "--size", "256"]
            t = f"{probe_duration(v) * 0.1:.3f}"
            for key, peer, label in (
                ("thumbnailer", ["ffmpegthumbnailer", "-i", v, "-o", os.path.join(out, "b.jpg"), "-s", "256"], "ffmpegthumbnailer"),
                ("ffmpeg", ["ffmpeg", "-v", "error", "-y", "-ss", t, "-i", v, "-frames:v", "1", "-vf", "scale=256:-2",
                            os.path.join(out, "c.jpg")], "ffmpeg -ss"),
            ):
                try:
                    row = compare(name, ours, peer, label, runs=5)
                except SystemExit as failure:
                    print(f"| {name} | | | | | | | {label}: skipped ({failure}) |")
                    continue
                s4 = sums[key]
                s4[0] += row[1]; s4[1] += row[2]; s4[2] = max(s4[2], row[4]); s4[3] = max(s4[3], row[5])
        for key, label in (("thumbnailer", "ffmpegthumbnailer"), ("ffmpeg", "ffmpeg -ss")):
            s4 = sums[key]
            print(f"| **sum over the videos** | {s4[0]:.1f} ms | {s4[1]:.1f} ms | {s4[0] / s4[1]:.2f}x | max {s4[2]:.1f} MB | "
                  f"max {s4[3]:.1f} MB | {s4[2] / s4[3]:.2f}x | {label} |")
        # Issue 14: a dense storyboard decodes each frame once, within 3x the poster's time on the same clip.
        clip = os.path.join(video_dir, "androidx-media", "8k24fps_300ms.mp4")
        if os.path.exists(clip):
            print("\nStoryboard (`--count 10`, more tiles than the clip's 8 frames) against our own poster of the 8K HEVC clip:\n")
            print("| case | storyboard | poster | time ratio | storyboard RSS | poster RSS | RSS ratio | peer |")
            print("|---|---|---|---|---|---|---|---|")
            compare("8k24fps_300ms.mp4", [FLIPBOOK, "storyboard", clip, "-o", os.path.join(out, "sb"), "--count", "10"],
                    [FLIPBOOK, "poster", clip, "-o", os.path.join(out, "p8k.jpg"), "--size", "256"], "flipbook poster", runs=7)
            compare("8k24fps_300ms.mp4, `--threads 2`", [FLIPBOOK, "storyboard", clip, "-o", os.path.join(out, "sb2"), "--count", "10", "--threads", "2"],
                    [FLIPBOOK, "poster", clip, "-o", os.path.join(out, "p8k.jpg"), "--size", "256"], "flipbook poster", runs=7)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main():
    out = tempfile.mkdtemp(prefix="flipbook-bench-")
    try:
        print(f"Flipbook vs peers: median of {RUNS} alternating runs each; ratio = ours / peer (lower is better)\n")
        print("| case | flipbook | peer | time ratio | flipbook RSS | peer RSS | RSS ratio | peer |")
        print("|---|---|---|---|---|---|---|---|")
        for name in ("photo24-typical.jpg", "photo24-dense.jpg"):
            src = os.path.join(WORK, name)
            mb = os.path.getsize(src) / 1e6
            compare(f"one-shot 24 MP JPEG ({mb:.1f} MB) -> 256 px",
                    [FLIPBOOK, "thumb", src, "-o", os.path.join(out, "a.jpg"), "--size", "256"],
                    ["vipsthumbnail", src, "-s", "256", "-o", os.path.join(out, "b.jpg")], "vipsthumbnail")
        batch = sorted(os.path.join(WORK, "batch", f) for f in os.listdir(os.path.join(WORK, "batch")))
        for d in ("ba", "bb"):
            os.makedirs(os.path.join(out, d), exist_ok=True)
        row = compare(f"batch: {len(batch)} x 24 MP JPEG in one process",
                      [FLIPBOOK, "thumb", *batch, "-o", os.path.join(out, "ba"), "--size", "256"],
                      ["vipsthumbnail", *batch, "-s", "256", "-o", os.path.join(out, "bb", "%s.jpg")], "vipsthumbnail",
                      runs=max(3, RUNS // 3))
        print(f"\nbatch throughput: flipbook {len(batch) / (row[1] / 1000):.1f} images/s, vipsthumbnail "
              f"{len(batch) / (row[2] / 1000):.1f} images/s: {row[2] / row[1]:.2f}x")
        bomb = os.path.join(CORPUS, "jpeg", "jpeg-decoder", "max_size.jpg")
        if os.path.exists(bomb):
            times = [run([FLIPBOOK, "thumb", bomb, "-o", os.path.join(out, "bomb.jpg")]) for _ in range(5)]
            t = statistics.median(x[0] for x in times) * 1000
            rss = max(x[1] for x in times)
            codes = {x[2] for x in times}
            print(f"\ndecompression bomb (65535x65535 header, 186 bytes): refused in {t:.1f} ms median, "
                  f"peak RSS {rss:.1f} MB, exit status {codes}")
        else:
            print(f"\n(corpus not found at {CORPUS}: decompression-bomb check skipped)")
        gif_section()
        convert_section()
        poster_section()
        # Posters of the same videos served by nginx: fetched by ranges through the guard (issue 44).
        print("\n## Posters of remote videos (bench/remote.py)\n")
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "remote.py"), FLIPBOOK, "5"], check=False)
        import still_colour
        still_colour.section()
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
