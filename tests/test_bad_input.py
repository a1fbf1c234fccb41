"""Bad input: every case gets a one-line error (exit 2) or a diagnosis (exit 0 or 1) with notes,
never a traceback, never a hang, and leaves every input file byte-for-byte as it was.

All inputs are SYNTHETIC, built in tmp_path by each test; the good logs in them are REAL lines,
copied from sample_logs/healthy-2x2. Cases that could hang (FIFOs, devices, a growing file, a
huge folder) or that pass bytes as arguments run the real command in a subprocess with a
timeout, so a blocking open or an endless read fails the test instead of hanging it; the others
run it in-process (typer's CliRunner), where an exception would surface as itself.
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES

HEALTHY = SAMPLES / "healthy-2x2"
WORKER0 = (HEALTHY / "worker-0" / "launch_ddp.log").read_bytes()
WORKER1 = (HEALTHY / "worker-1" / "launch_ddp.log").read_bytes()


# --- helpers ---------------------------------------------------------------------------------

def good_job(root: Path, name: str = "job") -> Path:
    """The two healthy Worker logs, each in its own folder, as a platform collects them."""
    job = root / name
    for index, data in enumerate((WORKER0, WORKER1)):
        (job / f"worker-{index}").mkdir(parents=True)
        (job / f"worker-{index}" / "launch_ddp.log").write_bytes(data)
    return job


def fingerprint(root: Path) -> dict[bytes, str]:
    """Content hash and mode of every regular file, target of every link, kind of anything else.
    Walks without following links and without opening anything but regular files."""
    seen = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            key = os.fsencode(os.path.relpath(path, root))
            if stat.S_ISLNK(info.st_mode):
                seen[key] = "link to " + os.readlink(path)
            elif stat.S_ISREG(info.st_mode):
                fd = os.open(path, os.O_RDONLY)
                try:
                    digest = hashlib.sha256()
                    while chunk := os.read(fd, 1 << 20):
                        digest.update(chunk)
                finally:
                    os.close(fd)
                seen[key] = f"{oct(info.st_mode)} {digest.hexdigest()}"
            else:
                seen[key] = f"special {oct(info.st_mode)}"
    return seen


def run(*args, timeout: float = 120, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The real command, as a user runs it; arguments may be bytes (file names that are not UTF-8)."""
    command = [os.fsencode(sys.executable), b"-m", b"logscan",
               *(a if isinstance(a, bytes) else os.fsencode(str(a)) for a in args)]
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("NO_COLOR", None)
    return subprocess.run(command, capture_output=True, timeout=timeout, cwd=cwd, env=env)


def cli(*args) -> subprocess.CompletedProcess:
    """The same command in this process: faster, for inputs that cannot hang it."""
    from typer.testing import CliRunner

    from logscan.cli import app

    result = CliRunner().invoke(app, [os.fsdecode(a) if isinstance(a, bytes) else str(a)
                                      for a in args], env={"COLUMNS": "200"})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # what a user would have seen as a traceback
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout_bytes,
                                       result.stderr_bytes)


def diagnosis(result: subprocess.CompletedProcess, exit_code: int) -> dict:
    """Checks what every diagnosis must be, and returns it (run with --format json). `exit_code`:
    the one its verdict calls for, 0 for a healthy job, 1 for a failed or inconclusive one."""
    assert result.returncode == exit_code, (result.stdout[:2000], result.stderr[-2000:])
    assert b"Traceback" not in result.stderr, result.stderr.decode(errors="replace")
    report = json.loads(result.stdout)
    assert report["schema_version"] == 2
    return report


def one_line_error(result: subprocess.CompletedProcess, *words: str) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == b""
    text = result.stderr.decode("utf-8")
    assert text.count("\n") == 1 and text.endswith("\n"), text
    assert text.startswith("logscan: error: ") and "Traceback" not in text, text
    for word in words:
        assert word in text, text
    return text


def findings(report: dict) -> list[tuple[str, object]]:
    return sorted((f["rule"], f["node_rank"]) for f in report["findings"])


def scan_json(*paths, exit_code: int, timeout: float | None = None) -> dict:
    """--format json, in a subprocess with this timeout if one is given, else in-process."""
    args = ("scan", *paths, "--format", "json", "--now", POST_MORTEM_NOW)
    return diagnosis(run(*args, timeout=timeout) if timeout else cli(*args), exit_code)


