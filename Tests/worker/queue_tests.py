"""`flipbook worker` against a real PostgreSQL 15, apps written with psycopg, and ffprobe as the oracle.

    queue_tests.py FLIPBOOK_BINARY SCENARIO     (scenarios: the scenario_* functions below: app, many, kill,
                                                 strain, timeout, wedged, slowdb, cli, traces, ...)

Run by Tests/FlipbookWorkerTests/WorkerQueueTests.swift. Every wait is on NOTIFY flipbook_done or on the
table, with a generous ceiling; nothing is timed. Exit 0 = pass; 77 = skipped (says why); anything else
prints why.
"""
import hashlib
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import psycopg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgqueue import Postgres, Workers, states, wait_until  # noqa: E402

CORPUS = os.environ.get("FLIPBOOK_CORPUS", os.path.join(os.path.dirname(__file__), "../../../shared/corpus"))
# 500 jobs over three workers, as the issue asks (about 8 s of probe jobs here; bench-ingest runs 2,000).
MANY = int(os.environ.get("FLIPBOOK_WORKER_TEST_JOBS", "500"))


def free_port():
    import socket
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def make_media(root):
    """Real media from ffmpeg's test sources: MP4s, GIFs, PNGs and JPEGs of several sizes and lengths."""
    files = []
    specs = [("mp4", 320, 240, 1.0), ("mp4", 640, 360, 2.0), ("mp4", 176, 144, 0.5), ("mp4", 854, 480, 1.5),
             ("gif", 120, 90, 1.0), ("gif", 200, 150, 0.5), ("png", 300, 200, 0), ("png", 64, 64, 0),
             ("jpg", 800, 600, 0), ("jpg", 1024, 768, 0), ("jpg", 33, 17, 0), ("png", 1000, 10, 0)]
    for i, (ext, w, h, seconds) in enumerate(specs):
        path = os.path.join(root, f"media/{i:02d}.{ext}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if ext == "mp4":
            args = ["-f", "lavfi", "-i", f"testsrc2=size={w}x{h}:rate=25:duration={seconds}",
                    "-c:v", "libx264", "-pix_fmt", "yuv420p", "-preset", "ultrafast"]
        elif ext == "gif":
            args = ["-f", "lavfi", "-i", f"testsrc=size={w}x{h}:rate=10:duration={seconds}"]
        else:
            args = ["-f", "lavfi", "-i", f"testsrc2=size={w}x{h}", "-frames:v", "1"]
        subprocess.run(["ffmpeg", "-v", "error", "-y", *args, path], check=True)
        files.append(os.path.relpath(path, root))
    return files


def ffprobe(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                          "stream=width,height:format=duration,format_name", "-of", "json", path],
                         check=True, capture_output=True, text=True).stdout
    data = json.loads(out)
    stream = data["streams"][0]
    fmt = data["format"]
    duration = float(fmt["duration"]) if "duration" in fmt and fmt["format_name"].startswith("mov") else None
    return stream["width"], stream["height"], duration


class Run:
    def __init__(self, binary):
        self.tmp = tempfile.mkdtemp(prefix="flipbook-worker-test-")
        os.chmod(self.tmp, 0o755)
        self.root = os.path.join(self.tmp, "root")
        self.out = os.path.join(self.tmp, "out")
        os.makedirs(self.root)
        os.makedirs(self.out)
        self.pg = Postgres()
        self.workers = Workers(binary, self.pg, self.root, self.out, self.tmp)
        # Two migrations at once: the advisory lock makes one wait and find nothing to do.
        migrations = [self.workers.migrate() for _ in range(2)]
        for proc in migrations:
            _, err = proc.communicate(timeout=120)
            check(proc.returncode == 0, f"--migrate failed: {err}")
        self.conn = self.pg.connect()
        (version,) = self.conn.execute("SELECT max(version) FROM flipbook.schema_migrations").fetchone()
        (count,) = self.conn.execute("SELECT count(*) FROM flipbook.schema_migrations").fetchone()
        self.conn.commit()
        check(count == version, f"migrations applied more than once: {count} rows for version {version}")

    def close(self, ok):
        codes = self.workers.stop_all()
        if not ok:
            print(self.workers.logs())
        self.conn.close()
        self.pg.destroy()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return codes

    def enqueue(self, sources, recipe="probe"):
        with self.pg.connect() as app:
            with app.transaction():
                with app.cursor() as cur:
                    cur.executemany("INSERT INTO flipbook.jobs (source, recipe) VALUES (%s, %s)",
                                    [(s, recipe) for s in sources])

    def wait_all_finished(self, ceiling=600):
        ok = wait_until(self.conn, "SELECT count(*) = 0 FROM flipbook.jobs WHERE state IN ('available', 'running')",
                        ceiling=ceiling)
        check(ok, f"jobs still pending after {ceiling} s: {states(self.conn)}")


def scenario_app(run):
    """An app enqueues inside its transaction and reads results back; a rolled-back upload never runs."""
    media = make_media(run.root)
    run.workers.start("--concurrency", "2")
    app = run.pg.connect()
    app.execute("LISTEN flipbook_done")
    app.commit()
    # A rolled-back upload: its rows never become visible, so no worker can claim them.
    with app.transaction():
        app.execute("INSERT INTO flipbook.jobs (source, recipe) VALUES ('media/00.mp4', 'probe'), ('media/06.png', 'probe')")
        raise psycopg.Rollback()
    app2 = run.pg.connect()
    app2.execute("INSERT INTO flipbook.jobs (source, recipe) VALUES ('media/01.mp4', 'probe')")
    app2.rollback()
    with app2.transaction():
        ids = [app2.execute("INSERT INTO flipbook.jobs (source, recipe) VALUES (%s, 'probe') RETURNING id", (m,)).fetchone()[0]
               for m in media[:4]]
    pending, notified = set(ids), []
    deadline = time.monotonic() + 300
    while pending and time.monotonic() < deadline:
        for note in app.notifies(timeout=1.0, stop_after=1):
            notified.append(int(note.payload))
            pending.discard(int(note.payload))
        rows = app.execute("SELECT id FROM flipbook.jobs WHERE id = ANY(%s) AND state = 'done'", (list(pending),)).fetchall()
        app.commit()
        pending -= {r[0] for r in rows}
    check(not pending, f"jobs {sorted(pending)} not done: {states(run.conn)}")
    # The contract's NOTIFY: each job that ended sent its id on flipbook_done, once. A job read as done before
    # its NOTIFY was read has it waiting on the connection (psycopg keeps those that arrive during queries).
    notified += [int(note.payload) for note in app.notifies(timeout=1.0)]
    check(sorted(notified) == sorted(ids), f"flipbook_done sent {sorted(notified)} for jobs {sorted(ids)}")
    # The NOTIFY is the table's (a trigger), not the worker's: a job an operator or an app ends by hand sends it
    # too; cancelling sends none.
    with app.transaction():
        failed, cancelled = [app.execute("INSERT INTO flipbook.jobs (source, recipe, run_after) VALUES "
                                         "('media/06.png', 'probe', now() + interval '1 day') RETURNING id").fetchone()[0]
                             for _ in range(2)]
    app.execute("UPDATE flipbook.jobs SET state = 'failed', finished_at = now(), "
                "error = '{\"code\": \"operator\", \"message\": \"failed by hand\"}' WHERE id = %s", (failed,))
    app.execute("UPDATE flipbook.jobs SET state = 'cancelled' WHERE id = %s", (cancelled,))
    app.commit()
    by_hand = [int(note.payload) for note in app.notifies(timeout=2.0)]
    check(by_hand == [failed], f"flipbook_done sent {by_hand} for a job failed by hand ({failed}) and one cancelled")
    app.execute("DELETE FROM flipbook.jobs WHERE id IN (%s, %s)", (failed, cancelled))
    app.commit()
    for job_id, source in zip(ids, media[:4]):
        (result, attempts) = app.execute("SELECT result, attempts FROM flipbook.jobs WHERE id = %s", (job_id,)).fetchone()
        app.commit()
        w, h, _ = ffprobe(os.path.join(run.root, source))
        check(attempts == 1, f"job {job_id}: {attempts} attempts")
        check((result["width"], result["height"]) == (w, h), f"{source}: result {result} vs ffprobe {w}x{h}")
    # KEDA's trigger query (deploy/keda) runs against the real schema and counts what is waiting.
    import yaml
    keda = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../deploy/keda/worker-scaledobject.yaml")
    scaled = [d for d in yaml.safe_load_all(open(keda)) if d["kind"] == "ScaledObject"][0]
    (available,) = app.execute(scaled["spec"]["triggers"][0]["metadata"]["query"]).fetchone()
    app.commit()
    check(available == 0, f"KEDA query counts {available} available jobs on a drained queue")
    (total,) = app.execute("SELECT count(*) FROM flipbook.jobs").fetchone()
    app.commit()
    check(total == 4, f"{total} rows: a rolled-back insert became a job")
    # Latency on an idle queue, for the log only (a timed assertion would be a flaky test).
    time.sleep(0.5)
    app.execute("INSERT INTO flipbook.jobs (source, recipe) VALUES ('media/06.png', 'probe')")
    app.commit()
    check(wait_until(run.conn, "SELECT count(*) = 5 FROM flipbook.jobs WHERE state = 'done'"), "the fifth job never ran")
    # created_at is the inserting transaction's start, and this one committed at once.
    (lag,) = run.conn.execute("SELECT extract(epoch FROM started_at - created_at) * 1000 FROM flipbook.jobs ORDER BY id DESC LIMIT 1").fetchone()
    print(f"idle queue: committed -> started in {lag:.1f} ms")


def check_many_results(run, sources):
    truth = {s: ffprobe(os.path.join(run.root, s)) for s in set(sources)}
    rows = run.conn.execute("SELECT id, source, state, attempts, result, error FROM flipbook.jobs ORDER BY id").fetchall()
    run.conn.commit()
    check(len(rows) == len(sources), f"{len(rows)} rows for {len(sources)} jobs")
    for job_id, source, state, attempts, result, error in rows:
        check(state == "done", f"job {job_id} ({source}) ended {state} at attempt {attempts}: {error}")
        w, h, duration = truth[source]
        check((result["width"], result["height"]) == (w, h), f"{source}: {result} vs ffprobe {w}x{h}")
        if duration is not None:
            check(abs(result["durationMs"] - duration * 1000) <= 45, f"{source}: {result['durationMs']} ms vs ffprobe {duration} s")
    return [row[:5] for row in rows]


def scenario_many(run):
    """MANY jobs, three worker processes: each done exactly once (attempts 1), results match ffprobe."""
    media = make_media(run.root)
    sources = [media[i % len(media)] for i in range(MANY)]
    run.enqueue(sources)
    for _ in range(3):
        run.workers.start("--concurrency", "2")
    run.wait_all_finished()
    rows = check_many_results(run, sources)
    check(all(r[3] == 1 for r in rows), "a job ran more than once: " + str([r[:4] for r in rows if r[3] != 1][:5]))
    (workers,) = run.conn.execute("SELECT count(DISTINCT worker) FROM flipbook.jobs").fetchone()
    print(f"{len(rows)} jobs done by {workers} workers, each once")
    codes = run.workers.stop_all()
    check(codes == [0, 0, 0], f"SIGTERM exit codes {codes}")


