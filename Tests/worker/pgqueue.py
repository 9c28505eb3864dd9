"""A throwaway PostgreSQL 15 (Debian's) in a temporary folder, and `flipbook worker` processes against it.

Used by Tests/worker/queue_tests.py and bench/ingest_worker.py. The server listens on a unix socket in
its own folder only (no TCP port to collide with), runs as the `postgres` user when we are root (initdb
refuses root), and is removed on stop().
"""
import json
import os
import shutil
import subprocess
import tempfile
import time

import psycopg

PG_BIN = "/usr/lib/postgresql/15/bin"


class Postgres:
    def __init__(self, settings=()):
        """`settings`: extra server settings, e.g. ("track_commit_timestamp=on",)."""
        self.settings = tuple(settings)
        self.dir = tempfile.mkdtemp(prefix="flipbook-pg-")
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "server.log")
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
            os.chmod(self.dir, 0o755)
            self.prefix = ["runuser", "-u", "postgres", "--"]
        else:
            self.prefix = []
        self._run(["initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"])
        self.start()

    def _run(self, args):
        subprocess.run(self.prefix + [os.path.join(PG_BIN, args[0])] + args[1:], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def start(self):
        options = f"-k {self.dir} -c listen_addresses='' -c fsync=off -c max_connections=200"
        options += "".join(f" -c {setting}" for setting in self.settings)
        self._run(["pg_ctl", "-D", self.data, "-o", options, "-l", self.log, "-w", "-t", "120", "start"])

    def stop(self, mode="fast"):
        self._run(["pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "120", "stop"])

    def restart(self):
        self.stop()
        self.start()

    def destroy(self):
        try:
            self.stop("immediate")
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)

    @property
    def url(self):
        return f"postgres://postgres@/postgres?host={self.dir}"

    def connect(self, **kwargs):
        return psycopg.connect(host=self.dir, user="postgres", dbname="postgres", **kwargs)


class Workers:
    """`flipbook worker` processes; their stderr goes to files in `logdir`."""

    def __init__(self, binary, pg, root, out, logdir):
        self.binary, self.pg, self.root, self.out, self.logdir = binary, pg, root, out, logdir
        self.procs = []

    def migrate(self):
        return subprocess.Popen([self.binary, "worker", "--database", self.pg.url, "--migrate"],
                                stderr=subprocess.PIPE, text=True)

    def start(self, *extra, application_name=None):
        """A worker with options `extra`; `application_name` names its connections (default flipbook-worker)."""
        log = open(os.path.join(self.logdir, f"worker-{len(self.procs)}.log"), "w")
        url = self.pg.url + (f"&application_name={application_name}" if application_name else "")
        proc = subprocess.Popen([self.binary, "worker", "--database", url, "--root", self.root,
                                 "-o", self.out, *extra], stdout=log, stderr=log)
        self.procs.append(proc)
        return proc

    def stop_all(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        codes = []
        for proc in self.procs:
            try:
                codes.append(proc.wait(timeout=120))
            except subprocess.TimeoutExpired:
                proc.kill()
                codes.append(proc.wait())
        return codes

    def logs(self):
        text = []
        for name in sorted(os.listdir(self.logdir)):
            if name.startswith("worker-"):
                with open(os.path.join(self.logdir, name)) as f:
                    text.append(f"--- {name}\n" + f.read()[-4000:])
        return "\n".join(text)


def wait_until(conn, predicate_sql, params=(), ceiling=300.0, listen=True):
    """Waits (on NOTIFY flipbook_done, re-checking the table at least every second) until `predicate_sql`
    returns true; the ceiling is generous and only there so a broken run ends."""
    if listen:
        conn.execute("LISTEN flipbook_done")
        conn.commit()
    deadline = time.monotonic() + ceiling
    while time.monotonic() < deadline:
        (ok,) = conn.execute(predicate_sql, params).fetchone()
        conn.commit()
        if ok:
            return True
        if listen:
            for _ in conn.notifies(timeout=1.0, stop_after=1):
                pass
        else:
            time.sleep(0.2)
    return False


def states(conn, where="true"):
    """Jobs by state, of the rows matching `where` (an SQL condition)."""
    rows = conn.execute(f"SELECT state, count(*) FROM flipbook.jobs WHERE {where} GROUP BY state").fetchall()
    conn.commit()
    return dict(rows)
