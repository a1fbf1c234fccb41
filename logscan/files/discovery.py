"""PATHs → the job's log files. Walks directories without following a link twice, never opens
anything but regular files, and skips what is not a log (checkpoints, binaries, TensorBoard
events, configs) quietly. Problems with an input are kept as notes for the report.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from logscan.errors import InputError
from logscan.files.reader import NotRegularFile, is_gzip, open_regular, skip_leading_nul
from logscan.vocabulary import JobStatus

SNIFF_BYTES = 8192
# Small files are whole after sniffing: up to this much of them is kept, so the scan does not
# open them again (a folder of 100,000 tiny files costs half the system calls).
KEEP_BYTES = 32 << 20
JOB_STATUS_FILE = "job_status"
NOT_LOG_SUFFIXES = {
    ".pt", ".pth", ".ckpt", ".bin", ".safetensors", ".npy", ".npz", ".pkl", ".pickle", ".h5",
    ".onnx", ".json", ".jsonl", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".py", ".pyc", ".sh",
    ".md", ".rst", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".pdf", ".zip", ".tar", ".tgz",
    ".whl", ".so", ".csv", ".parquet", ".arrow", ".db", ".sqlite", ".lock", ".pid",
}
LOG_NAME = re.compile(r"(?i)(?:\.(?:log|out|err|txt|stdout|stderr)(?:\.\d+)?(?:\.gz)?$|^(?:stdout|stderr|output)$)")
# Names that say "log" by themselves; any other text file (`notes.txt`, `step-000001.txt`, a
# report written beside the logs) is a Worker log only when its content shows torchrun's.
SURE_LOG_NAME = re.compile(r"(?i)(?:\.(?:log|out|err|stdout|stderr)(?:\.\d+)?(?:\.gz)?$|^(?:stdout|stderr)$)")
# A report logscan itself wrote beside the logs (`scan -o report.txt`, `report -o report.html`),
# by how each format begins: never a log, though it quotes torchrun's lines. In the order of
# the formats: human, json, html, sarif, junit, gitlab, markdown, github, concise; then what
# `logscan watch` writes: its first line on stderr, a finding or the end on stdout, JSON Lines.
OWN_REPORT = re.compile(rb"""(?sx)^(?:
    (?:HEALTHY|FAILED|RUNNING|INCONCLUSIVE)\ [^\n]*:\ 
  | \{\s*"schema_version"
  | <!DOCTYPE\ html>[^<]*<html[^>]*>.{0,2048}?<title>logscan:\ 
  | \{\s*"\$schema":\s*"[^"]*sarif[^"]*".{0,512}?"driver":\s*\{\s*"name":\s*"logscan"
  | <\?xml[^>]*\?>\s*<testsuites(?:\ name="logscan"|>\s*<testsuite\ [^>]*package="logscan")
  | \[\s*(?:\{\s*"type":\s*"issue",\s*"check_name":|\]\s*\Z)
  | \#\#\ (?:\xe2\x9c\x85|\xe2\x8f\xb3|\xe2\x9d\x8c)\ logscan:\ 
  | ::(?:error|warning|notice)\ [^\n]*title=logscan
  | [^\n]*:\d+:\ (?:error|warning|info):\ [a-z0-9]+(?:-[a-z0-9]+)+(?:\ \(|:\ )
  | logscan:\ watching\ 
  | \d{2}:\d{2}:\d{2}\ (?:(?:error|warning)\ [a-z0-9]+(?:-[a-z0-9]+)+(?:\ \(|:\ )[^\n]*\n[ ]{4}\S
                         |ended\ \([^\n]*\):\ (?:HEALTHY|FAILED|RUNNING|INCONCLUSIVE)\ )
  | \{"event":\ "(?:finding|end)"
)""")
# Trees of the machine itself, never walked whatever a link or an argument says.
SYSTEM_TREES = ("/proc", "/sys", "/dev")
# Content that marks an oddly named text file as a DDP launch log: the launch line, torchrun's and
# torch.distributed's own words, a process's `[rankN]:` prefix, the process groups' C++ logging
# (`ProcessGroupNCCL.cpp:607]`, `ProcessGroupGloo`), NCCL's own lines (`NCCL INFO`, `NCCL WARN`) and
# other launchers' own lines.
LOG_MARKERS = (b"DDP launch:", b"torchrun", b"torch.distributed", b"LOCAL_RANK", b"Traceback (most recent",
               b"[rank", b"ProcessGroupNCCL", b"ProcessGroupGloo", b"NCCL INFO", b"NCCL WARN",
               # other launchers' own lines: DeepSpeed's (`[launch.py:151:main] nnodes=1, ...`)
               b"deepspeed", b"DeepSpeed")
# torchrun --log-dir keeps per-process copies: <log_dir>/<run_id>_<rand>/attempt_<n>/<local_rank>/
# {stdout,stderr}.log (and error.json). They are views of one Worker's processes, not Workers.
PROCESS_COPY = re.compile(
    r"(?P<run>(?:^|.*/)[^/]+)/attempt_\d+/(?P<local_rank>\d+)/(?:stdout|stderr)\.log$")
ROTATION = re.compile(r"^(?P<base>.+?)(?:\.(?P<index>\d+))?(?:\.gz)?$")


@dataclass(frozen=True)
class LogFile:
    path: str       # as opened
    display: str    # as shown everywhere: the PATH as typed, then the names below it (opens
                    # from the current directory; `.` adds nothing: `worker-0/launch_ddp.log`)
    stream: str     # rotated pieces of one log share a stream: `x.log.2`, `x.log.1`, `x.log`
    order: int      # older pieces first within a stream
    # A torchrun --log-dir copy holds one process's output: its local rank, from its path.
    local_rank: int | None = None


@dataclass
class Discovery:
    logs: list[LogFile] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)   # (path, problem) a user should see
    skipped: list[str] = field(default_factory=list)              # not logs: checkpoints, binaries...
    job_status_files: list[str] = field(default_factory=list)
    # path → (whole content, mtime) of small plain files already read while sniffing
    contents: dict[str, tuple[bytes, float]] = field(default_factory=dict, repr=False)
    # path → size when stat'ed here, so the scan need not stat the logs again
    sizes: dict[str, int] = field(default_factory=dict, repr=False)
    kept_bytes: int = field(default=0, repr=False)


def printable(path: str) -> str:
    """A path as text, whatever bytes its name holds: bytes that are not UTF-8 become `\\xff`."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


class Sniffed(NamedTuple):
    text: bytes        # the first SNIFF_BYTES of the text: decompressed, past a run of NULs
    whole: bool        # that is the whole plain file
    compressed: bool


def sniff(path: str) -> Sniffed:
    """The start of a file's text, as every judge of "is this a log" reads it."""
    with open_regular(path) as handle:
        head = handle.read(SNIFF_BYTES)
        if head.startswith(b"\0"):  # a live log cut by copytruncate: judge what follows the NULs
            _, text = skip_leading_nul(handle, head)
            return Sniffed(text[:SNIFF_BYTES], False, False)
    compressed = False
    for _ in range(2):  # a gzip inside a gzip is read too (see reader)
        if not is_gzip(head):
            break
        compressed = True
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, SNIFF_BYTES)
        except zlib.error:
            return Sniffed(b"", False, True)
    return Sniffed(head, not compressed and len(head) < SNIFF_BYTES, compressed)


BINARY_NOTE = "binary file, not a log: skipped"
OWN_REPORT_NOTE = "a logscan report, not a log: skipped"
EMPTY_NOTE = "empty file"


def why_not_a_log(name: str, text: bytes, named: bool) -> str | None:
    """None when a file whose text begins so is a Worker log; else why not: BINARY_NOTE,
    OWN_REPORT_NOTE, or '' for a text file found in a directory (not `named` by the user)
    whose name and first lines do not say log. NULs that end the text read are no evidence of
    a binary: a node's hard reset leaves a log's tail so, and so does a preallocated file."""
    text = text.rstrip(b"\0")
    if looks_binary(text):
        return BINARY_NOTE
    if OWN_REPORT.match(text):
        return OWN_REPORT_NOTE
    if not named and not SURE_LOG_NAME.search(name) and not any(m in text for m in LOG_MARKERS):
        return ""
    return None


_TEXT_BYTES = bytes(range(32, 127)) + b"\t\n\r\x1b\x08\x0c"


def looks_binary(head: bytes) -> bool:
    if not head:
        return False
    if head.startswith((b"PK\x03\x04", b"\x80\x02", b"\x80\x04", b"\x7fELF", b"\x89PNG")):
        return True
    control = len(head.translate(None, _TEXT_BYTES + bytes(range(128, 256))))
    return control > len(head) * 0.1


def stream_of(display: str) -> tuple[str, int]:
    directory, _, name = display.rpartition("/")
    found = ROTATION.match(name)
    base, index = (found["base"], found["index"]) if found else (name, None)
    if index is not None and not LOG_NAME.search(base) and "." not in base:
        base, index = name, None  # `launch_ddp.1` style names are their own logs, not rotations
    # A rotated piece `.N` is older the larger N is; the live file has no index.
    order = -int(index) if index is not None else 0
    return f"{directory}/{base}" if directory else base, order


def is_log_name(name: str) -> bool:
    if name.startswith("."):
        return False
    if LOG_NAME.search(name):
        return True
    lower = name.lower()
    if "tfevents" in lower:
        return False
    suffixes = [s for s in Path(lower).suffixes if not s[1:].isdigit() and s != ".gz"]
    return not (suffixes and suffixes[-1] in NOT_LOG_SUFFIXES)


def discover(paths: list[str]) -> Discovery:
    found = Discovery()
    seen_dirs: set[tuple[int, int]] = set()
    seen_files: set[tuple[int, int]] = set()
    for given in paths:
        if not os.path.lexists(given):
            raise InputError(f"no such file or directory: {printable(given)}")
        if os.path.isdir(given):
            root = given.rstrip("/") or "/"
            # Shown as typed, so the path opens from the current directory: `runs/job` gives
            # `runs/job/worker-0/x.log`, `/abs/job` stays absolute, `.` gives `worker-0/x.log`.
            _walk(root, "" if root == "." else root, found, seen_dirs, seen_files)
        else:
            _consider(given, printable(given), found, seen_files, named=True)
    settle(found)
    return found


def settle(found: Discovery) -> None:
    """The logs found, folded and ordered: whatever order the paths came in (or a sweep
    brought them up to date in), the same job gives the same discovery."""
    fold_process_copies(found)
    found.logs.sort(key=lambda log: (log.stream, log.order, log.display))
    found.notes.sort()
    found.skipped.sort()
    found.job_status_files.sort()


def fold_process_copies(found: Discovery) -> None:
    """torchrun --log-dir copies are views of a Worker's processes. Beside the Worker's own log
    (the nearest log above the log dir) they are skipped when that log already holds their lines
    (`--tee`), and read as more of that Worker when it does not (`--redirects`: the tracebacks
    are only in the copies). Alone, each run directory's copies are one Worker."""
    copies = [log for log in found.logs if PROCESS_COPY.match(log.display)]
    if not copies:
        return
    workers = [log for log in found.logs if not PROCESS_COPY.match(log.display)]
    if not workers:
        found.logs = [LogFile(log.path, log.display, PROCESS_COPY.match(log.display)["run"],
                              log.order, copy_local_rank(log.display)) for log in found.logs]
        return
    by_dir: dict[str, LogFile] = {}
    for log in sorted(workers, key=lambda log: (log.stream, -log.order)):
        by_dir.setdefault(os.path.dirname(log.display), log)
    kept = [log for log in found.logs if not PROCESS_COPY.match(log.display)]
    for copy in copies:
        owner = _owner(copy.display, by_dir)
        if owner is None or _told_by(copy, owner):
            found.skipped.append(copy.display)
        else:
            # After the Worker's own log, in the order of the copies' paths.
            kept.append(LogFile(copy.path, copy.display, owner.stream, owner.order + 1,
                                copy_local_rank(copy.display)))
    found.logs = kept


def copy_local_rank(display: str) -> int | None:
    """The local rank whose output a torchrun --log-dir copy holds, or None for any other log."""
    found = PROCESS_COPY.match(display)
    return int(found["local_rank"]) if found else None


def _owner(display: str, by_dir: dict[str, LogFile]) -> LogFile | None:
    directory = os.path.dirname(display)
    while directory:
        parent = os.path.dirname(directory)
        if parent == directory:  # `/`: an absolute PATH has no parent above it
            break
        directory = parent
        if directory in by_dir:
            return by_dir[directory]
    return by_dir.get("")


# How much of a copy and of its Worker's log is compared to tell whether the log holds its lines.
COPY_SAMPLE_LINES = 3
OWNER_SAMPLE_BYTES = 1 << 20


def _told_by(copy: LogFile, owner: LogFile) -> bool:
    """The Worker's log holds the copy's first lines (torchrun --tee wrote them there too)."""
    try:
        with open_regular(copy.path) as handle:
            head = handle.read(SNIFF_BYTES)
        with open_regular(owner.path) as handle:
            told = handle.read(OWNER_SAMPLE_BYTES)
    except OSError:
        return True  # nothing to add from a copy that cannot be read
    if is_gzip(told):
        return True  # a compressed Worker log: too costly to compare, and tee is the common case
    lines = [line.strip() for line in head.splitlines() if line.strip()][:COPY_SAMPLE_LINES]
    return all(line in told for line in lines)


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _walk(root: str, shown_root: str, found: Discovery, seen_dirs, seen_files) -> None:
    for entry, display in walk_files(root, shown_root, found, seen_dirs):
        if entry.name == JOB_STATUS_FILE:
            found.job_status_files.append(entry.path)
        elif not is_log_name(entry.name):
            found.skipped.append(printable(display))
        else:
            _consider(entry.path, printable(display), found, seen_files, named=False)


def walk_files(root: str, shown_root: str, found: Discovery, seen_dirs) -> Iterator[tuple[os.DirEntry, str]]:
    """Every file below root with its name as shown (`shown_root`, then the names below it), by
    names alone. Depth first, entries by name; iterative, so no tree is too deep for it. Hidden
    directories are not entered, and a symbolic link that leads out of the root is not
    followed: nothing outside the job is read. What cannot be walked is noted in `found`."""
    real_root = os.path.realpath(root)
    if _inside(real_root, SYSTEM_TREES):
        found.notes.append((printable(shown_root or root), "a system tree (/proc, /sys, /dev): not walked"))
        return
    stack = [_entries(root, found, seen_dirs)]
    shown = [shown_root]
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
            shown.pop()
            continue
        display = _join(shown[-1], entry.name)
        try:
            if entry.is_symlink() and not _inside(os.path.realpath(entry.path), (real_root,)):
                found.notes.append((printable(display), "symbolic link out of the scanned directory: "
                                                        "not followed"))
                continue
            is_dir = entry.is_dir(follow_symlinks=True)
        except OSError:
            is_dir = False
        if is_dir:
            if not entry.name.startswith("."):
                stack.append(_entries(entry.path, found, seen_dirs))
                shown.append(display)
            continue
        yield entry, display


def _join(shown: str, name: str) -> str:
    """A name below a directory as shown: `a/b` + `x` → `a/b/x`; `/` + `x` → `/x`; `` + `x` → `x`."""
    if not shown:
        return name
    return f"{shown}{name}" if shown.endswith("/") else f"{shown}/{name}"


def _entries(directory: str, found: Discovery, seen_dirs) -> Iterator[os.DirEntry]:
    try:
        info = os.stat(directory)
    except OSError as exc:
        found.notes.append((printable(directory), _reason(exc)))
        return iter(())
    if (info.st_dev, info.st_ino) in seen_dirs:
        return iter(())  # a symlink loop, or a second way to the same directory
    seen_dirs.add((info.st_dev, info.st_ino))
    try:
        with os.scandir(directory) as scan:
            return iter(sorted(scan, key=lambda e: e.name))
    except OSError as exc:
        found.notes.append((printable(directory), _reason(exc)))
        return iter(())


def _consider(path: str, display: str, found: Discovery, seen_files, named: bool) -> None:
    try:
        info = os.stat(path)
    except OSError as exc:
        found.notes.append((display, _reason(exc)))
        return
    if not stat.S_ISREG(info.st_mode):
        # FIFOs and devices would block or never end: never open them.
        found.notes.append((display, "not a regular file (FIFO, socket or device): skipped"))
        return
    if (info.st_dev, info.st_ino) in seen_files:
        return
    seen_files.add((info.st_dev, info.st_ino))
    if info.st_size == 0:
        found.notes.append((display, EMPTY_NOTE))
        return
    try:
        head, whole, _ = sniff(path)
    except OSError as exc:
        found.notes.append((display, _reason(exc)))
        return
    why = why_not_a_log(os.path.basename(path), head, named)
    if why is not None:
        if why == OWN_REPORT_NOTE or (why == BINARY_NOTE and named):
            found.notes.append((display, why))
        else:
            found.skipped.append(display)
        return
    stream, order = stream_of(display)
    found.logs.append(LogFile(path, display, stream, order))
    found.sizes[path] = info.st_size
    if whole and found.kept_bytes + len(head) <= KEEP_BYTES:
        found.contents[path] = (head, info.st_mtime)
        found.kept_bytes += len(head)


def _reason(exc: OSError) -> str:
    if isinstance(exc, NotRegularFile):
        return "not a regular file (FIFO, socket or device): skipped"
    if isinstance(exc, PermissionError):
        return "cannot read: permission denied"
    if exc.errno == errno.ELOOP:
        return "symbolic link loop"
    if isinstance(exc, FileNotFoundError):
        return "broken symbolic link or vanished file"
    return f"cannot read: {exc.strerror or exc}"


def read_job_status(paths: list[str]) -> tuple[JobStatus, str] | None:
    """The first word of a `job_status` file, where it is a JobStatus, and that file."""
    for path in paths:
        try:
            with open_regular(path) as handle:
                words = handle.read(256).decode("utf-8", "replace").split()
        except OSError:
            continue
        if words and words[0].lower() in tuple(JobStatus):
            return JobStatus(words[0].lower()), path
    return None



