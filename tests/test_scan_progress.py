"""Progress of a long scan (logscan.scan.progress): drawn on a terminal's standard error once the
scan takes a while, with the bytes read; nothing on a stream that is not a terminal, nothing when
the command is quiet, nothing for a scan shorter than the delay. A terminal is faked by a stream
that says it is one; the logs are SYNTHETIC step lines."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
import time

import pytest

from logscan.catalogue import load_catalogue
from logscan.scan import progress
from logscan.scan.scanner import Scanner

from conftest import SAMPLES

STEP = b"2026-11-29 18:00:01,123 INFO train: step %d/50000 loss=2.1\n"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(scope="module")
def scanner():
    return Scanner(load_catalogue())


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "worker-0.log"
    path.write_bytes(b"".join(STEP % i for i in range(20_000)))
    return path


class SlowScanner:
    """A scan that takes longer than the delay: each block waits a little after it is read."""

    def __init__(self, scanner, pause: float):
        self.scanner, self.pause = scanner, pause

    def survey(self, path):
        real = progress.add

        def add(size):
            real(size)
            time.sleep(self.pause)

        progress.add = add
        try:
            return self.scanner.survey(str(path), chunk_size=64 << 10)
        finally:
            progress.add = real


def test_a_long_scan_shows_the_bytes_read_on_a_terminal(scanner, log, monkeypatch):
    monkeypatch.setattr(progress, "REFRESH", 0.02)
    stream = Terminal()
    with progress.showing(True, stream, delay=0.05):
        progress.expect(log.stat().st_size)
        SlowScanner(scanner, 0.02).survey(log)
    drawn = stream.getvalue()
    assert "reading logs" in drawn
    total_mb = f"{log.stat().st_size / 1e6:.1f}"
    assert f"/{total_mb} MB" in drawn  # rich's DownloadColumn: read / total
    assert not progress.counting()  # the counter is gone with the scan


@pytest.mark.parametrize("wanted, stream", [(True, io.StringIO()), (False, Terminal())],
                         ids=["not a terminal", "quiet"])
def test_nothing_is_drawn_off_a_terminal_or_when_quiet(scanner, log, wanted, stream):
    with progress.showing(wanted, stream, delay=0.0):
        assert not progress.counting()
        SlowScanner(scanner, 0.01).survey(log)
    assert stream.getvalue() == ""


def test_a_short_scan_draws_nothing(scanner, log):
    stream = Terminal()
    with progress.showing(True, stream, delay=30.0):
        assert progress.counting()
        scanner.survey(str(log))
    assert stream.getvalue() == ""


def test_the_command_draws_nothing_on_a_terminal_for_a_small_job():
    """The real command, its standard error a pseudo-terminal: a small job is done before the
    delay, so nothing but the report (on standard output) is written."""
    main, child = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "logscan", "scan", str(SAMPLES / "healthy-2x2"),
                               "--now", "2026-12-01T00:00:00"], stdout=subprocess.PIPE, stderr=child,
                              timeout=120)
        os.set_blocking(main, False)
        try:
            drawn = os.read(main, 65536)
        except BlockingIOError:
            drawn = b""
    finally:
        os.close(main)
        os.close(child)
    assert b"HEALTHY" in done.stdout
    assert drawn == b""


def test_nothing_is_drawn_while_another_display_has_the_terminal(scanner, log, monkeypatch):
    """A sweep's bar of jobs has the terminal: the bytes are still counted, not drawn."""
    monkeypatch.setattr(progress, "REFRESH", 0.02)
    stream = Terminal()
    with progress.showing(True, stream, delay=0.0, yields_to=lambda: True):
        assert progress.counting()
        SlowScanner(scanner, 0.01).survey(log)
    assert stream.getvalue() == ""
