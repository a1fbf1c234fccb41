"""The fleet sweep under attack: each test reproduces a way alerts were lost, repeated or stopped
with nothing anyone saw, or a state file that was not plain data, and checks what the sweep
does now. The trees are copies of real samples; what a test does to them (names that are not
UTF-8, directories beyond PATH_MAX, emptied mount points, damaged state files, webhook servers
that misbehave) is synthetic and said so where it happens."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import POST_MORTEM_NOW, REPO, SAMPLES
from logscan.sweep.state import SCHEMA_VERSION

# Two failures and a healthy job: small, so every attack below costs little.
LAYOUT = {"alice/job-1": "crash-mid-training", "bob/job-2": "healthy-2x2",
          "run-top": "import-error-one-rank"}
FAILING = {"alice/job-1", "run-top"}


@pytest.fixture
def outputs(tmp_path) -> Path:
    root = tmp_path / "outputs"
    for where, sample in LAYOUT.items():
        shutil.copytree(SAMPLES / sample, root / where, ignore=shutil.ignore_patterns("expected.json"))
    return root


def sweep_json(run_cli, outputs, state, *args, code: int = 0) -> dict:
    result = run_cli("sweep", outputs, "--state", state, "--format", "json", "--now",
                     POST_MORTEM_NOW, *args)
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def told(report: dict) -> list[str]:
    return sorted(job["job_id"] for job in report["jobs"] if job["change"])


def failing(outputs: Path) -> list[str]:
    return sorted(f"{outputs}/{where}" for where in FAILING)


def logscan(*args, **kwargs) -> subprocess.CompletedProcess:
    """logscan as cron runs it: its own process, nothing captured by a test runner."""
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    return subprocess.run([sys.executable, "-m", "logscan", *map(str, args)], cwd=REPO,
                          timeout=120, **kwargs)


# -- the lock -------------------------------------------------------------------------------------

KILL_WITH_WORKERS = """
import json, multiprocessing, os, signal, sys
import logscan.sweep.engine as engine
pids = sys.argv.pop(1)
engine.FAN_OUT_MIN_JOBS = 2
commit, done = engine.Sweep._commit, []
def commit_then_die(self, *args):
    commit(self, *args)
    done.append(1)
    if len(done) == 1:
        with open(pids, "w") as out:
            json.dump([p.pid for p in multiprocessing.active_children()], out)
        os.kill(os.getpid(), signal.SIGKILL)
