"""A container runtime's partial records joined back into the lines they split, before any line
is read.

containerd and CRI-O cut a line longer than their buffer (16 KiB by default) into records
`<time> <stream> P <piece>` ending with a `<time> <stream> F <piece>`; Docker's json-file driver
writes each piece as a record whose "log" lacks the final "\\n". Pieces of stdout and stderr
interleave, so they are joined per stream. The joined line takes the place of its first record
(whose header it keeps, so the evidence starts as that line of the file does) and every later
piece's line is left blank: line numbers stay those of the file, and the line's
evidence names where it began. A line that never ends is cut at the reader's long-line limit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

# `<time> <stream> <tag> <text>`: the tag F ends a line, P is a piece of one.
_CRI_RECORD = re.compile(rb"(?P<head>\S+ (?P<stream>stdout|stderr) (?P<tag>[FP])(?: |$))")
_CRI_PARTIAL = (b" stdout P ", b" stderr P ")
_DOCKER_RECORD = b'{"log":'
_DOCKER_COMPLETE = b'\\n","stream":'


def _has_partial(block: bytes) -> bool:
    """Whether the block holds a partial record: found with byte searches, so that a log
    without any costs no line-by-line pass."""
    if any(tag in block for tag in _CRI_PARTIAL):
        return True
    records = block.count(_DOCKER_RECORD)
    return records > 0 and block.count(_DOCKER_COMPLETE) < records


class _Open:
    """A line still being joined: where it began and its pieces so far."""

    __slots__ = ("index", "head", "pieces", "size", "docker_time")

    def __init__(self, index: int, head: bytes, docker_time: str | None = None):
        self.index, self.head, self.docker_time = index, head, docker_time
        self.pieces: list = []
        self.size = 0


class _Joiner:
    def __init__(self, max_line: int):
        self.max_line = max_line
        self.held: list[bytes | None] = []  # lines not yet given out; None: a line being joined
        self.held_size = 0
        self.open: dict[tuple[str, str], _Open] = {}  # (format, stream) → the line being joined

    def add(self, piece, record: _Open) -> None:
        """A piece of the line, as much of it as the limit leaves room for (past it, none)."""
        room = self.max_line - record.size
        if room <= 0:
            return
        piece = piece[:room]
        record.pieces.append(piece)
        record.size += len(piece)

    def close(self, key) -> None:
        record = self.open.pop(key)
        if key[0] == "cri":
            line = record.head + b"".join(record.pieces)
        else:
            fields = {"log": "".join(record.pieces) + "\n", "stream": key[1]}
            if record.docker_time is not None:
                fields["time"] = record.docker_time
            line = json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode(
                "utf-8", "surrogatepass")
        self.held[record.index] = line
        self.held_size += len(line)

    def line(self, raw: bytes) -> None:
        """One record (or any other line), in file order."""
        record = _CRI_RECORD.match(raw)
        if record is not None:
            key = ("cri", record["stream"].decode())
            text = raw[record.end():]
            joining = self.open.get(key)
            if joining is None and record["tag"] == b"F":
                self._keep(raw)
                return
            if joining is None:
                head = record["head"] if record["head"].endswith(b" ") else record["head"] + b" "
                joining = self.open[key] = _Open(len(self.held), head)
                self.held.append(None)
            else:
                self._keep(b"")
            self.add(text, joining)
            if record["tag"] == b"F":
                self.close(key)
            return
        if raw.startswith(_DOCKER_RECORD):
            try:
                fields = json.loads(raw)
            except ValueError:
                fields = None
            if (isinstance(fields, dict) and isinstance(fields.get("log"), str)
                    and fields.get("stream") in ("stdout", "stderr")):
                key = ("docker", fields["stream"])
                text, ends = fields["log"], fields["log"].endswith("\n")
                joining = self.open.get(key)
                if joining is None and ends:
                    self._keep(raw)
                    return
                if joining is None:
                    stamp = fields.get("time")
                    joining = self.open[key] = _Open(len(self.held), b"",
                                                     stamp if isinstance(stamp, str) else None)
                    self.held.append(None)
                else:
                    self._keep(b"")
                self.add(text[:-1] if ends else text, joining)
                if ends:
                    self.close(key)
                return
        self._keep(raw)

    def _keep(self, raw: bytes) -> None:
        self.held.append(raw)
        self.held_size += len(raw)
        if self.open and self.held_size > self.max_line:
            # A piece that never gets its end must not hold back the rest of the file.
            for key in list(self.open):
                self.close(key)

    def ready(self, last: bool) -> bytes:
        """The lines that can be given out: all of them at the end, else those before the first
        line still being joined."""
        if last:
            for key in list(self.open):
                self.close(key)
        upto = len(self.held)
        if self.open:
            upto = min(record.index for record in self.open.values())
        out = self.held[:upto]
        del self.held[:upto]
        for record in self.open.values():
            record.index -= upto
        self.held_size = sum(len(line) for line in self.held if line is not None)
        return b"".join(line + b"\n" for line in out)


def join_partial_records(blocks: Iterable[bytes], max_line: int) -> Iterator[bytes]:
    """The blocks (whole lines each, the last perhaps without its newline) with every partial
    record joined to the rest of its line; blocks without one pass through as they are."""
    joiner: _Joiner | None = None
    for block in blocks:
        if joiner is None:
            if not _has_partial(block):
                yield block
                continue
            joiner = _Joiner(max_line)
        ends_with_newline = block.endswith(b"\n")
        lines = block.split(b"\n")
        if ends_with_newline:
            lines.pop()
        for raw in lines:
            joiner.line(raw)
        if not ends_with_newline:  # the file's last line: nothing follows it
            out = joiner.ready(last=True)
            yield out[:-1] if out.endswith(b"\n") else out
            return
        out = joiner.ready(last=False)
        if out:
            yield out
        if not joiner.open and not joiner.held:
            joiner = None
    if joiner is not None:
        out = joiner.ready(last=True)
        if out:
            yield out