# The connections `flipbook worker` opens name themselves so (application_name, as libpq's URLs set it).
WORKER_BACKENDS = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'flipbook-worker'"
# Of those, the connections each worker keeps for LISTEN flipbook_jobs (their last statement stays the LISTEN).
WORKER_LISTENERS = WORKER_BACKENDS + " AND starts_with(query, 'LISTEN ')"


def running_under(run, pid, started=None):
    """Ids of the jobs `running` under the worker process `pid`; `started` True or False: only those a thread
    had started (`started_at` set), or only those it held unstarted."""
    condition = {None: "true", True: "started_at IS NOT NULL", False: "started_at IS NULL"}[started]
    ids = [r[0] for r in run.conn.execute(
        f"SELECT id FROM flipbook.jobs WHERE state = 'running' AND worker LIKE %s AND {condition}", (f"%:{pid}:%",)).fetchall()]
    run.conn.commit()
    return ids


def scenario_kill(run):
    """kill -9 of a worker holding jobs: another finishes them after the lease expires (attempts 2).

    Which jobs the victim held is read after it is dead and PostgreSQL has closed its connections: a claim or a
    result the victim sent just before SIGSTOP may still commit after a first look at the table.
    """
    media = make_media(run.root)
    videos = [m for m in media if m.endswith(".mp4")]
    run.enqueue([videos[i % len(videos)] for i in range(400)])
    held = []
    victims = 0
    while not held and victims < 5:
        victims += 1
        victim = run.workers.start("--concurrency", "2", "--lease", "2s")
        seen = False
        deadline = time.monotonic() + 300
        while not seen and time.monotonic() < deadline and victim.poll() is None:
            os.kill(victim.pid, signal.SIGSTOP)
            seen = bool(running_under(run, victim.pid))
            if seen:
                (named,) = run.conn.execute(WORKER_BACKENDS).fetchone()
                run.conn.commit()
                check(named > 0, "the worker's connections are not named flipbook-worker")
                os.kill(victim.pid, signal.SIGKILL)
            else:
                os.kill(victim.pid, signal.SIGCONT)
                time.sleep(0.01)
        if not seen:
            victim.kill()
        victim.wait()
        check(wait_until(run.conn, f"SELECT ({WORKER_BACKENDS}) = 0", listen=False, ceiling=60),
              "the killed worker's connections never closed")
        held = running_under(run, victim.pid, started=True)
        unstarted = running_under(run, victim.pid, started=False)
    check(held, f"never caught a worker holding a job ({victims} tries)")
    # A longer lease than the victim's: the survivor reaps every third of its own lease, and on a loaded machine
    # its own 2 s leases could run out too, which is another test's subject.
    run.workers.start("--concurrency", "2", "--lease", "6s")
    run.wait_all_finished()
    rows = dict((r[0], (r[1], r[2])) for r in run.conn.execute("SELECT id, state, attempts FROM flipbook.jobs").fetchall())
    run.conn.commit()
    for job_id in held:
        check(rows[job_id] == ("done", 2), f"held job {job_id} ended {rows[job_id]}, expected done at attempt 2")
    # Held but not started: their attempt was not counted, so they end at attempt 1 like the rest.
    others = [v for k, v in rows.items() if k not in held]
    check(all(v == ("done", 1) for v in others), f"other jobs: {sorted(set(others))}")
    print(f"{len(held)} job(s) the killed worker had started finished at attempt 2; {len(others)} others (of them"
          f" {len(unstarted)} it held unstarted) at attempt 1 ({victims} worker(s) killed)")


def scenario_restart(run):
    """PostgreSQL restarted mid-run: every job still ends done; none ran twice at once."""
    media = make_media(run.root)
    sources = [media[i % len(media)] for i in range(MANY * 2)]
    run.enqueue(sources)
    for _ in range(2):
        # A short lease: a claim whose reply the restart swallowed is reaped (and its attempt counted) soon.
        run.workers.start("--concurrency", "2", "--lease", "3s")
    check(wait_until(run.conn, "SELECT count(*) > 0 FROM flipbook.jobs WHERE state = 'done'", listen=False),
          "nothing done before the restart")
    pending = states(run.conn)
    print(f"restarting PostgreSQL at {pending}")
    run.conn.close()
    run.pg.restart()
    run.conn = run.pg.connect()
    # After the restart, more jobs: the workers must reconnect, re-LISTEN and claim them.
    run.enqueue(sources[:24])
    run.wait_all_finished()
    rows = check_many_results(run, sources + sources[:24])
    # Attempt 2 only where the restart cut a claim or a run short: at most the jobs two workers hold at
    # once (2 x concurrency 2, twice that claimed ahead). Results are fenced by attempt, so only one run of a
    # job ever writes; more second attempts than that would mean jobs ran again without cause.
    again = [r[:4] for r in rows if r[3] != 1]
    check(all(r[3] <= 2 for r in rows) and len(again) <= 8, f"jobs run again without cause: {again[:10]}")
    codes = run.workers.stop_all()
    check(codes == [0, 0], f"SIGTERM exit codes {codes}")
    print(f"{len(rows)} jobs done across a PostgreSQL restart; {len(again)} at attempt 2 (claims the restart cut)")


def scenario_orphans(run):
    """Rows a claim took whose answer never arrived (PostgreSQL went away between the claim's commit and its
    reply) go back at the worker's next claim, their attempt not counted, instead of waiting for the lease."""
    media = make_media(run.root)
    run.workers.start("--concurrency", "2", "--lease", "30s")
    run.enqueue(media[:1])
    check(wait_until(run.conn, "SELECT count(*) = 1 FROM flipbook.jobs WHERE state = 'done'"), "the first job never ended")
    (name,) = run.conn.execute("SELECT worker FROM flipbook.jobs WHERE state = 'done'").fetchone()
    # What the lost claim left: rows running under this worker's name, leased for 30 s, that it never saw.
    run.conn.execute("INSERT INTO flipbook.jobs (source, recipe, state, attempts, worker, started_at, lease_until) "
                     "SELECT %s, 'probe', 'running', 1, %s, now(), now() + interval '30 s' FROM generate_series(1, 5)",
                     (media[1], name))
    run.conn.commit()
    run.conn.close()
    run.pg.stop()
    # Wait for the worker's next claim (its poll) to fail on the missing database.
    log = os.path.join(run.workers.logdir, "worker-0.log")
    ceiling = time.monotonic() + 300
    while "claim failed" not in open(log, errors="replace").read() and time.monotonic() < ceiling:
        time.sleep(0.1)
    run.pg.start()
    run.conn = run.pg.connect()
    run.enqueue(media[2:3])
    run.wait_all_finished()
    rows = run.conn.execute("SELECT attempts, count(*) FROM flipbook.jobs GROUP BY attempts").fetchall()
    run.conn.commit()
    check(rows == [(1, 7)], f"the lost claim's jobs were not given back uncounted: attempts {rows}")
    check("gave back 5 job(s) a claim took whose answer was lost" in open(log, errors="replace").read(),
          "the worker did not say it gave them back")
    check(run.workers.stop_all() == [0], "SIGTERM exit code")
    print("5 jobs of a lost claim given back and done at attempt 1")


# A recipe whose video jobs take many seconds on any machine: six storyboards of an 8K HEVC clip, each decoding
# every frame. Used where a job must still be running when the test acts (timeout, cancel, a locked table).
# `longboard`, twenty times as long, for a job that must outlast a wait for events on a fast machine; it is
# cancelled once they are seen, so its length costs nothing.
SLOW_RECIPE = {"recipes": {"board": {"video": [{"name": f"board{i}", "operation": "storyboard"} for i in range(6)],
                                     "placeholders": False},
                           "longboard": {"video": [{"name": f"board{i}", "operation": "storyboard"} for i in range(120)],
                                         "placeholders": False}}}
EIGHT_K = "video/androidx-media/8k24fps_300ms.mp4"


def slow_setup(run):
    """The 8K clip under the root (a copy: the corpus is never written near) and the slow recipe file."""
    source = os.path.join(CORPUS, EIGHT_K)
    check(os.path.exists(source), f"{source} missing: the corpus is needed")
    shutil.copy(source, os.path.join(run.root, "8k.mp4"))
    recipe = os.path.join(run.tmp, "slow.json")
    with open(recipe, "w") as f:
        json.dump(SLOW_RECIPE, f)
    return recipe


def derivatives_on_disk(run):
    return sorted(os.path.relpath(os.path.join(d, f), run.out) for d, _, fs in os.walk(run.out) for f in fs)


def scenario_strain(run):
    """Inputs that hang or escape: a FIFO as a job's source and as `ingest`/`thumb` input fails at once with a
    typed error; a symlink out of the root fails `invalid-argument`. A priority-10 job claimed in one batch with
    a priority-0 one runs first. A result PostgreSQL refuses fails that job (`internal`) and no other."""
    media = make_media(run.root)
    os.mkfifo(os.path.join(run.root, "fifo.gif"))
    outside = os.path.join(run.tmp, "outside.png")
    shutil.copy(os.path.join(run.root, media[6]), outside)
    os.symlink(outside, os.path.join(run.root, "escape.png"))
    os.symlink(os.path.join(run.root, media[6]), os.path.join(run.root, "inside.png"))
    # The CLI first: before the fix, open(2) of a FIFO waited for a writer for ever (the ceiling ends a hang).
    for command in (["ingest", "fifo.gif", "-o", os.path.join(run.tmp, "cli")], ["thumb", "fifo.gif", "-o", os.path.join(run.tmp, "t.jpg")]):
        try:
            cli = subprocess.run([run.workers.binary, *command], cwd=run.root, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"flipbook {command[0]} of a FIFO hung")
        check(cli.returncode == 1 and "FIFO" in cli.stdout + cli.stderr, f"flipbook {command[0]} of a FIFO: {cli.returncode} {cli.stdout} {cli.stderr}")
        print(f"flipbook {command[0]} fifo.gif: exit 1, {(cli.stderr or cli.stdout).strip()[:120]}")
    # A refused result: PostgreSQL raises for this one job's `done` row, as it would for a value it rejects.
    shutil.copy(os.path.join(run.root, media[6]), os.path.join(run.root, "media/refused.png"))
    run.conn.execute("""CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'result refused by the test'; END $$""")
    run.conn.execute("CREATE TRIGGER refuse BEFORE UPDATE ON flipbook.jobs FOR EACH ROW "
                     "WHEN (NEW.state = 'done' AND NEW.source = 'media/refused.png') EXECUTE FUNCTION refuse()")
    run.conn.commit()
    # One transaction: the priority-0 job has the lower id, and one claim (two jobs for one thread) takes both.
    with run.pg.connect() as app:
        with app.transaction():
            low = app.execute("INSERT INTO flipbook.jobs (source, recipe, priority) VALUES (%s, 'probe', 0) RETURNING id", (media[0],)).fetchone()[0]
            high = app.execute("INSERT INTO flipbook.jobs (source, recipe, priority) VALUES (%s, 'probe', 10) RETURNING id", (media[1],)).fetchone()[0]
    run.workers.start("--concurrency", "1")
    run.wait_all_finished()
    (claims, first) = run.conn.execute("SELECT count(DISTINCT claimed_at), (SELECT id FROM flipbook.jobs ORDER BY started_at LIMIT 1) "
                                       "FROM flipbook.jobs").fetchone()
    run.conn.commit()
    check(claims == 1, f"the two jobs were claimed in {claims} claims, not one")
    check(first == high, f"job {first} started first; the priority-10 job is {high}, the priority-0 one {low}")
    print("a priority-10 job claimed with a priority-0 one ran first")
    run.enqueue(["fifo.gif", "escape.png", "inside.png"] + [media[i % len(media)] for i in range(30)] + ["media/refused.png"])
    run.wait_all_finished()
    rows = run.conn.execute("SELECT source, state, attempts, error FROM flipbook.jobs WHERE id > %s ORDER BY id", (high,)).fetchall()
    run.conn.commit()
    by_source = {r[0]: r for r in rows}
    for source in ("fifo.gif", "escape.png"):
        _, state, attempts, error = by_source[source]
        check(state == "failed" and attempts == 1 and error["code"] == "invalid-argument", f"{source}: {state}, {attempts}, {error}")
        print(f"{source}: failed at attempt 1, {error['code']}: {error['message']}")
    _, state, attempts, error = by_source["media/refused.png"]
    check(state == "failed" and error["code"] == "internal" and "refused by the test" in error["message"], f"refused result: {state}, {error}")
    others = [r for r in rows if r[0] not in ("fifo.gif", "escape.png", "media/refused.png")]
    check(all(r[1] == "done" and r[2] == 1 for r in others), f"other jobs: {[r[:3] for r in others if r[1] != 'done']}")
    print(f"a result PostgreSQL refused: that job failed ({error['message']}); {len(others)} others done")


