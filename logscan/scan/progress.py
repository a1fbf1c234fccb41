"""Progress of a long scan, on a terminal: the bytes of the job read, the rate and an estimate.

A scan that has not finished after DELAY seconds draws one line on standard error (rich's
progress bar, transient: it is gone before the report is printed); a shorter scan draws
nothing and imports nothing for it. Surveys count the bytes of each block they read into a
counter in shared memory, so worker processes forked for big files count into it too
(logscan.scan.pool); the line is redrawn by a thread of the command's own process.

Only the command decides whether progress is wanted (a terminal, no `-q`): `showing` is a no-op
context otherwise, and counting costs one addition a block (512 KiB) when nobody watches.
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager

DELAY = 1.0  # seconds of scan before progress is drawn
REFRESH = 0.25  # seconds between redraws

_read = None      # bytes read, in shared memory (multiprocessing.Value), while progress is shown
_expected = None  # bytes the job's files hold, as far as they are known


def counting() -> bool:
    return _read is not None


def expect(size: int) -> None:
    """`size` more bytes to read (the files of a job found)."""
    if _expected is not None:
        with _expected.get_lock():
            _expected.value += size


def add(size: int) -> None:
    """`size` bytes read (a block, decompressed when the file is compressed)."""
    if _read is not None:
        with _read.get_lock():
            _read.value += size


@contextmanager
def showing(wanted: bool, stream=None, delay: float | None = None, yields_to=None):
    """Count and draw the progress of the scans run inside, on `stream` (standard error), when
    `wanted` and `stream` is a terminal. `yields_to`: a function that says when another display
    has the terminal (a sweep's bar of jobs): nothing is drawn then, and what was is taken away."""
    global _read, _expected
    stream = stream if stream is not None else sys.stderr
    if not wanted or stream is None or not _is_terminal(stream) or _read is not None:
        yield
        return
    import multiprocessing

    _read, _expected = multiprocessing.Value("q", 0), multiprocessing.Value("q", 0)
    done = threading.Event()
    drawer = threading.Thread(target=_draw, args=(stream, done, DELAY if delay is None else delay,
                                                  yields_to or (lambda: False)),
                              daemon=True,
                              name="logscan-progress")
    drawer.start()
    try:
        yield
    finally:
        done.set()
        drawer.join()
        _read = _expected = None


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _draw(stream, done: threading.Event, delay: float, yields_to) -> None:
    if done.wait(delay):
        return
    while yields_to():
        if done.wait(REFRESH):
            return
    from rich.console import Console
    from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn,
                               TimeRemainingColumn, TransferSpeedColumn)

    read, expected = _read, _expected
    progress = Progress(TextColumn("reading logs"), BarColumn(), DownloadColumn(),
                        TransferSpeedColumn(), TimeRemainingColumn(),
                        console=Console(file=stream, stderr=True), transient=True,
                        auto_refresh=False)
    with progress:
        task = progress.add_task("read", total=max(expected.value, 1))
        while True:
            total = expected.value
            # a compressed file reads as more bytes than it holds: the total grows with them
            progress.update(task, completed=read.value, total=max(total, read.value, 1))
            progress.refresh()
            if done.wait(REFRESH) or yields_to():
                break