def notes(report: dict) -> dict[str, str]:
    return {n["path"]: n["problem"] for n in report["inputs"]}


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> dict:
    """The diagnosis of the untouched job, to compare the damaged ones with."""
    return scan_json(good_job(tmp_path_factory.mktemp("clean")), exit_code=0)


# --- the cases --------------------------------------------------------------------------------

def test_empty_file(tmp_path, clean):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    job = good_job(tmp_path)
    (job / "worker-1" / "empty.log").write_bytes(b"")
    before = fingerprint(tmp_path)

    one_line_error(cli("scan", empty), "no log found", "empty file")
    report = scan_json(job, exit_code=0)
    assert notes(report) == {f"{job}/worker-1/empty.log": "empty file"}
    assert findings(report) == findings(clean)
    assert fingerprint(tmp_path) == before


def test_binary_file(tmp_path, clean):
    blob = bytes(range(256)) * 64 + b"\x00" * 4096
    (tmp_path / "weights.log").write_bytes(blob)
    job = good_job(tmp_path)
    (job / "worker-0" / "core.log").write_bytes(blob)
    before = fingerprint(tmp_path)

    one_line_error(cli("scan", tmp_path / "weights.log"), "binary file")
    report = scan_json(job, exit_code=0)
    assert report["stats"]["skipped_files"] >= 1
    files = {f for w in report["workers"] for f in w["files"]}
    assert f"{job}/worker-0/core.log" not in files and f"{job}/worker-0/launch_ddp.log" in files
    assert findings(report) == findings(clean)
    assert fingerprint(tmp_path) == before


def test_invalid_utf8_and_nul_bytes_inside_a_good_log(tmp_path, clean):
    job = good_job(tmp_path)
    lines = WORKER0.splitlines(keepends=True)
    junk = [b"\xff\xfe\xc3( invalid UTF-8 \xed\xa0\x80 surrogate, \xf8\x88\x80\x80\x80 5-byte\n",
            b"NUL \x00\x00 inside \x00 a line, then a lone C1 byte \x9b\n",
            b"\x00" * 64 + b"\n"]
    # after the env prints, among the progress lines
    (job / "worker-0" / "launch_ddp.log").write_bytes(b"".join(lines[:9] + junk + lines[9:]))
    before = fingerprint(tmp_path)

    report = scan_json(job, exit_code=0)
    assert findings(report) == findings(clean)
    assert report["healthy"] == clean["healthy"]
    assert report["stats"]["lines"] == clean["stats"]["lines"] + len(junk)
    human = cli("scan", job, "--now", POST_MORTEM_NOW)
    assert human.returncode == 0 and b"Traceback" not in human.stderr  # healthy, as the clean job
    human.stdout.decode("utf-8")  # the report itself is valid UTF-8
    assert fingerprint(tmp_path) == before


@pytest.mark.parametrize("where", ["end", "middle"])
def test_ten_mib_line_without_newline(tmp_path, clean, where):
    job = good_job(tmp_path)
    long_line = b"x" * (10 << 20)
    log = job / "worker-0" / "launch_ddp.log"
    if where == "end":  # the last line, never finished
        log.write_bytes(WORKER0 + long_line)
        extra = 1
    else:  # right after the launch line: everything after it must still be read
        first, rest = WORKER0.split(b"\n", 1)
        log.write_bytes(first + b"\n" + long_line + b"\n" + rest)
        extra = 1
    before = fingerprint(tmp_path)

    started = time.monotonic()
    report = scan_json(job, exit_code=0)
    assert time.monotonic() - started < 60
    assert findings(report) == findings(clean)
    assert report["stats"]["lines"] == clean["stats"]["lines"] + extra
    ranks = {w["node_rank"]: w["ranks"] for w in report["workers"]}
    assert ranks == {w["node_rank"]: w["ranks"] for w in clean["workers"]}  # env prints after it
    assert fingerprint(tmp_path) == before