def scenario_timeout(run):
    """An 8K storyboard job with --job-timeout 2s ends `timeout` with nothing written, and its slot takes the
    next job."""
    recipe = slow_setup(run)
    media = make_media(run.root)
    run.workers.start("--concurrency", "1", "--recipe", recipe, "--job-timeout", "2s")
    with run.pg.connect() as app:
        with app.transaction():
            slow = app.execute("INSERT INTO flipbook.jobs (source, recipe, max_attempts) VALUES ('8k.mp4', 'board', 1) RETURNING id").fetchone()[0]
            after = app.execute("INSERT INTO flipbook.jobs (source, recipe) VALUES (%s, 'probe') RETURNING id", (media[0],)).fetchone()[0]
    run.wait_all_finished()
    rows = dict((r[0], r[1:]) for r in run.conn.execute("SELECT id, state, attempts, error, errors FROM flipbook.jobs").fetchall())
    run.conn.commit()
    state, attempts, error, errors = rows[slow]
    check(state == "failed" and error["code"] == "timeout" and attempts == 1, f"the slow job: {state}, {attempts}, {error}")
    check([e["code"] for e in errors] == ["timeout"], f"its history: {errors}")
    check(rows[after][0] == "done", f"the job after it: {rows[after]}")
    check(derivatives_on_disk(run) == [], f"a timed-out job wrote {derivatives_on_disk(run)}")
    print(f"8K storyboard job: {error['code']}: {error['message']}; the next job done; nothing written")


class Skip(Exception):
    """The scenario cannot run on this machine (said why); the test counts as skipped, never as passed."""


def scenario_wedged(run):
    """Work that does not stop after its timeout: the job's thread held inside a read(2) of its source, as a hung
    network or FUSE file system would hold it (`freeze.py`: ptrace stops that one thread at the read's entry;
    the worker's other threads run on, and nothing in the worker knows). With --job-timeout 3s and
    --stuck-after 2s the worker records the job `timeout`, stops claiming, gives back the job it held
    unstarted (attempt not counted) and exits with status 70 while the thread is still held; nothing is
    written. A new worker then runs what was given back."""
    from freeze import Frozen, threads_named
    why = Frozen.supported()
    if why:
        raise Skip(why)
    recipe = slow_setup(run)
    media = make_media(run.root)
    worker = run.workers.start("--concurrency", "1", "--recipe", recipe, "--job-timeout", "3s", "--stuck-after", "2s",
                               "--lease", "3s")
    check(wait_until(run.conn, f"SELECT ({WORKER_LISTENERS}) = 1", listen=False, ceiling=120), "the worker never listened")
    threads = threads_named(worker.pid, "flipbook-pool")
    check(len(threads) == 1, f"threads named flipbook-pool in a --concurrency 1 worker: {threads}")
    # The tracer must be the thread that seized; the pool thread is seized while idle, before the job exists,
    # and held at its first read of the source: the work checks its stop flag only between reads, so it is
    # held before it could see the timeout, however loaded the machine.
    import queue as queues
    import threading
    events = queues.Queue()

    def trace():
        try:
            frozen = Frozen.in_read(worker.pid, threads[0], os.path.join(run.root, "8k.mp4"))
        except PermissionError as error:
            events.put(("skip", f"ptrace refused here: {error}"))
            return
        except BaseException as error:  # noqa: BLE001 - reported to the scenario's thread
            events.put(("error", error))
            return
        events.put(("held", frozen.fd))
        try:
            events.put(("exited", frozen.wait_for_exit(ceiling=300)))
        finally:
            frozen.close()

    tracer = threading.Thread(target=trace, daemon=True)
    tracer.start()
    with run.pg.connect() as app:
        with app.transaction():
            slow = app.execute("INSERT INTO flipbook.jobs (source, recipe, priority, max_attempts) VALUES ('8k.mp4', 'board', 10, 1) "
                               "RETURNING id").fetchone()[0]
            probes = [app.execute("INSERT INTO flipbook.jobs (source, recipe) VALUES (%s, 'probe') RETURNING id", (m,)).fetchone()[0]
                      for m in media[:3]]
    kind, value = events.get(timeout=600)
    if kind == "skip":
        worker.kill()
        raise Skip(value)
    check(kind == "held", f"holding the job's thread in a read failed: {value!r}")
    print(f"the job's thread is held inside a read of 8k.mp4 (descriptor {value})")
    kind, exited = events.get(timeout=600)
    check(kind == "exited" and exited, "the worker did not exit while its job's thread was held")
    code = worker.wait(timeout=120)
    check(code == 70, f"exit status {code}, expected 70")
    log = open(os.path.join(run.workers.logdir, "worker-0.log"), errors="replace").read()
    check("did not stop within 2 s of their timeout" in log, "the worker never said the job's work did not stop")
    # Its first claim took two jobs (a fresh worker holds one per thread beside the running one): the stuck job
    # and the first probe, which no thread had started.
    check("gave back 1 held job(s) no thread had started: stopping" in log, "the worker did not give back the job it held")
    (state, attempts, error) = run.conn.execute("SELECT state, attempts, error FROM flipbook.jobs WHERE id = %s", (slow,)).fetchone()
    rows = run.conn.execute("SELECT id, state, attempts FROM flipbook.jobs WHERE id = ANY(%s)", (probes,)).fetchall()
    run.conn.commit()
    check((state, attempts, error["code"]) == ("failed", 1, "timeout") and "did not stop" in error["message"],
          f"the stuck job: {state} at attempt {attempts}, {error}")
    check(all(r[1] == "available" and r[2] == 0 for r in rows), f"the jobs behind it: {rows} (expected available, attempt not counted)")
    check(derivatives_on_disk(run) == [], f"the stuck job wrote {derivatives_on_disk(run)}")
    print(f"worker exited 70 with the thread still held; the job failed {error['code']}: {error['message']}; "
          f"{len(rows)} jobs behind it available again at attempt 0")
    run.workers.start("--concurrency", "1")
    run.wait_all_finished()
    rows = run.conn.execute("SELECT state, attempts FROM flipbook.jobs WHERE id = ANY(%s)", (probes,)).fetchall()
    run.conn.commit()
    check(all(r == ("done", 1) for r in rows), f"the given-back jobs under a new worker: {rows}")
    print("a new worker ran them: done at attempt 1")


def scenario_cancel(run):
    """A running 8K storyboard job cancelled from the table ends `cancelled` within a lease renewal with no
    derivative on disk, and the worker takes its next job; a job cancelled before it starts never starts."""
    recipe = slow_setup(run)
    media = make_media(run.root)
    run.workers.start("--concurrency", "1", "--recipe", recipe, "--lease", "3s")
    with run.pg.connect() as app:
        with app.transaction():
            slow = app.execute("INSERT INTO flipbook.jobs (source, recipe) VALUES ('8k.mp4', 'board') RETURNING id").fetchone()[0]
    check(wait_until(run.conn, "SELECT started_at IS NOT NULL FROM flipbook.jobs WHERE id = %s", (slow,), listen=False),
          "the slow job never started")
    with run.pg.connect() as app:
        with app.transaction():
            waiting = app.execute("INSERT INTO flipbook.jobs (source, recipe) VALUES (%s, 'probe') RETURNING id", (media[0],)).fetchone()[0]
            after = app.execute("INSERT INTO flipbook.jobs (source, recipe) VALUES (%s, 'probe') RETURNING id", (media[1],)).fetchone()[0]
    cancel(run, [waiting])
    cancel(run, [slow])
    run.wait_all_finished()
    # The row is `cancelled` at once; the worker notes where it stopped (`error`) as it frees the slot, beside
    # the next job: waited for, not raced.
    check(wait_until(run.conn, "SELECT error IS NOT NULL FROM flipbook.jobs WHERE id = %s", (slow,)),
          "the worker never noted that the running job stopped")
    rows = dict((r[0], r[1:]) for r in run.conn.execute("SELECT id, state, started_at, result, error FROM flipbook.jobs").fetchall())
    run.conn.commit()
    check(rows[slow][0] == "cancelled" and rows[slow][2] is None and rows[slow][3]["code"] == "cancelled", f"the running job: {rows[slow]}")
    check(rows[waiting][0] == "cancelled" and rows[waiting][1] is None and rows[waiting][2] is None, f"the waiting job: {rows[waiting]}")
    check(rows[after][0] == "done", f"the job after them: {rows[after]}")
    log = open(os.path.join(run.workers.logdir, "worker-0.log"), errors="replace").read()
    check("cancelled while running" in log, "the worker never said it stopped the cancelled job")
    check(derivatives_on_disk(run) == [], f"a cancelled job wrote {derivatives_on_disk(run)}")
    print(f"running job cancelled: {rows[slow][3]}; the waiting one never started; the next one done; nothing written")


def cancel(run, ids):
    """Cancels jobs as an operator would (`flipbook queue cancel`)."""
    out = subprocess.run([run.workers.binary, "queue", "cancel", "--database", run.pg.url, *map(str, ids)],
                         capture_output=True, text=True, timeout=120)
    check(out.returncode == 0, f"queue cancel: {out.returncode} {out.stderr}")