engine.Sweep._commit = commit_then_die
sys.argv = ["logscan", *sys.argv[1:]]
from logscan.cli import main
main()
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_killed_sweep_leaves_no_worker_holding_the_lock_and_the_next_one_alerts(run_cli, outputs,
                                                                                  tmp_path):
    state, pids = tmp_path / "s.db", tmp_path / "workers.json"
    args = ["sweep", outputs, "--state", state, "--format", "jsonl", "--now", POST_MORTEM_NOW,
            "--jobs", "2"]
    killed = subprocess.run([sys.executable, "-c", KILL_WITH_WORKERS, str(pids), *map(str, args)],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    workers = json.loads(pids.read_text())
    assert workers  # the fan-out had forked its processes
    for _ in range(100):  # the kernel ends them with their parent (PR_SET_PDEATHSIG)
        if not any(map(_alive, workers)):
            break
        time.sleep(0.05)
    assert not any(map(_alive, workers))
    rerun = run_cli(*args)  # not kept out by a lock the workers would hold
    assert rerun.exit_code == 0, rerun.output
    alerts = [json.loads(line)["job_id"] for line in rerun.stdout.splitlines()]
    assert sorted(alerts) == failing(outputs)  # nothing was printed before the kill


AS_PROCESS_ONE = """
import sys
import logscan.sweep.engine as engine
engine.FAN_OUT_MIN_JOBS = 2
sys.argv = ["logscan", *sys.argv[1:]]
from logscan.cli import main
main()
"""


def test_the_fan_out_works_when_the_sweep_is_process_1(outputs, tmp_path):
    """In a container the command is often process 1: its workers' parent is 1 while it lives."""
    unshare = shutil.which("unshare")
    probe = unshare and subprocess.run([unshare, "-fp", "--mount-proc", "true"], capture_output=True)
    if not probe or probe.returncode != 0:
        pytest.skip("no PID namespace to be process 1 in")
    args = ["sweep", outputs, "--state", tmp_path / "s.db", "--format", "jsonl", "--now",
            POST_MORTEM_NOW, "--jobs", "2"]
    first = subprocess.run([unshare, "-fp", "--mount-proc", sys.executable, "-c", AS_PROCESS_ONE,
                            *map(str, args)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert sorted(json.loads(line)["job_id"] for line in first.stdout.splitlines()) == failing(outputs)


HOLD_LOCK = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.lockf(fd, fcntl.LOCK_EX, 1, 0)
print("held", flush=True)
sys.stdin.read()
"""


HOLD_STATE = """
import sys
from pathlib import Path
from logscan.sweep import state as st
lock = st.Lock(Path(sys.argv[1]))
lock.acquire()
db = st.connect(Path(sys.argv[1]))
db.execute("SELECT count(*) FROM jobs").fetchone()
print("held", flush=True)
sys.stdin.read()
"""


def test_a_state_reached_by_a_hard_link_is_locked_as_one_file(run_cli, outputs, tmp_path):
    state = tmp_path / "state" / "s.db"
    state.parent.mkdir()
    assert told(sweep_json(run_cli, outputs, state)) == failing(outputs)
    link = tmp_path / "elsewhere" / "other-name.db"
    link.parent.mkdir()
    os.link(state, link)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_STATE, str(state)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert holder.stdout.readline() == "held\n"
        (outputs / "alice" / "job-1" / "worker-0" / "launch_ddp.log").open("a").write("more\n")
        busy = run_cli("sweep", outputs, "--state", link, "--now", POST_MORTEM_NOW)
    finally:
        holder.communicate("")
    assert busy.exit_code == 75 and f"pid {holder.pid}" in busy.stderr, busy.output
    assert not list(link.parent.glob("*-wal")) and not list(link.parent.glob("*-shm"))
    assert sweep_json(run_cli, outputs, link)["sweep"]["refreshed"] == 1  # free again, one state


def test_a_lock_really_held_is_a_failure_whatever_name_the_state_is_reached_by(run_cli, outputs,
                                                                               tmp_path):
    real = tmp_path / "state" / "s.db"
    real.parent.mkdir()
    alias = tmp_path / "alias.db"
    alias.symlink_to(real)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(real)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        busy = run_cli("sweep", outputs, "--state", alias, "--now", POST_MORTEM_NOW)
    finally:
        holder.communicate("")
    assert busy.exit_code == 75 and busy.stdout == ""
    assert busy.stderr.count("\n") == 1 and "another sweep" in busy.stderr
    assert f"pid {holder.pid}" in busy.stderr
    assert real.stat().st_size == 0 and not list(tmp_path.glob("alias.db*-*"))  # the real file's lock
    assert told(sweep_json(run_cli, outputs, alias)) == failing(outputs)  # free again


# -- names that are not UTF-8 -------------------------------------------------------------------

def test_a_directory_name_that_is_not_utf8_never_fails_the_sweep(run_cli, outputs, tmp_path):
    # Synthetic: a user directory named with bytes that are not UTF-8, holding a real crash.
    odd = os.path.join(os.fsencode(outputs), b"\xff\xfeuser")
    job = os.path.join(odd, b"job-\xe9")
    shutil.copytree(SAMPLES / "crash-mid-training", os.fsdecode(job),
                    ignore=shutil.ignore_patterns("expected.json"))
    worker = os.path.join(job, b"worker-1")
    os.rename(os.path.join(worker, b"launch_ddp.log"), os.path.join(worker, b"launch_ddp-\xfe.log"))
    state = tmp_path / "s.db"
    first = sweep_json(run_cli, outputs, state)
    shown = f"{outputs}/\\xff\\xfeuser/job-\\xe9"
    assert told(first) == sorted([*failing(outputs), shown])
    assert all(job["job_path"].isprintable() for job in first["jobs"])
    assert sweep_json(run_cli, outputs, state)["jobs"] == []  # told once, found again by its bytes
    every = sweep_json(run_cli, outputs, state, "--all", "--export", tmp_path / "jobs.csv")
    assert shown in {job["job_id"] for job in every["jobs"]}
    assert "\\xff\\xfeuser" in (tmp_path / "jobs.csv").read_text()
    lines = run_cli("sweep", outputs, "--state", state, "--all", "--now", POST_MORTEM_NOW)
    assert lines.exit_code == 0 and "\\xff\\xfeuser/job-\\xe9" in lines.stdout


# -- standard output ------------------------------------------------------------------------------

def _small_pipe() -> tuple[int, int]:
    """A pipe that holds 4 KiB (the smallest a pipe is given), its write end non-blocking: a
    write larger than what is left is cut short, as a slow or vanished reader cuts one."""
    read, write = os.pipe()
    fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, 4096)
    fcntl.fcntl(write, fcntl.F_SETFL, fcntl.fcntl(write, fcntl.F_GETFL) | os.O_NONBLOCK)
    return read, write


def test_output_not_taken_whole_is_not_acknowledged(run_cli, outputs, tmp_path):
    state = tmp_path / "s.db"
    args = ["sweep", outputs, "--state", state, "--format", "json", "--now", POST_MORTEM_NOW]
    read, write = _small_pipe()
    try:
        cut = logscan(*args, stdout=write, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        taken = os.read(read, 1 << 16)
    finally:
        os.close(write)
        os.close(read)
    assert 0 < len(taken) <= 4096  # the pipe took what it could hold, the rest was refused
    assert cut.returncode == 69, cut.stderr
    assert cut.stderr.decode().count("\n") == 1 and b"standard output" in cut.stderr
    assert told(sweep_json(run_cli, outputs, state)) == failing(outputs)
    assert sweep_json(run_cli, outputs, state)["jobs"] == []


# -- the state is data ---------------------------------------------------------------------------

def _as_schema(state: Path, version: int, surveys: bytes) -> None:
    """Synthetic: a state made by this logscan, turned back into an older schema's layout, its
    surveys replaced by `surveys` (what that schema stored: pickles)."""
    db = sqlite3.connect(state)
    db.executescript("ALTER TABLE outbox DROP COLUMN printed; ALTER TABLE outbox DROP COLUMN posted; "
                     "ALTER TABLE alerted DROP COLUMN version;")
    if version == 2:
        db.executescript("ALTER TABLE files RENAME COLUMN surveys TO facts; "
                         "UPDATE meta SET key = 'facts_code' WHERE key = 'reading_code';")
    db.execute("UPDATE files SET {} = ?".format("facts" if version == 2 else "surveys"), (surveys,))
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))
    db.commit()
    db.close()


@pytest.mark.parametrize("version", [2, 3])
def test_an_older_state_is_migrated_without_loading_its_pickles(run_cli, outputs, tmp_path, version):
    import pickle
    import zlib

    state, ran = tmp_path / "s.db", tmp_path / "pickle-ran"

    class Runs:  # what a pickle can do when it is loaded: call anything
        def __reduce__(self):
            return (Path.touch, (ran,))

    assert told(sweep_json(run_cli, outputs, state)) == failing(outputs)
    _as_schema(state, version, zlib.compress(pickle.dumps(Runs())))
    again = sweep_json(run_cli, outputs, state)
    assert not ran.exists()
    assert again["jobs"] == []  # jobs and alerts already sent are kept: nothing told twice
    assert again["sweep"]["files_opened"] > 0  # what could not be converted is read again
    db = sqlite3.connect(state)
    surveys = [zlib.decompress(blob) for blob, in db.execute("SELECT surveys FROM files "
                                                             "WHERE surveys IS NOT NULL")]
    assert surveys and all(json.loads(s) for s in surveys)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == \
        (str(SCHEMA_VERSION),)


def _damaged(state: Path, kind: str) -> Path:
    """Synthetic damage to the state file (or a --state that is no file)."""
    if kind == "garbage":
        state.write_bytes(b"this is not a database\n" * 100)
    elif kind == "truncated":
        whole = state.read_bytes()
        state.write_bytes(whole[: len(whole) // 3])
    elif kind == "fifo":
        os.mkfifo(state)
    elif kind == "directory":
        state.mkdir()
    elif kind == "device":
        return Path("/dev/null")
    return state


def _listing(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() and not p.is_fifo()
            else "" for p in directory.iterdir()}


@pytest.mark.parametrize("kind", ["garbage", "truncated", "fifo", "directory", "device"])
def test_a_state_that_cannot_be_used_is_one_line_exit_2_and_left_as_it_is(
        run_cli, outputs, tmp_path, kind):
    state = tmp_path / "state" / "s.db"
    state.parent.mkdir()
    if kind == "truncated":
        sweep_json(run_cli, outputs, state)
        for extra in state.parent.glob("s.db-*"):
            extra.unlink()
    given = _damaged(state, kind)
    before = _listing(state.parent)
    result = run_cli("sweep", outputs, "--state", given, "--now", POST_MORTEM_NOW)
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and result.stderr.count("\n") == 1, result.output
    assert str(given) in result.stderr and "internal error" not in result.stderr
    assert _listing(state.parent) == before  # nothing overwritten, nothing created beside it


def test_a_full_disk_while_sweeping_is_one_line_exit_2(outputs, tmp_path):
    import resource

    def small_files() -> None:  # synthetic full disk: no file of this process may pass 24 KiB
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (24 << 10, 24 << 10))

    state = tmp_path / "s.db"
    full = logscan("sweep", outputs, "--state", state, "--now", POST_MORTEM_NOW, text=True,
                   preexec_fn=small_files)
    assert full.returncode == 2, full.stderr
    assert full.stderr.count("\n") == 1 and str(state) in full.stderr, full.stderr
    assert full.stdout == ""


# -- the webhook ------------------------------------------------------------------------------------

class Hook:
    """A webhook on loopback (threads in this test) that answers as told: `answers` are used in
    order, the last one for every request after. Synthetic servers: each misbehaves one way."""

    def __init__(self, *answers: str):
        self.answers = list(answers)
        self.received: list[dict] = []
        self.dribbled = 0
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                answer = hook.answers.pop(0) if len(hook.answers) > 1 else hook.answers[0]
                if answer == "close":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if answer == "dribble":  # a byte at a time, never done
                    try:
                        for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"x" * 100:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            hook.dribbled += 1
                            time.sleep(0.05)
                    except OSError:
                        pass
                    return
                if answer == "slow":  # answers 200, but only after the deadline
                    time.sleep(1)
                    status = 200
                elif answer.startswith("late"):  # takes the alert, answers 200 after a while
                    hook.received.append(json.loads(body))
                    time.sleep(float(answer.split()[1]))
                    status = 0
                else:
                    status = int(answer.partition(" ")[0])
                    if 200 <= status < 300:
                        hook.received.append(json.loads(body))
                self.send_response(status or 200)
                if "retry" in answer:
                    self.send_header("Retry-After", answer.rpartition(" ")[2])
                if status in (301, 302, 307, 308):
                    self.send_header("Location", "/elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"

    def __enter__(self) -> "Hook":
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *_) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def quick_webhook(monkeypatch):
    """Deadlines of a fraction of a second, not seconds: the behaviour is the same, the test short."""
    import logscan.sweep.alerts as alerts

    monkeypatch.setattr(alerts, "TIMEOUT", 0.4)
    monkeypatch.setattr(alerts, "DEADLINE", 0.6)
    monkeypatch.setattr(alerts, "BACKOFF", 0.02)
    return alerts


def test_an_alert_is_kept_until_a_2xx_comes_back(run_cli, outputs, tmp_path, quick_webhook,
                                                 monkeypatch):
    state = tmp_path / "s.db"

    def kept(hook: Hook, answer: str, alerts: int) -> str:
        hook.answers = [answer]
        result = run_cli("sweep", outputs, "--state", state, "--webhook", hook.url)
        assert result.exit_code == 69, (answer, result.output)
        assert result.stdout == "" and result.stderr.count("\n") == 1, (answer, result.output)
        assert f"{alerts} alert(s) kept" in result.stderr, (answer, result.stderr)
        return result.stderr

    with Hook("500") as hook:
        first = sweep_json(run_cli, outputs, state, "--webhook", hook.url, code=69)
        assert told(first) == failing(outputs)  # printed once, whatever the webhook did
        for answer in ["429", "404", "307", "302", "close", "slow", "dribble"]:
            kept(hook, answer, 2)
        assert hook.received == []
        assert hook.dribbled < 40  # cut at the deadline, not read on while bytes trickle in
        monkeypatch.setattr(quick_webhook, "DEADLINE", 2.0)
        hook.answers = ["429 retry 1", "200"]  # rate-limited: answered when it says
        assert sweep_json(run_cli, outputs, state, "--webhook", hook.url)["jobs"] == []
        assert sweep_json(run_cli, outputs, state, "--webhook", hook.url)["jobs"] == []
        # Never answered before: one digest of both, posted once.
        assert [sorted(m["job_ids"]) for m in hook.received] == [failing(outputs)]
        shutil.copytree(SAMPLES / "crash-mid-training", outputs / "carol" / "job-3",
                        ignore=shutil.ignore_patterns("expected.json"))
        hook.answers = ["429 retry 3600"]
        limited = run_cli("sweep", outputs, "--state", state, "--format", "json", "--now",
                          POST_MORTEM_NOW, "--webhook", hook.url)
        assert limited.exit_code == 69 and "retry after 3600 s" in limited.stderr, limited.output
        assert told(json.loads(limited.stdout)) == [f"{outputs}/carol/job-3"]
        assert "asked not to be posted to before" in kept(hook, "200", 1)  # not for an hour
    assert len(hook.received) == 1


@pytest.mark.parametrize("url", ["file:///etc/passwd", "data:,hello", "http://127.0.0.1:99999/x",
                                 "http://", "hooks.slack.com/services/T0", "http://a b/",
                                 "ftp://example.com/"])
def test_a_webhook_url_that_cannot_be_posted_to_is_refused_before_anything(run_cli, outputs,
                                                                           tmp_path, url):
    result = run_cli("sweep", outputs, "--state", tmp_path / "s.db", "--webhook", url)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "--webhook" in result.stderr
    assert list(tmp_path.iterdir()) == [outputs]


def test_a_first_sweep_sends_one_digest_then_each_new_failure(run_cli, outputs, tmp_path):
    state = tmp_path / "s.db"
    with Hook("200") as hook:
        sweep_json(run_cli, outputs, state, "--webhook", hook.url)
        [first] = hook.received
        assert first["digest"] and first["failures"] == 2 and sorted(first["job_ids"]) == failing(outputs)
        assert first["text"].startswith("logscan: first sweep: 2 failure(s) found\n- new failure: ")
        shutil.copytree(SAMPLES / "crash-mid-training", outputs / "carol" / "job-3",
                        ignore=shutil.ignore_patterns("expected.json"))
        sweep_json(run_cli, outputs, state, "--webhook", hook.url)
    assert [m.get("job_id") for m in hook.received[1:]] == [f"{outputs}/carol/job-3"]


def test_a_kill_during_delivery_repeats_at_most_the_alert_in_flight(run_cli, outputs, tmp_path,
                                                                     quick_webhook, monkeypatch):
    state, aside = tmp_path / "s.db", tmp_path / "aside"
    (outputs / "run-top").rename(aside)
    with Hook("200") as hook:  # one failure, alerted alone: the webhook has answered
        sweep_json(run_cli, outputs, state, "--webhook", hook.url)
    aside.rename(outputs / "run-top")
    shutil.copytree(SAMPLES / "crash-mid-training", outputs / "carol" / "job-3",
                    ignore=shutil.ignore_patterns("expected.json"))
    with Hook("500") as down:
        sweep_json(run_cli, outputs, state, "--webhook", down.url, code=69)
    posted = []

    def post_then_die(url, body, ends):
        posted.append(json.loads(body)["job_id"])
        if len(posted) == 2:
            raise KeyboardInterrupt  # the sweep stops here, the second alert in flight
        return quick_webhook.Answer(True)

    with monkeypatch.context() as patch:
        patch.setattr(quick_webhook, "post", post_then_die)
        stopped = run_cli("sweep", outputs, "--state", state, "--webhook", "http://127.0.0.1:9/")
    assert stopped.exit_code != 0
    with Hook("200") as hook:
        sweep_json(run_cli, outputs, state, "--webhook", hook.url)
    assert sorted(posted[:1] + [m["job_id"] for m in hook.received]) == \
        sorted([f"{outputs}/run-top", f"{outputs}/carol/job-3"])
    assert [m["job_id"] for m in hook.received] == posted[1:]  # the one in flight, told again


# -- what cannot be walked ------------------------------------------------------------------------

def test_a_swept_directory_found_empty_keeps_its_jobs_and_alerts_nothing_again(run_cli, outputs,
                                                                               tmp_path):
    state, away = tmp_path / "s.db", tmp_path / "away"
    assert told(sweep_json(run_cli, outputs, state)) == failing(outputs)
    outputs.rename(away)  # synthetic: the filesystem is not mounted, its mount point is empty
    outputs.mkdir()
    empty = run_cli("sweep", outputs, "--state", state, "--all", "--format", "json", "--now",
                    POST_MORTEM_NOW)
    assert empty.exit_code == 0 and empty.stderr.count("\n") == 1
    assert "is empty but held 3 job(s)" in empty.stderr
    assert len(json.loads(empty.stdout)["jobs"]) == len(LAYOUT)
    outputs.rmdir()
    away.rename(outputs)  # mounted again
    back = sweep_json(run_cli, outputs, state)
    assert back["jobs"] == [] and back["sweep"]["refreshed"] == 0


def _beyond_path_max(parent: Path) -> Path:
    """Synthetic: directories nested until their path is longer than PATH_MAX (4096)."""
    fd = os.open(parent, os.O_RDONLY)
    try:
        for _ in range(18):
            os.mkdir("d" * 250, dir_fd=fd)
            inner = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
    return parent / ("d" * 250)


@pytest.mark.parametrize("how", ["beyond PATH_MAX", "chmod 000", "listing denied"])
def test_a_directory_that_cannot_be_walked_is_said_and_its_job_kept(run_cli, outputs, tmp_path, how,
                                                                    monkeypatch):
    state = tmp_path / "s.db"
    job = outputs / "alice" / "job-1"
    assert told(sweep_json(run_cli, outputs, state)) == failing(outputs)
    if how == "chmod 000":
        if os.geteuid() == 0:
            pytest.skip("root lists any directory")
        hidden = job / "worker-1"
        hidden.chmod(0)
    elif how == "listing denied":  # synthetic, for root too: what chmod 000 does to another user
        import errno

        hidden, scandir = job / "worker-1", os.scandir

        def scandir_or_refuse(path="."):
            if os.fspath(path) == str(hidden):
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return scandir(path)

        monkeypatch.setattr(os, "scandir", scandir_or_refuse)
    else:
        hidden = _beyond_path_max(job)
    try:
        result = run_cli("sweep", outputs, "--state", state, "--all", "--format", "json", "--now",
                         POST_MORTEM_NOW)
    finally:
        if how == "chmod 000":
            hidden.chmod(0o755)
    assert result.exit_code == 0 and result.stderr.count("\n") == 1, result.output
    assert "cannot walk" in result.stderr and "keep their last diagnosis" in result.stderr
    report = json.loads(result.stdout)
    kept = {j["job_id"]: j for j in report["jobs"]}[str(job)]
    assert kept["verdict"] == "FAILED" and kept["change"] is None and report["sweep"]["refreshed"] == 0
    if how == "beyond PATH_MAX":
        shutil.rmtree(hidden)
    monkeypatch.undo()
    assert sweep_json(run_cli, outputs, state)["jobs"] == []  # seen whole again: nothing new


def test_a_grown_log_is_read_on_from_where_the_last_sweep_stopped(run_cli, outputs, tmp_path):
    """Stored surveys are resumed, not thrown away: the bytes read after a log grows are the new
    ones (and the few looked at around them), not the whole file."""
    log = outputs / "bob" / "job-2" / "worker-0" / "launch_ddp.log"
    lines = log.read_bytes().splitlines(keepends=True)
    # Synthetic: the healthy run's progress lines repeated until the log is 300 KB.
    steps = [line for line in lines if line.startswith(b"step ")]
    body = b"".join(steps) * (300_000 // len(b"".join(steps)) + 1)
    log.write_bytes(b"".join(lines[:-1]) + body + lines[-1])
    state = tmp_path / "s.db"
    sweep_json(run_cli, outputs, state)
    with log.open("ab") as handle:
        handle.write(steps[-1])
    grown = sweep_json(run_cli, outputs, state)
    assert grown["sweep"]["refreshed"] == 1
    assert grown["sweep"]["bytes_read"] < 4096 + 512 + len(steps[-1]) < log.stat().st_size // 50


# -- what a webhook can ask ------------------------------------------------------------------------

def _webhook_known(state: Path) -> dict:
    db = sqlite3.connect(state)
    try:
        [(value,)] = db.execute("SELECT value FROM meta WHERE key = 'webhook'").fetchall()
    finally:
        db.close()
    return json.loads(value)


@pytest.mark.parametrize("asked", ["86400", "99999999999", "9" * 400, "soon", "-5",
                                   "Fri, 31 Dec 9999 23:59:59 GMT"])
def test_a_wait_the_server_asks_for_is_bounded_and_never_a_crash(run_cli, outputs, tmp_path,
                                                                 quick_webhook, asked):
    """Synthetic server: one 429 with a Retry-After of a day, of centuries, of 400 digits, or
    that no one can read; then it answers."""
    state = tmp_path / "s.db"
    with Hook(f"429 retry {asked}") as hook:
        limited = run_cli("sweep", outputs, "--state", state, "--webhook", hook.url, "--now",
                          POST_MORTEM_NOW)
        assert limited.exit_code == 69, limited.output
        waits = _webhook_known(state)["retry_at"] - time.time()
        assert 0 <= waits <= quick_webhook.RETRY_AFTER_MAX
        if asked != "86400":  # no wait anyone means: a short one
            assert waits <= quick_webhook.RETRY_AFTER_UNREADABLE
        again = run_cli("sweep", outputs, "--state", state, "--webhook", hook.url)
        assert again.exit_code == 69 and "internal error" not in again.stderr, again.output


def test_a_wait_is_owed_to_its_destination_and_forgotten_when_it_changes(run_cli, outputs, tmp_path,
                                                                          quick_webhook):
    state = tmp_path / "s.db"
    with Hook("429 retry 86400") as old, Hook("200") as new:
        assert run_cli("sweep", outputs, "--state", state, "--webhook", old.url).exit_code == 69
        moved = run_cli("sweep", outputs, "--state", state, "--webhook", new.url)
        assert moved.exit_code == 0, moved.output
    assert sorted(new.received[0]["job_ids"]) == failing(outputs)


def test_a_wait_stored_past_any_bound_by_an_older_logscan_is_no_crash(run_cli, outputs, tmp_path,
                                                                      quick_webhook):
    state = tmp_path / "s.db"
    with Hook("500") as down:
        sweep_json(run_cli, outputs, state, "--webhook", down.url, code=69)
    db = sqlite3.connect(state)  # synthetic: what a 400-digit Retry-After left in a schema 5 state
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('webhook_retry_at', 'inf')")
    db.commit()
    db.close()
    with Hook("200") as hook:
        result = run_cli("sweep", outputs, "--state", state, "--webhook", hook.url)
    assert result.exit_code in (0, 69) and "internal error" not in result.stderr, result.output


# -- who tells an alert ----------------------------------------------------------------------------

@pytest.mark.parametrize("ad_hoc", [[], ["--summary"], ["--all"], ["--export", "jobs.csv"],
                                    ["--format", "jsonl"]])
def test_alerts_kept_for_the_webhook_stay_owed_through_a_sweep_without_it(run_cli, outputs, tmp_path,
                                                                          quick_webhook, ad_hoc):
    state = tmp_path / "s.db"
    with Hook("500") as down:
        sweep_json(run_cli, outputs, state, "--webhook", down.url, code=69)
    ad_hoc = [str(tmp_path / a) if a.endswith(".csv") else a for a in ad_hoc]
    operator = run_cli("sweep", outputs, "--state", state, "--now", POST_MORTEM_NOW, *ad_hoc)
    assert operator.exit_code == 0, operator.output
    with Hook("200") as hook:
        sweep_json(run_cli, outputs, state, "--webhook", hook.url)
    assert [sorted(m["job_ids"]) for m in hook.received] == [failing(outputs)]


def test_a_summary_prints_no_change_so_the_next_listing_still_does(run_cli, outputs, tmp_path):
    state = tmp_path / "s.db"
    summary = run_cli("sweep", outputs, "--state", state, "--summary", "--now", POST_MORTEM_NOW)
    assert summary.exit_code == 0, summary.output
    assert told(sweep_json(run_cli, outputs, state)) == sorted(f"{outputs}/{w}" for w in LAYOUT
                                                               if w != "bob/job-2")


def test_options_that_change_what_is_diagnosed_make_no_changes_of_their_own(run_cli, outputs,
                                                                            tmp_path):
    state = tmp_path / "s.db"
    assert told(sweep_json(run_cli, outputs, state)) == failing(outputs)
    ad_hoc = sweep_json(run_cli, outputs, state, "--ignore", "crash-during-training,crash-before-first-batch")
    assert ad_hoc["jobs"] == [], ad_hoc["jobs"]
    assert sweep_json(run_cli, outputs, state)["jobs"] == []
    # What the logs do meanwhile is still told, under whichever options see it.
    shutil.copytree(SAMPLES / "crash-mid-training", outputs / "carol" / "job-3",
                    ignore=shutil.ignore_patterns("expected.json"))
    assert told(sweep_json(run_cli, outputs, state, "--ignore", "crash-during-training")) == \
        [f"{outputs}/carol/job-3"]
    assert sweep_json(run_cli, outputs, state)["jobs"] == []


SITE_RULE = """
id = "non-finite-loss-stop"
kind = "signature"
severity = "error"
role = "failure"
precedence = 5
stage = "training"
summary = "Training stopped on a non-finite loss."
message = "training stopped on a non-finite loss."
hint = "Lower the learning rate."
keywords = ["non-finite loss"]
patterns = ['non-finite loss encountered']

[docs]
what = "A site's own rule for the crash of crash-mid-training."
why = "It names that failure before the built-in rules do."
example = "RuntimeError: non-finite loss encountered at step 10 (loss=nan); stopping"
fix = "Lower the learning rate."

[tests]
fire = ["RuntimeError: non-finite loss encountered at step 10 (loss=nan); stopping"]
quiet = ["loss=1.0"]
"""


def test_an_operators_own_rules_or_progress_patterns_make_no_changes_of_their_own(run_cli, outputs,
                                                                                   tmp_path):
    state, rules = tmp_path / "s.db", tmp_path / "site-rules"
    rules.mkdir()
    (rules / "non-finite-loss-stop.toml").write_text(SITE_RULE)
    assert told(sweep_json(run_cli, outputs, state)) == failing(outputs)
    ad_hoc = sweep_json(run_cli, outputs, state, "--rules", rules, "--progress-pattern", r"^epoch \d+")
    assert ad_hoc["sweep"]["refreshed"] == len(LAYOUT) and ad_hoc["jobs"] == []
    assert sweep_json(run_cli, outputs, state)["jobs"] == []


def test_changes_no_listing_prints_are_kept_to_a_bound(run_cli, outputs, tmp_path, monkeypatch):
    import logscan.sweep.engine as engine

    monkeypatch.setattr(engine, "OUTBOX_UNPRINTED_KEPT", 1)
    state = tmp_path / "s.db"
    assert run_cli("sweep", outputs, "--state", state, "--summary", "--now", POST_MORTEM_NOW).exit_code == 0
    assert len(sweep_json(run_cli, outputs, state)["jobs"]) == 1  # the latest


def _new_failures(outputs: Path, names: list[str]) -> list[str]:
    for name in names:
        shutil.copytree(SAMPLES / "crash-mid-training", outputs / name,
                        ignore=shutil.ignore_patterns("expected.json"))
    return [f"{outputs}/{name}" for name in names]


def _answered_once(run_cli, outputs: Path, state: Path, tmp_path: Path) -> None:
    """A state whose webhook has answered: one failure swept and posted alone; the other
    failing job comes back after."""
    aside = tmp_path / "aside"
    (outputs / "run-top").rename(aside)
    with Hook("200") as hook:
        sweep_json(run_cli, outputs, state, "--webhook", hook.url)
    assert [m["job_id"] for m in hook.received] == [f"{outputs}/alice/job-1"]
    aside.rename(outputs / "run-top")


def test_no_post_is_started_without_time_to_finish_it(run_cli, outputs, tmp_path, monkeypatch):
    """Synthetic server: takes each alert and answers 0.7 s later; the delivery deadline leaves
    time for one such request and part of another."""
    import logscan.sweep.alerts as alerts

    state = tmp_path / "s.db"
    _answered_once(run_cli, outputs, state, tmp_path)
    new = [f"{outputs}/run-top", *_new_failures(outputs, ["carol/job-3"])]
    monkeypatch.setattr(alerts, "TIMEOUT", 1.0)
    monkeypatch.setattr(alerts, "DEADLINE", 1.2)
    with Hook("late 0.7") as hook:
        sweep_json(run_cli, outputs, state, "--webhook", hook.url, code=69)
        hook.answers = ["200"]
        sweep_json(run_cli, outputs, state, "--webhook", hook.url)
    assert sorted(m["job_id"] for m in hook.received) == sorted(new)  # each once


def test_a_burst_of_new_failures_is_one_digest(run_cli, outputs, tmp_path, monkeypatch):
    import logscan.sweep.alerts as alerts

    monkeypatch.setattr(alerts, "DIGEST_BURST", 2)
    state = tmp_path / "s.db"
    _answered_once(run_cli, outputs, state, tmp_path)
    new = [f"{outputs}/run-top", *_new_failures(outputs, ["carol/job-3", "dave/job-4"])]
    with Hook("200") as hook:
        sweep_json(run_cli, outputs, state, "--webhook", hook.url)
        [burst] = hook.received
        assert burst["digest"] and sorted(burst["job_ids"]) == sorted(new)
        assert burst["text"].startswith("logscan: 3 new failure(s)\n- ")
        _new_failures(outputs, ["erin/job-5"])
        sweep_json(run_cli, outputs, state, "--webhook", hook.url)
    assert hook.received[1]["job_id"] == f"{outputs}/erin/job-5"  # a few: one message each


# -- an upgrade ------------------------------------------------------------------------------------

def _as_told_by_an_older_logscan(state: Path) -> None:
    """Synthetic: the state as a logscan of schema 5 left it, whose fingerprint function differed
    (each failure told under another fingerprint) and whose code differs (every job diagnosed
    again)."""
    db = sqlite3.connect(state)
    if any(column[1] == "version" for column in db.execute("PRAGMA table_info(alerted)")):
        db.execute("ALTER TABLE alerted DROP COLUMN version")
    db.executescript("UPDATE alerted SET fingerprint = 'older:' || fingerprint; "
                     "UPDATE jobs SET root_fingerprint = 'older:' || root_fingerprint, code = ''; "
                     "UPDATE meta SET value = '5' WHERE key = 'schema_version';")
    db.commit()
    db.close()


def test_an_upgrade_tells_no_failure_again(run_cli, outputs, tmp_path):
    state = tmp_path / "s.db"
    assert told(sweep_json(run_cli, outputs, state)) == failing(outputs)
    _as_told_by_an_older_logscan(state)
    upgraded = sweep_json(run_cli, outputs, state)
    assert upgraded["sweep"]["refreshed"] == len(LAYOUT) and upgraded["jobs"] == []
    # What it told is now known by the new fingerprints: a log growing is still nothing new.
    (outputs / "alice" / "job-1" / "worker-0" / "launch_ddp.log").open("a").write("more\n")
    assert sweep_json(run_cli, outputs, state)["jobs"] == []


# -- HTTPS and proxies -----------------------------------------------------------------------------

@pytest.fixture
def tls_hook(tmp_path, monkeypatch):
    """A webhook on loopback behind TLS, with a certificate made for this test (for 127.0.0.1)
    that the process trusts through SSL_CERT_FILE, as it would a company's CA."""
    import ssl

    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl to make a certificate with")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                           "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                           "-keyout", str(key), "-out", str(cert)], capture_output=True)
    assert made.returncode == 0, made.stderr
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    for variable in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(variable, raising=False)
    hook = Hook("200")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    hook.server.socket = context.wrap_socket(hook.server.socket, server_side=True)
    hook.url = hook.url.replace("http://", "https://")
    with hook:
        yield hook


class Proxy:
    """A forward proxy on loopback (synthetic): a plain-HTTP request is passed on to the URL it
    names; CONNECT opens a tunnel. What it was asked is kept in `asked`."""

    def __init__(self):
        import socket as sockets

        self.asked: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                import urllib.request

                proxy.asked.append(f"POST {self.path}")
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = urllib.request.Request(self.path, data=body, method="POST",
                                                 headers={"Content-Type": "application/json"})
                with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request) as answer:
                    status = answer.status
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_CONNECT(self):
                proxy.asked.append(f"CONNECT {self.path}")
                host, _, port = self.path.rpartition(":")
                upstream = sockets.create_connection((host, int(port)))
                self.send_response(200)
                self.end_headers()
                ends = [self.connection, upstream]

                def pump(source, sink):
                    try:
                        while data := source.recv(65536):
                            sink.sendall(data)
                    except OSError:
                        pass
                    for end in ends:
                        try:
                            end.shutdown(sockets.SHUT_RDWR)
                        except OSError:
                            pass

                back = threading.Thread(target=pump, args=(upstream, self.connection), daemon=True)
                back.start()
                pump(self.connection, upstream)
                back.join(5)
                upstream.close()
                self.close_connection = True

            def log_message(self, *_):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> "Proxy":
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *_) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_alerts_are_posted_over_https(run_cli, outputs, tmp_path, tls_hook):
    sweep_json(run_cli, outputs, tmp_path / "s.db", "--webhook", tls_hook.url)
    assert [sorted(m["job_ids"]) for m in tls_hook.received] == [failing(outputs)]


