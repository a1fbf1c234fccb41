"""Properties of the parser, checked on generated input (hypothesis).

- It never raises, whatever bytes a file holds.
- Candidate and progress lines are found exactly: both candidate-line matchers (Hyperscan with
  the exact native patterns and the rules' raw covers, the pure-Python fallback with their
  literals) and the block-edge progress search keep the same lines as matching every line one
  by one would;
  every line a native parser declares (lineparse.CANDIDATES) is fed to the interpreter.
- A job's diagnosis depends neither on the order its files are given in nor on where read
  blocks happen to end (inside a line, a traceback, an interleaved env print), nor on how a big
  file is split into pieces for several processes.
- Env prints of several ranks, interleaved as whole lines or at the `torchrun env:` prefix as
  in real logs, are all recovered.

Generated text is built from REAL lines of sample_logs/ (listed below) and SYNTHETIC junk.
"""

from __future__ import annotations

import atexit
import dataclasses
import gzip
import re
import shutil
import sys
import tempfile
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import POST_MORTEM_NOW, SAMPLES, sample_dirs
from logscan.catalogue import Catalogue, load_catalogue
from logscan.errors import ConfigError
from logscan.scan import finders
from logscan.scan.finders import LineFinder, ProgressFinder, make_line_finder
from logscan.scan.glued import record_spans
from logscan.scan.interpret import MAX_RAW, LineJudge
from logscan.scan.lineparse import CANDIDATES as CORE_CANDIDATES, Candidates
from logscan.files.reader import is_gzip
from logscan.scan.scanner import Scanner

CATALOGUE = load_catalogue()
SCANNER = Scanner(CATALOGUE, matcher="python")
try:  # the default matcher, tested against the pure-Python fallback where it is installed
    FAST_SCANNER = Scanner(CATALOGUE, matcher="hyperscan")
except ConfigError:
    FAST_SCANNER = None
needs_hyperscan = pytest.mark.skipif(FAST_SCANNER is None, reason="hyperscan is not installed")
FAST = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def sample_lines() -> list[bytes]:
    """Every distinct line of the sample logs, REAL."""
    lines = set()
    for path in SAMPLES.rglob("*"):
        if path.is_file() and "generate" not in path.parts and ".log" in path.name:
            data = path.read_bytes()
            lines.update((gzip.decompress(data) if is_gzip(data) else data).splitlines())
    return sorted(lines)


# The lines properties are drawn from: a bounded set, for speed. Lines looked for by what they say
# are looked for in all of them (ALL_LINES): a new sample's lines must not push them out.
ALL_LINES = sample_lines()
REAL_LINES = ALL_LINES[:4000]
WORK = Path(tempfile.mkdtemp(prefix="logscan-properties-"))
atexit.register(shutil.rmtree, WORK, True)


def write(data: bytes, name: str = "launch_ddp.log") -> str:
    path = WORK / name
    path.write_bytes(data)
    return str(path)


def as_record(scan) -> dict:
    record = dataclasses.asdict(scan)
    record.pop("path")
    record.pop("mtime")
    return record


# --- never raises -----------------------------------------------------------------------------

log_text = st.lists(st.one_of(st.sampled_from(REAL_LINES), st.binary(max_size=200)),
                    max_size=60).map(lambda parts: b"\n".join(parts))


@FAST
@given(data=st.one_of(st.binary(max_size=3000), log_text),
       chunk=st.integers(min_value=1, max_value=5000))
def test_scanner_never_raises_on_arbitrary_bytes(data, chunk):
    scan = SCANNER.scan_file(write(data), "x.log", chunk_size=chunk)
    # A run of NULs at the start (a live log cut by copytruncate) is skipped, and counted.
    text = data.lstrip(b"\0")
    assert scan.leading_nul == len(data) - len(text)
    if is_gzip(text):
        # Read as gzip (by its magic bytes); random bytes after it are a damaged stream.
        assert scan.compressed
        return
    assert scan.lines == text.count(b"\n") + (0 if not text or text.endswith(b"\n") else 1)


# --- candidate and progress lines are exact -------------------------------------------------

LITERALS = sorted({l for c in CORE_CANDIDATES for l in c.literals} | {k.encode() for k in CATALOGUE.keywords()})
pieces = st.one_of(st.sampled_from(LITERALS), st.sampled_from(REAL_LINES),
                   st.sampled_from([b"\n", b" ", b"a", b"e", b"0", b":", b"\t", b"RANK=", b"%|"]),
                   st.binary(max_size=8))


