#!/usr/bin/env python3
"""make bench-serve: side by side on loopback, alternating runs, medians.

1. wrk, 64 connections, `Range: bytes=0-65535` on a cached ~1 MB MP4: flipbook serve (with a disk cache, so
   the hits go out with sendfile from the cached object, as nginx sends its file) vs nginx-light (generated
   config, sendfile on) serving the same bytes from disk. Medians of RUNS (default 5) alternating pairs: req/s,
   p99, and the server's user and system CPU per request (from /proc/<pid>/stat), with the ratios.
2. Memory: `--memory-cache 32MB`, 160 different derivative URLs (thumbnails 200-279 px of one photo and MP4s
   of 80 symlinks to one 96-frame 320x180 GIF) at concurrency 8: peak RSS (VmHWM).
3. Cold derivatives at concurrency 8: thumbnails of 24 MP JPEGs and MP4s of the corpus GIFs, the server
   (fresh, no disk cache) vs running the CLI once per request: throughput and p50/p99 per request.
Both sides log nothing per request (nginx access_log off, flipbook --log-level warning).
"""
import collections
import contextlib, concurrent.futures, os, re, shutil, signal, socket, statistics, subprocess, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import callgrind  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
WORK = os.path.join(ROOT, "bench/work/serve")
FLIPBOOK = os.path.join(ROOT, ".build/release/flipbook")
CORPUS = os.environ.get("FLIPBOOK_CORPUS") or os.path.join(os.path.dirname(ROOT), "shared/corpus")
RUNS = int(os.environ.get("RUNS", "3"))
# NGINX_OPEN_FILE_CACHE=1: nginx keeps its files open between requests (open_file_cache), saving the open, fstat
# and close it otherwise makes per request; off by default, as Debian's nginx.conf ships.
NGINX_OPEN_FILE_CACHE = os.environ.get("NGINX_OPEN_FILE_CACHE", "") not in ("", "0")
# Pairs of the range scenario: its ratios are tight, so at least five medians' worth unless RUNS says otherwise.
RANGE_RUNS = int(os.environ.get("RUNS", "5"))
DURATION = os.environ.get("WRK_DURATION", "10s")
# The range every wrk request asks for (the crossover sweep of bench/serve_ab.py changes it).
RANGE = os.environ.get("WRK_RANGE", "bytes=0-65535")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listening on {port}")


