"""A container runtime's partial records joined back into the lines they split, before any line
is read.

containerd and CRI-O cut a line longer than their buffer (16 KiB by default) into records
`<time> <stream> P <piece>` ending with a `<time> <stream> F <piece>`; Docker's json-file driver
writes each piece as a record whose "log" lacks the final "\\n". Pieces of stdout and stderr
interleave, so they are joined per stream. The joined line takes the place of its first record
(whose header it keeps, so the evidence starts as that line of the file does) and every later
piece's line is left blank: line numbers stay those of the file, and the line's
evidence names where it began. A line that never ends is cut at the reader's long-line limit.
A container's log is split between processes only where no line being joined can be open
(logscan.files.reader.line_ranges): a line's pieces may come long after its first one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

# `<time> <stream> <tag> <text>`: the tag F ends a line, P is a piece of one.
_CRI_RECORD = re.compile(rb"(?P<head>\S+ (?P<stream>stdout|stderr) (?P<tag>[FP])(?: |$))")
_DOCKER_RECORD = b'{"log":'
_DOCKER_STREAM = b'","stream":"'


def starts_with_record(data: bytes) -> bool:
    """Whether `data` begins with a container runtime's record. A runtime writes every line of
    its log as one, so this tells a container's log from its first line."""
    return data.startswith(_DOCKER_RECORD) or _CRI_RECORD.match(data) is not None


# Where a line may hold a partial record: a CRI `P` tag; a Docker "log" that does not end with
# an escaped newline, or ends with an escaped backslash before an `n` (the joiner reads it to
# tell). Each begins with a literal, which `re` searches for fast.
_CRI_MAY_BE_PARTIAL = re.compile(rb" std(?:out|err) P ")
_DOCKER_MAY_BE_PARTIAL = re.compile(
    rb'","stream":"(?:(?<!\\n","stream":")|(?<=\\\\n","stream":"))')


def partial_search(block: bytes):
    """The search for lines that may hold a partial record, for the kind of container log whose
    record begins the block; None for a block that does not begin with one (an ordinary log
    costs one match)."""
    if block.startswith(_DOCKER_RECORD):
        return _DOCKER_MAY_BE_PARTIAL.search
    if _CRI_RECORD.match(block) is not None:
        return _CRI_MAY_BE_PARTIAL.search
    return None