def scenario_slowdb(run):
    """PostgreSQL too slow for a worker's statements, two ways, each while an 8K storyboard job runs and a second,
    idle worker reaps expired leases every second: the live worker's job is never reaped.
    1. The table locked IN SHARE MODE for three leases (it blocks every UPDATE, renewals too).
    2. The live worker's heartbeat (the reap, then the count by state) held in pg_sleep by a trigger: its
       lease is renewed all along; the scenario waits for six renewals (two leases' worth), checking at
       every look that the heartbeat is still held and the job still running at attempt 1, and that nothing
       is ever reaped. A SELECT fires no trigger, so the heartbeat is held at its reap, the statement before
       the count; renewals share neither its loop nor its connection."""
    recipe = slow_setup(run)
    live = run.workers.start("--concurrency", "1", "--recipe", recipe, "--lease", "3s", application_name="flipbook-live")
    with run.pg.connect() as app:
        with app.transaction():
            slow = app.execute("INSERT INTO flipbook.jobs (source, recipe) VALUES ('8k.mp4', 'board') RETURNING id").fetchone()[0]
    check(wait_until(run.conn, "SELECT started_at IS NOT NULL FROM flipbook.jobs WHERE id = %s", (slow,), listen=False),
          "the slow job never started")
    # The reaper: a second worker, idle, which reaps expired leases every second.
    reaper = run.workers.start("--concurrency", "1", "--lease", "3s")
    check(wait_until(run.conn, f"SELECT ({WORKER_LISTENERS}) = 1", listen=False, ceiling=120), "the second worker never listened")
    with run.pg.connect() as locker:
        with locker.transaction():
            locker.execute("LOCK TABLE flipbook.jobs IN SHARE MODE")
            time.sleep(9)  # three leases without a renewal getting through: the condition under test, not a wait
    run.wait_all_finished()
    (state, attempts, errors) = run.conn.execute("SELECT state, attempts, errors FROM flipbook.jobs WHERE id = %s", (slow,)).fetchone()
    run.conn.commit()
    check((state, attempts, errors) == ("done", 1, []), f"the live worker's job: {state} at attempt {attempts}, errors {errors}")
    print("a table locked for three leases: the live worker's job was not reaped (done at attempt 1)")

    # 2. A gate the trigger sleeps behind, 100 ms at a time, until the scenario opens it: the live worker's
    # reaps (the statement that writes 'lease-expired') wait; its renewals and the other worker's statements do
    # not. The job is a long one, cancelled once the renewals are seen.
    run.conn.execute("CREATE TABLE gate (open boolean NOT NULL)")
    run.conn.execute("INSERT INTO gate VALUES (false)")
    run.conn.execute("""CREATE FUNCTION slow_heartbeat() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF current_setting('application_name') = 'flipbook-live' AND strpos(current_query(), 'lease-expired') > 0 THEN
                WHILE NOT (SELECT open FROM gate) LOOP PERFORM pg_sleep(0.1); END LOOP;
            END IF;
            RETURN NULL;
        END $$""")
    run.conn.execute("CREATE TRIGGER slow_heartbeat BEFORE UPDATE ON flipbook.jobs FOR EACH STATEMENT EXECUTE FUNCTION slow_heartbeat()")
    run.conn.commit()
    reaps_sql = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'flipbook-live' AND strpos(query, 'lease-expired') > 0"
    check(wait_until(run.conn, f"SELECT ({reaps_sql} AND wait_event = 'PgSleep') > 0", listen=False, ceiling=120),
          "the live worker's heartbeat never reached the trigger")
    # Once there, a reap is held for as long as its statement is still running: between two of the trigger's
    # 100 ms sleeps its backend is briefly not in PgSleep (it reads the gate), and on a loaded machine a look
    # caught the only held reap there (seen beside a loop of release builds), so the looks count running reaps.
    held_sql = f"{reaps_sql} AND state = 'active'"
    # The reaper knows no `longboard` recipe: were it listening when the job comes, it could claim it first and
    # fail it. It stops (SIGTERM: exit 0) until the live worker has started the job, then a new one reaps.
    reaper.terminate()
    check(reaper.wait(timeout=120) == 0, f"the reaper's exit status on SIGTERM: {reaper.returncode}")
    check(wait_until(run.conn, f"SELECT ({WORKER_BACKENDS}) = 0", listen=False, ceiling=120), "the reaper's connections stayed")
    with run.pg.connect() as app:
        with app.transaction():
            slow = app.execute("INSERT INTO flipbook.jobs (source, recipe) VALUES ('8k.mp4', 'longboard') RETURNING id").fetchone()[0]
    check(wait_until(run.conn, "SELECT started_at IS NOT NULL FROM flipbook.jobs WHERE id = %s", (slow,), listen=False),
          "the long job never started")
    run.workers.start("--concurrency", "1", "--lease", "3s")
    check(wait_until(run.conn, f"SELECT ({WORKER_LISTENERS}) = 1", listen=False, ceiling=120), "the new reaper never listened")
    # Every reap of the live worker waits at the gate (one the worker gave up on after its statement timeout
    # stays there, its backend running the trigger until the gate opens, and the next beat's joins it), so at
    # every look at least one is held there and its heartbeat's count never runs meanwhile.
    leases, looks, least = [], 0, None
    deadline = time.monotonic() + 300  # a ceiling for a broken run; the wait is for renewals
    while len(leases) < 7 and time.monotonic() < deadline:
        (lease, ahead, state, attempts, held) = run.conn.execute(
            f"SELECT lease_until, extract(epoch FROM lease_until - clock_timestamp()), state, attempts, ({held_sql}) "
            "FROM flipbook.jobs WHERE id = %s", (slow,)).fetchone()
        run.conn.commit()
        looks += 1
        check(state == "running" and attempts == 1, f"the live job while its worker's heartbeat is held: {state} at attempt {attempts}")
        check(held > 0, f"no reap of the live worker held in the trigger at look {looks}")
        least = float(ahead) if least is None else min(least, float(ahead))
        if not leases or lease != leases[-1]:
            leases.append(lease)
        time.sleep(0.1)
    check(len(leases) >= 7, f"only {len(leases) - 1} renewals of the live job while its worker's heartbeat was held")
    run.conn.execute("UPDATE gate SET open = true")
    run.conn.commit()
    cancel(run, [slow])
    # The row is `cancelled` at once; the worker notes where it stopped (`error`) after its next renewal.
    check(wait_until(run.conn, "SELECT error IS NOT NULL FROM flipbook.jobs WHERE id = %s", (slow,)),
          "the live worker never noted that its job stopped")
    (state, attempts, errors) = run.conn.execute("SELECT state, attempts, errors FROM flipbook.jobs WHERE id = %s", (slow,)).fetchone()
    (reaped,) = run.conn.execute("SELECT count(*) FROM flipbook.jobs WHERE errors::text LIKE '%lease-expired%'").fetchone()
    run.conn.commit()
    check((state, attempts, [e["code"] for e in errors], reaped) == ("cancelled", 1, ["cancelled"], 0),
          f"the live worker's job: {state} at attempt {attempts}, errors {errors}; {reaped} job(s) reaped")
    check(live.poll() is None, "the live worker exited")
    span = (leases[-1] - leases[0]).total_seconds()
    print(f"the live worker's heartbeat held in pg_sleep: {len(leases) - 1} renewals over {span:.1f} s of leases meanwhile "
          f"({looks} looks, each seeing a reap held in the trigger; the lease at least {least:.1f} s ahead at each), nothing reaped; the job then cancelled at attempt 1")


def scenario_poison(run):
    """A worker killed while it holds claimed-but-unstarted jobs behind a running one: those keep their old
    attempt count (only the started job's attempt counts)."""
    recipe = slow_setup(run)
    media = make_media(run.root)
    tiny = [m for m in media if m.endswith("10.jpg")][0]
    victim = run.workers.start("--concurrency", "1", "--recipe", recipe, "--lease", "2s")
    # Short jobs first, so the worker holds many at once (see HoldLimits).
    run.enqueue([tiny] * 200)
    run.wait_all_finished()
    with run.pg.connect() as app:
        with app.transaction():
            slow = app.execute("INSERT INTO flipbook.jobs (source, recipe, priority, max_attempts) VALUES ('8k.mp4', 'board', 10, 1) RETURNING id").fetchone()[0]
            app.cursor().executemany("INSERT INTO flipbook.jobs (source, recipe) VALUES (%s, 'probe')", [(tiny,)] * 32)
    check(wait_until(run.conn, "SELECT EXISTS (SELECT 1 FROM flipbook.jobs WHERE id = %s AND state = 'running' AND started_at IS NOT NULL)",
                     (slow,), listen=False), "the slow job never started")
    held = running_under(run, victim.pid, started=False)
    check(len(held) >= 8, f"the worker held only {len(held)} unstarted jobs behind the slow one")
    victim.kill()
    victim.wait()
    # Another worker reaps the victim's leases and runs what went back.
    run.workers.start("--concurrency", "2", "--lease", "2s")
    run.wait_all_finished()
    rows = {r[0]: (r[1], r[2]) for r in run.conn.execute("SELECT id, state, attempts FROM flipbook.jobs WHERE id = ANY(%s)", (held,)).fetchall()}
    (state, error) = run.conn.execute("SELECT state, error->>'code' FROM flipbook.jobs WHERE id = %s", (slow,)).fetchone()
    run.conn.commit()
    check(all(rows[i] == ("done", 1) for i in held), f"held jobs: {sorted(set(rows[i] for i in held))}, expected done at attempt 1")
    check((state, error) == ("failed", "lease-expired"), f"the started job (max_attempts 1): {state}, {error}")
    print(f"worker killed with {len(held)} claimed-but-unstarted jobs: their attempt not counted (done at attempt 1);"
          " the started one failed lease-expired")


def queue_cli(run, *args):
    """`flipbook queue ARGS --database URL`; returns (exit status, stdout, stderr)."""
    out = subprocess.run([run.workers.binary, "queue", *args, "--database", run.pg.url], capture_output=True, text=True, timeout=300)
    return out.returncode, out.stdout, out.stderr


def fill_queue(run, media):
    """Done, failed (io and unknown-format) and cancelled jobs, through a real worker; returns ids by kind."""
    with open(os.path.join(run.root, "unknown.bin"), "wb") as f:
        f.write(b"not media\n" * 50)
    with run.pg.connect() as app:
        with app.transaction():
            ids = {
                "done": [app.execute("INSERT INTO flipbook.jobs (source, recipe) VALUES (%s, 'probe') RETURNING id", (m,)).fetchone()[0] for m in media[:6]],
                # A source that appears later: fails io at its only attempt, then (retried) ends done.
                "io": [app.execute("INSERT INTO flipbook.jobs (source, recipe, max_attempts) VALUES (%s, 'probe', 1) RETURNING id", (f"late/{i}.png",)).fetchone()[0] for i in range(3)],
                "unknown": [app.execute("INSERT INTO flipbook.jobs (source, recipe) VALUES ('unknown.bin', 'probe') RETURNING id").fetchone()[0] for _ in range(2)],
                "cancelled": [app.execute("INSERT INTO flipbook.jobs (source, recipe, run_after) VALUES (%s, 'probe', now() + interval '1 day') RETURNING id", (media[0],)).fetchone()[0] for _ in range(2)],
            }
    run.workers.start("--concurrency", "2")
    check(wait_until(run.conn, "SELECT count(*) = 11 FROM flipbook.jobs WHERE state IN ('done', 'failed')"), f"the jobs never ended: {states(run.conn)}")
    status, out, err = queue_cli(run, "cancel", *map(str, ids["cancelled"]))
    check(status == 0 and f"cancelled 2 job(s)" in out, f"queue cancel: {status} {out} {err}")
    return ids