def _lines_with_offsets(block: bytes):
    pos = 0
    for line in block.split(b"\n"):
        yield pos, line
        pos += len(line) + 1


def lines_with(pattern: re.Pattern, block: bytes) -> list[int]:
    """The reference: every line matched one by one."""
    starts, pos = [], 0
    for line in block.split(b"\n"):
        if pattern.search(line):
            starts.append(pos)
        pos += len(line) + 1
    return starts


@FAST
@given(blocks=st.lists(st.lists(pieces, max_size=200).map(b"".join), min_size=1, max_size=6))
def test_candidate_lines_are_exactly_the_lines_the_pattern_matches(blocks):
    finder = LineFinder(SCANNER.finder.literals)  # fresh: its keys adapt block after block
    finder.FEW = 4  # also take the path for frequent key bytes, on these small blocks
    for block in blocks:
        starts, newlines = finder.scan(block)
        assert newlines == block.count(b"\n")
        found = [s for s in starts if SCANNER.candidates.search(
            block, s, len(block) if block.find(b"\n", s) < 0 else block.find(b"\n", s))]
        assert found == lines_with(SCANNER.candidates, block)


def confirmed(scanner, finder, block: bytes) -> list[int]:
    """The lines `finder` gives that the scanner's confirm pattern keeps, as the scanner does."""
    starts, newlines = finder.scan(block)
    assert newlines == block.count(b"\n")
    ends = [block.find(b"\n", s) for s in starts]
    return [s for s, e in zip(starts, ends)
            if scanner.candidates.search(block, s, len(block) if e < 0 else e)]


def kept(scanner, block: bytes) -> list[tuple[int, bytes]]:
    """The lines a survey of `block` keeps for the interpreter."""
    return scanner.survey("x.log", content=(block, 0.0)).candidates


def lines_kept_one_by_one(block: bytes) -> list[tuple[int, bytes]]:
    """The reference: each line judged alone, by whether a native parser's pattern matches it;
    a line holding records glued together (logscan.scan.glued), each of its records alone."""
    judge = LineJudge(SCANNER.matchers)
    block = block.lstrip(b"\0")  # as the reader skips a copytruncated log's leading NULs
    lines = block.split(b"\n")
    if block.endswith(b"\n"):
        lines.pop()
    records = [(i, line[a:b]) for i, line in enumerate(lines)
               for a, b in (record_spans(line) or [(0, len(line))])]
    return [(i, record) for i, record in records
            if judge.tells(record, SCANNER.native.search(record) is not None)]


@needs_hyperscan
@FAST
@given(blocks=st.lists(st.lists(pieces, max_size=200).map(b"".join), min_size=1, max_size=6))
def test_both_matchers_keep_the_same_lines(blocks):
    """Hyperscan (the exact native patterns, the rules' raw covers) and the pure-Python fallback
    (their literals) keep the same lines: those that can tell the interpreter something, judged
    one by one; a line that only holds a keyword is kept by neither."""
    for block in blocks:
        reference = lines_kept_one_by_one(block)
        assert kept(FAST_SCANNER, block) == reference
        assert kept(SCANNER, block) == reference


@needs_hyperscan
def test_hyperscan_is_given_the_exact_patterns():
    """Every candidate pattern reaches Hyperscan as a pattern, none as a weaker literal cover:
    a line that only holds a literal (`[rank 0]`, `elapsed time per`) is never a candidate."""
    assert FAST_SCANNER.finder.covered == ()
    block = (b"[rank 0] step 3 elapsed time per iteration (ms): 3.1 host 7 nranks 4\n"
             b"NODE_RANK=1 timeout 30\n  rank      : 3 (local_rank: 1)\nRANK= 2\n")
    starts, _ = FAST_SCANNER.finder.scan(block)
    assert [block[s:block.find(b"\n", s)] for s in starts] == [
        b"  rank      : 3 (local_rank: 1)", b"RANK= 2"]


def test_lookbehinds_are_rewritten_to_match_the_same_lines():
    from logscan.scan.hyperscan_matcher import Untranslatable, line_pattern

    assert line_pattern(rb"(?<![A-Za-z_])RANK[ \t]*[=:]") == rb"(?:^|[^A-Za-z_\n])RANK[ \t]*[=:]"
    assert line_pattern(rb"(?<=x)y") == rb"(?:x)y"
    for pattern in (rb"a(?=b)", rb"(?!a)b", rb"(a)\1", rb"(?<![^a])b"):
        with pytest.raises(Untranslatable):
            line_pattern(pattern)