def test_an_https_server_whose_certificate_is_not_trusted_keeps_the_alerts(run_cli, outputs, tmp_path,
                                                                            tls_hook, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "no-such-ca.pem"))
    state = tmp_path / "s.db"
    refused = run_cli("sweep", outputs, "--state", state, "--webhook", tls_hook.url)
    assert refused.exit_code == 69 and refused.stderr.count("\n") == 1, refused.output
    assert "2 alert(s) kept" in refused.stderr and tls_hook.received == []
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "cert.pem"))
    sweep_json(run_cli, outputs, state, "--webhook", tls_hook.url)
    assert [sorted(m["job_ids"]) for m in tls_hook.received] == [failing(outputs)]


def test_alerts_go_through_the_proxy_the_environment_names(run_cli, outputs, tmp_path, monkeypatch):
    for variable in ("HTTP_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(variable, raising=False)
    with Proxy() as proxy, Hook("200") as hook:
        monkeypatch.setenv("http_proxy", proxy.url)
        sweep_json(run_cli, outputs, tmp_path / "s.db", "--webhook", hook.url)
    assert proxy.asked == [f"POST {hook.url}"]
    assert [sorted(m["job_ids"]) for m in hook.received] == [failing(outputs)]


def test_https_alerts_are_tunnelled_through_the_proxy(run_cli, outputs, tmp_path, tls_hook, monkeypatch):
    with Proxy() as proxy:
        monkeypatch.setenv("https_proxy", proxy.url)
        sweep_json(run_cli, outputs, tmp_path / "s.db", "--webhook", tls_hook.url)
    assert proxy.asked == [f"CONNECT 127.0.0.1:{tls_hook.server.server_port}"]
    assert [sorted(m["job_ids"]) for m in tls_hook.received] == [failing(outputs)]


def test_no_proxy_is_honoured(run_cli, outputs, tmp_path, monkeypatch):
    with Proxy() as proxy, Hook("200") as hook:
        monkeypatch.setenv("http_proxy", proxy.url)
        monkeypatch.setenv("no_proxy", "127.0.0.1")
        sweep_json(run_cli, outputs, tmp_path / "s.db", "--webhook", hook.url)
    assert proxy.asked == [] and len(hook.received) == 1


# -- what cannot be read ---------------------------------------------------------------------------

def _denied(monkeypatch, *paths: Path) -> None:
    """Synthetic permission denied (the tests may run as root, whom chmod does not stop): opening
    these files fails with EACCES, as it does for a user the file's mode leaves out."""
    import errno

    real, refused = os.open, {str(p) for p in paths}

    def open_or_refuse(path, flags, *args, **kwargs):
        if os.fspath(path) in refused:
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_or_refuse)