def _whole_docker_stream(raw: bytes) -> str | None:
    """The stream of a Docker record whose "log" ends with its newline (a whole line), read
    from the bytes without decoding the JSON; None for a piece, or a record not as Docker
    writes it. In the record a quote inside "log" is escaped, so the first `","stream":"` ends
    it; it ends a whole line if an escaping backslash comes before its last `n`."""
    end = raw.find(_DOCKER_STREAM, len(_DOCKER_RECORD))
    if end < 2 or raw[end - 1:end] != b"n":
        return None
    before = end - 2
    while before >= 0 and raw[before] == 0x5C:  # backslash
        before -= 1
    if (end - 2 - before) % 2 == 0:
        return None
    stream = raw[end + len(_DOCKER_STREAM):end + len(_DOCKER_STREAM) + 7]
    return {b'stdout"': "stdout", b'stderr"': "stderr"}.get(stream)


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
        self.done: list[bytes] = []  # lines that can be given out
        # From the first line still being joined on: lines held back (None: the one being joined)
        self.held: list[bytes | None] = []
        self.held_size = 0
        self.open: dict[tuple[str, str], _Open] = {}  # (format, stream) → the line being joined

    def line(self, raw: bytes) -> None:
        """One record (or any other line), in file order."""
        record = _CRI_RECORD.match(raw)
        if record is not None:
            head = record["head"] if record["head"].endswith(b" ") else record["head"] + b" "
            self._record(raw, ("cri", record["stream"].decode()), raw[record.end():],
                         record["tag"] == b"F", head)
            return
        if raw.startswith(_DOCKER_RECORD):
            stream = _whole_docker_stream(raw)
            if stream is not None and ("docker", stream) not in self.open:
                self._keep(raw)  # a whole line, and no piece of its stream is open
                return
            try:
                fields = json.loads(raw)
            except ValueError:
                fields = None
            if (isinstance(fields, dict) and isinstance(fields.get("log"), str)
                    and fields.get("stream") in ("stdout", "stderr")):
                text, stamp = fields["log"], fields.get("time")
                ends = text.endswith("\n")
                self._record(raw, ("docker", fields["stream"]), text[:-1] if ends else text, ends,
                             docker_time=stamp if isinstance(stamp, str) else None)
                return
        self._keep(raw)

    def _record(self, raw: bytes, key, text, ends: bool, head: bytes = b"",
                docker_time: str | None = None) -> None:
        joining = self.open.get(key)
        if joining is None:
            if ends:  # a whole line in one record
                self._keep(raw)
                return
            joining = self.open[key] = _Open(len(self.held), head, docker_time)
            self.held.append(None)
        else:
            self.held.append(b"")  # a later piece: its line is left blank
            self.held_size += 1
        room = self.max_line - joining.size  # past the limit, pieces are dropped
        if room > 0:
            joining.pieces.append(text[:room])
            joining.size += len(joining.pieces[-1])
        if ends:
            self._close(key)
        self._bound()

    def keep_lines(self, lines: bytes) -> None:
        """Lines (joined by their newlines, without the last one) that hold no record piece,
        while no line is being joined."""
        self.done.append(lines)

    def _keep(self, raw: bytes) -> None:
        if not self.open:
            self.done.append(raw)
            return
        self.held.append(raw)
        self.held_size += len(raw) + 1
        self._bound()

    def _bound(self) -> None:
        if self.open and self.held_size > self.max_line:
            # A line that never gets its end must not hold back the rest of the file.
            self.close_all()

    def _close(self, key) -> None:
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
        self.held_size += len(line) + 1
        if not self.open:
            self.done.extend(self.held)
            self.held, self.held_size = [], 0

    def close_all(self) -> None:
        for key in list(self.open):
            self._close(key)

    def ready(self) -> bytes:
        """The lines that can be given out, each with its newline."""
        out, self.done = self.done, []
        return b"".join(line + b"\n" for line in out)


def _join_block(joiner: _Joiner, block: bytes, search) -> None:
    """Give the joiner the lines of a block that ends with a newline: those before the next line
    that may hold a partial record, while no line is being joined, in bulk; the others one by
    one."""
    position, size = 0, len(block)
    while position < size:
        if not joiner.open:
            found = search(block, position)
            piece = size if found is None else block.rfind(b"\n", position, found.start()) + 1
            piece = max(piece, position)
            if piece > position:
                joiner.keep_lines(block[position:piece - 1])
                position = piece
                continue
        end = block.find(b"\n", position)
        joiner.line(block[position:end])
        position = end + 1


def join_partial_records(blocks: Iterable[bytes], max_line: int) -> Iterator[bytes]:
    """The blocks (whole lines each, the last perhaps without its newline) with every partial
    record joined to the rest of its line; blocks without one pass through as they are."""
    joiner: _Joiner | None = None
    search = None
    for block in blocks:
        if joiner is None:
            search = partial_search(block) or search
            if search is None or search(block) is None:
                yield block
                continue
            joiner = _Joiner(max_line)
        ends_with_newline = block.endswith(b"\n")
        _join_block(joiner, block if ends_with_newline else block + b"\n", search)
        if not ends_with_newline:  # the file's last line: nothing follows it
            joiner.close_all()
            out = joiner.ready()
            yield out[:-1]
            return
        out = joiner.ready()
        if out:
            yield out
        if not joiner.open:
            joiner = None
    if joiner is not None:
        joiner.close_all()
        out = joiner.ready()
        if out:
            yield out