@needs_hyperscan
@FAST
@given(blocks=st.lists(st.lists(pieces, max_size=60).map(b"".join), min_size=1, max_size=3))
def test_a_pattern_beyond_hyperscan_is_found_through_its_literals(blocks):
    from logscan.scan.hyperscan_matcher import HyperscanLineFinder
    from logscan.scan.lineparse import Candidates

    # The lookbehind names the newline: the scanner asks a candidate pattern in the block, where
    # the character before a line's first is its newline, as the native patterns' lookbehinds
    # (`(?<![A-Za-z_])RANK`) allow for; the reference asks each line alone.
    wanted = [*CORE_CANDIDATES, Candidates((b"rank",), rb"rank(?= )"),
              Candidates((b"Error",), rb"(?<![^ \n])Error")]
    finder = HyperscanLineFinder(wanted)
    assert finder.covered == (b"\\x72\\x61\\x6e\\x6b", b"\\x45\\x72\\x72\\x6f\\x72")
    scanner = Scanner(Catalogue({}, {}), matcher="python")
    scanner.candidates = re.compile(b"|".join(c.pattern for c in wanted), re.MULTILINE)
    for block in blocks:
        assert confirmed(scanner, finder, block) == lines_with(scanner.candidates, block)


@needs_hyperscan
@pytest.mark.parametrize("job, chunk", [(job, (1 << 20, 97)[i % 2]) for i, job in enumerate(sample_dirs())],
                         ids=lambda v: getattr(v, "name", str(v)))
def test_both_matchers_give_the_same_scans(job, chunk):
    """Each sample read whole, or in blocks that end inside lines (every other sample: each size
    meets over a hundred of them)."""
    for path in map(str, job_files(job)):
        assert as_record(FAST_SCANNER.scan_file(path, "x", chunk_size=chunk)) == \
            as_record(SCANNER.scan_file(path, "x", chunk_size=chunk))


def test_matcher_choice(monkeypatch):
    wanted = [Candidates((b"x",), b"x")]
    assert type(make_line_finder(wanted, "python")) is LineFinder
    monkeypatch.setenv("LOGSCAN_MATCHER", "python")
    assert type(make_line_finder(wanted)) is LineFinder
    with pytest.raises(ConfigError):
        make_line_finder(wanted, "grep")


def test_an_unusable_matcher_is_a_one_line_config_error(monkeypatch, capsys):
    wanted = [Candidates((b"x",), b"x")]
    with pytest.raises(ConfigError, match="unknown matcher 'grep'") as raised:
        make_line_finder(wanted, "grep")
    assert "\n" not in str(raised.value)
    monkeypatch.setenv("LOGSCAN_MATCHER", "grep")
    with pytest.raises(ConfigError):
        Scanner(CATALOGUE)
    monkeypatch.delenv("LOGSCAN_MATCHER")
    monkeypatch.setitem(sys.modules, "hyperscan", None)  # as if not installed: import fails
    with pytest.raises(ConfigError, match="hyperscan") as raised:
        make_line_finder(wanted, "hyperscan")
    assert "\n" not in str(raised.value)
    monkeypatch.setattr(finders, "_noticed", False)
    capsys.readouterr()
    assert type(make_line_finder(wanted)) is LineFinder  # by default, the fallback ...
    assert type(make_line_finder(wanted)) is LineFinder
    err = capsys.readouterr().err
    assert err == finders.SLOW_PATH_NOTICE + "\n"  # ... which says once, in one line, it is slow
    assert "slow path" in err


NATIVE_ONLY = Scanner(Catalogue({}, {}), matcher="python")  # only the parsers' lines are wanted


@FAST
@given(data=st.data(), noise=st.lists(st.sampled_from(REAL_LINES), max_size=20),
       chunk=st.integers(min_value=1, max_value=500))
def test_every_line_a_parser_declares_is_fed_to_the_interpreter(data, noise, chunk):
    """Each parser's declared lines (lineparse.CANDIDATES) are found, whatever else the log holds,
    and kept for the interpreter when they can tell it something (LineJudge: a line that holds
    `Error` but parses as nothing changes nothing)."""
    wanted = data.draw(st.sampled_from(CORE_CANDIDATES), label="declared")
    line = data.draw(st.from_regex(wanted.pattern, fullmatch=False), label="line")
    line = line.replace(b"\n", b" ").replace(b"\r", b" ")
    assert re.search(wanted.pattern, line)
    at = data.draw(st.integers(min_value=0, max_value=len(noise)), label="at")
    lines = [b"log:", *noise[:at], line, *noise[at:]]  # not read as gzip, whatever `line` is
    survey = NATIVE_ONLY.survey(write(b"\n".join(lines) + b"\n"), chunk)
    tells = LineJudge([]).tells(line[:MAX_RAW], True)
    assert ((at + 1, line[:MAX_RAW]) in survey.candidates) == tells, wanted.parser


