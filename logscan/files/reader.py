"""Stream a log file as blocks of whole lines, whatever its encoding, compression or state.

Files are never read whole: blocks are CHUNK_SIZE bytes cut at the last newline. A plain file is
read up to the size it had when opened, so a log still being written gives a consistent snapshot
and the scan ends. A line longer than MAX_LINE (that does not fit in the block it starts in)
keeps its head and its tail, joined by a carriage return, and loses the middle: a 10 MiB line
with no newline costs no more memory than a short one, and a progress bar redrawn thousands of
times with \r on one line still ends with its last state. Files are opened without ever blocking (a FIFO in a log's place is refused), a
compressed stream yields all it holds up to any damage, and a big plain file can be read in
line-aligned pieces (line_ranges) by several processes.
"""

from __future__ import annotations

import errno
import os
import stat
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from logscan.files.records import partial_search

GZIP_MAGIC = b"\x1f\x8b"
# 512 KiB: a block and the copies made of it stay in a core's L2 cache; with 1 MiB blocks the
# pure-Python scan of a big log was 1.4x slower, with 256 KiB ones 1.5x (bench/).
CHUNK_SIZE = 1 << 19
MAX_LINE = 64 * 1024
GZIP_STEP = 1 << 16

_allocator_tuned = False


def keep_block_memory() -> None:
    """Let glibc reuse the memory of freed blocks instead of giving it back to the kernel.

    By default a block (above 128 KiB) is its own mmap: every block then faults in fresh pages,
    which costs about as much as scanning it. With blocks served from the heap, reading is 3x
    faster. Elsewhere (musl, macOS) this does nothing.
    """
    global _allocator_tuned
    if _allocator_tuned:
        return
    _allocator_tuned = True
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    m_trim_threshold, m_mmap_threshold = -1, -3
    mallopt(m_mmap_threshold, 4 * CHUNK_SIZE)
    mallopt(m_trim_threshold, 16 * CHUNK_SIZE)


# Bytes counted with bytes.count (about 2-3 GB/s: one byte a cycle) before numpy, which counts
# at 10-19 GB/s but takes 0.05-0.1 s to import, is worth importing. A small scan never pays it.
NUMPY_AFTER = 96 << 20
_counted = 0
_numpy = None


def preload_numpy() -> None:
    """Count with numpy from now on, where it is installed (see count_newlines)."""
    global _numpy
    if _numpy is None:
        try:
            import numpy
        except ImportError:
            numpy = False
        _numpy = numpy


def count_newlines(block: bytes) -> int:
    """block.count(b"\n"), through numpy (when installed) once this process has counted
    NUMPY_AFTER bytes: on a big log, counting lines is otherwise the scan's largest cost."""
    global _counted
    if _numpy is None:
        _counted += len(block)
        if _counted <= NUMPY_AFTER:
            return block.count(b"\n")
        preload_numpy()
    if _numpy is False or len(block) < 4096:
        return block.count(b"\n")
    return int(_numpy.count_nonzero(_numpy.frombuffer(block, _numpy.uint8) == 10))


@dataclass
class ReadState:
    """What went wrong while reading, reported after the blocks are consumed."""

    truncated: str | None = None
    size: int = 0
    compressed: bool = False
    mtime: float | None = None
    leading_nul: int = 0  # NUL bytes skipped at the start (a live log cut by copytruncate)
    expansion: float = 0.0  # decompressed / compressed bytes, for compressed files


