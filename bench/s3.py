#!/usr/bin/env python3
"""make bench-s3 (issue 43): Flipbook with its sources and outputs in S3 (moto's server on loopback, behind a
pass-through proxy that counts requests and bytes on the wire), side by side with the same work on local files
and with what a user would script around the aws CLI.

1. posters: the five videos of the posters bench and a 1 GB one in a bucket: bytes fetched per poster (target
   <= 5% of the large objects) and wall against the same poster from the local file (target <= 1.5x).
2. convert: the bench's GIFs (scripts/make-bench-gifs.py, then the corpus's animated GIFs; 24 in all), bucket to
   bucket, `--jobs 2`, against `aws s3 cp` down, `ffmpeg -tune animation`, `aws s3 cp` up under `xargs -P 2`
   (target <= 0.5x its wall).
3. ingest: the default recipe through two workers with S3 in and out against local disk (bench/ingest_worker.py's
   day of uploads, S3_INGEST_FILES of them, 200 by default; target within 1.2x).
4. memory: a 200 MB GIF object converted to a 150 MB MP4 object (a multipart upload) against the same files on
   local disk: peak RSS (GNU time) and wall, bucket to bucket against file to file (target: the same bounds).

    bench/s3.py BIN [rounds]      (needs the venv: boto3, moto[server], awscli)
"""
import json, math, os, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import ROOT  # noqa: E402
import remote  # noqa: E402  (clips, big_clip)

BIN = os.path.abspath(sys.argv[1])
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
VENV = os.path.join(ROOT, ".build", "venv", "bin")
PARTS = os.environ.get("PARTS", "1,2,3,4").split(",")


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port):
    import socket
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


