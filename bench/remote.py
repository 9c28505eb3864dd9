#!/usr/bin/env python3
"""Posters of remote videos (issue 44): the five clips of the posters bench (scripts/make-poster-bench.sh) and
a 1 GB one served by nginx on loopback. For each, alternating, N rounds:
  flipbook poster URL      (ranges through the fetch guard; --allow-private-sources for this one origin)
  flipbook poster FILE     (the same file on disk)
  ffmpegthumbnailer -i URL (libav's HTTP reader)
and prints medians of wall time, the bytes nginx sent each (its access log, independent of both tools) and the
ratios: URL wall / local wall (target <= 1.3x), flipbook / ffmpegthumbnailer wall and bytes (target <= 1.0x),
bytes / file size (target <= 5% of the large files).

    bench/remote.py [BIN] [runs]     (default .build/release/flipbook, 5 runs)
"""
import math, os, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_bench as sb  # noqa: E402  (free_port, wait_port, nginx config)
from compare import ROOT  # noqa: E402

BIN = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, ".build/release/flipbook")
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
WORK = os.path.join(ROOT, "bench/work/remote")


def clips():
    out = subprocess.run([os.path.join(ROOT, "scripts", "make-poster-bench.sh")], capture_output=True, text=True, check=True)
    return [line for line in out.stdout.splitlines() if line]


def big_clip(folder):
    """A 1 GB MP4 (a 720p clip joined to itself, index at the end), made once."""
    path = os.path.join(folder, "big-1gb.mp4")
    if os.path.exists(path) and os.path.getsize(path) > 900_000_000:
        return path
    clip = os.path.join(folder, "part.mp4")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30:duration=10",
                    "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "40M", "-maxrate", "40M", "-bufsize", "80M", clip], check=True)
    copies = max(2, 1_000_000_000 // os.path.getsize(clip) + 1)
    with open(os.path.join(folder, "list.txt"), "w") as f:
        f.write("".join(f"file '{clip}'\n" for _ in range(copies)))
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "concat", "-safe", "0", "-i", os.path.join(folder, "list.txt"),
                    "-c", "copy", path + ".tmp.mp4"], check=True)
    os.rename(path + ".tmp.mp4", path)
    os.remove(clip)
    return path


def nginx(docroot):
    port = sb.free_port()
    conf_dir = tempfile.mkdtemp(prefix="flipbook-remote-nginx-")
    log = os.path.join(conf_dir, "access.log")
    with open(os.path.join(conf_dir, "nginx.conf"), "w") as f:
        f.write(f"""worker_processes 1;
pid {conf_dir}/nginx.pid;
error_log {conf_dir}/error.log warn;
events {{ worker_connections 256; }}
http {{
    log_format bytes '$uri $status $body_bytes_sent';
    access_log {log} bytes;
    sendfile on;
    types {{ video/mp4 mp4; video/webm webm; }}
    client_body_temp_path {conf_dir}/b; proxy_temp_path {conf_dir}/p; fastcgi_temp_path {conf_dir}/f;
    uwsgi_temp_path {conf_dir}/u; scgi_temp_path {conf_dir}/s;
    server {{ listen 127.0.0.1:{port}; root {docroot}; }}
}}
""")
    os.chmod(conf_dir, 0o755)
    proc = subprocess.Popen(["nginx", "-c", os.path.join(conf_dir, "nginx.conf"), "-g", "daemon off;"])
    sb.wait_port(port)
    return proc, port, log


def log_bytes(log):
    try:
        with open(log) as f:
            return sum(int(line.split()[2]) for line in f if len(line.split()) == 3)
    except OSError:
        return 0


def timed(cmd, log):
    before = log_bytes(log)
    # nginx writes a line when a request ends; the tools have ended by then, but give the log a moment.
    start = time.monotonic()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    if done.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {done.stderr[-300:]}")
    time.sleep(0.05)
    return wall * 1000, log_bytes(log) - before


def main():
    os.makedirs(WORK, exist_ok=True)
    files = clips() + [big_clip(WORK)]
    docroot = tempfile.mkdtemp(prefix="flipbook-remote-root-")
    os.chmod(docroot, 0o755)
    for f in files:
        os.symlink(f, os.path.join(docroot, os.path.basename(f)))
    ng, port, log = nginx(docroot)
    out = tempfile.mkdtemp(prefix="flipbook-remote-out-")
    print(f"== posters of {len(files)} videos served by nginx on loopback: {os.path.basename(BIN)} poster URL vs FILE vs "
          f"ffmpegthumbnailer -i URL, {RUNS} alternating rounds, medians")
    print(f"   {'video':34s} {'MB':>7s} | {'URL ms':>7s} {'file ms':>7s} {'ratio':>6s} | {'ffmpegthumb ms':>14s} {'ratio':>6s} | "
          f"{'read KB':>8s} {'%':>6s} {'ffmpegthumb KB':>14s} {'ratio':>6s}")
    rows = []
    try:
        for f in files:
            name = os.path.basename(f)
            url = f"http://127.0.0.1:{port}/{name}"
            commands = {
                "url": [BIN, "poster", url, "-o", os.path.join(out, "u.jpg"), "--size", "256", "--allow-private-sources", f"127.0.0.1:{port}",
                        "--max-source-bytes", "2GB"],
                "file": [BIN, "poster", f, "-o", os.path.join(out, "f.jpg"), "--size", "256"],
                "peer": ["ffmpegthumbnailer", "-i", url, "-o", os.path.join(out, "p.jpg"), "-s", "256"],
            }
            results = {k: [] for k in commands}
            names = list(commands)
            for i in range(RUNS + 1):
                shift = i % len(names)
                for k in names[shift:] + names[:shift]:
                    r = timed(commands[k], log)
                    if i > 0:
                        results[k].append(r)
            med = {k: (statistics.median(w for w, _ in v), statistics.median(b for _, b in v)) for k, v in results.items()}
            size = os.path.getsize(f)
            row = (name, size, med["url"][0], med["file"][0], med["peer"][0], med["url"][1], med["peer"][1])
            rows.append(row)
            print(f"   {name:34s} {size / 1e6:7.1f} | {row[2]:7.0f} {row[3]:7.0f} {row[2] / row[3]:5.2f}x | {row[4]:14.0f} "
                  f"{row[2] / row[4]:5.2f}x | {row[5] / 1e3:8.0f} {100 * row[5] / size:5.2f}% {row[6] / 1e3:14.0f} "
                  f"{row[5] / max(1, row[6]):5.2f}x")
    finally:
        ng.terminate()
        ng.wait()

    def geo(xs):
        return math.exp(sum(math.log(x) for x in xs) / len(xs))
    print(f"   geomean: URL / file wall {geo([r[2] / r[3] for r in rows]):.2f}x (target <= 1.3x), "
          f"flipbook / ffmpegthumbnailer wall {geo([r[2] / r[4] for r in rows]):.2f}x and bytes "
          f"{geo([r[5] / max(1, r[6]) for r in rows]):.2f}x (targets <= 1.0x)")
    large = [r for r in rows if r[1] > 50_000_000]
    print(f"   bytes read of the files over 50 MB: {', '.join(f'{100 * r[5] / r[1]:.2f}%' for r in large)} (target <= 5%)")


if __name__ == "__main__":
    main()
