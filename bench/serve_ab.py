#!/usr/bin/env python3
"""Before/after for the range benchmark: several `flipbook` binaries (or one binary with several sets of
options) and nginx-light, alternating.

    bench/serve_ab.py OLD_FLIPBOOK,NEW_FLIPBOOK [ROUNDS]
    bench/serve_ab.py "BIN --sendfile-min off,BIN --sendfile-min 0" [ROUNDS]

Runs the scenario of `serve_bench.py ranges` (wrk -t2 -c64, `Range: bytes=0-65535` or WRK_RANGE, a cached
~1 MB MP4, nginx with the same generated config) against every contender and nginx in one run, order
reversed every other round, and prints medians of req/s, p99 and server CPU microseconds per request (user
and system apart, from /proc/<pid>/stat). A
contender is a binary and, after a space, options for `flipbook serve`; every contender gets a disk cache
of its own (so `--sendfile-min` decides how hits are sent). Needs the inputs of `bench/serve.sh`
(bench/work/serve/root/big.gif). WRK_DURATION defaults to 5s here.
"""
import os, shutil, statistics, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("WRK_DURATION", "5s")
import serve_bench as sb  # noqa: E402

bins = sys.argv[1].split(",")
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 4
root = os.path.join(sb.WORK, "root")
servers = []
caches = []
for b in bins:
    binary, *options = b.split()
    sb.FLIPBOOK = os.path.abspath(binary)
    caches.append(tempfile.mkdtemp(prefix="flipbook-ab-cache-"))
    proc, port = sb.start_flipbook(root, "--memory-cache", "256MB", "--disk-cache", caches[-1], *options)
    mp4 = sb.get(f"http://127.0.0.1:{port}/mp4/big.gif")
    servers.append((b, proc, f"http://127.0.0.1:{port}/mp4/big.gif"))
docroot = tempfile.mkdtemp(prefix="flipbook-ab-nginx-")
os.chmod(docroot, 0o755)
with open(os.path.join(docroot, "big.mp4"), "wb") as f:
    f.write(mp4)
os.chmod(os.path.join(docroot, "big.mp4"), 0o644)
ng, ng_port = sb.nginx(docroot)
servers.append(("nginx-light", ng, f"http://127.0.0.1:{ng_port}/big.mp4"))
results = {name: [] for name, _, _ in servers}
try:
    for i in range(rounds):
        for name, proc, url in (servers if i % 2 == 0 else servers[::-1]):
            results[name].append(sb.wrk(url, proc.pid))
finally:
    for _, proc, _ in servers:
        sb.stop(proc)
    for cache in caches:
        shutil.rmtree(cache, ignore_errors=True)
print(f"== wrk -c64 Range: {sb.RANGE}, {rounds} alternating rounds of {sb.DURATION}")
for name, rs in results.items():
    med = lambda field: statistics.median(getattr(r, field) for r in rs)
    print(f"   {name[-40:]:40s} {med('rps'):8.0f} req/s  p99 {med('p99'):6.2f} ms  CPU {med('cpu'):5.1f} us/req "
          f"(user {med('user'):5.1f}, system {med('system'):5.1f})  wrk {med('client'):5.1f} us/req   runs {[round(r.rps) for r in rs]}")
ng_rps = statistics.median(r.rps for r in results["nginx-light"])
ng_cpu = statistics.median(r.cpu for r in results["nginx-light"])
for name in bins:
    print(f"   ratio {name} / nginx: req/s {statistics.median(r.rps for r in results[name]) / ng_rps:.2f}x, "
          f"CPU per request {statistics.median(r.cpu for r in results[name]) / ng_cpu:.2f}x")
