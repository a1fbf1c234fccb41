"""files → events. One compiled pattern finds candidate lines in large blocks; only those lines
cost Python work. Progress lines are the bulk of a training log, so only the first and the last
of each block are looked at.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

from logscan import lineparse
from logscan.catalogue import Catalogue, Rule
from logscan.events import (EnvPrint, FileScan, LaunchLine, Progress, ProcessExit,
                            PythonException, SignalHit, Where)
from logscan.prefixes import strip_prefixes
from logscan.reader import CHUNK_SIZE, ReadState, line_blocks

MAX_EVIDENCE = 2000

# Lines the native parsers want, whatever the catalogue holds. Bytes, because blocks are bytes.
CORE_CANDIDATES = (
    rb"DDP launch:",
    rb"torchrun env",
    rb"LOCAL_RANK",
    rb"WORLD_SIZE",
    rb"(?<![A-Za-z_])RANK[ \t]*[=:]",
    rb"Traceback \(most recent",
    rb"During handling of the above",
    rb"The above exception was",
    rb"Error",
    rb"Exception",
    rb"Interrupt",
    rb"SystemExit",
    rb"Root Cause",
    rb"Failures:",
    rb"\b(?:time|host|rank|exitcode|traceback)[ \t]+:",
    rb"error_file:",
    rb"\(exitcode: ",
    rb"torch/distributed/run\.py\", line",
    rb"bin/torchrun\", line",
)
AGENT_FRAMES = ('torch/distributed/run.py", line', 'bin/torchrun", line')

DEFAULT_PROGRESS = (
    r"(?i:\b(?:global[_ ])?step\b[ \t]*[:=#]?[ \t]*\[?\d+)",
    r"(?i:\biter(?:ation)?\b[ \t]*[:=#]?[ \t]*\[?\d+)",
    r"\d+%\|",
    r"""['"](?:loss|train_loss)['"][ \t]*:[ \t]*['"]?[-+]?[\d.]""",
    r"(?i:\bloss\b[ \t]*[:=][ \t]*[-+]?\d)",
)


def compile_progress(user_patterns: tuple[str, ...] = ()) -> re.Pattern[bytes]:
    return re.compile("|".join(f"(?:{p})" for p in (*DEFAULT_PROGRESS, *user_patterns)).encode())


@dataclass
class _FileContext:
    """Parser state that spans lines of one file."""

    env: lineparse.EnvAssembler = field(default_factory=lineparse.EnvAssembler)
    traceback_signals: dict = field(default_factory=dict)
    agent_traceback: dict = field(default_factory=dict)
    chained: dict = field(default_factory=dict)
    in_root_cause: bool = False
    summary_entry: dict = field(default_factory=dict)


class Scanner:
    def __init__(self, catalogue: Catalogue, progress_patterns: tuple[str, ...] = ()):
        self.matchers = [r for r in catalogue.matchers if r.keywords]
        self.keywordless = [r for r in catalogue.matchers if not r.keywords]
        keywords = sorted({kw.encode() for r in self.matchers for kw in r.keywords})
        self.candidates = re.compile(
            b"|".join((*CORE_CANDIDATES, *(re.escape(k) for k in keywords))))
        self.progress = compile_progress(progress_patterns)

    def scan_file(self, path: str, display: str, chunk_size: int = CHUNK_SIZE) -> FileScan:
        scan = FileScan(path=path, display=display)
        try:
            stat = os.stat(path)
            scan.mtime = stat.st_mtime
        except OSError:
            pass
        state = ReadState()
        context = _FileContext()
        lines_before = 0
        first_block = last_block = None
        try:
            for block in line_blocks(path, state, chunk_size):
                if first_block is None:
                    first_block = block
                self._scan_block(block, lines_before, scan, context)
                lines_before += block.count(b"\n")
                last_block = block
        except OSError as exc:
            scan.read_error = exc.strerror or str(exc)
        for where, record in context.env.flush():
            scan.envs.append(_env_print(where, record))
        if last_block is not None and not last_block.endswith(b"\n"):
            lines_before += 1
        scan.lines = lines_before
        scan.size = state.size
        scan.truncated = state.truncated
        scan.compressed = state.compressed
        self._edges(scan, first_block, last_block, lines_before)
        scan.progress = _first_and_last(scan.progress)
        return scan

    def _edges(self, scan: FileScan, first_block, last_block, line_count: int) -> None:
        if first_block:
            head = first_block[:first_block.find(b"\n")] if b"\n" in first_block else first_block
            scan.first_time = strip_prefixes(_decode(head)).time
        if last_block:
            tail = last_block.rstrip(b"\n")
            text = _decode(tail[tail.rfind(b"\n") + 1:])
            stripped = strip_prefixes(text)
            scan.last_time = stripped.time
            scan.last_line = Where(scan.display, line_count, text[:MAX_EVIDENCE],
                                   stripped.rank, stripped.local_rank, stripped.time)

    def _scan_block(self, block: bytes, lines_before: int, scan: FileScan,
                    context: _FileContext) -> None:
        search = self.candidates.search
        count = block.count
        line = lines_before
        counted_to = 0
        pos = 0
        size = len(block)
        while True:
            found = search(block, pos)
            if found is None:
                break
            start = block.rfind(b"\n", 0, found.start()) + 1
            end = block.find(b"\n", found.end())
            if end < 0:
                end = size
            line += count(b"\n", counted_to, start)
            counted_to = start
            self._handle_line(block[start:end], line + 1, scan, context)
            pos = end + 1
        self._block_progress(block, lines_before, scan)
        if self.keywordless:
            self._scan_keywordless(block, lines_before, scan)

    def _block_progress(self, block: bytes, lines_before: int, scan: FileScan) -> None:
        first = self.progress.search(block)
        if first is None:
            return
        last = None
        for window in (16384, len(block)):
            tail_start = max(0, len(block) - window)
            for last in self.progress.finditer(block, tail_start):
                pass
            if last is not None and last.start() >= first.start():
                break
        for found in {first.start(): first, last.start(): last}.values():
            start = block.rfind(b"\n", 0, found.start()) + 1
            end = block.find(b"\n", found.end())
            end = len(block) if end < 0 else end
            lineno = lines_before + block.count(b"\n", 0, start) + 1
            scan.progress.append(Progress(_where(scan, block[start:end], lineno)))

    def _scan_keywordless(self, block: bytes, lines_before: int, scan: FileScan) -> None:
        text = _decode(block)
        for rule in self.keywordless:
            try:
                for pattern in rule.compiled:
                    for found in pattern.finditer(text, timeout=0.25 * 4):
                        lineno = lines_before + text.count("\n", 0, found.start()) + 1
                        start = text.rfind("\n", 0, found.start()) + 1
                        end = text.find("\n", found.end())
                        raw = text[start:] if end < 0 else text[start:end]
                        groups = rule.match(strip_prefixes(raw).body)
                        if groups is not None:
                            where = _where(scan, raw.encode("utf-8", "replace"), lineno)
                            scan.hits.append(SignalHit(rule.id, where, tuple(groups.items())))
            except TimeoutError:
                scan.rule_timeouts.append(rule.id)

    def _handle_line(self, raw: bytes, lineno: int, scan: FileScan, context: _FileContext) -> None:
        where = _where(scan, raw, lineno)
        body = strip_prefixes(where.text).body
        key = (where.rank, where.local_rank)

        if "DDP launch:" in body and (fields := lineparse.parse_launch(body)):
            scan.launches.append(LaunchLine(where=where, **fields))
            return

        if (tokens := lineparse.env_tokens(body)) is not None:
            markers, pairs = tokens
            scan.env_markers += markers
            for first_where, record in context.env.feed(where, pairs):
                scan.envs.append(_env_print(first_where, record))
            return

        where = self._summary(body, where, scan, context)

        if body.startswith(lineparse.TRACEBACK_START):
            if not context.chained.get(key):
                context.traceback_signals[key] = []
                context.agent_traceback[key] = False
            context.chained[key] = False
        elif any(phrase in body for phrase in lineparse.CHAINED):
            context.chained[key] = True
        elif any(frame in body for frame in AGENT_FRAMES):
            context.agent_traceback[key] = True

        line_signals = []
        for rule in self.matchers:
            if not any(kw in body for kw in rule.keywords):
                continue
            try:
                groups = rule.match(body)
            except TimeoutError:
                scan.rule_timeouts.append(rule.id)
                continue
            if groups is None:
                continue
            scan.hits.append(SignalHit(rule.id, where, tuple(groups.items())))
            line_signals.append(rule.id)
            if key in context.traceback_signals:
                context.traceback_signals[key].append(rule.id)

        if (exc := lineparse.parse_exception(body)) is not None:
            signals = tuple(dict.fromkeys(context.traceback_signals.get(key, ())))
            scan.exceptions.append(PythonException(
                where, exc[0], exc[1], signals, tuple(line_signals),
                agent=context.agent_traceback.get(key, False)))

    def _summary(self, body: str, where: Where, scan: FileScan, context: _FileContext) -> Where:
        """torchrun's failure summary: a block of `key : value` lines per failed process."""
        if lineparse.SUMMARY_ROOT in body:
            context.in_root_cause = True
            context.summary_entry = {}
            return where
        if body.strip() == lineparse.SUMMARY_FAILURES:
            context.in_root_cause = False
            context.summary_entry = {}
            return where
        if (failed := lineparse.FAILED_LINE.search(body)) is not None:
            scan.exits.append(ProcessExit(where, None, int(failed["local_rank"]),
                                          int(failed["exitcode"])))
            return replace(where, local_rank=int(failed["local_rank"]))
        field_match = lineparse.SUMMARY_FIELD.fullmatch(body)
        if field_match is None:
            return where
        entry = context.summary_entry
        name, value = field_match["key"], field_match["value"].strip()
        if name == "time":
            entry.clear()
            entry["time"] = lineparse.parse_summary_time(value)
        elif name == "host":
            entry["host"] = value
        elif name == "rank":
            ranks = re.match(r"(-?\d+)(?:\s*\(local_rank:\s*(\d+)\))?", value)
            if ranks:
                entry["rank"] = int(ranks[1])
                entry["local_rank"] = int(ranks[2]) if ranks[2] else None
        elif name == "exitcode":
            code = re.match(r"-?\d+", value)
            scan.exits.append(ProcessExit(
                where, entry.get("rank"), entry.get("local_rank"),
                int(code[0]) if code else None, entry.get("host"), entry.get("time"),
                context.in_root_cause))
        if "rank" in entry:
            return replace(where, rank=entry["rank"], local_rank=entry.get("local_rank"))
        return where


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _where(scan: FileScan, raw: bytes, lineno: int) -> Where:
    text = _decode(raw[:MAX_EVIDENCE * 4]).rstrip("\r\n")[:MAX_EVIDENCE]
    stripped = strip_prefixes(text)
    return Where(scan.display, lineno, text, stripped.rank, stripped.local_rank, stripped.time)


def _env_print(where: Where, record: dict) -> EnvPrint:
    return EnvPrint(where, record.get("RANK"), record.get("LOCAL_RANK"), record.get("WORLD_SIZE"))


def _first_and_last(progress: list[Progress]) -> list[Progress]:
    if len(progress) <= 2:
        return progress
    return [progress[0], progress[-1]]
