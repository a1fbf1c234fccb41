"""Files → events: survey a file (or a piece of one) for its candidate and progress lines, then
merge the surveys of its pieces, in order, through the line interpreter.

survey (may run in worker processes, on pieces of a big file): logscan.scan.finders finds, in large
blocks, the lines that a native parser (declared in logscan.scan.lineparse) or a catalogue rule
may need (Hyperscan, with the exact native patterns and the rules' raw covers; or the
pure-Python fallback, through their literals). A line is kept, numbered, only when it can tell the
interpreter something (interpret.LineJudge): a line that merely holds a keyword, or a native
literal it does not parse as, is never kept. Rules without keywords are run over each block's text.
merge: logscan.scan.interpret.FileInterpreter interprets the kept lines in file order.
"""

from __future__ import annotations

import os
import re
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property

from logscan.scan import lineparse, progress
from logscan.catalogue import Catalogue
from logscan.scan.events import FileScan
from logscan.scan.finders import USER_PROGRESS_FLAG, ProgressFinder, make_line_finder
from logscan.scan.glued import record_spans
from logscan.scan.hyperscan_matcher import unlike_its_body
from logscan.limits import BLOCK_PATTERN_TIMEOUT
from logscan.scan.interpret import MAX_RAW, FileInterpreter, LineJudge, RuleTimeouts
from logscan.scan.lineparse import Candidates
from logscan.scan.prefixes import strip_prefixes

LAST_ERROR_HEAD = lineparse.LAST_ERROR_HEAD.encode()
from logscan.files.records import join_partial_records
from logscan.files.reader import CHUNK_SIZE, MAX_LINE, ReadState, line_blocks


def wanted_lines(keywords) -> list[Candidates]:
    """Every line the scan must look at: those the native parsers declared (native_lines), then
    each catalogue keyword's, a keyword with a quote or a backslash also as a JSON string."""
    return native_lines() + _with_json_forms(
        [Candidates((k,), re.escape(k), "catalogue") for k in sorted(set(keywords))])


def native_lines() -> list[Candidates]:
    """The lines the native parsers declared (lineparse.CANDIDATES, read now so a parser
    registered later is included); a literal that holds a quote or a backslash also as a JSON
    string holds it (a container runtime's json-file record, unwrapped only once the line is
    kept)."""
    return _with_json_forms(list(lineparse.CANDIDATES))


def _with_json_forms(wanted: list[Candidates]) -> list[Candidates]:
    return wanted + [escaped for c in wanted if (escaped := _as_json_string(c)) is not None]


def _keyword_literals(keywords) -> tuple[bytes, ...]:
    """A rule's keywords as bytes, each with a quote or a backslash also as a JSON string."""
    literals = [kw.encode() for kw in keywords]
    return tuple(dict.fromkeys(literals + [
        lit.replace(b"\\", b"\\\\").replace(b'"', b'\\"') for lit in literals]))


def _as_json_string(wanted: Candidates) -> Candidates | None:
    literals = tuple(lit.replace(b"\\", b"\\\\").replace(b'"', b'\\"') for lit in wanted.literals)
    if literals == wanted.literals:
        return None
    return Candidates(literals, b"|".join(re.escape(lit) for lit in literals), wanted.parser)


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
    tail_lines: list = field(default_factory=list)      # the last TAIL_LINES lines, blank ones too
    keywordless: list = field(default_factory=list)     # (rule id, index, raw line, groups)
    rule_timeouts: list = field(default_factory=list)
    state: ReadState = field(default_factory=ReadState)
    read_error: str | None = None
    # (index, copies): a kept line that stands for this many lines that tell the same (_RepeatRuns)
    repeats: list = field(default_factory=list)
    # the indexes of the kept lines a native pattern found, ascending (merging pieces judges them again)
    natives: list = field(default_factory=list)
    # how many surveyed pieces this is (logscan.sweep.reading.concat joins them)
    pieces: int = 1
# Lines told apart when collapsing repeats (_RepeatRuns): past this many, those known are
# forgotten, and a copy is kept again.
REPEATS_KEPT = 4096