def scenario_cli(run):
    """`flipbook queue` against a real queue: stats and list --json agree with SQL; retry --failed --code io
    moves exactly those jobs, which then run, and an app LISTENing on flipbook_done sees their new results; a
    database without the schema is refused with the migration command."""
    media = make_media(run.root)
    ids = fill_queue(run, media)
    status, out, err = queue_cli(run, "stats", "--json")
    check(status == 0, f"queue stats: {err}")
    stats = json.loads(out)
    truth = dict(run.conn.execute("SELECT state, count(*) FROM flipbook.jobs GROUP BY state").fetchall())
    run.conn.commit()
    check(all(stats["states"][s] == truth.get(s, 0) for s in ("available", "running", "done", "failed", "cancelled")),
          f"stats {stats['states']} vs SQL {truth}")
    check(stats["lastHour"]["done"] == truth.get("done", 0) and stats["lastHour"]["failed"] == truth.get("failed", 0), f"stats rates {stats}")
    check(stats["recipes"]["probe"]["failed"] == 5, f"by recipe: {stats['recipes']}")
    status, out, err = queue_cli(run, "list", "--state", "failed", "--json")
    listed = json.loads(out)
    rows = run.conn.execute("SELECT id, error->>'code', error->>'message', attempts FROM flipbook.jobs WHERE state = 'failed' ORDER BY id").fetchall()
    run.conn.commit()
    check(sorted((j["id"], j["errorCode"], j["errorMessage"], j["attempts"]) for j in listed) == [tuple(r) for r in rows],
          f"list --json {listed} vs SQL {rows}")
    status, out, err = queue_cli(run, "list", "--state", "failed", "--code", "io", "--json")
    check(sorted(j["id"] for j in json.loads(out)) == ids["io"], f"list --code io: {out}")
    print(f"queue stats and list --json agree with SQL: {truth}")
    # The app listens; the late sources appear; the operator retries the io failures.
    app = run.pg.connect()
    app.execute("LISTEN flipbook_done")
    app.commit()
    os.makedirs(os.path.join(run.root, "late"), exist_ok=True)
    for i in range(3):
        shutil.copy(os.path.join(run.root, media[6]), os.path.join(run.root, f"late/{i}.png"))
    status, out, err = queue_cli(run, "retry", "--failed", "--code", "io", "--json")
    check(status == 0 and sorted(json.loads(out)["retried"]) == ids["io"], f"retry --failed --code io: {status} {out} {err}")
    heard, deadline = set(), time.monotonic() + 300
    while set(ids["io"]) - heard and time.monotonic() < deadline:
        heard |= {int(n.payload) for n in app.notifies(timeout=1.0, stop_after=1)}
    check(set(ids["io"]) <= heard, f"flipbook_done never named the retried jobs: heard {heard}")
    rows = app.execute("SELECT id, state, attempts, result->>'type', errors FROM flipbook.jobs WHERE id = ANY(%s) ORDER BY id", (ids["io"],)).fetchall()
    app.commit()
    check(all(r[1] == "done" and r[2] == 1 and r[3] == "png" and [e["code"] for e in r[4]] == ["io"] for r in rows),
          f"retried jobs: {rows}")
    (unknown,) = run.conn.execute("SELECT count(*) FROM flipbook.jobs WHERE id = ANY(%s) AND state = 'failed'", (ids["unknown"],)).fetchone()
    run.conn.commit()
    check(unknown == 2, "retry --code io moved other failures")
    print("retry --failed --code io: exactly the io jobs, done at attempt 1 with their io error in the history; the app heard them")
    # A database without the schema: refused, naming the migration.
    with run.pg.connect(autocommit=True) as admin:
        admin.execute("CREATE DATABASE empty")
    out = subprocess.run([run.workers.binary, "queue", "stats", "--database", run.pg.url.replace("/postgres?", "/empty?")],
                         capture_output=True, text=True, timeout=120)
    check(out.returncode == 1 and "--migrate" in out.stderr, f"a database without the schema: {out.returncode} {out.stderr}")
    print(f"no schema: {out.stderr.strip()}")