def test_a_log_that_cannot_be_read_is_said_and_its_job_waits_for_it(run_cli, outputs, tmp_path,
                                                                     monkeypatch):
    state = tmp_path / "s.db"
    log = outputs / "alice" / "job-1" / "worker-1" / "launch_ddp.log"
    with monkeypatch.context() as patch:
        _denied(patch, log)
        denied = run_cli("sweep", outputs, "--state", state, "--format", "json", "--now", POST_MORTEM_NOW)
    assert denied.exit_code == 0 and denied.stderr.count("\n") == 1, denied.output
    assert "cannot read" in denied.stderr and str(log) in denied.stderr
    assert told(json.loads(denied.stdout)) == [f"{outputs}/run-top"]  # no alert from half a job
    readable = sweep_json(run_cli, outputs, state)  # the mode fixed: the file unchanged, read now
    [job] = readable["jobs"]
    assert job["job_id"] == f"{outputs}/alice/job-1" and len(job["workers"]) == 2
    assert job["root_cause"]["rule"] == "crash-during-training"
    with monkeypatch.context() as patch:  # a known job: kept as it was while a log cannot be read
        _denied(patch, log)
        log.open("a").write("more\n")
        kept = run_cli("sweep", outputs, "--state", state, "--all", "--format", "json", "--now",
                       POST_MORTEM_NOW)
    assert kept.exit_code == 0 and "cannot read" in kept.stderr, kept.output
    jobs = {j["job_id"]: j for j in json.loads(kept.stdout)["jobs"]}
    assert jobs[f"{outputs}/alice/job-1"]["change"] is None
    assert len(jobs[f"{outputs}/alice/job-1"]["workers"]) == 2
    assert sweep_json(run_cli, outputs, state)["jobs"] == []
