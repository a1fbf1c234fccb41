"""Every way the command used to crash ends in one line and a status that says what happened:
2 for what the user can fix, 3 for a bug in logscan, 130 for Ctrl-C; never a traceback, and
never 1, which means "findings". A reader that goes away ends quietly.

Cases that need a real process (a full disk as stdout, a closed stdout, signals) run
`python -m logscan` in a subprocess; the others run in-process. Logs are the real samples;
the user rule file is SYNTHETIC.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import SAMPLES

FAILED = SAMPLES / "missing-worker"
HEALTHY = SAMPLES / "healthy-2x2"
FULL = "/dev/full"
needs_dev_full = pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full")


def run(*args, stdout=subprocess.PIPE, env=None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "logscan", *map(str, args)], stdout=stdout,
                          stderr=subprocess.PIPE, timeout=60, cwd=cwd,
                          env={**os.environ, "COLUMNS": "200", **(env or {})})


def one_line(stderr: bytes, *words: str, prefix: str = "logscan: error: ") -> str:
    text = stderr.decode()
    assert text.count("\n") == 1 and text.startswith(prefix), text
    assert "Traceback" not in text
    for word in words:
        assert word in text, text
    return text


@needs_dev_full
@pytest.mark.parametrize("args", [("scan", FAILED), ("scan", FAILED, "--format", "json"),
                                  ("rules",), ("--help",), ("--version",)],
                         ids=lambda args: " ".join(map(str, args)).replace(str(SAMPLES), "…"))
def test_a_full_disk_as_stdout_is_one_line_exit_2(args):
    with open(FULL, "w") as full:
        result = run(*args, stdout=full)
    assert result.returncode == 2
    one_line(result.stderr, "cannot write to standard output", "No space left on device")


@needs_dev_full
def test_a_full_disk_as_output_file_is_one_line_exit_2(run_cli):
    result = run_cli("scan", FAILED, "-o", FULL)
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "cannot write /dev/full: No space left on device" in result.output


@pytest.mark.parametrize("when", ["at-start", "while-running"])
def test_a_closed_stdout_is_one_line_exit_2(when):
    """`logscan scan X >&-`: Python starts with no sys.stdout. Closed later, writes fail (EBADF)."""
    if when == "at-start":
        command = ["sh", "-c", 'exec "$0" -m logscan scan "$1" >&-', sys.executable, str(FAILED)]
    else:
        command = [sys.executable, "-c", "import os, runpy, sys; os.close(1); "
                   "sys.argv = ['logscan', 'scan', sys.argv[1]]; "
                   "runpy.run_module('logscan', run_name='__main__')", str(FAILED)]
    result = subprocess.run(command, stderr=subprocess.PIPE, timeout=60)
    assert result.returncode == 2
    one_line(result.stderr, "cannot write to standard output")


def test_a_reader_that_went_away_ends_quietly():
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write now fails with EPIPE
    try:
        result = run("scan", FAILED, stdout=write_end)
    finally:
        os.close(write_end)
    assert result.stderr == b"" and result.returncode == 1  # the verdict's: FAILED


def test_global_inline_flags_in_a_progress_pattern_are_accepted(run_cli):
    result = run_cli("scan", HEALTHY, "--progress-pattern", "(?i)STEP", "--format", "json")
    assert result.exit_code == 0, result.output
    assert '"healthy": true' in result.output
    result = run_cli("scan", HEALTHY, "--progress-pattern", "st(?q)ep")  # no such flag
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "--progress-pattern" in result.output


def test_a_bogus_matcher_is_one_line_exit_2(run_cli, monkeypatch):
    monkeypatch.setenv("LOGSCAN_MATCHER", "bogus")
    result = run_cli("scan", HEALTHY)
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "LOGSCAN_MATCHER='bogus'" in result.output and "python, hyperscan" in result.output


def test_explaining_a_user_signal_whose_summary_is_a_number(run_cli, tmp_path):
    (tmp_path / "sig.toml").write_text(textwrap.dedent("""\
        id = "numbered-signal"
        kind = "signal"
        stage = "training"
        summary = 5
        patterns = ['NUMBERED']
        [docs]
        what = "w"
        why = "y"
        example = "NUMBERED"
        fix = "f"
        """))
    result = run_cli("rules", "--rules", tmp_path, "explain", "numbered-signal")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[2] == "5"
    assert run_cli("rules", "explain", "numbered-signal", "--rules", tmp_path).exit_code == 0


class Ended(Exception):
    def __init__(self, status):
        self.status = status


def call_main(monkeypatch, *args) -> int:
    """`main()` in this process: its os._exit is caught, the SIGINT handler it sets undone."""
    from logscan import cli

    def end(status):
        raise Ended(status)

    monkeypatch.setattr(sys, "argv", ["logscan", *map(str, args)])
    monkeypatch.setattr(cli.os, "_exit", end)
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        cli.main()
    except Ended as ended:
        return ended.status
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
    raise AssertionError("main() returned")


def test_an_unexpected_exception_is_one_line_exit_3(monkeypatch, capsys):
    import logscan.diagnose.pipeline

    def broken(*_args, **_kwargs):
        raise RuntimeError("a bug\nspanning lines")

    monkeypatch.setattr(logscan.diagnose.pipeline, "diagnose_paths", broken)
    assert call_main(monkeypatch, "scan", HEALTHY) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    one_line(captured.err.encode(), "RuntimeError: a bug\\x0aspanning lines (a bug in logscan:",
             prefix="logscan: internal error: ")


def test_main_passes_exit_statuses_through(monkeypatch, capsys):
    assert call_main(monkeypatch, "scan", HEALTHY) == 0
    assert call_main(monkeypatch, "scan", FAILED) == 1
    assert call_main(monkeypatch, "scan", FAILED / "nope") == 2
    capsys.readouterr()


POOL_SCAN = """
import multiprocessing, sys, time
import logscan.diagnose.pipeline
from logscan.catalogue import load_catalogue
from logscan.scan.pool import ScanPool
from logscan.settings import Settings

