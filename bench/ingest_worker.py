"""`make bench-ingest`: what the PostgreSQL queue costs, with the release build.

  1. Queue cost: 2,000 `probe`-recipe jobs through one `flipbook worker` against the same files probed
     locally in one process (target: the worker within 1.1x, over 1,000 jobs/s).
  2. The default recipe on a mixed folder, 2 workers vs 1 vs a shell loop of ffmpeg/vipsthumbnail, one
     process per derivative (target <= 0.6x the loop, peak RSS per worker < 300 MB). Runs only when this
     build's worker knows the default recipe (FlipbookIngest); says so otherwise.
  3. Claims + completions per second one PostgreSQL carries: 4 workers x 8 slots on a tiny file.

Ratios are from one run on this machine; PostgreSQL runs on the same 2 cores as the workers.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../Tests/worker"))
from pgqueue import Postgres, Workers, states, wait_until  # noqa: E402
from queue_tests import make_media  # noqa: E402

BINARY = sys.argv[1] if len(sys.argv) > 1 else ".build/release/flipbook"
JOBS = int(os.environ.get("BENCH_INGEST_JOBS", "2000"))


def peak_rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def fresh(pg):
    conn = pg.connect()
    conn.execute("TRUNCATE flipbook.jobs")
    conn.commit()
    return conn


def run_jobs(pg, root, out, logdir, sources, recipe, processes, concurrency):
    """Enqueues `sources`, starts `processes` workers, waits until none is pending; returns seconds, peak RSS."""
    conn = fresh(pg)
    workers = Workers(BINARY, pg, root, out, logdir)
    procs = [workers.start("--concurrency", str(concurrency)) for _ in range(processes)]
    time.sleep(0.5)  # let them connect and LISTEN: the clock starts at the commit
    start = time.monotonic()
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO flipbook.jobs (source, recipe) VALUES (%s, %s)", [(s, recipe) for s in sources])
    conn.commit()
    ok = wait_until(conn, "SELECT count(*) = 0 FROM flipbook.jobs WHERE state IN ('available', 'running')", ceiling=3600)
    seconds = time.monotonic() - start
    rss = max(peak_rss_mb(p.pid) for p in procs)
    counts = states(conn)
    workers.stop_all()
    conn.close()
    if not ok or counts.get("done", 0) != len(sources):
        print(f"  jobs did not all end done: {counts}\n{workers.logs()}")
    return seconds, rss, counts


def main():
    tmp = tempfile.mkdtemp(prefix="flipbook-bench-ingest-")
    os.chmod(tmp, 0o755)
    root, out = os.path.join(tmp, "root"), os.path.join(tmp, "out")
    os.makedirs(root)
    os.makedirs(out)
    pg = Postgres()
    try:
        proc = Workers(BINARY, pg, root, out, tmp).migrate()
        proc.communicate()
        media = make_media(root)
        sources = [media[i % len(media)] for i in range(JOBS)]

        print(f"1. queue cost: {JOBS} probe jobs, one worker (--concurrency 2) vs one local process")
        seconds, rss, counts = run_jobs(pg, root, out, tmp, sources, "probe", 1, 2)
        start = time.monotonic()
        subprocess.run([BINARY, "probe", "--json", *[os.path.join(root, s) for s in sources]], check=True,
                       stdout=subprocess.DEVNULL)
        local = time.monotonic() - start
        print(f"  worker: {seconds:.2f} s = {JOBS / seconds:.0f} jobs/s (peak RSS {rss:.0f} MB)")
        print(f"  local `flipbook probe --json` on the same {JOBS} files: {local:.2f} s = {JOBS / local:.0f} files/s")
        print(f"  ratio worker/local: {seconds / local:.2f}x (target <= 1.1x, > 1000 jobs/s)")

        print("3. one PostgreSQL: claims + completions/s, 4 workers x 8 slots, probe of a 33x17 JPEG")
        tiny = [m for m in media if m.endswith("10.jpg")][0]
        seconds, rss, counts = run_jobs(pg, root, out, tmp, [tiny] * (JOBS * 2), "probe", 4, 8)
        print(f"  {JOBS * 2} jobs in {seconds:.2f} s: {JOBS * 2 / seconds:.0f} claims/s and as many completions/s")

        print("2. default recipe, mixed folder")
        conn = fresh(pg)
        conn.execute("INSERT INTO flipbook.jobs (source) VALUES (%s)", (media[0],))
        conn.commit()
        workers = Workers(BINARY, pg, root, out, tmp)
        workers.start()
        wait_until(conn, "SELECT count(*) = 0 FROM flipbook.jobs WHERE state IN ('available', 'running')", ceiling=120)
        (state, error) = conn.execute("SELECT state, error FROM flipbook.jobs").fetchone()
        conn.commit()
        workers.stop_all()
        if state != "done":
            print(f"  skipped: this build's worker does not run the default recipe ({error and error.get('message')})")
        else:
            mixed = [media[i % len(media)] for i in range(200)]
            one, rss1, _ = run_jobs(pg, root, out, tmp, mixed, "default", 1, 2)
            two, rss2, _ = run_jobs(pg, root, out, tmp, mixed, "default", 2, 1)
            print(f"  1 worker x2: {one:.2f} s (peak RSS {rss1:.0f} MB); 2 workers x1: {two:.2f} s (peak RSS/worker {rss2:.0f} MB)")
    finally:
        pg.destroy()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