class _RepeatRuns:
    """A line that tells something only through rules, repeated with nothing a native pattern
    found between (a warning printed every step), keeps its first and its latest copy; the
    copies between are dropped. So does an exception line that says nothing else (a handled
    error the script prints every step) repeated with no other kept line between. The same rules' hits from the same process mean the same to the
    interpreter (the same body, or a step line whose number varies outside what the rules
    capture): a copy between adds nothing but memory and time. Positions in the survey's
    candidates, by what makes lines the same (LineJudge.judge); None marks a dropped copy."""

    def __init__(self):
        self.runs: dict[tuple, tuple[int, int | None]] = {}
        # (what makes it the same, first, latest) of the native line just kept, when the
        # judge says copies of it right after it may be dropped (LineJudge.judge)
        self.native_run: tuple | None = None
        self.dropped = 0
        self.natives: set[int] = set()
        # candidate position of a run's latest copy → the copies it stands for (itself and the
        # ones dropped before it): a report counts a repeated line's copies without keeping them
        self.copies: dict[int, int] = {}

    def keep(self, candidates: list, index: int, raw: bytes, same: tuple | None,
             native: bool = False, weight: int = 1) -> None:
        """`weight`: the lines this one already stands for (a kept copy of a piece's run)."""
        if native:
            self.natives.add(index)
        if weight > 1:
            self.copies[len(candidates)] = weight
        if native:  # what follows a native line may mean something else again
            if self.runs:
                self.runs.clear()
            run, self.native_run = self.native_run, None
            if same is not None and run is not None and run[0] == same \
                    and (run[2] if run[2] is not None else run[1]) == len(candidates) - 1:
                # the same exception line again, right after the last: kept as a run
                self.runs[same] = run[1:]
                self._repeat(candidates, same, weight)
                self.native_run = (same, *self.runs.pop(same))
            elif same is not None:
                self.native_run = (same, len(candidates), None)
            candidates.append((index, raw))
            return
        self.native_run = None
        if same is None:
            candidates.append((index, raw))
            return
        seen = self.runs.get(same)
        if seen is None:
            if len(self.runs) >= REPEATS_KEPT:
                self.runs.clear()
            self.runs[same] = (len(candidates), None)
        else:
            self._repeat(candidates, same, weight)
        candidates.append((index, raw))

    def _repeat(self, candidates: list, same: tuple, weight: int = 1) -> None:
        """A copy of the run `same` (standing for `weight` lines) is about to be appended: the
        run's latest copy before it is dropped, and counted in it."""
        first, latest = self.runs[same]
        copies = weight
        if latest is not None:
            candidates[latest] = None
            self.dropped += 1
            copies += self.copies.pop(latest, 1)
        if copies > 1:
            self.copies[len(candidates)] = copies
        self.runs[same] = (first, len(candidates))

    def settle(self, found: "Survey") -> None:
        """The survey's candidates without the dropped copies, once it is done."""
        found.repeats = [(found.candidates[position][0], copies)
                         for position, copies in sorted(self.copies.items())]
        if self.dropped:
            found.candidates = [c for c in found.candidates if c is not None]
        found.natives = [index for index, _ in found.candidates if index in self.natives]


def _coalesced(surveys: list[Survey], judge) -> Survey:
    """The kept lines of a file's pieces, in order and numbered in the file, as one survey of the
    whole file keeps them: a run of repeated lines that went on from one piece into the next is
    one run (its first copy and its latest, standing for all of them)."""
    runs, out, offset = _RepeatRuns(), Survey(), 0
    for found in surveys:
        copies, natives = dict(found.repeats), set(found.natives)
        for index, raw in found.candidates:
            native = index in natives
            runs.keep(out.candidates, offset + index, raw, judge(raw, native)[1], native, copies.get(index, 1))
        offset += found.newlines
    runs.settle(out)
    return out


# Lines kept of a file's end: what its processes printed last, before torchrun's teardown
# (a death signal, a SIGTERM to each process, its own traceback) followed.
TAIL_LINES = 200


def _last_lines(kept: list[bytes], block: bytes) -> list[bytes]:
    """The last TAIL_LINES lines read so far, once `block` (whole lines, the file's last one
    perhaps without its newline) is read after the lines `kept`; each line as the scan keeps
    lines. Only the block's end is split, so a big block costs little."""
    lines = block.rsplit(b"\n", TAIL_LINES + 1)
    if len(lines) == TAIL_LINES + 2:
        lines = lines[1:]  # the block's earlier lines, left unsplit
    if block.endswith(b"\n"):
        lines.pop()  # nothing after the last newline
    return (kept + [_raw_line(line, 0, len(line)) for line in lines])[-TAIL_LINES:]