def test_truncated_gzip_is_diagnosed_as_far_as_it_goes(tmp_path):
    progress = b"".join(b"step %d/40000 loss 1.%04d\n" % (i, i % 9973) for i in range(1, 40001))
    whole = gzip.compress(WORKER0 + progress, compresslevel=6)
    assert len(whole) > 4096
    job = tmp_path / "job"
    job.mkdir()
    (job / "launch_ddp.0.log.gz").write_bytes(whole[: len(whole) // 2])
    (job / "launch_ddp.1.log").write_bytes(WORKER1)
    corrupt = bytearray(whole)
    corrupt[len(whole) // 2: len(whole) // 2 + 64] = b"\x00" * 64
    (tmp_path / "corrupt.log.gz").write_bytes(bytes(corrupt))
    before = fingerprint(tmp_path)

    # Training went on as far as the readable part shows and no status says how it ended: the
    # logs cannot tell a healthy run from one stopped there, so no HEALTHY.
    report = scan_json(job, exit_code=1)
    assert report["verdict"] == "INCONCLUSIVE", report["verdict_reason"]
    problem = notes(report)[f"{job}/launch_ddp.0.log.gz"]
    assert "truncated" in problem and "ends early" in problem, problem
    node0 = next(w for w in report["workers"] if w["node_rank"] == 0)
    assert node0["reached_first_batch"] and node0["ranks"] == [0, 1]
    assert 1000 < report["stats"]["lines"] < 40000 + 100  # what was readable, not nothing

    report = scan_json(tmp_path / "corrupt.log.gz", exit_code=1)
    assert "corrupt" in notes(report)[str(tmp_path / "corrupt.log.gz")]
    assert report["workers"] and report["workers"][0]["node_rank"] == 0
    assert fingerprint(tmp_path) == before


def test_unreadable_file_beside_good_ones(tmp_path, clean, run_cli, monkeypatch):
    """Tests run as root, for whom chmod 000 changes nothing. As root, `open` is made to fail
    with EACCES for that one file (where logscan opens files: discovery and the reader), which
    is what a non-root user gets; as anyone else the file is really chmod 000."""
    job = good_job(tmp_path)
    secret = job / "worker-1" / "secret.log"
    secret.write_bytes(WORKER1)
    before = fingerprint(tmp_path)
    if os.geteuid() == 0:
        real_open = os.open

        def guarded_open(path, flags, *args, **kwargs):
            if os.fspath(path) == str(secret):
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", guarded_open)
    else:
        secret.chmod(0)
    try:
        result = run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW)
    finally:
        monkeypatch.undo()
        secret.chmod(0o644)
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    report = json.loads(result.stdout)
    assert notes(report) == {f"{job}/worker-1/secret.log": "cannot read: permission denied"}
    assert findings(report) == findings(clean)
    assert fingerprint(tmp_path) == before


def test_file_unreadable_when_the_scan_opens_it(tmp_path, run_cli, monkeypatch):
    """Readable while logs are found, not when they are read (permissions changed between the
    two): the scan goes on and says so. Simulated as in the test above."""
    import logscan.scan.scanner

    job = good_job(tmp_path)
    victim = str(job / "worker-1" / "launch_ddp.log")
    real = logscan.scan.scanner.line_blocks

    def failing(path, *args, **kwargs):
        if path == victim:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(logscan.scan.scanner, "line_blocks", failing)
    result = run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW)
    # HEALTHY: Worker 0's log shows the run finished; the file that could not be read is a note
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    report = json.loads(result.stdout)
    assert notes(report) == {f"{job}/worker-1/launch_ddp.log": "read stopped early: Permission denied"}


def test_symlink_loops(tmp_path, clean):
    job = good_job(tmp_path)
    (job / "a.log").symlink_to("b.log")
    (job / "b.log").symlink_to("a.log")
    (job / "self.log").symlink_to("self.log")
    (job / "worker-0" / "up").symlink_to("..")          # a directory loop
    (job / "worker-1" / "again").symlink_to(job / "worker-1")
    before = fingerprint(tmp_path)

    report = scan_json(job, exit_code=0)
    assert notes(report) == {f"{job}/a.log": "symbolic link loop", f"{job}/b.log": "symbolic link loop",
                             f"{job}/self.log": "symbolic link loop"}
    assert findings(report) == findings(clean)
    assert sorted(f for w in report["workers"] for f in w["files"]) == [
        f"{job}/worker-0/launch_ddp.log", f"{job}/worker-1/launch_ddp.log"]
    one_line_error(cli("scan", job / "a.log"), "symbolic link loop")
    assert fingerprint(tmp_path) == before


def test_fifo_and_devices_in_the_tree_never_block(tmp_path, clean):
    """A FIFO with no writer would block an open() forever; a device never ends. The command runs
    with a timeout, so blocking fails the test instead of hanging it."""
    job = good_job(tmp_path)
    os.mkfifo(job / "worker-0" / "pipe.log")
    os.mkfifo(job / "job_status")                      # read for the platform's status
    (job / "worker-1" / "null.log").symlink_to("/dev/null")
    (job / "worker-1" / "zero.log").symlink_to("/dev/zero")
    made_device = False
    if os.geteuid() == 0:
        try:  # a real character device node (1, 3 is /dev/null's), not just a link to one
            os.mknod(job / "tty.log", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
            made_device = True
        except OSError:
            pass
    before = fingerprint(tmp_path)

    report = scan_json(job, timeout=60, exit_code=0)
    special = "not a regular file (FIFO, socket or device): skipped"
    outside = "symbolic link out of the scanned directory: not followed"
    expected = {f"{job}/worker-0/pipe.log": special, f"{job}/worker-1/null.log": outside,
                f"{job}/worker-1/zero.log": outside}
    if made_device:
        expected[f"{job}/tty.log"] = special
    assert notes(report) == expected
    assert findings(report) == findings(clean)
    one_line_error(run("scan", job / "worker-0" / "pipe.log", timeout=60), "FIFO")
    one_line_error(run("scan", job / "worker-1" / "zero.log", timeout=60), "device")
    assert fingerprint(tmp_path) == before


def test_a_directory_of_5000_tiny_files(tmp_path):
    """A job folder that also holds 5,000 tiny metric files (`step-000001.txt`, a progress-like
    line each): they are not Worker logs, the diagnosis is the job's own, the report does not
    grow with them, and it takes seconds. bench/many_files.py runs the same with 100,000."""
    alone = run("scan", good_job(tmp_path / "alone"), "--now", POST_MORTEM_NOW).stdout.decode()
    job = good_job(tmp_path)
    metrics = job / "metrics"
    metrics.mkdir()
    for i in range(5_000):
        fd = os.open(metrics / f"step-{i:06d}.txt", os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, b"step %d loss 1.%d\n" % (i, i % 997))
        os.close(fd)
    before = fingerprint(tmp_path)

    started = time.monotonic()
    result = run("scan", job, "--now", POST_MORTEM_NOW, "-v", timeout=300)  # -v: the skipped files' note
    elapsed = time.monotonic() - started
    assert result.returncode == 0 and b"Traceback" not in result.stderr, result.stderr
    text = result.stdout.decode("utf-8")
    assert text.splitlines()[0].split(":", 1)[1] == alone.splitlines()[0].split(":", 1)[1]
    assert "2 file(s)" in text.splitlines()[-1]
    # the note names a few of them and counts the rest
    assert text.count("metrics/step-") < 10 and "and 4995 more" in text, text
    assert len(text) < len(alone) + 1_000, len(text)
    assert elapsed < 60, elapsed
    assert fingerprint(tmp_path) == before


def test_log_still_being_appended_to(tmp_path):
    """A writer appends progress lines all through the scan: the scan reads the file as it was
    when opened and ends."""
    job = good_job(tmp_path)
    live = job / "worker-0" / "launch_ddp.log"
    with open(live, "ab") as handle:  # big enough that the scan is under way while it grows
        handle.write(b"".join(b"step %d/999999 loss 1.2345\n" % i for i in range(1, 1_500_001)))
    start_size = live.stat().st_size
    head_hash = hashlib.sha256(live.read_bytes()).hexdigest()
    others = {k: v for k, v in fingerprint(tmp_path).items() if not k.endswith(b"worker-0/launch_ddp.log")}
    stop = threading.Event()

    def append():
        step = 1_500_001
        with open(live, "ab", buffering=0) as handle:
            while not stop.is_set():
                handle.write(b"".join(b"step %d/999999 loss 1.2345\n" % (step + i) for i in range(500)))
                step += 500
                time.sleep(0.002)

    writer = threading.Thread(target=append)
    writer.start()
    try:
        # Steps that stop short of the run's end, no status, nothing failed: a job still going, one
        # stopped there, or a copy read long after look alike (INCONCLUSIVE, exit 1).
        report = scan_json(job, timeout=120, exit_code=1)
    finally:
        stop.set()
        writer.join()
    assert report["verdict"] == "INCONCLUSIVE", report["verdict_reason"]
    assert live.stat().st_size > start_size  # it really grew during the scan
    assert report["stats"]["lines"] >= 1_500_000
    with open(live, "rb") as handle:  # what was there before is untouched
        assert hashlib.sha256(handle.read(start_size)).hexdigest() == head_hash
    assert {k: v for k, v in fingerprint(tmp_path).items()
            if not k.endswith(b"worker-0/launch_ddp.log")} == others


def test_file_names_with_spaces_newlines_and_bytes_that_are_not_utf8(tmp_path):
    job = tmp_path / b"job \xff".decode("utf-8", "surrogateescape")
    job.mkdir()
    names = [b"worker 0.log", b"worker\n1.log", b"w\xff\xfe.log", b"\x1b[2J::error::x.log"]
    for name, data in zip(names, (WORKER0, WORKER1, WORKER0, WORKER1)):
        with open(os.path.join(os.fsencode(job), name), "wb") as handle:
            handle.write(data)
    before = fingerprint(tmp_path)

    report = scan_json(os.fsencode(job), timeout=60, exit_code=1)
    files = sorted(f for w in report["workers"] for f in w["files"])
    shown = f"{tmp_path}/job \\xff"  # as typed: bytes that are not UTF-8 as `\xff`
    assert files == sorted([f"{shown}/worker 0.log", f"{shown}/worker\n1.log",
                            f"{shown}/w\\xff\\xfe.log", f"{shown}/\x1b[2J::error::x.log"])
    human = run("scan", os.fsencode(job), "--now", POST_MORTEM_NOW)
    assert human.returncode == 1 and b"Traceback" not in human.stderr  # as the JSON run
    text = human.stdout.decode("utf-8")  # valid UTF-8 whatever the names held
    assert "worker\\x0a1.log" in text and "w\\xff\\xfe.log" in text and "\\x1b[2J" in text
    assert "\x1b" not in text and "\ufffd" not in text
    assert not any(line.lstrip().startswith("::") for line in text.splitlines())
    one_line_error(run("scan", os.path.join(os.fsencode(job), b"no\nsuch \xff.log")),
                   "no such file", "no\\x0asuch \\xff.log")
    assert fingerprint(tmp_path) == before


def test_path_that_does_not_exist(tmp_path):
    good_job(tmp_path)
    before = fingerprint(tmp_path)
    one_line_error(run("scan", tmp_path / "job" / "worker-9"), "no such file or directory",
                   "worker-9")
    one_line_error(cli("scan", tmp_path / "job", tmp_path / "missing.log"), "missing.log")
    assert fingerprint(tmp_path) == before


def test_a_log_cut_by_copytruncate_is_read_after_its_nul_run(tmp_path, clean):
    """Synthetic: logrotate's copytruncate while the writer kept its offset leaves the file
    starting with a run of NUL bytes (a sparse hole), then the lines written since: here the
    real crash-mid-training Worker 0 log. The NULs are skipped, the crash is found."""
    job = tmp_path / "job"
    for node in (0, 1):
        (job / f"worker-{node}").mkdir(parents=True)
        real = SAMPLES / "crash-mid-training" / f"worker-{node}" / "launch_ddp.log"
        with open(job / f"worker-{node}" / "launch_ddp.log", "wb") as handle:
            if node == 0:
                handle.seek(3 << 20)  # a 3 MiB hole, as copytruncate leaves it
            handle.write(real.read_bytes())
    report = scan_json(job, timeout=60, exit_code=1)
    assert report["root_cause"]["rule"] == "crash-during-training", report["summary"]
    assert any("NUL bytes" in note["problem"] for note in report["inputs"]), report["inputs"]


def test_a_gzip_inside_a_gzip_is_read(tmp_path):
    """Synthetic: the real crash-mid-training Worker 0 log compressed twice (`gzip -f` of a .gz)."""
    import gzip as gz

    job = tmp_path / "job"
    for node in (0, 1):
        (job / f"worker-{node}").mkdir(parents=True)
        data = (SAMPLES / "crash-mid-training" / f"worker-{node}" / "launch_ddp.log").read_bytes()
        (job / f"worker-{node}" / "launch_ddp.log").write_bytes(
            gz.compress(gz.compress(data)) if node == 0 else data)
    report = scan_json(job, timeout=60, exit_code=1)
    assert report["root_cause"]["rule"] == "crash-during-training", report["summary"]
    assert report["root_cause"]["node_rank"] == 0 and report["root_cause"]["rank"] == 1


def test_a_gzip_that_expands_a_thousandfold_is_named(tmp_path, clean):
    """Synthetic: 16 MiB of one repeated line, gzipped to a few KiB, beside the healthy logs."""
    import gzip as gz

    job = good_job(tmp_path)
    (job / "worker-0" / "launch_ddp.log.1.gz").write_bytes(gz.compress(b"step 0 loss 1.0\n" * (1 << 20)))
    report = scan_json(job, timeout=120, exit_code=0)
    notes = {note["path"]: note["problem"] for note in report["inputs"]}
    assert "expands" in notes[f"{job}/worker-0/launch_ddp.log.1.gz"], notes
