"""Files logscan writes on request (a report, metrics, an export), and what it will not write to.

Two ways, by what the file is for:
- A report (`-o FILE`, `--json-output FILE`, ...) is written through the name it is given, as a
  shell's `>` would: a symbolic link is followed (`-o /dev/stdout` works), a device or a pipe
  takes the text. A FIFO that nothing reads is refused at once rather than waited on for ever.
- A page written for someone at a terminal (`logscan report` with no -o) goes to a new file:
  nothing already there is replaced (write_new).
- A file that another program reads while it may be rewritten (node_exporter's metrics, an export)
  is written beside its name and renamed over it, so no reader sees half of it. The rename would
  replace whatever the name is: a symbolic link, a device (as root, `/dev/full` would become a
  regular file), a FIFO or a socket is refused instead, and so is a directory.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from logscan.errors import InputError


def check_replaceable(path: Path) -> None:
    """An InputError unless `path` is absent or a regular file (not a link to one)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    if stat.S_ISREG(info.st_mode):
        return
    what = ("a symbolic link" if stat.S_ISLNK(info.st_mode) else
            "a directory" if stat.S_ISDIR(info.st_mode) else
            "a FIFO" if stat.S_ISFIFO(info.st_mode) else
            "a socket" if stat.S_ISSOCK(info.st_mode) else "a device")
    raise InputError(f"{path} is {what}, not a regular file: it is written whole and renamed over, "
                     f"which would replace it; give the path of a regular file")


def replace_file(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """`write` the file's content into a new file beside `path` (a name no one can plant a link
    at beforehand: mkstemp), then rename it over `path`, which must be absent or a regular file."""
    check_replaceable(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.chmod(temporary, 0o644)
        check_replaceable(path)  # not made a link or a device meanwhile
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def replace_text(path: Path, text: str) -> None:
    replace_file(path, lambda handle: handle.write(text.encode("utf-8")))


def write_through(path: Path, text: str) -> None:
    """`text` written to `path` as `>` would (created, or truncated when a regular file), but a
    FIFO with no reader is an InputError, not a wait; an OSError otherwise."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise InputError(f"cannot write {path}: a FIFO that no process reads (start its reader "
                             f"first, or give a file)") from None
        raise
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.ftruncate(fd, 0)
        os.set_blocking(fd, True)  # a pipe with a reader: writes wait for it, as a shell's would
        data = memoryview(text.encode("utf-8"))
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)


# How many numbered names write_new tries before it gives up.
NEW_FILE_TRIES = 1000


def write_new(path: Path, text: str) -> Path:
    """`text` in a file that did not exist: `path`, else the first of `stem-2.ext`, `stem-3.ext`,
    ... that is free (created exclusively: nothing there is replaced, not even between the look
    and the write); the file written. An InputError when none is free, an OSError otherwise."""
    for n in range(1, NEW_FILE_TRIES + 1):
        candidate = path if n == 1 else path.with_name(f"{path.stem}-{n}{path.suffix}")
        try:
            with open(candidate, "x", encoding="utf-8") as handle:
                handle.write(text)
        except FileExistsError:
            continue
        return candidate
    raise InputError(f"cannot write {path}: it and {NEW_FILE_TRIES - 1} numbered names beside it exist; "
                     f"give -o FILE")