def _raw_line(block: bytes, start: int, end: int) -> bytes:
    """The line [start, end) of `block` as kept: its first MAX_RAW bytes, or, of a longer line
    redrawn with \r (a progress bar), its head and its tail joined by \r, as the reader keeps
    an over-long line: the prefixes are at the start, what was last on screen at the end."""
    if end - start <= MAX_RAW:
        return block[start:end]
    if block.find(b"\r", start, end) < 0:
        return block[start:start + MAX_RAW]
    half = (MAX_RAW - 1) // 2  # the kept line, \r included, is at most MAX_RAW bytes
    return block[start:start + half] + b"\r" + block[end - half:end]


def _with_glued(block: bytes, starts: list[int], natives: list[bool | None], glued: set[int]
                ) -> tuple[list[int], list[bool | None]]:
    """The lines found, and those that hold a glued record no pattern found: a rule's cover
    anchored at a body's start finds a record only at its line's start (raw_patterns), so a
    record glued after other text is cut out and judged as a line of its own here. A line
    added is marked None: whether a native pattern matches it is asked. A line whose body is
    not its bytes (colour codes, `\r`, a Docker record) was found through the keywords already,
    as every matcher finds it."""
    missing = [start for start in glued.difference(starts)
               if record_spans(line := block[start:_line_end(block, start)]) is not None
               and not unlike_its_body(line)]
    if not missing:
        return starts, natives
    marks = dict(zip(starts, natives))
    marks.update(dict.fromkeys(missing))  # None: no pattern said whether it is native
    ordered = sorted(marks)
    return ordered, [marks[start] for start in ordered]