@FAST
@given(literals=st.data())
def test_every_core_candidate_match_holds_one_of_its_literals(literals):
    for wanted in CORE_CANDIDATES:
        lits, pattern = wanted.literals, wanted.pattern
        text = literals.draw(st.from_regex(pattern, fullmatch=False), label=pattern.decode())
        assert any(l in text for l in lits), (pattern, text)


@FAST
@given(block=st.lists(st.one_of(st.sampled_from(REAL_LINES), st.binary(max_size=40),
                                st.sampled_from([b"step", b"ITER 5", b"loss: 3", b"5%|",
                                                 b"Step", b"iteration", b"\n"])),
                      max_size=80).map(b"\n".join))
def test_first_and_last_progress_lines_are_exact(block):
    finder = ProgressFinder()
    finder.LOOK = 2
    reference = [start for start, line in _lines_with_offsets(block) if finder.is_progress_line(line)]
    assert finder.first(block) == (reference[0] if reference else None)
    assert finder.last(block) == (reference[-1] if reference else None)


# --- diagnosis independent of file order and read blocks ------------------------------------

def diagnose(paths, chunk: int | None = None, monkeypatch=None) -> dict:
    from logscan.diagnose import pipeline
    from logscan.scan import pool as scanpool
    from logscan.settings import Settings
    from logscan.render.json_record import diagnosis_record

    if chunk is not None:
        class ChunkedScanner(Scanner):
            def scan_file(self, path, display, chunk_size=chunk, content=None, local_rank=None):
                return super().scan_file(path, display, chunk_size=chunk, local_rank=local_rank)

        monkeypatch.setattr(scanpool, "Scanner", ChunkedScanner)
    now = datetime.fromisoformat(POST_MORTEM_NOW.replace("Z", "+00:00"))
    record = diagnosis_record(pipeline.diagnose_paths([str(p) for p in paths],
                                                    Settings(now=now, processes=1)))
    return record


def job_files(job: Path) -> list[Path]:
    from logscan.files.discovery import discover

    return [Path(log.path) for log in discover([str(job)]).logs]


JOBS = [d for d in sample_dirs() if len(job_files(d)) > 1]


@settings(max_examples=12, deadline=None)
@given(job=st.sampled_from(JOBS), order=st.randoms(use_true_random=False))
def test_diagnosis_does_not_depend_on_file_order(job, order):
    files = job_files(job)
    shuffled = files[:]
    order.shuffle(shuffled)
    assert diagnose(shuffled) == diagnose(files)


# Block ends inside lines, tracebacks, env prints. Each sample is read with one of these sizes, in
# turn, so every size meets dozens of samples (a fifth of them each) and the suite stays fast as
# samples are added; test_file_scan_does_not_depend_on_read_blocks draws any size up to 2000.
CHUNKS = (1, 7, 64, 333, 4096)


@pytest.mark.parametrize("job, chunks", [(job, (CHUNKS[i % len(CHUNKS)],))
                                         for i, job in enumerate(JOBS)], ids=lambda v: getattr(v, "name", ""))
def test_diagnosis_does_not_depend_on_read_blocks(job, chunks, monkeypatch):
    whole = diagnose([job])
    for chunk in chunks:
        assert diagnose([job], chunk, monkeypatch) == whole, chunk


@settings(max_examples=25, deadline=None)
@given(chunk=st.integers(min_value=1, max_value=2000), data=st.data())
def test_file_scan_does_not_depend_on_read_blocks(chunk, data):
    job = data.draw(st.sampled_from(sample_dirs()), label="job")
    for path in job_files(job):
        assert as_record(SCANNER.scan_file(str(path), "x", chunk_size=chunk)) == \
            as_record(SCANNER.scan_file(str(path), "x"))


@settings(max_examples=25, deadline=None)
@given(pieces=st.integers(min_value=2, max_value=9), chunk=st.integers(min_value=1, max_value=3000),
       data=st.data())