class Stack:
    """moto on a free port, the counting proxy in front of it, and the environment that points at the proxy."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="flipbook-bench-s3-")
        self.moto_port = free_port()
        self.moto = subprocess.Popen([os.path.join(VENV, "moto_server"), "-H", "127.0.0.1", "-p", str(self.moto_port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.moto_port)
        self.log = os.path.join(self.dir, "proxy.log")
        port_file = os.path.join(self.dir, "port")
        self.env = dict(os.environ, AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_REGION="us-east-1",
                        AWS_DEFAULT_REGION="us-east-1", HOME=self.dir, AWS_CONFIG_FILE=os.path.join(self.dir, "c"),
                        AWS_SHARED_CREDENTIALS_FILE=os.path.join(self.dir, "k"))
        self.proxy = subprocess.Popen([os.path.join(VENV, "python3"), os.path.join(ROOT, "Tests/storage/fault_proxy.py"), port_file,
                                       str(self.moto_port), os.path.join(self.dir, "control.json"), self.log],
                                      env=dict(self.env, AWS_ENDPOINT_URL=f"http://127.0.0.1:{self.moto_port}"))
        while not os.path.exists(port_file):
            time.sleep(0.02)
        self.env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:" + open(port_file).read()
        self.direct = dict(self.env, AWS_ENDPOINT_URL=f"http://127.0.0.1:{self.moto_port}")

    def tool(self, *args):
        return subprocess.run([os.path.join(VENV, "python3"), os.path.join(ROOT, "Tests/storage/s3tool.py"), *args],
                              env=self.direct, check=True, capture_output=True, text=True).stdout

    def traffic(self):
        """(requests, bytes) the proxy has relayed so far."""
        try:
            lines = [line.split() for line in open(self.log) if line[:1].isupper() and len(line.split()) == 4]
        except OSError:
            return 0, 0
        return len(lines), sum(int(p[3]) for p in lines if p[3].isdigit())

    def close(self):
        for p in (self.proxy, self.moto):
            p.kill()
            p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def timed(cmd, env, stack):
    r0, b0 = stack.traffic()
    start = time.monotonic()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, shell=isinstance(cmd, str))
    wall = time.monotonic() - start
    if done.returncode != 0:
        raise RuntimeError(f"{cmd if isinstance(cmd, str) else cmd[:3]} failed: {done.stderr[-400:]}")
    r1, b1 = stack.traffic()
    return wall, r1 - r0, b1 - b0


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def posters(stack):
    work = os.path.join(ROOT, "bench", "work", "remote")
    os.makedirs(work, exist_ok=True)
    files = remote.clips() + [remote.big_clip(work)]
    stack.tool("mb", "videos")
    for f in files:
        stack.tool("put", "videos", os.path.basename(f), f)
    out = tempfile.mkdtemp(prefix="flipbook-bench-s3-posters-")
    print(f"== posters of {len(files)} objects (s3://videos/, through the counting proxy) against the local file, "
          f"{ROUNDS} alternating rounds, medians")
    print(f"   {'object':34s} {'MB':>7s} | {'s3 ms':>7s} {'file ms':>7s} {'ratio':>6s} | {'requests':>8s} {'KB fetched':>10s} {'%':>6s} | "
          f"{'moto ms':>8s} {'net':>6s}")
    rows = []
    for f in files:
        name = os.path.basename(f)
        s3 = [BIN, "poster", f"s3://videos/{name}", "-o", os.path.join(out, "s.jpg"), "--size", "256"]
        local = [BIN, "poster", f, "-o", os.path.join(out, "l.jpg"), "--size", "256"]
        a, b = [], []
        for i in range(ROUNDS + 1):
            pair = [(a, s3), (b, local)] if i % 2 == 0 else [(b, local), (a, s3)]
            for sink, cmd in pair:
                r = timed(cmd, stack.env, stack)
                if i > 0:
                    sink.append(r)
        wall_s3, wall_local = statistics.median(x[0] for x in a), statistics.median(x[0] for x in b)
        requests, fetched = statistics.median(x[1] for x in a), statistics.median(x[2] for x in a)
        size = os.path.getsize(f)
        floor = server_floor(stack, "videos", name)
        rows.append((name, size, wall_s3, wall_local, requests, fetched, floor))
        # Where moto's time is all of it (or more: its per-GET time varies by more than our share), no net figure.
        net = (wall_s3 - floor * requests) / wall_local
        shown = f"{net:5.2f}x" if net > 0.2 else "  moto"
        print(f"   {name:34s} {size / 1e6:7.1f} | {wall_s3 * 1000:7.0f} {wall_local * 1000:7.0f} {wall_s3 / wall_local:5.2f}x | "
              f"{requests:8.0f} {fetched / 1e3:10.0f} {100 * fetched / size:5.2f}% | {floor * 1000:8.0f} {shown}")
    print(f"   geomean wall s3 / local {geo([r[2] / r[3] for r in rows]):.2f}x (target <= 1.5x); fetched of the objects over "
          f"50 MB: {', '.join(f'{100 * r[5] / r[1]:.2f}%' for r in rows if r[1] > 50e6)} (target <= 5%)")
    print(f"   the server's share: moto's time for one 64 KB ranged GET of the object (boto3, in-process, through the same "
          f"proxy; 'moto ms'); net = (s3 wall - requests x that) / local; geomean net over the objects it is shown for "
          f"{geo([n for n in ((r[2] - r[6] * r[4]) / r[3] for r in rows) if n > 0.2]):.2f}x (target <= 1.5x)")


def server_floor(stack, bucket, key):
    """Seconds the object store itself takes for one 64 KB ranged GET of `key` (median of 5), measured by boto3 in
    this process: what any client pays per request, whatever it is written in. A poster's requests are all
    ranged GETs. (moto answers a HEAD of a 1 GB object in 6 ms and a 64 KB range of it in about 680 ms: it
    reads the object to answer a range. This bench first timed a HEAD and a GET together and took half of
    that per request, which left half of moto's time in our column.)"""
    import boto3
    client = boto3.client("s3", endpoint_url=stack.env["AWS_ENDPOINT_URL"], region_name="us-east-1",
                          aws_access_key_id="bench", aws_secret_access_key="bench")
    client.head_object(Bucket=bucket, Key=key)  # the connection, once
    times = []
    for _ in range(5):
        start = time.monotonic()
        client.get_object(Bucket=bucket, Key=key, Range="bytes=0-65535")["Body"].read()
        times.append(time.monotonic() - start)
    return statistics.median(times)


def bench_gifs():
    made = os.path.join(ROOT, "bench", "work", "gifs")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make-bench-gifs.py"), made], check=True, capture_output=True)
    gifs = sorted(os.path.join(made, f) for f in os.listdir(made) if f.endswith(".gif"))
    import gif2mp4
    gifs += gif2mp4.corpus_gifs()
    return gifs[:24]


def convert(stack):
    gifs = bench_gifs()
    stack.tool("mb", "gifs", "out")
    for g in gifs:
        stack.tool("put", "gifs", "set/" + os.path.basename(g), g)
    aws = os.path.join(VENV, "aws")
    peer_args = "-fps_mode passthrough -c:v libx264 -tune animation -movflags +faststart -pix_fmt yuv420p " \
                "-vf \"scale=trunc(iw/2)*2:trunc(ih/2)*2\" -an"
    print(f"\n== convert {len(gifs)} GIFs bucket to bucket, --jobs 2, against aws s3 cp + ffmpeg -tune animation + aws s3 cp "
          f"under xargs -P 2; {ROUNDS} alternating rounds, medians")
    ours, peer = [], []
    for i in range(ROUNDS + 1):
        tmp = tempfile.mkdtemp(prefix="flipbook-bench-s3-loop-")
        mine = [BIN, "convert", "s3://gifs/set/", "-o", f"s3://out/ours{i}/", "--jobs", "2"]
        # Names as arguments ("$1"), never spliced into the script: some corpus GIFs have spaces or parentheses.
        loop = (f"{aws} s3 ls s3://gifs/set/ | cut -c32- | tr '\\n' '\\0' | xargs -0 -P 2 -I{{}} sh -c '"
                f"{aws} s3 cp --quiet \"s3://gifs/set/$1\" \"{tmp}/$1\" && ffmpeg -v error -y -i \"{tmp}/$1\" {peer_args} \"{tmp}/$1.mp4\" && "
                f"{aws} s3 cp --quiet \"{tmp}/$1.mp4\" \"s3://out/peer{i}/$1.mp4\"' _ {{}}")
        pair = [(ours, mine), (peer, loop)] if i % 2 == 0 else [(peer, loop), (ours, mine)]
        for sink, cmd in pair:
            r = timed(cmd, stack.env, stack)
            if i > 0:
                sink.append(r)
        shutil.rmtree(tmp, ignore_errors=True)
    a, b = statistics.median(x[0] for x in ours), statistics.median(x[0] for x in peer)
    print(f"   flipbook convert {a:6.2f} s, {statistics.median(x[1] for x in ours):5.0f} requests | shell loop {b:6.2f} s, "
          f"{statistics.median(x[1] for x in peer):5.0f} requests | ratio {a / b:.2f}x (target <= 0.5x)")
    print(f"   per round: {[round(x[0] / y[0], 2) for x, y in zip(ours, peer)]}")


def ingest(stack):
    """The default recipe through two workers (--concurrency 1 each) on one PostgreSQL 15, sources and outputs
    in S3 (through the counting proxy), against the same workers on local disk; alternating rounds, medians of
    PostgreSQL's own clock (bench/ingest_worker.py's run_jobs: from the enqueueing commit to the last result's)."""
    import boto3
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import ingest_worker as iw
    files = int(os.environ.get("S3_INGEST_FILES", "200"))
    tmp = tempfile.mkdtemp(prefix="flipbook-bench-s3-ingest-")
    os.chmod(tmp, 0o755)
    root = os.path.join(tmp, "root")
    os.makedirs(root)
    pg = iw.Postgres(settings=("track_commit_timestamp=on",))
    saved = dict(os.environ)
    try:
        iw.Workers(BIN, pg, root, os.path.join(tmp, "out"), tmp).migrate().communicate()
        day = iw.make_day(root, files)
        client = boto3.client("s3", endpoint_url=stack.direct["AWS_ENDPOINT_URL"], region_name="us-east-1",
                              aws_access_key_id="bench", aws_secret_access_key="bench")
        for bucket in ("uploads", "derived"):
            client.create_bucket(Bucket=bucket)
        for rel in day:
            client.upload_file(os.path.join(root, rel), "uploads", rel)
        os.environ.update(stack.env)  # the workers inherit it: credentials and the proxy's endpoint
        print(f"\n== the default recipe on {files} distinct uploads (24 stills : 12 GIFs : 4 videos), two workers "
              f"--concurrency 1, S3 in and out against local disk; {ROUNDS} alternating rounds, medians")
        local, remote_, traffic = [], [], []
        for i in range(ROUNDS):
            def on_s3():
                r0 = stack.traffic()
                seconds = iw.run_jobs(pg, "s3://uploads/", f"s3://derived/r{i}/", tmp, day, "default", 2, 1)[0]
                r1 = stack.traffic()
                traffic.append((r1[0] - r0[0], r1[1] - r0[1]))
                remote_.append(seconds)

            def on_disk():
                local.append(iw.run_jobs(pg, root, os.path.join(tmp, f"out-{i}"), tmp, day, "default", 2, 1)[0])
            for run in ((on_s3, on_disk) if i % 2 == 0 else (on_disk, on_s3)):
                run()
        a, b = statistics.median(remote_), statistics.median(local)
        requests, moved = statistics.median(t[0] for t in traffic), statistics.median(t[1] for t in traffic)
        print(f"   S3 in and out {a:6.2f} s ({files / a:.1f} files/s), {requests / files:.1f} requests and "
              f"{moved / files / 1e3:.0f} KB on the wire a source | local disk {b:6.2f} s ({files / b:.1f} files/s) | "
              f"ratio {a / b:.2f}x (target <= 1.2x)")
        print(f"   per round: {[round(x / y, 2) for x, y in zip(remote_, local)]}")
    finally:
        os.environ.clear()
        os.environ.update(saved)
        pg.destroy()
        shutil.rmtree(tmp, ignore_errors=True)


def big_gif(path, frames=146):
    """1000x1000 noise (Tests/storage/noise_gif.py), 8 pictures in turn: about 1.37 MB a frame, 200 MB at 146."""
    if not os.path.exists(path):
        subprocess.run([os.path.join(VENV, "python3"), os.path.join(ROOT, "Tests/storage/noise_gif.py"), path, str(frames), "8"],
                       check=True)
    return path


def memory(stack):
    work = os.path.join(ROOT, "bench", "work", "s3")
    os.makedirs(work, exist_ok=True)
    gif = big_gif(os.path.join(work, "noise-200mb.gif"))
    stack.tool("mb", "large")
    stack.tool("put", "large", "in/noise.gif", gif)
    options = ["--crf", "10", "--preset", "ultrafast", "--jobs", "1"]
    print(f"\n== memory: a {os.path.getsize(gif) / 1e6:.0f} MB GIF object converted to an MP4 object (multipart), against the "
          f"same files on local disk; {ROUNDS} alternating rounds, medians of peak RSS (GNU time) and wall")
    ours, local = [], []
    for i in range(ROUNDS):
        out = os.path.join(work, "noise.mp4")
        runs = [(ours, [BIN, "convert", "s3://large/in/noise.gif", "-o", f"s3://large/out/r{i}.mp4"] + options),
                (local, [BIN, "convert", gif, "-o", out] + options)]
        for sink, cmd in (runs if i % 2 == 0 else runs[::-1]):
            if os.path.exists(out):
                os.remove(out)
            rss = os.path.join(work, "rss")
            start = time.monotonic()
            subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss] + cmd, env=stack.env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            sink.append((int(open(rss).read().split()[-1]) / 1024, time.monotonic() - start))
    size = os.path.getsize(os.path.join(work, "noise.mp4"))
    uploads = json.loads(stack.tool("uploads", "large"))
    a, b = statistics.median(x[0] for x in ours), statistics.median(x[0] for x in local)
    wa, wb = statistics.median(x[1] for x in ours), statistics.median(x[1] for x in local)
    print(f"   output {size / 1e6:.0f} MB; multipart uploads left behind: {len(uploads)}")
    print(f"   peak RSS: S3 in and out {a:6.0f} MB | local files {b:6.0f} MB | ratio {a / b:.2f}x (+{a - b:.0f} MB)")
    print(f"   wall:     S3 in and out {wa:6.2f} s  | local files {wb:6.2f} s  | ratio {wa / wb:.2f}x (moto stores in Python)")


def main():
    stack = Stack()
    try:
        if "1" in PARTS:
            posters(stack)
        if "2" in PARTS:
            convert(stack)
        if "3" in PARTS:
            ingest(stack)
        if "4" in PARTS:
            memory(stack)
    finally:
        stack.close()


if __name__ == "__main__":
    main()