def _line_end(block: bytes, start: int) -> int:
    end = block.find(b"\n", start)
    return len(block) if end < 0 else end


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
    """Surveys files for the lines worth interpreting, and merges surveys into FileScans."""

    def __init__(self, catalogue: Catalogue, progress_patterns: tuple[str, ...] = (),
                 matcher: str | None = None):
        self.matchers = [r for r in catalogue.matchers if r.keywords]
        self.keywordless = [r for r in catalogue.matchers if not r.keywords]
        native = native_lines()
        rules = [(r.patterns, _keyword_literals(r.keywords)) for r in self.matchers]
        self.finder = make_line_finder(native, matcher, rules)
        # The rules whose patterns ran away, over every file this scanner reads: one budget
        # for the judge of lines and the interpreter (limits.MAX_RULE_TIMEOUTS, RUNAWAY_BUDGET)
        self.rule_timeouts = RuleTimeouts()
        self.judge = LineJudge(self.matchers, self.rule_timeouts)
        self.progress = ProgressFinder(tuple(progress_patterns))

    # The two joined patterns below are compiled when first asked for (`re` takes 30-60 ms over
    # them, a fifth of a small scan): with Hyperscan's exact marks most scans never ask.

    @cached_property
    def candidates(self) -> re.Pattern[bytes]:
        """Every candidate pattern and keyword as one: what the pure-Python finder's literals
        stand for (bench/reach_python.py names the lines by it). Multiline: `^` and `$` are a
        line's ends, as for Hyperscan (logscan.scan.hyperscan_matcher)."""
        wanted = wanted_lines(kw.encode() for r in self.matchers for kw in r.keywords)
        return re.compile(b"|".join(c.pattern for c in wanted), re.MULTILINE)

    @cached_property
    def native(self) -> re.Pattern[bytes]:
        """Which lines the finder gave a native pattern matches: the judge of what a line can
        tell (LineJudge) reads those as the parsers do, the others only for the rules."""
        return re.compile(b"|".join(c.pattern for c in native_lines()), re.MULTILINE)

    def scan_file(self, path: str, display: str, chunk_size: int = CHUNK_SIZE,
                  content: tuple[bytes, float] | None = None,
                  local_rank: int | None = None) -> FileScan:
        """`content`: (the whole file, its mtime), when it was read already (see discovery);
        `local_rank`: the process whose output the whole file is (a --log-dir copy)."""
        return self.merge(path, display, [self.survey(path, chunk_size, content=content)],
                          local_rank)

    def survey(self, path: str, chunk_size: int = CHUNK_SIZE,
               content: tuple[bytes, float] | None = None, start: int = 0,
               end: int | None = None) -> Survey:
        """Find the candidate and progress lines of a file, or of the piece [start, end) of it."""
        found = Survey()
        state = found.state
        if content is not None:
            content, state.mtime = content
        timeouts = self.rule_timeouts
        repeats = _RepeatRuns()
        recent: deque[tuple[bytes, int]] = deque()
        held = 0
        last_block = last_text_block = None
        read = progress.add
        try:
            blocks = line_blocks(path, state, chunk_size, content=content, start=start, end=end)
            for block in join_partial_records(blocks, MAX_LINE):
                if last_block is None:
                    newline = block.find(b"\n")
                    found.head = block[:MAX_RAW] if newline < 0 else block[:min(newline, MAX_RAW)]
                newlines = self._survey_block(block, found, timeouts, repeats)
                read(len(block))
                found.newlines += newlines
                # The blocks that hold the last TAIL_LINES lines, split once at the end
                recent.append((block, newlines))
                held += newlines
                while held - recent[0][1] > TAIL_LINES:
                    held -= recent.popleft()[1]
                last_block = block
                # not a block of blank lines alone (CRLF ones too), counted in C without a copy
                if newlines != len(block) and newlines + block.count(b"\r") != len(block):
                    last_text_block = block
        except OSError as exc:
            found.read_error = exc.strerror or str(exc)
        repeats.settle(found)
        for block, _ in recent:
            found.tail_lines = _last_lines(found.tail_lines, block)
        if last_block is not None:
            found.ends_with_newline = last_block.endswith(b"\n")
        if last_text_block is not None:
            # The last line with text: blank lines after it (a summary's trailing newline) are
            # not where the log ended, whichever block they came in.
            tail = last_text_block.rstrip(b"\r\n")
            found.tail = tail[tail.rfind(b"\n") + 1:][:MAX_RAW]
        return found

    def _survey_block(self, block: bytes, found: Survey, timeouts: RuleTimeouts,
                      repeats: _RepeatRuns) -> int:
        """Note the block's candidate and progress lines; return its number of newlines."""
        if self.finder.marks_native:
            starts, natives, glued, newlines = self.finder.scan_marked(block)
            trust = self.finder.exact  # a native mark is a native pattern's match
            if glued:
                starts, natives = _with_glued(block, starts, natives, glued)
        else:
            (starts, newlines), natives, trust = self.finder.scan(block), None, False
            glued = None  # the pure-Python finder marks none: each line found is looked at
        numbers = _LineNumbers(block, newlines, found.newlines)
        judge = self.judge.judge
        size = len(block)
        for i, start in enumerate(starts):
            end = block.find(b"\n", start)
            end = size if end < 0 else end
            records = (record_spans(block[start:end]) if glued is None or start in glued
                       else None)
            if records is not None:
                self._survey_records(block, start, records, numbers.of(start) - 1, found, repeats)
                continue
            # exact marks are the native patterns' own answer; else the pattern is asked
            is_native = (natives[i] if trust and natives[i] is not None
                         else self.native.search(block, start, end) is not None)
            raw = _raw_line(block, start, end)
            tells, same = judge(raw, is_native)
            if tells:
                repeats.keep(found.candidates, numbers.of(start) - 1, raw, same, is_native)
                if raw.rstrip().endswith(LAST_ERROR_HEAD) and end + 1 < size and (
                        i + 1 == len(starts) or starts[i + 1] != end + 1):
                    # the message a `Last error:` line announces is on the next line, with no word
                    # a rule's keyword finds: it is read as that line's continuation
                    after = block.find(b"\n", end + 1)
                    repeats.keep(found.candidates, numbers.of(start),
                                 _raw_line(block, end + 1, size if after < 0 else after), None)
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
        found.rule_timeouts += self.judge.ran_away()
        if self.progress.timeouts:
            found.rule_timeouts += (f"{USER_PROGRESS_FLAG} {pattern!r}"
                                    for pattern in self.progress.timeouts)
            self.progress.timeouts.clear()
        if self.keywordless:
            self._survey_keywordless(block, found, timeouts)
        return newlines

    def _survey_records(self, block: bytes, start: int, records: list[tuple[int, int]],
                        index: int, found: Survey, repeats: _RepeatRuns) -> None:
        """Keep each record of a line that holds several glued together (logscan.scan.glued) as
        if it were a line of its own, numbered as the line: its own prefixes, its own meaning."""
        native, judge = self.native.search, self.judge.judge
        for record_start, record_end in records:
            raw = _raw_line(block, start + record_start, start + record_end)
            is_native = native(raw) is not None
            tells, same = judge(raw, is_native)
            if tells:
                repeats.keep(found.candidates, index, raw, same, is_native)

    @staticmethod
    def _line_at(block: bytes, start: int, newlines: int, before: int) -> tuple[int, bytes]:
        end = block.find(b"\n", start)
        end = len(block) if end < 0 else end
        return _LineNumbers(block, newlines, before).of(start) - 1, _raw_line(block, start, end)

    def _survey_keywordless(self, block: bytes, found: Survey, timeouts: RuleTimeouts) -> None:
        text = block.decode("utf-8", "replace")
        for rule in self.keywordless:
            if timeouts.given_up(rule.id):
                continue
            allowed = timeouts.timeout(BLOCK_PATTERN_TIMEOUT)
            try:
                for pattern in rule.compiled:
                    counted = lines = 0  # newlines before `counted`: matches come in order
                    for match in pattern.finditer(text, timeout=allowed):
                        lines += text.count("\n", counted, match.start())
                        counted = match.start()
                        index = found.newlines + lines
                        start = text.rfind("\n", 0, match.start()) + 1
                        end = text.find("\n", match.end())
                        raw = text[start:] if end < 0 else text[start:end]
                        groups = rule.match(strip_prefixes(raw).body, timeouts.timeout())
                        if groups is not None:
                            found.keywordless.append((rule.id, index, raw.encode("utf-8", "replace"),
                                                      tuple(groups.items())))
            except TimeoutError:
                found.rule_timeouts.append(rule.id)
                timeouts.ran_away(rule.id, allowed)

    def merge(self, path: str, display: str, surveys: list[Survey],
              local_rank: int | None = None) -> FileScan:
        """Interpret, in order, what the surveys of a file's pieces found: one FileScan."""
        interpreter = FileInterpreter(self.matchers, path, display, self.rule_timeouts, local_rank)
        scan = interpreter.scan
        offset = 0
        first = last = None
        kept = _coalesced(surveys, self.judge.judge) if sum(found.pieces for found in surveys) > 1 else None
        if kept is not None:
            for index, raw in kept.candidates:
                interpreter.line(raw, index + 1)
            scan.repeats.update((index + 1, copies) for index, copies in kept.repeats)
        for found in surveys:
            if kept is None:
                for index, raw in found.candidates:
                    interpreter.line(raw, offset + index + 1)
                scan.repeats.update((offset + index + 1, copies) for index, copies in found.repeats)
            for rule_id, index, raw, groups in found.keywordless:
                interpreter.late_hit(rule_id, raw, offset + index + 1, groups)
            if found.first_progress is not None:
                if first is None:
                    first = (offset + found.first_progress[0] + 1, found.first_progress[1])
                last = (offset + found.last_progress[0] + 1, found.last_progress[1])
            scan.rule_timeouts += found.rule_timeouts
            if scan.read_error is None:
                scan.read_error = found.read_error
            offset += found.newlines
        interpreter.finish()
        final = surveys[-1]
        if not final.ends_with_newline:
            offset += 1  # its last line, unterminated (text or not: a lone `\r` is a line too)
        scan.lines = offset
        state = surveys[0].state
        scan.size = sum(found.state.size for found in surveys)
        scan.truncated = state.truncated
        scan.leading_nul = state.leading_nul
        scan.expansion = state.expansion
        scan.compressed = state.compressed
        scan.mtime = state.mtime
        if scan.mtime is None:
            try:
                scan.mtime = os.stat(path).st_mtime
            except OSError:
                pass
        ending = next((f.tail for f in reversed(surveys) if f.tail is not None), None)
        # Pieces are whole lines: the file's last lines are the last of the pieces' last lines.
        tail_lines = [line for found in surveys for line in found.tail_lines][-TAIL_LINES:]
        interpreter.edges(surveys[0].head, ending, offset, tail_lines)
        if first is not None:
            interpreter.progress(first, last)
        return scan