class NotRegularFile(OSError):
    """A FIFO, socket or device where a log file was expected."""


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _open_checked(path: str):
    """(unbuffered file, its stat) of a regular file. Never blocks: a FIFO or device put in the
    file's place (after it was checked) raises NotRegularFile instead of waiting for a writer."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file (FIFO, socket or device)", path)
        return os.fdopen(fd, "rb", buffering=0), info
    except BaseException:
        os.close(fd)
        raise


def open_regular(path: str):
    """Open a regular file for reading, never blocking (see _open_checked)."""
    return _open_checked(path)[0]


def is_gzip(head: bytes) -> bool:
    return head[:2] == GZIP_MAGIC


def _steps(handle, head: bytes) -> Iterator[bytes]:
    """The file from its start in pieces of GZIP_STEP bytes, `head` being what was read already."""
    while True:
        while len(head) >= GZIP_STEP:
            yield head[:GZIP_STEP]
            head = head[GZIP_STEP:]
        more = handle.read(GZIP_STEP - len(head))
        if not more:
            if head:
                yield head
            return
        head += more


class _Chained:
    """A readable over bytes already in hand, then an iterator of more."""

    def __init__(self, first: bytes, rest: Iterator[bytes]):
        self.buffer, self.rest = first, rest

    def read(self, size: int) -> bytes:
        while len(self.buffer) < size:
            more = next(self.rest, b"")
            if not more:
                break
            self.buffer += more
        out, self.buffer = self.buffer[:size], self.buffer[size:]
        return out


def _gunzip(handle, state: ReadState, chunk_size: int, data: bytes) -> Iterator[bytes]:
    """Decompress as far as the data goes (`data` is what was read already): a truncated or
    corrupt stream still yields all that came before the damage, and says so in `state.truncated`.

    zlib works in steps of GZIP_STEP, whatever `chunk_size` is, so what survives a corrupt
    stream does not depend on how the caller reads; blocks of `chunk_size` are made from them.
    """
    member = zlib.decompressobj(16 + zlib.MAX_WBITS)
    started = False
    pieces: list[bytes] = []
    held = 0
    steps = _steps(handle, data)
    data = next(steps, b"")
    while data:
        if member.eof:
            if not data.startswith(GZIP_MAGIC):
                break  # padding or junk after the last member, as gzip -d ignores it
            member = zlib.decompressobj(16 + zlib.MAX_WBITS)
        started = True
        try:
            out = member.decompress(data, GZIP_STEP)
        except zlib.error as exc:
            state.truncated = f"compressed data is corrupt ({exc})"
            break
        if out:
            pieces.append(out)
            held += len(out)
            state.size += len(out)
            if held >= chunk_size:
                yield b"".join(pieces)
                pieces, held = [], 0
        data = member.unused_data if member.eof else member.unconsumed_tail
        if not data:
            data = next(steps, b"")
    else:
        if started and not member.eof:
            state.truncated = "compressed data ends early"
    if pieces:
        yield b"".join(pieces)


def _raw_blocks(path: str, state: ReadState, chunk_size: int, content: bytes | None = None,
                start: int = 0, end: int | None = None) -> Iterator[bytes]:
    if content is not None:  # read already (a small plain file, when it was found)
        state.size = len(content)
        text = content.lstrip(b"\0")
        state.leading_nul = len(content) - len(text)
        for offset in range(0, len(text), chunk_size):
            yield text[offset:offset + chunk_size]
        return
    handle, info = _open_checked(path)
    with handle:
        state.mtime = info.st_mtime
        if start:  # a piece of a plain file (see line_ranges)
            handle.seek(start)
        remaining = (info.st_size if end is None else min(end, info.st_size)) - start
        block = handle.read(max(2, min(chunk_size, remaining))) if remaining > 0 else b""
        if not start and block.startswith(b"\0"):
            skipped, block = skip_leading_nul(handle, block)
            state.leading_nul = skipped
            remaining -= skipped
            block = block[:max(0, remaining)]  # a piece ends where it ends, NULs or not
        if not start and is_gzip(block):
            state.compressed = True
            blocks = _gunzip(handle, state, chunk_size, block)
            first = next(blocks, b"")
            if is_gzip(first):  # a gzip inside a gzip (`gzip -f` of a .gz): read the inner one
                inner = ReadState()
                yield from _gunzip(_Chained(first, blocks), inner, chunk_size, b"")
                state.size, state.truncated = inner.size, state.truncated or inner.truncated
            elif first:
                yield first
                yield from blocks
            state.expansion = state.size / max(1, info.st_size)
            return
        state.size = max(0, remaining)
        while block:
            yield block
            remaining -= len(block)
            if remaining <= 0:
                break
            block = handle.read(min(chunk_size, remaining))  # empty if the file shrank


def skip_leading_nul(handle, block: bytes) -> tuple[int, bytes]:
    """(how many NUL bytes begin the file, the first block after them). A log truncated by
    logrotate's copytruncate while its writer kept writing at its old offset begins with that
    many NUL bytes, usually a sparse hole: SEEK_DATA jumps it without reading it."""
    start = handle.tell() - len(block)
    text = block.lstrip(b"\0")
    if text:
        return len(block) - len(text), text
    try:
        data = os.lseek(handle.fileno(), start + len(block), getattr(os, "SEEK_DATA", 3))
    except OSError:  # no data after the hole, or no SEEK_DATA here: read through the NULs
        data = start + len(block)
    handle.seek(data)
    while True:
        more = handle.read(CHUNK_SIZE)
        if not more:
            return handle.tell() - start, b""
        text = more.lstrip(b"\0")
        if text:
            return handle.tell() - len(text) - start, text


def _no_piece_open(handle, offset: int, size: int, search) -> int:
    """The first line start at or after `offset` (a line start) that no line being joined from
    partial records can span: no record that may be a piece in the 2 * MAX_LINE bytes before it.
    The joiner closes a line once more than MAX_LINE bytes of other lines came after its last
    piece (files.records), so each side of such a cut joins its own lines alone."""
    window = 2 * MAX_LINE
    while offset < size:
        start = max(0, offset - window)
        handle.seek(start)
        before = handle.read(offset - start)
        last = None
        position = 0
        while (found := search(before, position)) is not None:
            last, position = found, found.end()
        if last is None:
            return offset
        offset = _next_line_start(handle, start + last.end() + window, size)  # past its reach
    return size


def _next_line_start(handle, offset: int, size: int) -> int:
    """The start of the first line that begins after `offset` (a byte inside a line), or size."""
    if offset >= size:
        return size
    handle.seek(offset)
    while True:
        chunk = handle.read(1 << 16)
        if not chunk:
            return size
        newline = chunk.find(b"\n")
        if newline >= 0:
            return offset + newline + 1
        offset += len(chunk)


def line_ranges(path: str, pieces: int, min_size: int = 1 << 20) -> list[tuple[int, int | None]]:
    """Split a plain file into about `pieces` byte ranges that each start at a line start, to be
    read separately (`line_blocks(start=, end=)`). A compressed file is one piece. A container
    runtime's log, whose partial records are joined across lines (files.records), is cut only
    where no line being joined can be open (_no_piece_open)."""
    handle, info = _open_checked(path)
    with handle:
        size = info.st_size
        head = handle.read(256)
        if is_gzip(head) or pieces < 2 or size < 2 * min_size:
            return [(0, None)]
        search = partial_search(head)
        pieces = min(pieces, size // min_size)
        bounds = [0]
        for index in range(1, pieces):
            offset = _next_line_start(handle, max(bounds[-1], size * index // pieces), size)
            if search is not None:
                offset = _no_piece_open(handle, offset, size, search)
            if bounds[-1] < offset < size:
                bounds.append(offset)
    return [(a, b) for a, b in zip(bounds, bounds[1:])] + [(bounds[-1], size)]


def line_blocks(path: str, state: ReadState | None = None, chunk_size: int = CHUNK_SIZE,
                max_line: int = MAX_LINE, content: bytes | None = None, start: int = 0,
                end: int | None = None) -> Iterator[bytes]:
    """Yield blocks that each end with b"\\n" (the last may not), never splitting a line.
    `content`, if given, is the whole plain file, read already; `start` and `end` (from
    line_ranges) read one piece of a plain file."""
    state = state if state is not None else ReadState()
    keep_block_memory()
    carry = b""
    half = max_line // 2
    long_head = None  # the head of an over-long line, while its middle goes by
    tail = b""
    for block in _raw_blocks(path, state, chunk_size, content, start, end):
        if long_head is not None:
            newline = block.find(b"\n")
            if newline < 0:
                tail = (tail + block)[-half:]
                continue
            yield long_head + b"\r" + (tail + block[:newline])[-half:] + b"\n"
            block = block[newline + 1:]
            long_head, tail = None, b""
        cut = block.rfind(b"\n")  # the carry holds no newline: the block's last is the last
        if cut < 0:
            carry = carry + block if carry else block
        else:
            if carry:  # one copy: the carry, then the block up to its last newline
                data = b"".join((carry, memoryview(block)[:cut + 1]))
            else:
                data = block if cut + 1 == len(block) else block[:cut + 1]
            carry = block[cut + 1:]
            yield data
        if len(carry) > max_line:
            long_head, tail = carry[:half], carry[-half:]
            carry = b""
    if long_head is not None:
        yield long_head + b"\r" + tail
    elif carry:
        yield carry
