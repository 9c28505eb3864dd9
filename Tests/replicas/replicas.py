#!/usr/bin/env python3
"""`make test-replicas`: two or more real `flipbook serve` processes sharing one --disk-cache folder behind a
real nginx (Debian's nginx-light, config generated from deploy/nginx/flipbook.conf by scripts/nginx-conf.sh,
run as the current user with its own prefix, pid, temp and cache folders, upstream on loopback ports).

Checks: the same bytes and the same strong ETag for a derivative whichever replica answers and through
nginx; ranges through the proxy (a-b, a-, suffix -n, Safari's 0-1, 416 with bytes */N, If-Range both ways,
If-None-Match 304), on the cache-filling request and on cached ones; and that concurrent writers never
leave a torn or wrong file in the shared cache: both replicas are hammered at once for the same cold
derivatives, then every object in the cache must hash to its own name, decode (ffprobe / Pillow), equal
what the clients got and equal a fresh computation by a separate process with an empty cache; no temporary
file is left behind. Everything it starts, it stops. Prints "replicas: N passed, N failed". The replicas get a 600 s job
timeout: on a loaded 2-core machine the hammered cold previews may exceed the default 60 s, and a timeout
(503) is not what this test is about.

  replicas.py --flipbook .build/debug/flipbook [--replicas 2]
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT_DIR = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "browser"))
from harness import Checks, ffmpeg, free_port  # noqa: E402


def request(url, headers=None, timeout=120):
    """(status, headers dict with lower-case names, body)."""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()


class Server:
    def __init__(self, flipbook, root, cache, log):
        self.port = free_port()
        self.log = open(log, "ab")
        self.process = subprocess.Popen([flipbook, "serve", root, "--host", "127.0.0.1", "--port", str(self.port),
                                         "--disk-cache", cache, "--job-timeout", "600"], stdout=self.log, stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{self.port}"
        while True:  # until it answers or exits: no deadline for a debug build's start on a loaded machine
            try:
                if request(self.base + "/health", timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f"flipbook serve did not start (see {log})")
            time.sleep(0.2)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        return self.process.returncode


class Nginx:
    def __init__(self, prefix, upstream_ports):
        self.prefix = prefix
        self.port = free_port()
        self.conf = os.path.join(prefix, "nginx.conf")
        os.makedirs(prefix, exist_ok=True)
        with open(self.conf, "w") as f:
            subprocess.run([os.path.join(ROOT_DIR, "scripts/nginx-conf.sh"), prefix, str(self.port),
                            *map(str, upstream_ports)], stdout=f, check=True)
        subprocess.run(["nginx", "-p", prefix, "-c", self.conf, "-e", os.path.join(prefix, "logs/error.log")], check=True)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 20
        while not os.path.exists(os.path.join(prefix, "nginx.pid")) and time.time() < deadline:
            time.sleep(0.1)

    def stop(self):
        pid_file = os.path.join(self.prefix, "nginx.pid")
        if os.path.exists(pid_file):
            pid = int(open(pid_file).read())
            subprocess.run(["nginx", "-p", self.prefix, "-c", self.conf, "-e", os.path.join(self.prefix, "logs/error.log"),
                            "-s", "quit"], check=False)
            deadline = time.time() + 20
            while time.time() < deadline:
                try:
                    os.kill(pid, 0)
                except OSError:
                    return
                time.sleep(0.1)
            os.kill(pid, signal.SIGKILL)


def make_library(root):
    os.makedirs(root)
    for i, (pattern, size) in enumerate([("testsrc", "240x180"), ("rgbtestsrc", "200x200"), ("smptebars", "320x180")]):
        ffmpeg("-f", "lavfi", "-i", f"{pattern}=size={size}:rate=10:duration=2", os.path.join(root, f"anim{i}.gif"))
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=5", "-c:v", "libx264", "-preset", "veryfast",
           "-pix_fmt", "yuv420p", os.path.join(root, "clip.mp4"))
    ffmpeg("-f", "lavfi", "-i", "mandelbrot=size=1600x1200", "-frames:v", "1", "-q:v", "3", os.path.join(root, "photo.jpg"))


def sha(data):
    return hashlib.sha256(data).hexdigest()


def same_everywhere(checks, servers, nginx, target):
    """Same bytes and ETag from every replica and through nginx (twice: filling, then cached)."""
    answers = [request(s.base + target) for s in servers] + [request(nginx.base + target), request(nginx.base + target)]
    statuses = {a[0] for a in answers}
    digests = {sha(a[2]) for a in answers}
    etags = {a[1].get("etag") for a in answers}
    cache = [answers[-2][1].get("x-cache-status"), answers[-1][1].get("x-cache-status")]
    ok = statuses == {200} and len(digests) == 1 and len(etags) == 1 and None not in etags and etags.pop().startswith('"')
    checks.check(ok, f"{target}: same bytes ({len(answers[0][2])} B) and strong ETag from {len(servers)} replicas and nginx "
                     f"(statuses {sorted(statuses)}, nginx cache {cache[0]} then {cache[1]})")
    checks.check(cache[1] == "HIT", f"{target}: nginx serves it from proxy_cache the second time")
    return answers[0][2], answers[0][1]["etag"]


def ranges_through_proxy(checks, base, target, body, etag, label):
    n = len(body)
    cases = [("bytes=0-1", 0, 1), ("bytes=100-199", 100, 199), (f"bytes={n - 10}-", n - 10, n - 1),
             ("bytes=-100", n - 100, n - 1), (f"bytes=5-{n + 1000}", 5, n - 1), ("bytes=0-", 0, n - 1)]
    for header, first, last in cases:
        status, headers, data = request(base + target, {"Range": header})
        ok = status == 206 and data == body[first:last + 1] and headers.get("content-range") == f"bytes {first}-{last}/{n}"
        checks.check(ok, f"{label} {header}: 206, {last - first + 1} bytes, Content-Range bytes {first}-{last}/{n} "
                         f"(got {status}, {len(data)} B, {headers.get('content-range')})")
    status, headers, data = request(base + target, {"Range": f"bytes={n}-"})
    checks.check(status == 416 and headers.get("content-range") == f"bytes */{n}",
                 f"{label} bytes={n}-: 416 with bytes */{n} (got {status}, {headers.get('content-range')})")
    status, _, data = request(base + target, {"Range": "bytes=0-9", "If-Range": etag})
    checks.check(status == 206 and data == body[:10], f"{label} If-Range with the current ETag: 206 (got {status})")
    status, _, data = request(base + target, {"Range": "bytes=0-9", "If-Range": '"something-else"'})
    checks.check(status == 200 and data == body, f"{label} If-Range with another ETag: 200 and the whole body (got {status})")
    status, _, data = request(base + target, {"If-None-Match": etag})
    checks.check(status == 304 and not data, f"{label} If-None-Match: 304 without a body (got {status})")


def hammer(servers, targets, per_server_threads=4):
    """Every thread of every replica asks for every target, in its own shuffled order, all at once."""
    results = {t: [] for t in targets}
    lock = threading.Lock()
    start = threading.Barrier(len(servers) * per_server_threads)

    def worker(server, seed):
        order = list(targets)
        random.Random(seed).shuffle(order)
        start.wait()
        for t in order:
            status, headers, body = request(server.base + t)
            with lock:
                results[t].append((status, headers.get("etag"), sha(body), len(body)))

    threads = [threading.Thread(target=worker, args=(s, i * 100 + k)) for i, s in enumerate(servers) for k in range(per_server_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def decodes(path, kind):
    if kind == "video":
        r = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                            "stream=codec_name,nb_read_frames", "-of", "json", path], capture_output=True, text=True)
        if r.returncode != 0 or r.stderr.strip():
            return False
        stream = json.loads(r.stdout)["streams"][0]
        return stream["codec_name"] == "h264" and int(stream["nb_read_frames"]) > 0
    r = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"], capture_output=True, text=True)
    return r.returncode == 0 and not r.stderr.strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--flipbook", required=True)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs) for a look")
    args = parser.parse_args()
    flipbook = os.path.abspath(args.flipbook)
    work = tempfile.mkdtemp(prefix="flipbook-replicas-")
    checks = Checks()
    servers, nginx, fresh = [], None, None
    try:
        root = os.path.join(work, "root")
        make_library(root)
        cache = os.path.join(work, "shared-cache")
        servers = [Server(flipbook, root, cache, os.path.join(work, f"serve-{i}.log")) for i in range(args.replicas)]
        nginx = Nginx(os.path.join(work, "nginx"), [s.port for s in servers])

        # 1. Same bytes and ETag whichever replica answers; ranges through the proxy, cold and cached.
        body, etag = same_everywhere(checks, servers, nginx, "/mp4/anim0.gif")
        ranges_through_proxy(checks, nginx.base, "/mp4/anim0.gif", body, etag, "nginx cached /mp4/anim0.gif")
        status, headers, data = request(nginx.base + "/mp4/anim1.gif", {"Range": "bytes=0-1"})
        full = request(servers[0].base + "/mp4/anim1.gif")[2]
        checks.check(status == 206 and data == full[:2] and headers.get("content-range") == f"bytes 0-1/{len(full)}",
                     f"nginx cold /mp4/anim1.gif bytes=0-1 (cache-filling request): 206 with exactly 2 bytes "
                     f"(got {status}, {len(data)} B, {headers.get('content-range')})")
        for target in ["/preview/clip.mp4", "/thumb/photo.jpg?size=200", "/poster/clip.mp4?size=160"]:
            same_everywhere(checks, servers, nginx, target)
        original = open(os.path.join(root, "clip.mp4"), "rb").read()
        status, _, data = request(nginx.base + "/original/clip.mp4", {"Range": "bytes=-1000"})
        checks.check(status == 206 and data == original[-1000:], f"nginx /original/clip.mp4 bytes=-1000 passes through: 206 (got {status})")
        ranges_through_proxy(checks, nginx.base, "/original/clip.mp4", original, request(servers[0].base + "/original/clip.mp4")[1]["etag"],
                             "nginx pass-through /original/clip.mp4")

        # 2. Concurrent writers, one shared cache: every replica computes the same cold derivatives at once.
        cold = [f"/mp4/anim{i}.gif?size={s}" for i in range(3) for s in (96, 128, 150)]
        cold += [f"/thumb/photo.jpg?size={s}" for s in (100, 101, 102, 103)]
        cold += ["/preview/clip.mp4?size=160", "/preview/clip.mp4?size=200", "/poster/clip.mp4?size=120"]
        started = time.time()
        results = hammer(servers, cold)
        elapsed = time.time() - started
        answers = sum(len(v) for v in results.values())
        consistent = all(len({(st, e, d) for st, e, d, _ in v}) == 1 and v[0][0] == 200 for v in results.values())
        checks.check(consistent, f"{answers} concurrent requests for {len(cold)} cold derivatives on {len(servers)} replicas "
                                 f"({elapsed:.1f} s): every answer for a target has the same status 200, ETag and bytes")
        if not consistent:
            for t, v in results.items():
                print(f"     {t}: {sorted({(st, e, l) for st, e, _, l in v})}")
        served = {v[0][2]: t for t, v in results.items()}

        # Every object in the shared cache: named by its own hash, decodable, one of the served bodies.
        objects = []
        for dirpath, _, files in os.walk(os.path.join(cache, "objects")):
            objects += [os.path.join(dirpath, f) for f in files]
        tmp_left = [f for _, _, fs in os.walk(os.path.join(cache, "tmp")) for f in fs]
        checks.check(not tmp_left, f"no temporary file left in the shared cache ({len(tmp_left)} found)")
        torn = [o for o in objects if sha(open(o, "rb").read()) != os.path.basename(o)]
        checks.check(objects and not torn, f"{len(objects)} cache objects each hash to their own name ({len(torn)} torn or wrong)")
        missing = [t for d, t in served.items() if not any(os.path.basename(o) == d for o in objects)]
        checks.check(not missing, f"every derivative served is in the shared cache ({len(missing)} missing)")
        bad = []
        for o in objects:
            target = served.get(os.path.basename(o))
            if target is None:
                continue
            kind = "video" if target.startswith(("/mp4/", "/preview/")) else "image"
            if not decodes(o, kind):
                bad.append(target)
        checks.check(not bad, f"every cached derivative decodes (ffprobe counts H.264 frames; ffmpeg decodes stills): {bad or 'all'}")

        # A fresh computation: a separate process with an empty cache makes the same bytes.
        fresh = Server(flipbook, root, os.path.join(work, "fresh-cache"), os.path.join(work, "serve-fresh.log"))
        differ = [t for t, v in results.items() if sha(request(fresh.base + t)[2]) != v[0][2]]
        checks.check(not differ, f"a fresh process with an empty cache computes the same bytes for all {len(cold)} ({differ or 'none differ'})")
    finally:
        if nginx:
            nginx.stop()
        codes = [s.stop() for s in servers] + ([fresh.stop()] if fresh else [])
        if servers:
            checks.check(all(c == 0 for c in codes), f"every flipbook serve stopped on SIGTERM with status 0 ({codes})")
        if nginx:
            pid_alive = os.path.exists(os.path.join(nginx.prefix, "nginx.pid"))
            checks.check(not pid_alive, "nginx stopped (its pid file is gone)")
        if args.keep:
            print("kept", work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"replicas: {checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
