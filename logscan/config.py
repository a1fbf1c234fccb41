"""Config files, found the way ruff finds its own, and the duration and time values in them.

A config file is a `logscan.toml` (the whole file) or a `pyproject.toml` with a `[tool.logscan]`
table; a pyproject.toml without one is passed over. Inside a repository (below a directory
holding `.git`) the nearest one wins, looking in the current directory and then upward up to the
repository root, never above it: a config file in some ancestor of the repository does not apply
to it. Outside any repository only the current directory is looked in: a `logscan.toml` that
someone left two levels up (`fail-on = "never"`) must not decide a gate it was never named for.
In one directory logscan.toml comes before pyproject.toml. `--config FILE` names the file
instead; `--isolated` reads none. This module only reads the table; `Settings.resolve` checks
what it holds. A file is read only when it is a regular file and at most MAX_CONFIG_BYTES.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tomllib
from datetime import datetime, timedelta, timezone
from pathlib import Path

from logscan.errors import ConfigError

# In the order looked for in one directory: (file name, where the table is in it).
CONFIG_FILES = (("logscan.toml", ()), ("pyproject.toml", ("tool", "logscan")))
# A settings file is a few lines; far more is not one.
MAX_CONFIG_BYTES = 1 << 20
_DURATION = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")


def parse_duration(text: str) -> timedelta:
    text = text.strip()
    try:
        if text.isdigit():
            return timedelta(seconds=int(text))
        found = _DURATION.fullmatch(text)
        if not text or not found or not any(found.groups()):
            raise ConfigError(f"invalid duration {text!r}: use e.g. 45s, 30m, 2h, 1h30m")
        days, hours, minutes, seconds = (int(g or 0) for g in found.groups())
        return timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)
    except (OverflowError, ValueError):  # more days than a timedelta holds, or digits beyond int()
        raise ConfigError(f"duration {text[:40]!r} is far too long") from None


def parse_time(text: str) -> datetime:
    try:
        stamp = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(f"invalid time {text!r}: use ISO 8601, e.g. 2026-11-29T18:00:00Z") from None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def find_config(start: Path | None = None) -> tuple[dict, Path | None]:
    """(the settings table, its file) of the nearest config file from `start` (default: the
    current directory) up to the repository root, or in `start` alone when it is in no
    repository; ({}, None) if there is none."""
    try:
        directory = (start or Path.cwd()).resolve()
    except OSError:  # the current directory was removed
        return {}, None
    for folder in config_folders(directory):
        for name, table_path in CONFIG_FILES:
            path = folder / name
            if _exists(path, file=True):
                table = _read_table(path, table_path, required=False)
                if table is not None:
                    return table, path
    return {}, None


def config_folders(directory: Path) -> tuple[Path, ...]:
    """Where config files are looked for, nearest first: `directory` and its parents up to the
    repository root (the nearest holding `.git`, a directory or a worktree's file), or
    `directory` alone when no parent is a repository root."""
    folders = (directory, *directory.parents)
    for depth, folder in enumerate(folders):
        if _exists(folder / ".git"):
            return folders[:depth + 1]
    return (directory,)


def load_config(path: Path | str) -> tuple[dict, Path]:
    """The settings table of a file given with --config: [tool.logscan] of a pyproject.toml,
    else the whole file."""
    path = Path(path)
    if not _exists(path, file=True):
        problem = "is not a file" if _exists(path) else "no such file"
        raise ConfigError(f"--config {path}: {problem}")
    table_path = ("tool", "logscan") if path.name == "pyproject.toml" else ()
    return _read_table(path, table_path, required=True), path


def display_path(path: Path) -> str:
    """A config file as a message names it: relative to the current directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def _exists(path: Path, file: bool = False) -> bool:
    try:
        return path.is_file() if file else path.exists()
    except OSError:  # permission denied on the way, a name too long, ...
        return False


def read_small_file(path: Path, limit: int, what: str) -> bytes:
    """A settings or rule file's bytes. Never blocks on a FIFO put where the file was, nor reads
    a device that never ends: anything but a regular file of at most `limit` bytes is an
    OSError whose strerror says why (`what` names what the file should have been)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(errno.EINVAL, "is not a regular file (a FIFO or device)")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"is larger than {limit >> 20} MiB: not {what}")
    return data


def _read_table(path: Path, table_path: tuple[str, ...], required: bool) -> dict | None:
    try:
        data = tomllib.loads(read_small_file(path, MAX_CONFIG_BYTES, "a settings file").decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{display_path(path)}: cannot read settings: {exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{display_path(path)}: cannot read settings: not UTF-8 text") from None
    except RecursionError:  # `a = [[[[...` nested past what the TOML parser recurses into
        raise ConfigError(f"{display_path(path)}: cannot read settings: nested too deeply") from None
    except OSError as exc:
        raise ConfigError(f"{display_path(path)}: cannot read settings: {exc.strerror or exc}") from None
    for key in table_path:
        data = data.get(key) if isinstance(data, dict) else None
    if data is None:
        if required:
            raise ConfigError(f"{display_path(path)}: has no [{'.'.join(table_path)}] table")
        return None
    if not isinstance(data, dict):
        raise ConfigError(f"{display_path(path)}: [{'.'.join(table_path)}] must be a table")
    return data