def slow(*args, **kwargs):  # the scan's own worker processes, busy
    executor = ScanPool(load_catalogue(), Settings(processes=2))._start()
    futures = [executor.submit(time.sleep, 60) for _ in range(2)]
    while len(multiprocessing.active_children()) < 2:
        time.sleep(0.01)
    time.sleep(0.3)
    print(*(p.pid for p in multiprocessing.active_children()), file=sys.stderr, flush=True)
    futures[0].result()

logscan.diagnose.pipeline.diagnose_paths = slow
sys.argv = ["logscan", "scan", sys.argv[1]]
from logscan.cli import main
main()
"""


def _dead(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as status:
            return any(line.split()[1] in ("Z", "X") for line in status if line.startswith("State:"))
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("signum, whole_group, status", [
    (signal.SIGINT, True, 130), (signal.SIGINT, False, 130), (signal.SIGTERM, False, 143),
    (signal.SIGKILL, False, -9)], ids=["ctrl-c", "kill-int", "sigterm", "sigkill"])
def test_a_stopped_command_ends_at_once_and_leaves_no_worker_behind(signum, whole_group, status):
    """Ctrl-C at a terminal signals the whole process group (the workers too), `kill -INT` only
    the command; a platform or `timeout` stops it with SIGTERM, or kills it outright (SIGKILL,
    which it cannot see). Each way it ends at once, quietly, and its scanning workers end too."""
    process = subprocess.Popen([sys.executable, "-c", POOL_SCAN, str(HEALTHY)],
                               stderr=subprocess.PIPE, start_new_session=True)
    try:
        workers = [int(pid) for pid in process.stderr.readline().split()]
        assert len(workers) == 2
        started = time.monotonic()
        if whole_group:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
        assert process.wait(timeout=30) == status
        assert time.monotonic() - started < 5
        assert process.stderr.read() == b""
        deadline = time.monotonic() + 5
        while not all(_dead(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(_dead(pid) for pid in workers)
    finally:
        if process.poll() is None:
            process.kill()
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        process.stderr.close()


def test_jobs_never_exceed_the_usable_cores():
    from logscan.catalogue import load_catalogue
    from logscan.scan.pool import ScanPool, usable_cores
    from logscan.settings import Settings

    assert ScanPool(load_catalogue(), Settings(processes=1024)).workers == usable_cores()
    assert ScanPool(load_catalogue(), Settings(processes=1)).workers == 1


@pytest.mark.parametrize("asked", [("--debug",), ()], ids=["--debug", "LOGSCAN_DEBUG=1"])
def test_debug_shows_an_internal_errors_traceback(monkeypatch, capsys, asked):
    import logscan.diagnose.pipeline

    def broken(*_args, **_kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(logscan.diagnose.pipeline, "diagnose_paths", broken)
    monkeypatch.setattr("logscan.cli._debug", False)  # as a new process starts; undone after
    if not asked:
        monkeypatch.setenv("LOGSCAN_DEBUG", "1")
    assert call_main(monkeypatch, *asked, "scan", HEALTHY) == 3
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):") and "in broken" in err, err
    assert err.rstrip().splitlines()[-1].startswith("logscan: internal error: RuntimeError: a bug"), err


def test_without_debug_an_internal_error_says_how_to_see_the_traceback_and_where_to_report_it(
        monkeypatch, capsys):
    import logscan.diagnose.pipeline
    from logscan.cli.common import project_url

    def broken(*_args, **_kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(logscan.diagnose.pipeline, "diagnose_paths", broken)
    monkeypatch.delenv("LOGSCAN_DEBUG", raising=False)
    monkeypatch.setattr("logscan.cli._debug", False)
    assert call_main(monkeypatch, "scan", HEALTHY) == 3
    (line,) = capsys.readouterr().err.splitlines()
    assert "Traceback" not in line and "logscan --debug" in line and "LOGSCAN_DEBUG=1" in line, line
    assert (project_url() or "the project's issues") in line, line