def scenario_retention(run):
    """200,000 finished rows made old with SQL are pruned in batches while a worker keeps claiming; claims'
    latency during the prune is printed beside their latency before it (not asserted: timing)."""
    media = make_media(run.root)
    tiny = [m for m in media if m.endswith("10.jpg")][0]
    run.conn.execute("""INSERT INTO flipbook.jobs (source, recipe, state, attempts, finished_at, created_at)
        SELECT 'old/' || g, 'probe', CASE WHEN g % 10 = 0 THEN 'failed' ELSE 'done' END, 1,
               now() - interval '40 days', now() - interval '40 days' FROM generate_series(1, 200000) AS g""")
    run.conn.execute("INSERT INTO flipbook.jobs (source, recipe, state, attempts, finished_at) "
                     "SELECT 'recent/' || g, 'probe', 'done', 1, now() - interval '1 day' FROM generate_series(1, 1000) AS g")
    run.conn.commit()
    with run.pg.connect(autocommit=True) as admin:
        admin.execute("VACUUM ANALYZE flipbook.jobs")
    run.workers.start("--concurrency", "2", "--keep-done", "0", "--keep-failed", "0", "--metrics-port", "0")
    # Claims before the prune: jobs' wait from commit to start.
    def claims(n):
        run.enqueue([tiny] * n)
        run.wait_all_finished()
        lag = [r[0] for r in run.conn.execute("SELECT extract(epoch FROM claimed_at - created_at) * 1000 FROM flipbook.jobs "
                                              "WHERE source = %s AND state = 'done' ORDER BY id DESC LIMIT %s", (tiny, n)).fetchall()]
        run.conn.commit()
        return lag
    before = [lag for _ in range(10) for lag in claims(20)]  # the same batches of 20 as during the prune
    # The prune, by the CLI, while a stream of jobs runs.
    prune = subprocess.Popen([run.workers.binary, "queue", "prune", "--database", run.pg.url, "--keep-done", "7d", "--keep-failed", "30d"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    during = []
    while prune.poll() is None:
        during += claims(20)
    out, err = prune.communicate()
    check(prune.returncode == 0 and "pruned 200000 row(s)" in out, f"queue prune: {prune.returncode} {out} {err}")
    left = dict(run.conn.execute("SELECT substr(source, 1, 4), count(*) FROM flipbook.jobs GROUP BY 1").fetchall())
    run.conn.commit()
    check(left.get("old/", 0) == 0 and left.get("rece") == 1000, f"rows left: {left}")
    p = lambda xs, q: sorted(xs)[min(len(xs) - 1, int(len(xs) * q))] if xs else float("nan")
    print(f"prune: {out.strip()}")
    print(f"claim wait (commit -> claimed), ms: before median {p(before, .5):.1f} p99 {p(before, .99):.1f} max {max(before):.1f}; "
          f"during the prune ({len(during)} jobs) median {p(during, .5):.1f} p99 {p(during, .99):.1f} max {max(during, default=float('nan')):.1f}")
    # The workers' own retention: rows finished a day ago, kept 12 h.
    run.workers.stop_all()
    run.workers.start("--concurrency", "1", "--keep-done", "12h", "--metrics-port", "0")
    log = os.path.join(run.workers.logdir, f"worker-{len(run.workers.procs) - 1}.log")
    port = poll(lambda: metrics_address(log), lambda port: port is not None, pause=0.1)
    pruned = poll(lambda: samples(scrape(port, "/metrics")[1]).get('flipbook_queue_pruned_total{state="done"}'), lambda v: v == 1000, pause=0.2)
    check(pruned == 1000, f"the worker's /metrics counts {pruned} pruned done rows, not 1000")
    (recent,) = run.conn.execute("SELECT count(*) FROM flipbook.jobs WHERE source LIKE 'recent/%'").fetchone()
    run.conn.commit()
    check(recent == 0, f"{recent} day-old done rows left under --keep-done 12h")
    print("the worker pruned 1,000 day-old done rows under --keep-done 12h; /metrics counted them")


def start_ui(run, *extra):
    """`flipbook queue ui` on a free port; returns (process, base URL) once it listens."""
    log = open(os.path.join(run.tmp, f"ui-{len(extra)}.log"), "w+")
    proc = subprocess.Popen([run.workers.binary, "queue", "ui", "--database", run.pg.url, "--port", "0", *extra],
                            stdout=log, stderr=log)
    run.workers.procs.append(proc)  # stopped with the workers
    def address():
        log.seek(0)
        for line in log.read().splitlines():
            if "flipbook queue ui: http://" in line:
                return "http://127.0.0.1:" + line.rsplit(":", 1)[1].strip().rstrip("/")
        return None
    base = poll(address, lambda a: a is not None or proc.poll() is not None, pause=0.1)
    check(base is not None, f"queue ui never listened: {open(log.name).read()}")
    return proc, base


def http(url, data=None, headers=None):
    """(status, headers, body) of a request that follows no redirect."""
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args):
            return None
    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(url, data=data, headers=headers or {}, method="POST" if data is not None else "GET")
    try:
        with opener.open(request, timeout=60) as response:
            return response.status, response.headers, response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode(errors="replace")


def scenario_ui(run):
    """The queue's page in headless Chromium: counts match SQL; Retry on a failed job makes it available and then
    done; a job's error text containing <script> is shown as text; a POST without the CSRF token, and any
    request without the access token on a non-loopback address, are refused."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../browser"))
    from cdp import Browser
    media = make_media(run.root)
    ids = fill_queue(run, media)
    hostile = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\"> & more"
    (evil,) = run.conn.execute("INSERT INTO flipbook.jobs (source, recipe, state, attempts, finished_at, error) VALUES "
                               "('evil.gif', 'probe', 'failed', 1, now(), jsonb_build_object('code', 'corrupt', 'message', %s::text)) RETURNING id",
                               (hostile,)).fetchone()
    run.conn.commit()
    _, base = start_ui(run)
    browser = Browser()
    try:
        def load(url):
            browser.send("Page.enable")
            browser.events.clear()
            browser.send("Page.navigate", url=url)
            deadline = time.monotonic() + 60
            while not any(e.get("method") == "Page.loadEventFired" for e in browser.events) and time.monotonic() < deadline:
                browser.evaluate("1")
        load(base + "/")
        counts = browser.evaluate("Object.fromEntries([...document.querySelectorAll('.counts li')].map(li => [li.id.slice(6), +li.querySelector('.n').textContent]))")
        truth = dict(run.conn.execute("SELECT state, count(*) FROM flipbook.jobs GROUP BY state").fetchall())
        run.conn.commit()
        check(all(counts[s] == truth.get(s, 0) for s in ("available", "running", "done", "failed", "cancelled")), f"page counts {counts} vs SQL {truth}")
        shown = browser.evaluate(f"document.querySelector('tr[data-id=\"{evil}\"] td.error').textContent")
        check(hostile in shown, f"the hostile message shows as {shown!r}")
        check(browser.evaluate("window.__pwned === undefined && document.scripts.length === 0 && document.images.length === 0"),
              "the hostile message ran as HTML")
        listed = browser.evaluate("[...document.querySelectorAll('#failed tbody tr')].map(tr => +tr.dataset.id).sort((a, b) => a - b)")
        failed_ids = [r[0] for r in run.conn.execute("SELECT id FROM flipbook.jobs WHERE state = 'failed' ORDER BY id").fetchall()]
        run.conn.commit()
        check(listed == failed_ids, f"failed jobs listed {listed}, SQL {failed_ids}")
        load(base + "/?code=io")
        listed = browser.evaluate("[...document.querySelectorAll('#failed tbody tr')].map(tr => +tr.dataset.id).sort((a, b) => a - b)")
        check(listed == ids["io"], f"filtered by code io: {listed}, expected {ids['io']}")
        print(f"page counts match SQL {truth}; the <script> message is text; the code filter lists the io jobs")
        # Retry from the page: the file now exists, so the job ends done.
        os.makedirs(os.path.join(run.root, "late"), exist_ok=True)
        shutil.copy(os.path.join(run.root, media[6]), os.path.join(run.root, "late/0.png"))
        job = ids["io"][0]
        load(f"{base}/jobs/{job}")
        check("io" in browser.evaluate("document.querySelector('#error').textContent"), "the job's detail lacks its error")
        browser.events.clear()
        browser.evaluate("document.querySelector('#retry').click()")
        deadline = time.monotonic() + 60
        while not any(e.get("method") == "Page.loadEventFired" for e in browser.events) and time.monotonic() < deadline:
            browser.evaluate("1")
        check(wait_until(run.conn, "SELECT state = 'done' AND attempts = 1 FROM flipbook.jobs WHERE id = %s", (job,)),
              f"the retried job never ended done: {run.conn.execute('SELECT state, error FROM flipbook.jobs WHERE id = %s', (job,)).fetchone()}")
        print(f"Retry clicked on job {job}: available, then done")
        # The page's own Cancel form, read from the page with its session cookie, and a POST without the token.
        cookies = browser.send("Network.getAllCookies")["cookies"]
        session = next(c["value"] for c in cookies if c["name"] == "flipbook_queue_session")
    finally:
        browser.close()
    (waiting,) = run.conn.execute("INSERT INTO flipbook.jobs (source, recipe, run_after) VALUES ('x.png', 'probe', now() + interval '1 day') RETURNING id").fetchone()
    run.conn.commit()
    status, _, _ = http(f"{base}/jobs/{waiting}/cancel", data=b"", headers={"Cookie": f"flipbook_queue_session={session}"})
    check(status == 403, f"a POST without the CSRF token: {status}")
    status, _, _ = http(f"{base}/jobs/{waiting}/cancel", data=b"csrf=guess", headers={"Cookie": f"flipbook_queue_session={session}"})
    check(status == 403, f"a POST with a wrong CSRF token: {status}")
    (state,) = run.conn.execute("SELECT state FROM flipbook.jobs WHERE id = %s", (waiting,)).fetchone()
    run.conn.commit()
    check(state == "available", f"a refused POST changed the job: {state}")
    print("POSTs without the CSRF token or with a wrong one: 403, nothing changed")
    # Not loopback: no token, no start; with one, every request needs it.
    out = subprocess.run([run.workers.binary, "queue", "ui", "--database", run.pg.url, "--host", "0.0.0.0"], capture_output=True, text=True, timeout=60,
                         env={k: v for k, v in os.environ.items() if k != "FLIPBOOK_QUEUE_TOKEN"})
    check(out.returncode != 0 and "--token" in out.stderr, f"queue ui --host 0.0.0.0 without a token: {out.returncode} {out.stderr}")
    token = "t0ken-for-the-queue-page-test"
    _, wide = start_ui(run, "--host", "0.0.0.0", "--token", token)
    for path in ("/", f"/jobs/{waiting}"):
        status, _, _ = http(wide + path)
        check(status == 401, f"GET {path} without the token: {status}")
    status, _, _ = http(f"{wide}/jobs/{waiting}/cancel", data=b"csrf=x")
    check(status == 401, f"POST without the token: {status}")
    status, _, body = http(wide + "/", headers={"Authorization": f"Bearer {token}"})
    check(status == 200 and 'id="count-failed"' in body, f"GET / with the token: {status}")
    status, headers, _ = http(f"{wide}/?token={token}")
    check(status == 303 and "flipbook_queue_token=" in headers.get("Set-Cookie", ""), f"GET /?token=: {status} {dict(headers)}")
    print("--host 0.0.0.0: refused without --token; with one, requests without it get 401")


def scenario_traces(run):
    """A job enqueued by psycopg with a W3C traceparent gives one trace whose root is the app's span: the job's
    span under it, with children for the claim wait, reading the source, decoding, each derivative's encode and
    write, and the result's commit, their durations summing to within the job's wall time. The spans reach a
    loopback OTLP/HTTP receiver (opentelemetry-proto decodes them). A worker without an endpoint sends none."""
    from otlp_receiver import Receiver
    media = make_media(run.root)
    receiver = Receiver()
    try:
        # No endpoint: a job runs and nothing arrives (the receiver is up and listening all along).
        run.workers.start("--concurrency", "1")
        run.enqueue(media[4:5], recipe="default")
        run.wait_all_finished()
        check(run.workers.stop_all() == [0], "SIGTERM exit code")
        check(receiver.requests == 0, f"a worker without OTEL_EXPORTER_OTLP_ENDPOINT sent {receiver.requests} export(s)")
        # With one, and an app span's traceparent on the row.
        trace_id, app_span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
        env = dict(os.environ, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint, OTEL_SERVICE_NAME="ingest-test",
                   OTEL_TRACES_SAMPLER="parentbased_always_on", OTEL_BSP_SCHEDULE_DELAY="200")
        log = open(os.path.join(run.tmp, "traced.log"), "w")
        traced = subprocess.Popen([run.workers.binary, "worker", "--database", run.pg.url, "--root", run.root, "-o", run.out + "/traced",
                                   "--concurrency", "1"], stdout=log, stderr=log, env=env)
        run.workers.procs.append(traced)
        with run.pg.connect() as app:
            with app.transaction():
                (job,) = app.execute("INSERT INTO flipbook.jobs (source, recipe, trace_context) VALUES (%s, 'default', %s) RETURNING id",
                                     (media[4], f"00-{trace_id}-{app_span}-01")).fetchone()
        run.wait_all_finished()
        traced.terminate()
        traced.wait(timeout=120)
        spans = receiver.wait_for(lambda spans: any(s["name"] == "flipbook.job" for s in spans))
        mine = [s for s in spans if s["trace_id"] == trace_id]
        check(mine and all(s["service"] == "ingest-test" for s in mine), f"spans of the app's trace: {mine}")
        roots = [s for s in mine if s["name"] == "flipbook.job"]
        check(len(roots) == 1 and roots[0]["parent_id"] == app_span, f"the job's span is not the app span's child: {roots}")
        root = roots[0]
        check(root["attributes"].get("flipbook.job.outcome") == "done" and root["attributes"].get("flipbook.job.attempt") == 1
              and root["attributes"].get("flipbook.job.recipe") == "default", f"job span attributes: {root['attributes']}")
        children = [s for s in mine if s["parent_id"] == root["span_id"]]
        names = sorted(s["name"] for s in children)
        (derivatives,) = run.conn.execute("SELECT jsonb_array_length(result->'derivatives') FROM flipbook.jobs WHERE id = %s", (job,)).fetchone()
        run.conn.commit()
        want = ["claim wait", "decode", "read source", "result commit"] + [f"{verb} {name}" for verb in ("encode", "write") for name in ("poster", "video")]
        check(names == sorted(want), f"children {names}, expected {sorted(want)} ({derivatives} derivatives)")
        total = sum(s["end"] - s["start"] for s in children)
        wall = root["end"] - root["start"]
        check(total <= wall and all(root["start"] <= s["start"] and s["end"] <= root["end"] + 1_000_000 for s in children),
              f"children's {total / 1e6:.1f} ms against the job's {wall / 1e6:.1f} ms")
        print(f"one trace under the app's span: job {wall / 1e6:.1f} ms, children " +
              ", ".join(f"{s['name']} {(s['end'] - s['start']) / 1e6:.1f} ms" for s in sorted(children, key=lambda s: s["start"])))
        # serve continues a request's traceparent the same way.
        serve_log = open(os.path.join(run.tmp, "serve.log"), "w+")
        serve = subprocess.Popen([run.workers.binary, "serve", run.root, "--port", "0"], stdout=serve_log, stderr=serve_log,
                                 env=dict(env, OTEL_SERVICE_NAME="serve-test"))
        run.workers.procs.append(serve)
        def address():
            serve_log.seek(0)
            for line in serve_log.read().splitlines():
                if "listening on http://" in line:
                    return line.split("http://", 1)[1].strip().rstrip("/")
            return None
        host = poll(address, lambda a: a is not None or serve.poll() is not None, pause=0.1)
        check(host is not None, f"serve never listened: {open(serve_log.name).read()}")
        request_span = "b7ad6b7169203331"
        for _ in range(2):  # the second answered from the memory cache: traced too
            status, _, _ = http(f"http://{host}/thumb/{media[6]}?size=64", headers={"traceparent": f"00-{trace_id}-{request_span}-01"})
            check(status == 200, f"serve /thumb: {status}")
        serve.terminate()
        serve.wait(timeout=120)
        spans = receiver.wait_for(lambda spans: sum(s["service"] == "serve-test" for s in spans) >= 2)
        served = [s for s in spans if s["service"] == "serve-test"]
        check(len(served) == 2 and all(s["trace_id"] == trace_id and s["parent_id"] == request_span
                                       and s["attributes"].get("http.response.status_code") == 200 for s in served),
              f"serve's spans: {served}")
        print(f"serve: 2 requests, 2 server spans under the caller's traceparent ({[s['attributes'].get('flipbook.cache') for s in served]})")
    finally:
        receiver.close()


def scenario_failures(run):
    """Bombs, truncated and unknown files fail at attempt 1 with code and message; a missing source that
    appears later is retried and ends done."""
    # Files whose headers are already wrong, so the probe recipe fails on them. (Pixel bombs such as
    # max_size.jpg declare a valid header and fail only in the decoding recipes.)
    bad = {
        "bomb.gif": "gif/pillow/decompression_bomb.gif",
        "zero-width.gif": "gif/pillow/zero_width.gif",
        "truncated.png": "png/image-png/x_unexpected_eof.png",
        "corrupt.jpg": "jpeg/sharp/corrupt-header.jpg",
    }
    os.makedirs(os.path.join(run.root, "bad"))
    for name, rel in bad.items():
        shutil.copy(os.path.join(CORPUS, rel), os.path.join(run.root, "bad", name))
    with open(os.path.join(run.root, "bad", "unknown.bin"), "wb") as f:
        f.write(b"this is not media at all\n" * 40)
    media = make_media(run.root)
    run.enqueue([f"bad/{n}" for n in [*bad, "unknown.bin"]] + ["later/arrives.mp4", "../escape.mp4"])
    run.workers.start("--concurrency", "2")
    ok = wait_until(run.conn, "SELECT error IS NOT NULL FROM flipbook.jobs WHERE source = 'later/arrives.mp4'")
    check(ok, "the missing source never failed its first attempt")
    (state, attempts, error) = run.conn.execute(
        "SELECT state, attempts, error FROM flipbook.jobs WHERE source = 'later/arrives.mp4'").fetchone()
    run.conn.commit()
    check(state in ("available", "running") and attempts == 1, f"missing source: {state} after {attempts}: {error}")
    os.makedirs(os.path.join(run.root, "later"))
    shutil.copy(os.path.join(run.root, media[0]), os.path.join(run.root, "later/arrives.mp4"))
    run.wait_all_finished()
    for source, state, attempts, error, result in run.conn.execute(
            "SELECT source, state, attempts, error, result FROM flipbook.jobs ORDER BY id").fetchall():
        if source == "later/arrives.mp4":
            check(state == "done" and attempts == 2, f"{source}: {state} at attempt {attempts}")
            check(result["width"] == 320, f"{source}: {result}")
        else:
            check(state == "failed" and attempts == 1, f"{source}: {state} at attempt {attempts}, {error}")
            check(error["code"] in ("unknown-format", "unsupported", "corrupt", "truncated", "limit-exceeded", "invalid-argument"),
                  f"{source}: code {error}")
            check(len(error["message"]) > 10, f"{source}: message {error}")
            print(f"{source}: failed at attempt 1, {error['code']}: {error['message']}")
    run.conn.commit()


def scenario_recipes(run):
    """The default recipe and a recipe file's recipe through the queue: the result is the one `flipbook ingest`
    gives for the same file, every derivative is on disk with its hash, and ffprobe agrees with its size. An
    unknown recipe name and a pixel bomb fail at attempt 1 with invalid-argument and limit-exceeded."""
    media = make_media(run.root)
    # A pixel bomb made here (so the scenario needs no corpus): a baseline JPEG header declaring 65535x65535.
    with open(os.path.join(run.root, "media/bomb.jpg"), "wb") as f:
        f.write(b"\xff\xd8\xff\xc0" + struct.pack(">HBHHB", 11, 8, 65535, 65535, 1) + bytes([1, 0x11, 0]) + b"\xff\xd9")
    recipe_file = os.path.join(run.tmp, "recipes.json")
    with open(recipe_file, "w") as f:
        json.dump({"recipes": {"tiny": {"still": [{"name": "t", "operation": "thumb", "size": 48, "format": "png"}],
                                        "animation": [{"name": "t", "operation": "poster", "size": 48, "format": "png"}],
                                        "video": [{"name": "t", "operation": "poster", "size": 48, "format": "png"}]}}}, f)
    run.enqueue(media + ["media/bomb.jpg"], recipe="default")
    run.enqueue(media[:4] + media[6:8], recipe="tiny")
    run.enqueue(["media/00.mp4"], recipe="nonesuch")
    run.workers.start("--concurrency", "2", "--recipe", recipe_file)
    run.wait_all_finished()
    rows = run.conn.execute("SELECT source, recipe, state, attempts, result, error FROM flipbook.jobs ORDER BY id").fetchall()
    run.conn.commit()
    # The same files through `flipbook ingest` (run in the root, so the sources read the same), into its own folder.
    local_out = os.path.join(run.tmp, "local")
    local = subprocess.run([run.workers.binary, "ingest", *media, "-o", local_out, "--jobs", "2"], cwd=run.root,
                           capture_output=True, text=True)
    check(local.returncode == 0, f"flipbook ingest: {local.stderr}")
    by_source = {json.loads(line)["source"]: json.loads(line) for line in local.stdout.splitlines()}
    for source, recipe, state, attempts, result, error in rows:
        if recipe == "nonesuch" or source == "media/bomb.jpg":
            want = "invalid-argument" if recipe == "nonesuch" else "limit-exceeded"
            check(state == "failed" and attempts == 1 and error["code"] == want, f"{source} ({recipe}): {state}, {attempts}, {error}")
            print(f"{source} ({recipe}): failed at attempt 1, {error['code']}: {error['message']}")
            continue
        check(state == "done" and attempts == 1, f"{source} ({recipe}): {state} at attempt {attempts}: {error}")
        check(result["source"] == source and result["recipe"] == recipe, f"{source}: {result}")
        if recipe == "default":
            check(result == by_source[source], f"{source}: the worker's result differs from flipbook ingest's:\n{result}\n{by_source[source]}")
        for d in result["derivatives"]:
            path = os.path.join(run.out, d["path"])
            data = open(path, "rb").read()
            check(len(data) == d["bytes"] and hashlib.sha256(data).hexdigest() == d["sha256"], f"{path}: {d}")
            if path.endswith(".vtt"):
                continue
            w, h, _ = ffprobe(path)
            check((w, h) == (d["width"], d["height"]), f"{path}: ffprobe {w}x{h} vs {d}")
            check(max(w, h) <= (48 if recipe == "tiny" else 1280), f"{path}: {w}x{h}")
        check(result["placeholder"]["thumbhash"] and len(result["placeholder"]["blurhash"]) == 28, f"{source}: {result['placeholder']}")
    print(f"{len(rows)} jobs: the default and a file's recipe through the queue match flipbook ingest")


def scenario_batching(run):
    """Short jobs share statements, slow jobs are not hoarded. A worker claims more than its threads only once
    its jobs are known to be short: 1,000 `probe` jobs of a tiny JPEG must be claimed and recorded a few at a
    time (rows claimed in one statement share its `claimed_at`, rows recorded together their `finished_at`).
    When that worker then claims a batch of slow jobs (the default recipe on a video), it gives back those no
    thread has started once it sees they are slow, so an idle worker beside it gets its share."""
    media = make_media(run.root)
    tiny = [m for m in media if m.endswith("10.jpg")][0]
    run.workers.start("--concurrency", "2")
    run.enqueue([tiny] * 1000)
    run.wait_all_finished()
    claims, writes, attempts = run.conn.execute(
        "SELECT count(DISTINCT claimed_at), count(DISTINCT finished_at), max(attempts) FROM flipbook.jobs").fetchone()
    run.conn.commit()
    print(f"1,000 probe jobs: {claims} claims, {writes} result writes")
    check(attempts == 1, f"a probe job ran {attempts} times")
    # One claim and one write per job would give about 1,000 each; a third of that is far from both.
    check(claims <= 333 and writes <= 333, f"{claims} claims and {writes} writes for 1,000 short jobs: not batched")
    run.conn.execute("TRUNCATE flipbook.jobs")
    run.conn.commit()
    # The same worker, having learnt that its jobs are short, claims a batch of slow ones; once it sees one is
    # slow it gives back those no thread has started, and the second worker (one thread) gets its share.
    video = [m for m in media if m.endswith("01.mp4")][0]
    run.workers.start("--concurrency", "1")
    # Only once the second worker listens (its LISTEN connection is opened by the claim loop): enqueued at once,
    # the jobs went to the first worker before the second had started (libav's ~140 libraries, the
    # connection), which then found nothing left to share: "[('vm:...', 12, 1)]" in one fresh-clone `make test`
    # of three run beside a second one and a looping release build.
    check(wait_until(run.conn, f"SELECT ({WORKER_LISTENERS}) = 2", listen=False, ceiling=120),
          "the second worker never listened")
    run.enqueue([video] * 12, recipe="default")
    run.wait_all_finished()
    rows = run.conn.execute("SELECT worker, count(*), max(attempts) FROM flipbook.jobs WHERE state = 'done' GROUP BY worker").fetchall()
    run.conn.commit()
    print("12 default-recipe video jobs: " + ", ".join(f"{n} by a worker (attempts <= {a})" for _, n, a in rows))
    check(sum(n for _, n, _ in rows) == 12, f"not all 12 slow jobs done: {rows}")
    check(all(a == 1 for _, _, a in rows), f"a slow job ran twice: {rows}")
    check(len(rows) == 2 and min(n for _, n, _ in rows) >= 2, f"the slow jobs were not shared: {rows}")


def scrape(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as response:
        return response.status, response.read().decode()


def samples(text):
    """Prometheus text exposition -> {'name{labels}': value}, comments skipped."""
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            values[key] = float(value)
    return values


def poll(read, ok, ceiling=120, pause=0.05):
    """Calls `read` until `ok` holds for what it returned (or `ceiling` seconds pass); returns the last value.
    The ceiling is generous and only there so a broken run ends; the caller checks the value."""
    deadline = time.monotonic() + ceiling
    while True:
        value = read()
        if ok(value) or time.monotonic() > deadline:
            return value
        time.sleep(pause)


def metrics_address(log):
    """The port `flipbook worker --metrics-port 0` printed to its log, or None."""
    with open(log) as f:
        for line in f:
            if "metrics on http://" in line:
                return int(line.rsplit(":", 1)[1].split("/")[0])
    return None


def scenario_metrics(run):
    """/health and Prometheus /metrics on --metrics-port, read with a plain HTTP client, agree with the table:
    jobs by outcome, the duration histogram's count, the queue gauges, nothing left running. And a worker whose
    queue runs dry stops claiming until a NOTIFY or its poll says there may be more: with the poll out of the
    way (--poll 60s), 1,000 `probe` jobs of the mixed media end with at most a few claims that found nothing:
    the LISTEN connection's first wake, and at the end one claim after a full one and one woken by a job that
    finished meanwhile. Without the `drained` rule in QueueWorker there were 11-17 here (how many depends on
    timing: each of the last jobs to finish woke the loop for one). The counters move when the worker hears
    back from its UPDATE, after the commit the table shows, so they are polled until they agree."""
    media = make_media(run.root)
    with open(os.path.join(run.root, "unknown.bin"), "wb") as f:
        f.write(b"this is not media at all\n" * 40)
    run.workers.start("--concurrency", "2", "--metrics-port", "0", "--lease", "3s", "--poll", "60s")
    log = os.path.join(run.workers.logdir, "worker-0.log")
    port = poll(lambda: metrics_address(log), lambda port: port is not None, pause=0.1)
    check(port is not None, "the worker never printed its metrics address")
    metrics = lambda: samples(scrape(port, "/metrics")[1])
    status, body = scrape(port, "/health")
    check(status == 200 and body == "ok\n", f"/health: {status} {body!r}")
    # The baseline once the loop's first claim (of an empty queue, at start) is counted.
    before = poll(metrics, lambda m: m['flipbook_worker_claims_total{found="none"}'] >= 1)
    run.enqueue([media[i % len(media)] for i in range(1000)] + ["unknown.bin"])
    run.wait_all_finished()
    outcomes_of = lambda m: (m['flipbook_worker_jobs_total{outcome="done"}'], m['flipbook_worker_jobs_total{outcome="failed"}'])
    after = poll(metrics, lambda m: outcomes_of(m) == (1000, 1) and m.get("flipbook_worker_job_duration_seconds_count") == 1001
                 and m.get("flipbook_worker_running") == 0)
    outcomes, durations = outcomes_of(after), after.get("flipbook_worker_job_duration_seconds_count")
    check(outcomes == (1000, 1), f"jobs_total: {outcomes[0]} done, {outcomes[1]} failed; the table says 1000 and 1")
    check(durations == 1001, f"the duration histogram counted {durations} jobs, not 1001")
    check(after.get("flipbook_worker_running") == 0, f"running gauge {after.get('flipbook_worker_running')} after the last job")
    empty = after['flipbook_worker_claims_total{found="none"}'] - before['flipbook_worker_claims_total{found="none"}']
    found = after['flipbook_worker_claims_total{found="jobs"}']
    print(f"1,001 jobs: {found:.0f} claims found jobs, {empty:.0f} found none")
    check(found >= 1 and empty <= 5, f"{empty:.0f} claims found nothing while 1,001 jobs ran and ended")
    # flipbook_build_info carries what `flipbook --version` prints, whose libavcodec is the one ffmpeg reports.
    version = subprocess.run([run.workers.binary, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()
    libs = {line.split()[0]: line.split()[-1] for line in version[1:] if len(line.split()) >= 2}
    ffmpeg_libavcodec = next(l for l in subprocess.run(["ffmpeg", "-version"], capture_output=True, text=True).stdout.splitlines()
                             if l.startswith("libavcodec"))
    loaded = ffmpeg_libavcodec.split("/")[-1].replace(" ", "")
    check(version[0].startswith("flipbook ") and libs["libavcodec"] == loaded, f"--version {version} vs ffmpeg's {ffmpeg_libavcodec}")
    info = [k for k in after if k.startswith("flipbook_build_info{")]
    check(len(info) == 1 and f'version="{version[0].split()[1]}"' in info[0] and f'libavcodec="{loaded}"' in info[0]
          and after[info[0]] == 1, f"build info {info}")
    print(f"--version: {version[0]}, libavcodec {loaded} as ffmpeg says; /metrics: {info[0]}")
    # The queue gauges follow the heartbeat (a third of the 3 s lease).
    want = {"available": 0, "running": 0, "done": 1000, "failed": 1}
    gauges_of = lambda m: {state: m.get(f'flipbook_queue_jobs{{state="{state}"}}') for state in want}
    seen = poll(lambda: gauges_of(metrics()), lambda seen: seen == want, pause=0.2)
    check(seen == want, f"queue gauges {seen}, the table says {want}")


def scenario_s3(run):
    """Issues 43 and 44 through the queue: --root and -o are S3 prefixes (moto behind the logging proxy, which
    goes away for four seconds mid-run), a job may name a full s3:// URL or an http URL (nginx on loopback,
    allowed for its one host:port), and refused URLs fail at attempt 1. Every job ends done or failed as it
    must, each derivative is an object boto3 reads back with the recorded size, and a key's result is the one
    `flipbook ingest` makes from the same file locally, apart from locations."""
    import boto3
    env = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1",
           "AWS_DEFAULT_REGION": "us-east-1", "HOME": run.tmp, "AWS_CONFIG_FILE": os.path.join(run.tmp, "c"),
           "AWS_SHARED_CREDENTIALS_FILE": os.path.join(run.tmp, "k"), "AWS_MAX_ATTEMPTS": "10"}
    os.environ.update(env)
    moto = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    procs = [moto]
    try:
        port = None
        for line in moto.stdout:
            if "Running on http://127.0.0.1:" in line:
                port = int(line.split("http://127.0.0.1:")[1].split()[0].strip("/"))
                break
        check(port, "moto did not start")
        threading.Thread(target=lambda: [None for _ in moto.stdout], daemon=True).start()
        s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}")
        for bucket in ("uploads", "other", "derived"):
            s3.create_bucket(Bucket=bucket)
        media = make_media(run.root)
        for rel in media:
            s3.upload_file(os.path.join(run.root, rel), "uploads", rel)
        s3.upload_file(os.path.join(run.root, media[4]), "other", "elsewhere.gif")
        control, log, port_file = (os.path.join(run.tmp, n) for n in ("control.json", "proxy.log", "proxy.port"))
        proxy = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__), "../storage/fault_proxy.py"),
                                  port_file, str(port), control, log])
        procs.append(proxy)
        while not os.path.exists(port_file):
            time.sleep(0.02)
        os.environ["AWS_ENDPOINT_URL"] = "http://127.0.0.1:" + open(port_file).read()
        # nginx serving the same media, as a remote origin.
        nginx_dir = os.path.join(run.tmp, "nginx")
        os.makedirs(nginx_dir)
        nginx_port = free_port()
        with open(os.path.join(nginx_dir, "nginx.conf"), "w") as f:
            f.write(f"""worker_processes 1; pid {nginx_dir}/pid; error_log {nginx_dir}/error.log warn;
