"""files → events. Candidate lines are found in large blocks by literals (see LineFinder) and
confirmed by one compiled pattern; only those lines cost Python work. Progress lines are the bulk
of a training log: only the first of the file and the last of each block are looked for, and
never by matching lines one by one.
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
MAX_RULE_TIMEOUTS = 3  # a rule that ran away this often in one file is not tried again there

# Lines the native parsers want, whatever the catalogue holds. Each pattern comes with literals one
# of which every match holds: the literals find the lines fast, the pattern then decides.
CORE_CANDIDATES: tuple[tuple[tuple[bytes, ...], bytes], ...] = (
    ((b"DDP launch:",), rb"DDP launch:"),
    ((b"torchrun env",), rb"torchrun env"),
    ((b"LOCAL_RANK",), rb"LOCAL_RANK"),
    ((b"WORLD_SIZE",), rb"WORLD_SIZE"),
    ((b"RANK",), rb"(?<![A-Za-z_])RANK[ \t]*[=:]"),
    ((b"Traceback (most recent",), rb"Traceback \(most recent"),
    ((b"During handling of the above",), rb"During handling of the above"),
    ((b"The above exception was",), rb"The above exception was"),
    ((b"Error",), rb"Error"),
    ((b"Exception",), rb"Exception"),
    ((b"Interrupt",), rb"Interrupt"),
    ((b"SystemExit",), rb"SystemExit"),
    ((b"Root Cause",), rb"Root Cause"),
    ((b"Failures:",), rb"Failures:"),
    # torchrun's failure summary: `  exitcode  : 1 (pid: 6442)`
    (tuple(word + gap for word in (b"time", b"host", b"rank", b"exitcode", b"traceback")
           for gap in (b" ", b"\t")),
     rb"\b(?:time|host|rank|exitcode|traceback)[ \t]+:"),
    ((b"error_file:",), rb"error_file:"),
    ((b"(exitcode: ",), rb"\(exitcode: "),
    ((b'torch/distributed/run.py", line',), rb"torch/distributed/run\.py\", line"),
    ((b'bin/torchrun", line',), rb"bin/torchrun\", line"),
)
AGENT_FRAMES = ('torch/distributed/run.py", line', 'bin/torchrun", line')
MAX_RAW = MAX_EVIDENCE * 4  # bytes of a line that are ever looked at (see _where)

DEFAULT_PROGRESS = (
    r"(?i:\b(?:global[_ ])?steps?\b[ \t]*[:=#]?[ \t]*\[?\d+)",
    r"(?i:\biter(?:ation)?\b[ \t]*[:=#]?[ \t]*\[?\d+)",
    r"\d+%\|",
    r"""['"](?:loss|train_loss)['"][ \t]*:[ \t]*['"]?[-+]?[\d.]""",
    r"(?i:\bloss\b[ \t]*[:=][ \t]*[-+]?\d)",
)
# Every match of a default progress pattern holds one of these, in some letter case.
PROGRESS_LITERALS = (b"step", b"iter", b"loss", b"%|")

# Bytes from the most to the least common in logs: the first guess of which byte of a literal is
# rare, until the log itself has been sampled.
_COMMON_BYTES = (b" etaoinsrlcdhupmfg0123456789.:/-_=,[]()bywvk'\"ETAOINSRLCDHUPMFGxBYWVKjqz"
                 b"JQXZ|%<>#@!*&^~`{};?+$\\\t")
_STATIC_RANK = {b: i for i, b in enumerate(_COMMON_BYTES)}


# Words that make a line an error report, whatever progress-like words it holds.
NOT_PROGRESS = re.compile(rb'Error|Exception|Traceback|Warning|\bFile "')


def compile_progress(user_patterns: tuple[str, ...] = ()) -> re.Pattern[bytes]:
    return re.compile("|".join(f"(?:{p})" for p in (*DEFAULT_PROGRESS, *user_patterns)).encode())


def essential_literals(literals) -> tuple[bytes, ...]:
    """The literals worth looking for: a line holding one that contains a shorter one holds the
    shorter one too, and a literal with a newline is never inside a line."""
    kept: list[bytes] = []
    for lit in sorted({lit for lit in literals if lit and b"\n" not in lit}, key=len):
        if not any(short in lit for short in kept):
            kept.append(lit)
    return tuple(kept)


class LineFinder:
    """Finds the lines of a block that hold any of a set of literals, in about one pass.

    Each literal has a key byte: of its bytes, the one rarest in the log. One `bytes.translate`
    reduces a block to its key bytes and newlines, which also counts its lines. A literal is then
    looked for only when its key byte is in the block: at each place the key byte is when those
    are few, by searching the block for the literal when they are many (a "dense" literal, made
    only of bytes common in this stretch of log: the costly case). When key bytes turn common
    (the log changed style), keys are chosen again from a sample of the block.
    """

    FEW = 256          # key byte places checked one by one; above this, bytes.find
    SAMPLE = 1 << 14   # bytes sampled from a block to choose keys

    def __init__(self, literals):
        self.literals = essential_literals(literals)
        # re's literal-prefix search beats bytes.find on text full of the literal's bytes.
        self._search = {lit: re.compile(re.escape(lit)).search for lit in self.literals}
        self._alphabet = sorted({b for lit in self.literals for b in lit})
        self._distinct = [(lit, tuple(set(lit))) for lit in self.literals]
        self._choose_keys({}, 1)

    def _choose_keys(self, counts: dict[int, int], scale: float) -> None:
        rank = _STATIC_RANK
        score = {b: (counts.get(b, 0), -rank.get(b, len(rank)), b) for b in self._alphabet}
        by_key: dict[int, list[tuple[bytes, int]]] = {}
        for lit, distinct in self._distinct:
            key = min(distinct, key=score.__getitem__)
            by_key.setdefault(key, []).append((lit, lit.index(key)))
        # A key byte found far more often than its sample promised means the log changed.
        self._by_key = {k: (bytes((k,)), tuple(v), max(self.FEW, int(2 * scale * counts.get(k, 0))))
                        for k, v in sorted(by_key.items())}
        keep = set(by_key) | {ord("\n")}
        self._delete = bytes(b for b in range(256) if b not in keep)

    def _rekey(self, block: bytes) -> None:
        # The block's last quarter is the text that the next block most resembles.
        tail = len(block) * 3 // 4
        step = max(1, (len(block) - tail) // self.SAMPLE)
        sample = block[tail::step]
        scale = step * len(block) / max(1, len(block) - tail)
        self._choose_keys({b: sample.count(bytes((b,))) for b in self._alphabet}, scale)

    def scan(self, block: bytes) -> tuple[list[int], int]:
        """(sorted offsets of the lines that hold a literal, number of newlines in the block)"""
        kept = block.translate(None, self._delete)
        newlines = kept.count(b"\n")
        starts: set[int] = set()
        find, rfind, startswith = block.find, block.rfind, block.startswith
        stale = False
        if len(kept) <= 256:  # a small block: look only at the key bytes it holds
            keyed = [self._by_key[k] for k in set(kept) if k in self._by_key]
        else:
            keyed = [k for k in self._by_key.values() if k[0] in kept]
        for key, literals, limit in keyed:
            places = kept.count(key)
            stale = stale or places > limit
            if places <= self.FEW:
                pos = find(key)
                while pos >= 0:
                    for lit, at in literals:
                        if pos >= at and startswith(lit, pos - at):
                            starts.add(rfind(b"\n", 0, pos - at) + 1)
                    pos = find(key, pos + 1)
            else:
                for lit, _ in literals:
                    search = self._search[lit]
                    found = search(block)
                    while found is not None:
                        pos = found.start()
                        starts.add(rfind(b"\n", 0, pos) + 1)
                        end = find(b"\n", pos + len(lit))
                        if end < 0:
                            break
                        found = search(block, end + 1)
        if stale:
            self._rekey(block)  # for the next block: this one is done
        return sorted(starts) if len(starts) > 1 else list(starts), newlines


class HyperscanLineFinder:
    """LineFinder's contract from one pass of Hyperscan's multi-literal matcher (SIMD, in C):
    about twice as fast a scan. Used when the optional `hyperscan` package is installed (see
    make_line_finder); the lines it finds are the same, which tests check."""

    def __init__(self, literals):
        import hyperscan

        self.literals = essential_literals(literals)
        self._lengths = [len(lit) for lit in self.literals]
        self._database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        self._database.compile(expressions=list(self.literals), ids=list(range(len(self.literals))),
                               elements=len(self.literals), flags=0, literal=True)

    def scan(self, block: bytes) -> tuple[list[int], int]:
        """(sorted offsets of the lines that hold a literal, number of newlines in the block)"""
        starts: list[int] = []
        marked_to = -1  # the newline that ends the last line found: matches before it add nothing
        lengths, find, rfind = self._lengths, block.find, block.rfind

        def on_match(index, _start, end, _flags, _context):
            nonlocal marked_to
            begin = end - lengths[index]
            if begin > marked_to:  # matches come by end offset, so in line order
                starts.append(rfind(b"\n", 0, begin) + 1)
                newline = find(b"\n", begin)
                marked_to = len(block) if newline < 0 else newline

        if block:
            self._database.scan(block, match_event_handler=on_match)
        return starts, block.count(b"\n")


MATCHERS = ("python", "hyperscan")


def make_line_finder(literals, matcher: str | None = None):
    """The candidate-line finder: `hyperscan` if asked for or, by default, if installed; else
    the pure-Python LineFinder. LOGSCAN_MATCHER=python|hyperscan chooses when `matcher` is None."""
    matcher = matcher or os.environ.get("LOGSCAN_MATCHER") or "auto"
    if matcher not in (*MATCHERS, "auto"):
        raise ValueError(f"unknown matcher {matcher!r}: use one of {', '.join(MATCHERS)}")
    if matcher != "python":
        try:
            return HyperscanLineFinder(literals)
        except Exception:  # not installed, or a build that cannot compile: the default still works
            if matcher == "hyperscan":
                raise
    return LineFinder(literals)


def _lines_forward(block: bytes, count: int):
    start, size = 0, len(block)
    for _ in range(count):
        if start >= size:
            return
        end = block.find(b"\n", start)
        end = size if end < 0 else end
        yield start, end
        start = end + 1


def _lines_backward(block: bytes, count: int):
    end = len(block) - 1 if block.endswith(b"\n") else len(block)
    for _ in range(count):
        if end < 0:
            return
        start = block.rfind(b"\n", 0, end) + 1
        yield start, end
        end = start - 1


class ProgressFinder:
    """The first and the last progress line of a block, without matching lines one by one.

    In a training log the lines at either end of a block are usually progress lines, so those
    are tried first. Otherwise the default patterns are found through their literals (in a
    lower-cased copy) and user patterns by searching the block. A progress line is a line in
    which some pattern matches.
    """

    LOOK = 8

    def __init__(self, user_patterns: tuple[str, ...] = ()):
        self.pattern = compile_progress(user_patterns)
        self.user = (re.compile("|".join(f"(?:{p})" for p in user_patterns).encode())
                     if user_patterns else None)

    def is_progress_line(self, line: bytes, pattern: re.Pattern[bytes] | None = None) -> bool:
        """Some pattern matches, on a `\r`-segment that does not tell of an error: an exception
        "... at step 12" is no progress, and a bar may share its line with the traceback after it."""
        pattern = pattern or self.pattern
        if pattern.search(line) is None:
            return False
        if NOT_PROGRESS.search(line) is None:
            return True
        return any(pattern.search(segment) is not None and NOT_PROGRESS.search(segment) is None
                   for segment in line.split(b"\r"))

    def _is_progress(self, block: bytes, start: int, end: int) -> bool:
        if self.pattern.search(block, start, end) is None:
            return False
        return self.is_progress_line(block[start:end])

    def first(self, block: bytes) -> int | None:
        for start, end in _lines_forward(block, self.LOOK):
            if self._is_progress(block, start, end):
                return start
        found = [s for s in self._by_literal(block, forward=True)]
        found += self._by_user(block, forward=True)
        return min(found, default=None)

    def last(self, block: bytes) -> int | None:
        for start, end in _lines_backward(block, self.LOOK):
            if self._is_progress(block, start, end):
                return start
        found = [s for s in self._by_literal(block, forward=False)]
        found += self._by_user(block, forward=False)
        return max(found, default=None)

    def _line_of(self, block: bytes, pos: int) -> tuple[int, int]:
        start = block.rfind(b"\n", 0, pos) + 1
        end = block.find(b"\n", pos)
        return start, len(block) if end < 0 else end

    def _by_literal(self, block: bytes, forward: bool) -> list[int]:
        low = block.lower()
        found = []
        for lit in PROGRESS_LITERALS:
            pos = low.find(lit) if forward else low.rfind(lit)
            while pos >= 0:
                start, end = self._line_of(block, pos)
                if self._is_progress(block, start, end):
                    found.append(start)
                    break
                pos = low.find(lit, end + 1) if forward else low.rfind(lit, 0, start)
        return found

    def _by_user(self, block: bytes, forward: bool) -> list[int]:
        if self.user is None:
            return []
        found = []
        for match in self.user.finditer(block):
            start, end = self._line_of(block, match.start())
            if self.is_progress_line(block[start:end], self.user):
                found.append(start)
                if forward:
                    break
        return found[-1:]


@dataclass
class _FileContext:
    """Parser state that spans lines of one file."""

    env: lineparse.EnvAssembler = field(default_factory=lineparse.EnvAssembler)
    traceback_signals: dict = field(default_factory=dict)
    agent_traceback: dict = field(default_factory=dict)
    chained: dict = field(default_factory=dict)
    in_root_cause: bool = False
    summary_entry: dict = field(default_factory=dict)
    timeouts: dict = field(default_factory=dict)  # rule id → times it ran away in this file


@dataclass
class Survey:
    """What one pass over a file, or over a piece of it (line_ranges), found before any line
    was interpreted: pieces can be surveyed in parallel, then merged in order. Line indexes
    count from the piece's first line, from 0; raw lines keep their first MAX_RAW bytes."""

    newlines: int = 0
    ends_with_newline: bool = True
    candidates: list = field(default_factory=list)      # (index, raw line)
    first_progress: tuple[int, bytes] | None = None
    last_progress: tuple[int, bytes] | None = None
    head: bytes | None = None                           # the first line
    tail: bytes | None = None                           # the last line with text, of the last block
    keywordless: list = field(default_factory=list)     # (rule id, index, raw line, groups)
    rule_timeouts: list = field(default_factory=list)
    state: ReadState = field(default_factory=ReadState)
    read_error: str | None = None