def test_file_scan_does_not_depend_on_how_the_file_is_split_for_workers(pieces, chunk, data):
    """A big file is surveyed in line-aligned pieces by several processes, then merged."""
    from logscan.files.reader import line_ranges

    job = data.draw(st.sampled_from(sample_dirs()), label="job")
    for path in map(str, job_files(job)):
        ranges = line_ranges(path, pieces, min_size=1)
        surveys = [SCANNER.survey(path, chunk, start=start, end=end) for start, end in ranges]
        assert as_record(SCANNER.merge(path, "x", surveys)) == as_record(SCANNER.scan_file(path, "x"))


# --- interleaved env prints -------------------------------------------------------------------

ENV_LINE = next(l.decode() for l in ALL_LINES
                if re.fullmatch(rb"torchrun env: RANK= \d+ LOCAL_RANK= \d+ WORLD_SIZE= \d+", l))
PREFIX, _, REST = ENV_LINE.partition(" RANK=")      # "torchrun env:", "RANK= 0 LOCAL_RANK= ..."
REST_TEMPLATE = " RANK=" + re.sub(r"\d+", "{}", REST)
NOISE = [l.decode() for l in REAL_LINES if b"RANK" not in l and b"torchrun env" not in l
         and b"\r" not in l and not l.startswith(b" ") and l.isascii()][:200]
STAMP = "2026-11-29T18:49:04.436260543Z "


@st.composite
def interleaved_env_prints(draw):
    """Env prints of n processes, interleaved as their writes reach one stdout."""
    n = draw(st.integers(min_value=1, max_value=8))
    world = draw(st.integers(min_value=n, max_value=16))
    gpus = draw(st.integers(min_value=1, max_value=n))
    prints = [(rank, rank % gpus, world) for rank in range(n)]
    # Each process writes `torchrun env:` then ` RANK= r LOCAL_RANK= l WORLD_SIZE= w\n`, or (whole
    # lines) both at once; any order that keeps each process's own order.
    whole_lines = draw(st.booleans())
    pending = {rank: ([PREFIX + REST_TEMPLATE.format(*p) + "\n"] if whole_lines
                      else [PREFIX, REST_TEMPLATE.format(*p) + "\n"])
               for rank, p in enumerate(prints)}
    out, at_line_start = [], True
    while pending:
        if at_line_start and NOISE and draw(st.integers(0, 3)) == 3:
            out.append(draw(st.sampled_from(NOISE)) + "\n")  # another writer's line
            continue
        rank = draw(st.sampled_from(sorted(pending)))
        piece = pending[rank].pop(0)
        if not pending[rank]:
            del pending[rank]
        out.append(piece)
        at_line_start = piece.endswith("\n")
    text = "".join(out)
    if draw(st.booleans()):  # as `kubectl logs --timestamps` shows every physical line
        text = "".join(STAMP + line for line in text.splitlines(keepends=True))
    return text, prints


@settings(max_examples=50, deadline=None)
@given(case=interleaved_env_prints(), chunk=st.integers(min_value=1, max_value=400))
def test_interleaved_env_prints_are_all_recovered(case, chunk):
    text, prints = case
    scan = SCANNER.scan_file(write(text.encode()), "x.log", chunk_size=chunk)
    assert Counter((e.rank, e.local_rank, e.world_size) for e in scan.envs) == Counter(prints), text
    assert scan.env_markers == len(prints)


@pytest.mark.parametrize("ending", [b"\n", b"\n\n\n", b"\r\n", b"\r\n\r\n"], ids=["lf", "lf-blank", "crlf", "crlf-blank"])
@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_the_last_line_with_text_does_not_depend_on_trailing_blank_lines_or_read_blocks(tmp_path, ending, chunk):
    """A log that ends in blank lines (a summary's trailing newlines), read in blocks of any size:
    its last line is the last one with text, at that line's number (synthetic lines)."""
    lines = [b"step 1/2 loss 1.0", b"step 2/2 loss 0.9", b"training finished"]
    path = tmp_path / "launch_ddp.log"
    eol = b"\r\n" if ending.startswith(b"\r") else b"\n"
    path.write_bytes(eol.join(lines) + ending)
    scan = Scanner(load_catalogue()).scan_file(str(path), "launch_ddp.log", chunk_size=chunk)
    last = scan.last_line
    assert last.text.rstrip("\r") == "training finished" and last.line == 3, (last.line, last.text)


@pytest.mark.parametrize("data, lines", [(b"\r", 1), (b"abc\n\r", 2), (b"abc\n", 1), (b"\n\r\n", 2), (b"", 0)])
def test_an_unterminated_last_line_is_counted_whatever_it_holds(data, lines):
    assert SCANNER.scan_file(write(data), "x.log").lines == lines