events {{ worker_connections 64; }}
http {{ access_log off; types {{ video/mp4 mp4; image/gif gif; }}
  client_body_temp_path {nginx_dir}/b; proxy_temp_path {nginx_dir}/p; fastcgi_temp_path {nginx_dir}/f;
  uwsgi_temp_path {nginx_dir}/u; scgi_temp_path {nginx_dir}/s;
  server {{ listen 127.0.0.1:{nginx_port}; root {run.root}; }} }}
""")
        os.chmod(run.root, 0o755)
        # Its own stdio, and stopped with SIGQUIT below: a SIGKILLed master leaves its worker holding our pipes.
        nginx = subprocess.Popen(["nginx", "-c", os.path.join(nginx_dir, "nginx.conf"), "-g", "daemon off;"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(nginx)
        keys = media[:8]
        urls = [f"http://127.0.0.1:{nginx_port}/{media[1]}", f"http://127.0.0.1:{nginx_port}/{media[5]}"]
        refused = ["http://169.254.169.254/latest/meta-data/x.gif", f"http://localhost:{nginx_port}/{media[1]}",
                   "file:///etc/passwd", f"http://127.0.0.1:{nginx_port}/missing.mp4"]
        run.enqueue(keys + ["s3://other/elsewhere.gif"] + urls + refused, recipe="default")
        run.workers.root, run.workers.out = "s3://uploads/", "s3://derived/"
        worker_log = os.path.join(run.workers.logdir, f"worker-{len(run.workers.procs)}.log")
        run.workers.start("--concurrency", "2", "--allow-private-sources", f"127.0.0.1:{nginx_port}", "--metrics-port", "0")
        # Gone for four seconds once the first results are in.
        ok = wait_until(run.conn, "SELECT count(*) >= 2 FROM flipbook.jobs WHERE state = 'done'")
        check(ok, f"no job finished: {states(run.conn)}")
        with open(control, "w") as f:
            f.write('{"down": true}')
        time.sleep(4)
        with open(control, "w") as f:
            f.write("{}")
        run.wait_all_finished()
        rows = run.conn.execute("SELECT source, state, attempts, error, result FROM flipbook.jobs ORDER BY id").fetchall()
        run.conn.commit()
        check("DOWN" in open(log).read(), "the outage happened")
        for source, state, attempts, error, result in rows:
            if source in refused:
                expected = "fetch-failed" if source.endswith("missing.mp4") else "fetch-refused"
                check(state == "failed" and attempts == 1 and error["code"] == expected, f"{source}: {state} {attempts} {error}")
                continue
            check(state == "done", f"{source}: {state} at attempt {attempts}: {error}")
            check(result["derivatives"], f"{source}: no derivatives")
            for d in result["derivatives"]:
                check(d["url"] == "s3://derived/" + d["path"], f"{source}: {d}")
                head = s3.head_object(Bucket="derived", Key=d["path"])
                check(head["ContentLength"] == d["bytes"] and head["ContentType"] == d["contentType"], f"{source}: {d} vs {head}")
        # A key's result is what ingest makes of the same file on this machine, apart from locations.
        local = subprocess.run([run.workers.binary, "ingest", os.path.join(run.root, keys[1]), "-o", os.path.join(run.tmp, "local")],
                               capture_output=True, text=True, check=True).stdout
        mine = [x[4] for x in rows if x[0] == keys[1]][0]
        theirs = json.loads(local)
        for result in (mine, theirs):
            result.pop("source", None)
            for d in result["derivatives"]:
                d.pop("url", None)
        check(mine == theirs, f"through S3: {mine}\nlocally: {theirs}")
        (uploads,) = [s3.list_multipart_uploads(Bucket="derived").get("Uploads", [])]
        check(not uploads, f"multipart uploads left: {uploads}")
        # The worker's /metrics counts its S3 requests and its fetches:
        # the two URL jobs' GETs, the missing file's 404, the refusals by reason.
        port = poll(lambda: metrics_address(worker_log), lambda port: port is not None, pause=0.1)
        check(port is not None, "the worker never printed its metrics address")
        m = samples(scrape(port, "/metrics")[1])
        check(m.get('flipbook_s3_requests_total{operation="get"}', 0) >= len(keys), f"S3 GETs: {m}")
        check(m.get('flipbook_s3_requests_total{operation="put"}', 0) >= len(keys), f"S3 PUTs: {m}")
        check(m.get('flipbook_s3_bytes_total{direction="received"}', 0) > 0 and m.get('flipbook_s3_bytes_total{direction="sent"}', 0) > 0, f"{m}")
        check(m.get("flipbook_source_fetches_total", 0) >= 3 and m.get("flipbook_source_fetch_bytes_total", 0) > 0, f"fetches: {m}")
        check(m.get('flipbook_source_fetch_refusals_total{reason="private-address"}', 0) >= 2, f"refusals: {m}")
    finally:
        run.workers.stop_all()
        for p in procs:
            if p.args[0] == "nginx":
                p.send_signal(signal.SIGQUIT)
                try:
                    p.wait(timeout=30)
                    continue
                except subprocess.TimeoutExpired:
                    pass
            p.kill()
            p.wait()


def main():
    binary, name = sys.argv[1], sys.argv[2]
    run = Run(binary)
    ok = False
    try:
        globals()[f"scenario_{name}"](run)
        ok = True
    except Skip as why:
        ok = True
        print(f"{name}: skipped: {why}")
        sys.exit(77)
    finally:
        run.close(ok)
    print(f"{name}: ok")


if __name__ == "__main__":
    main()