class _LineNumbers:
    """Line numbers of increasing offsets in one block, counting newlines from the nearer end."""

    def __init__(self, block: bytes, newlines: int, lines_before: int):
        self.block, self.newlines, self.lines_before = block, newlines, lines_before
        self.pos, self.before = 0, 0

    def of(self, offset: int) -> int:
        """1-based number of the line that starts at `offset`."""
        if offset - self.pos <= len(self.block) - offset:
            self.before += self.block.count(b"\n", self.pos, offset)
        else:
            self.before = self.newlines - self.block.count(b"\n", offset)
        self.pos = offset
        return self.lines_before + self.before + 1


class Scanner:
    def __init__(self, catalogue: Catalogue, progress_patterns: tuple[str, ...] = (),
                 matcher: str | None = None):
        self.matchers = [r for r in catalogue.matchers if r.keywords]
        self.keywordless = [r for r in catalogue.matchers if not r.keywords]
        keywords = sorted({kw.encode() for r in self.matchers for kw in r.keywords})
        self.candidates = re.compile(
            b"|".join((*(p for _, p in CORE_CANDIDATES), *(re.escape(k) for k in keywords))))
        self.finder = make_line_finder(
            [*(l for lits, _ in CORE_CANDIDATES for l in lits), *keywords], matcher)
        self.progress = ProgressFinder(tuple(progress_patterns))

    def scan_file(self, path: str, display: str, chunk_size: int = CHUNK_SIZE,
                  content: tuple[bytes, float] | None = None) -> FileScan:
        """`content`: (the whole file, its mtime), when it was read already (see discovery)."""
        return self.merge(path, display, [self.survey(path, chunk_size, content=content)])

    def survey(self, path: str, chunk_size: int = CHUNK_SIZE,
               content: tuple[bytes, float] | None = None, start: int = 0,
               end: int | None = None) -> Survey:
        """Find the candidate and progress lines of a file, or of the piece [start, end) of it."""
        found = Survey()
        state = found.state
        if content is not None:
            content, state.mtime = content
        timeouts: dict[str, int] = {}
        last_block = None
        try:
            for block in line_blocks(path, state, chunk_size, content=content, start=start,
                                     end=end):
                if last_block is None:
                    newline = block.find(b"\n")
                    found.head = block[:MAX_RAW] if newline < 0 else block[:min(newline, MAX_RAW)]
                found.newlines += self._survey_block(block, found, timeouts)
                last_block = block
        except OSError as exc:
            found.read_error = exc.strerror or str(exc)
        if last_block is not None:
            found.ends_with_newline = last_block.endswith(b"\n")
            tail = last_block.rstrip(b"\n")
            found.tail = tail[tail.rfind(b"\n") + 1:][:MAX_RAW]
        return found

    def _survey_block(self, block: bytes, found: Survey, timeouts: dict) -> int:
        """Note the block's candidate and progress lines; return its number of newlines."""
        starts, newlines = self.finder.scan(block)
        numbers = _LineNumbers(block, newlines, found.newlines)
        confirm = self.candidates.search
        size = len(block)
        for start in starts:
            end = block.find(b"\n", start)
            end = size if end < 0 else end
            if confirm(block, start, end) is not None:
                found.candidates.append((numbers.of(start) - 1,
                                         block[start:min(end, start + MAX_RAW)]))
        first = None
        if found.first_progress is None:
            first = self.progress.first(block)
            if first is not None:
                found.first_progress = self._line_at(block, first, newlines, found.newlines)
        if found.first_progress is not None:
            last = self.progress.last(block)
            if last is not None:
                found.last_progress = (found.first_progress if last == first
                                       else self._line_at(block, last, newlines, found.newlines))
        if self.keywordless:
            self._survey_keywordless(block, found, timeouts)
        return newlines

    @staticmethod
    def _line_at(block: bytes, start: int, newlines: int, before: int) -> tuple[int, bytes]:
        end = block.find(b"\n", start)
        end = len(block) if end < 0 else end
        index = _LineNumbers(block, newlines, before).of(start) - 1
        return index, block[start:min(end, start + MAX_RAW)]

    def _survey_keywordless(self, block: bytes, found: Survey, timeouts: dict) -> None:
        text = _decode(block)
        for rule in self.keywordless:
            if timeouts.get(rule.id, 0) >= MAX_RULE_TIMEOUTS:
                continue
            try:
                for pattern in rule.compiled:
                    for match in pattern.finditer(text, timeout=0.25 * 4):
                        index = found.newlines + text.count("\n", 0, match.start())
                        start = text.rfind("\n", 0, match.start()) + 1
                        end = text.find("\n", match.end())
                        raw = text[start:] if end < 0 else text[start:end]
                        groups = rule.match(strip_prefixes(raw).body)
                        if groups is not None:
                            found.keywordless.append((rule.id, index, raw.encode("utf-8", "replace"),
                                                      tuple(groups.items())))
            except TimeoutError:
                found.rule_timeouts.append(rule.id)
                timeouts[rule.id] = timeouts.get(rule.id, 0) + 1

    def merge(self, path: str, display: str, surveys: list[Survey]) -> FileScan:
        """Interpret, in order, what the surveys of a file's pieces found: one FileScan."""
        scan = FileScan(path=path, display=display)
        context = _FileContext()
        offset = 0
        first = last = None
        late_hits = []
        for found in surveys:
            for index, raw in found.candidates:
                self._handle_line(raw, offset + index + 1, scan, context)
            for rule_id, index, raw, groups in found.keywordless:
                late_hits.append(SignalHit(rule_id, _where(scan, raw, offset + index + 1), groups))
            if found.first_progress is not None:
                if first is None:
                    first = (offset + found.first_progress[0] + 1, found.first_progress[1])
                last = (offset + found.last_progress[0] + 1, found.last_progress[1])
            scan.rule_timeouts += found.rule_timeouts
            if scan.read_error is None:
                scan.read_error = found.read_error
            offset += found.newlines
        if late_hits:  # in line order among the others, wherever pieces began
            scan.hits = sorted(scan.hits + late_hits, key=lambda h: h.where.line)
        for where, record in context.env.flush():
            scan.envs.append(_env_print(where, record))
        final = surveys[-1]
        if final.tail is not None and not final.ends_with_newline:
            offset += 1
        scan.lines = offset
        state = surveys[0].state
        scan.size = sum(found.state.size for found in surveys)
        scan.truncated = state.truncated
        scan.compressed = state.compressed
        scan.mtime = state.mtime
        if scan.mtime is None:
            try:
                scan.mtime = os.stat(path).st_mtime
            except OSError:
                pass
        self._edges(scan, surveys[0].head, next(
            (f.tail for f in reversed(surveys) if f.tail is not None), None), offset)
        if first is not None:
            scan.progress = [Progress(_where(scan, first[1], first[0]))]
            if last[0] != first[0]:
                scan.progress.append(Progress(_where(scan, last[1], last[0])))
        return scan

    def _edges(self, scan: FileScan, head: bytes | None, tail: bytes | None,
               line_count: int) -> None:
        if head is not None:
            scan.first_time = strip_prefixes(_decode(head)).time
        if tail is not None:
            text = _decode(tail)
            stripped = strip_prefixes(text)
            scan.last_time = stripped.time
            scan.last_line = Where(scan.display, line_count, text[:MAX_EVIDENCE],
                                   stripped.rank, stripped.local_rank, stripped.time)

    def _timed_out(self, rule: Rule, scan: FileScan, context: _FileContext) -> None:
        scan.rule_timeouts.append(rule.id)
        context.timeouts[rule.id] = context.timeouts.get(rule.id, 0) + 1

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
            if context.timeouts.get(rule.id, 0) >= MAX_RULE_TIMEOUTS:
                continue
            try:
                groups = rule.match(body)
            except TimeoutError:
                self._timed_out(rule, scan, context)
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