def start_flipbook(root, *extra):
    port = free_port()
    proc = subprocess.Popen([FLIPBOOK, "serve", root, "--port", str(port), "--log-level", "warning", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    return proc, port


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def get(url, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(req, timeout=600) as r:
        return r.read()


def peak_rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_times(pid):
    """User and system CPU seconds of a process and its children now alive (nginx's workers), from
    /proc/<pid>/stat (utime, stime)."""
    tick = os.sysconf("SC_CLK_TCK")
    user = system = 0
    for p in server_pids(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            user += int(fields[11])
            system += int(fields[12])
        except (OSError, IndexError):
            pass
    return user / tick, system / tick


def server_pids(pid):
    """A server and its children now alive (nginx's workers)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [pid] + [int(p) for p in f.read().split()]
    except OSError:
        return [pid]


def perf_counters():
    """Why `perf stat -e instructions` cannot count here (None if it can): VMs often expose no PMU."""
    try:
        out = subprocess.run(["perf", "stat", "-x,", "-e", "instructions", "true"], capture_output=True, text=True).stderr
    except OSError:
        return "perf is not installed (apt-get install linux-perf)"
    if "<not supported>" in out or "<not counted>" in out:
        return "this machine exposes no hardware counters to perf"
    return None if re.search(r"^\d+,", out, re.M) else "perf stat failed: " + out.strip().splitlines()[-1][:80]


PERF_UNAVAILABLE = perf_counters()


Run = collections.namedtuple("Run", "rps p99 cpu user system instructions client")


def wrk(url, pid):
    """One wrk run: req/s, p99 ms, the server's CPU microseconds per request (user + system, and each), its
    instructions per request (user and kernel, from perf stat on the server's processes; nan where the machine
    has no counters) and wrk's own CPU microseconds per request (from wait4). On a 2-core machine the client
    shares the cores with the server, so a server whose responses cost the client more gets less of them."""
    user0, system0 = cpu_times(pid)
    counter = None
    if PERF_UNAVAILABLE is None:
        pids = ",".join(str(p) for p in server_pids(pid))
        counter = subprocess.Popen(["perf", "stat", "-x,", "-e", "instructions", "-p", pids],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    client = subprocess.Popen(["wrk", "-t2", "-c64", "-d" + DURATION, "--latency", "-H", "Range: " + RANGE, url],
                              stdout=subprocess.PIPE, text=True)
    out = client.stdout.read()
    _, status, usage = os.wait4(client.pid, 0)
    client.returncode = os.waitstatus_to_exitcode(status)
    if client.returncode != 0:
        raise RuntimeError(f"wrk exited with {client.returncode}")
    client_cpu = usage.ru_utime + usage.ru_stime
    user1, system1 = cpu_times(pid)
    instructions = float("nan")
    if counter:
        counter.send_signal(signal.SIGINT)
        line = re.search(r"^(\d+),", counter.communicate()[1], re.M)
        instructions = float(line.group(1)) if line else float("nan")
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if non2xx:
        raise RuntimeError(f"{url}: {non2xx.group(1)} non-2xx responses")
    per = 1e6 / max(1, requests)
    user, system = (user1 - user0) * per, (system1 - system0) * per
    return Run(rps, float(p99.group(1)) * scale, user + system, user, system, instructions / max(1, requests), client_cpu * per)


def nginx_conf(docroot, port, workers="auto", master=True):
    """A generated nginx.conf serving `docroot` on `port` (sendfile on, no access log); returns its path."""
    conf_dir = tempfile.mkdtemp(prefix="flipbook-nginx-")
    conf = os.path.join(conf_dir, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""worker_processes {workers};
{"" if master else "master_process off;"}
pid {conf_dir}/nginx.pid;
error_log {conf_dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    {"open_file_cache max=1000 inactive=60s;" if NGINX_OPEN_FILE_CACHE else ""}
    types {{ video/mp4 mp4; }}
    client_body_temp_path {conf_dir}/body;
    proxy_temp_path {conf_dir}/proxy;
    fastcgi_temp_path {conf_dir}/fastcgi;
    uwsgi_temp_path {conf_dir}/uwsgi;
    scgi_temp_path {conf_dir}/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {docroot};
        etag on;
    }}
}}
""")
    return conf


def nginx(docroot):
    port = free_port()
    conf = nginx_conf(docroot, port)
    proc = subprocess.Popen(["nginx", "-c", conf, "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    return proc, port


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


def metric(port, series):
    """The value of one series in flipbook's /metrics (0 if absent)."""
    text = get(f"http://127.0.0.1:{port}/metrics").decode()
    found = re.search("^" + re.escape(series) + r" (\S+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


@contextlib.contextmanager
def range_servers():
    """flipbook serving big.gif's MP4 and nginx serving the same bytes as big.mp4 from `docroot`; yields (fb,
    fb_port, ng, ng_port, docroot, the MP4's bytes) and stops both (the docroot stays, for callgrind's run). flipbook has a disk cache, as a deployment that compares with nginx has: the MP4's
    hits go out with sendfile from its cached object (--sendfile-min), where without one they are copied from
    memory."""
    root = os.path.join(WORK, "root")
    cache = tempfile.mkdtemp(prefix="flipbook-ranges-cache-")
    fb, fb_port = start_flipbook(root, "--memory-cache", "256MB", "--disk-cache", cache)
    try:
        mp4 = get(f"http://127.0.0.1:{fb_port}/mp4/big.gif")
        docroot = tempfile.mkdtemp(prefix="flipbook-nginx-root-")
        os.chmod(docroot, 0o755)  # nginx's workers run as www-data
        with open(os.path.join(docroot, "big.mp4"), "wb") as f:
            f.write(mp4)
        os.chmod(os.path.join(docroot, "big.mp4"), 0o644)
        ng, ng_port = nginx(docroot)
        try:
            yield fb, fb_port, ng, ng_port, docroot, mp4
        finally:
            stop(ng)
    finally:
        stop(fb)
        shutil.rmtree(cache, ignore_errors=True)


def bench_ranges():
    with range_servers() as (fb, fb_port, ng, ng_port, docroot, mp4):
        a, b = get(f"http://127.0.0.1:{ng_port}/big.mp4", {"Range": "bytes=0-65535"}), get(
            f"http://127.0.0.1:{fb_port}/mp4/big.gif", {"Range": "bytes=0-65535"})
        assert a == b and len(a) == 65536, "nginx and flipbook disagree on the range bytes"
        disk_hits = metric(fb_port, 'flipbook_cache_hits_total{cache="disk"}')
        fb_runs, ng_runs = [], []
        for i in range(RANGE_RUNS):
            # Alternate which server goes first, so neither always runs in the other's wake.
            order = [(fb_runs, fb.pid, f"http://127.0.0.1:{fb_port}/mp4/big.gif"), (ng_runs, ng.pid, f"http://127.0.0.1:{ng_port}/big.mp4")]
            for runs, pid, url in (order if i % 2 == 0 else order[::-1]):
                runs.append(wrk(url, pid))
        sent_from_file = metric(fb_port, 'flipbook_cache_hits_total{cache="disk"}') - disk_hits

    def m(runs, field):
        return median([getattr(r, field) for r in runs])

    print(f"== wrk -c64 Range: {RANGE} on a cached {len(mp4) / 1e6:.2f} MB MP4, {RANGE_RUNS} alternating pairs of {DURATION}")
    print(f"   (both {os.cpu_count()} threads/workers, no per-request logging; flipbook with --disk-cache, "
          f"{sent_from_file:,.0f} hits from the open cached object (sendfile); server CPU per request from /proc/<pid>/stat)")
    for name, runs in (("flipbook serve", fb_runs), ("nginx-light", ng_runs)):
        print(f"   {name:15s} {m(runs, 'rps'):10.0f} req/s  p99 {m(runs, 'p99'):7.2f} ms  CPU {m(runs, 'cpu'):6.1f} us/req "
              f"(user {m(runs, 'user'):5.1f}, system {m(runs, 'system'):5.1f})   runs {[round(r.rps) for r in runs]}")
    print(f"   ratio flipbook/nginx req/s: {m(fb_runs, 'rps') / m(ng_runs, 'rps'):.2f}x (target >= 1.0x); "
          f"CPU per request: {m(fb_runs, 'cpu') / m(ng_runs, 'cpu'):.2f}x nginx's (target <= 1.0x; "
          f"user {m(fb_runs, 'user') / m(ng_runs, 'user'):.2f}x, system {m(fb_runs, 'system') / m(ng_runs, 'system'):.2f}x)")
    if PERF_UNAVAILABLE:
        print(f"   instructions per request: not measured ({PERF_UNAVAILABLE}); CPU time above is the figure")
    else:
        print(f"   instructions per request (perf stat, user + kernel, server processes): flipbook {m(fb_runs, 'instructions'):,.0f}, "
              f"nginx {m(ng_runs, 'instructions'):,.0f}: {m(fb_runs, 'instructions') / m(ng_runs, 'instructions'):.2f}x")
    print(f"   client (wrk) CPU per request: {m(fb_runs, 'client'):.1f} us against flipbook, {m(ng_runs, 'client'):.1f} us against nginx "
          f"(server + client: {m(fb_runs, 'cpu') + m(fb_runs, 'client'):.1f} vs {m(ng_runs, 'cpu') + m(ng_runs, 'client'):.1f} us)")
    print(f"   per-pair ratios, req/s: {[round(a.rps / b.rps, 2) for a, b in zip(fb_runs, ng_runs)]}; "
          f"CPU: {[round(a.cpu / b.cpu, 2) for a, b in zip(fb_runs, ng_runs)]}")
    bench_instructions(docroot)


def strace_per_request(pids, url):
    """System calls per request of the processes `pids` (every thread of each) while wrk runs 3 s against `url`:
    `strace -c` counts them (it slows the server many times over, so only counts are read, never time)."""
    tids = [t for p in pids for t in os.listdir(f"/proc/{p}/task")]
    out = tempfile.mktemp(prefix="flipbook-strace-")
    tracer = subprocess.Popen(["strace", "-c", "-o", out] + [a for t in tids for a in ("-p", t)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)  # attached (strace prints nothing on attach to a file; a second is ample)
    client = subprocess.run(["wrk", "-t2", "-c64", "-d3s", "-H", "Range: " + RANGE, url], capture_output=True, text=True, check=True)
    tracer.send_signal(signal.SIGINT)
    tracer.wait()
    requests = int(re.search(r"(\d+) requests in", client.stdout).group(1))
    calls = {}
    for line in open(out):
        fields = line.split()
        if len(fields) >= 5 and fields[0][0].isdigit() and fields[-1] != "total":
            calls[fields[-1]] = int(fields[3])
    os.unlink(out)
    return requests, {name: n / max(1, requests) for name, n in calls.items()}


def bench_syscalls():
    """The kernel's share, call by call: system calls per 64 KB range hit of each server (issue 47)."""
    with range_servers() as (fb, fb_port, ng, ng_port, _, _):
        get(f"http://127.0.0.1:{fb_port}/mp4/big.gif", {"Range": RANGE})
        fb_n, fb_calls = strace_per_request([fb.pid], f"http://127.0.0.1:{fb_port}/mp4/big.gif")
        ng_n, ng_calls = strace_per_request(server_pids(ng.pid)[1:], f"http://127.0.0.1:{ng_port}/big.mp4")
    print(f"== system calls per request, Range: {RANGE} (strace -c over wrk -t2 -c64 3 s; {fb_n} and {ng_n} requests)")
    names = sorted(set(fb_calls) | set(ng_calls), key=lambda n: -(fb_calls.get(n, 0) + ng_calls.get(n, 0)))
    for name in names:
        a, b = fb_calls.get(name, 0), ng_calls.get(name, 0)
        if a >= 0.005 or b >= 0.005:
            print(f"   {name:<16} flipbook {a:6.2f}   nginx {b:6.2f}")
    print(f"   {'all':<16} flipbook {sum(fb_calls.values()):6.2f}   nginx {sum(ng_calls.values()):6.2f}")


def callgrind_per_request(cmd, url):
    """User-space instructions per request of a server run under valgrind's callgrind: counters zeroed after a
    warm-up, then `wrk -t1 -c8` for 5 s, then dumped. Counts repeat across machines where wall and CPU time do
    not (and need no hardware counters); kernel work (the copy into the socket, nginx's sendfile) is not in them."""
    folder = tempfile.mkdtemp(prefix="flipbook-callgrind-")
    out = os.path.join(folder, "callgrind.out")
    proc = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port = int(re.search(r":(\d+)/", url).group(1))
        wait_port(port, timeout=180)
        get(url, {"Range": "bytes=0-65535"})
        subprocess.run(["wrk", "-t1", "-c8", "-d2s", "-H", "Range: bytes=0-65535", url], capture_output=True, check=True)
        subprocess.run(["callgrind_control", "-z", str(proc.pid)], capture_output=True, check=True)
        run = subprocess.run(["wrk", "-t1", "-c8", "-d5s", "-H", "Range: bytes=0-65535", url], capture_output=True, text=True, check=True).stdout
        subprocess.run(["callgrind_control", "-d", str(proc.pid)], capture_output=True, check=True)
        requests = int(re.search(r"(\d+) requests in", run).group(1))
        return callgrind.total(out + ".1") / max(1, requests), requests
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(folder, ignore_errors=True)


def bench_instructions(docroot):
    """`ranges` again under callgrind, one server process each: nginx with master_process off and one worker,
    flipbook serving the MP4 that a plain run left in a disk cache (a conversion under valgrind takes minutes)."""
    if not callgrind.available():
        print("== instructions per request: valgrind is not installed; not measured")
        return
    root = os.path.join(WORK, "root")
    cache = tempfile.mkdtemp(prefix="flipbook-cg-cache-")
    fb, port = start_flipbook(root, "--disk-cache", cache)
    try:
        get(f"http://127.0.0.1:{port}/mp4/big.gif")
    finally:
        stop(fb)
    binary = callgrind.without_debug_info(FLIPBOOK, cache)
    fb_port = free_port()
    fbi, fbn = callgrind_per_request([binary, "serve", root, "--port", str(fb_port), "--log-level", "warning", "--disk-cache", cache],
                                     f"http://127.0.0.1:{fb_port}/mp4/big.gif")
    ng_port = free_port()
    conf = nginx_conf(docroot, ng_port, workers=1, master=False)
    ngi, ngn = callgrind_per_request(["nginx", "-c", conf, "-g", "daemon off;"], f"http://127.0.0.1:{ng_port}/big.mp4")
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(os.path.dirname(conf), ignore_errors=True)
    print(f"== user-space instructions per 64 KB range (valgrind callgrind, wrk -t1 -c8 5 s, {fbn} and {ngn} requests)")
    print(f"   flipbook serve {fbi:10,.0f}   nginx-light {ngi:10,.0f}   ratio {fbi / ngi:.2f}x")
    print("   (machine-independent; the kernel's share, the copy into the socket that nginx's sendfile avoids, is not counted)")


def bench_memory():
    root = os.path.join(WORK, "root")
    fb, port = start_flipbook(root, "--memory-cache", "32MB")
    try:
        urls = [f"http://127.0.0.1:{port}/thumb/photo.jpg?size={s}" for s in range(200, 280)]
        urls += [f"http://127.0.0.1:{port}/mp4/links/clip{i:02d}.gif" for i in range(80)]
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            sizes = list(pool.map(lambda u: len(get(u)), urls))
        rss = peak_rss_mb(fb.pid)
    finally:
        stop(fb)
    print(f"== memory: --memory-cache 32MB, {len(urls)} different derivative URLs at concurrency 8 ({sum(sizes) / 1e6:.1f} MB served)")
    print(f"   peak RSS (VmHWM) {rss:.1f} MB (target <= 152 MB)")


def timed(fn):
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def bench_cold():
    photos = sorted(os.path.join(WORK, "photos", f) for f in os.listdir(os.path.join(WORK, "photos")) if f.endswith(".jpg"))
    gifs = []
    for dirpath, _, files in os.walk(os.path.join(CORPUS, "gif")):
        gifs += [os.path.join(dirpath, f) for f in files if f.endswith(".gif") and os.path.getsize(os.path.join(dirpath, f)) < 8_000_000]
    if not gifs:
        print(f"== cold: corpus GIFs not found at {CORPUS}; MP4 half skipped")
    # Only GIFs the CLI converts (the corpus holds broken and hostile ones, which both sides reject in
    # microseconds and would flatter whichever side counted them); this pass also warms the page cache.
    probe_dir = tempfile.mkdtemp(prefix="flipbook-cold-probe-")
    gifs = [g for i, g in enumerate(sorted(gifs))
            if subprocess.run([FLIPBOOK, "convert", g, "-o", f"{probe_dir}/p{i}.mp4", "--jobs", "1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0]
    gifs = gifs[:int(os.environ.get("COLD_GIFS", "12"))]

    def server_run(kind):
        root = os.path.join(WORK, "photos") if kind == "thumb" else os.path.join(CORPUS, "gif")
        items = photos if kind == "thumb" else gifs
        fb, port = start_flipbook(root, "--memory-cache", "64MB")
        try:
            def one(path):
                rel = urllib.request.quote(os.path.relpath(path, root))
                url = f"http://127.0.0.1:{port}/thumb/{rel}?size=256" if kind == "thumb" else f"http://127.0.0.1:{port}/mp4/{rel}"
                try:
                    return timed(lambda: get(url))
                except Exception:
                    return None
            t = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                times = [x for x in pool.map(one, items) if x is not None]
            wall = time.perf_counter() - t
        finally:
            stop(fb)
        return times, wall

    def cli_run(kind):
        items = photos if kind == "thumb" else gifs
        # A new folder each run: `convert` skips an output newer than its input ("up to date"), so reusing
        # the last run's folder timed nothing.
        outdir = tempfile.mkdtemp(prefix="flipbook-cold-")

        def one(ix):
            i, path = ix
            if kind == "thumb":
                cmd = [FLIPBOOK, "thumb", path, "-o", f"{outdir}/t{i}.jpg", "--size", "256", "--jobs", "1"]
            else:
                cmd = [FLIPBOOK, "convert", path, "-o", f"{outdir}/v{i}.mp4", "--jobs", "1"]
            result = []
            t = timed(lambda: result.append(subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
            return t if result[0].returncode == 0 else None  # a failure counts on neither side
        t = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            times = [x for x in pool.map(one, enumerate(items)) if x is not None]
        return times, time.perf_counter() - t

    for kind, items in (("thumb", photos), ("mp4", gifs)):
        if not items:
            continue
        s_tp, c_tp, s_all, c_all = [], [], [], []
        for _ in range(max(1, RUNS - 1)):
            times, wall = server_run(kind); s_tp.append(len(times) / wall); s_all += times
            times, wall = cli_run(kind); c_tp.append(len(times) / wall); c_all += times
        label = "thumbnails (256 px) of 24 MP JPEGs" if kind == "thumb" else "MP4s of corpus GIFs"
        print(f"== cold {label}: {len(items)} requests at concurrency 8, {max(1, RUNS - 1)} alternating runs")
        print(f"   flipbook serve   {median(s_tp):6.2f} req/s  p50 {pct(s_all, 50):8.1f} ms  p99 {pct(s_all, 99):8.1f} ms")
        print(f"   CLI per request  {median(c_tp):6.2f} req/s  p50 {pct(c_all, 50):8.1f} ms  p99 {pct(c_all, 99):8.1f} ms")
        print(f"   throughput ratio server/CLI: {median(s_tp) / median(c_tp):.2f}x")


if __name__ == "__main__":
    parts = sys.argv[1:] or ["ranges", "memory", "cold"]
    if "ranges" in parts: bench_ranges()
    if "memory" in parts: bench_memory()
    if "cold" in parts: bench_cold()
    if "syscalls" in parts: bench_syscalls()
