"""A rule's raw cover (logscan.scan.raw_patterns) finds every line whose body the rule matches.

- Every built-in rule pattern has a cover: no built-in rule is looked for through its keywords.
- A body a rule matches (generated from its pattern), written out as a log writes it (behind
  prefixes, coloured, after a `\r` redraw, with non-ASCII or undecodable bytes), is found by the
  Hyperscan finder: through the cover, or through the keywords where the bytes are not the
  body as they are. Hyperscan never loses a line the rule would have matched.
- Lines from every rule's own fire and quiet examples, behind every kind of prefix, colour codes
  inside them, in a Docker json-file record: both matchers give the same scan, and every fire
  line is a hit in it.
- Lines that only hold a keyword (`backward=0.05s`, a warning quoting `optimizer.step()`) are
  kept by neither matcher.
- Every prefix stripped from a sample line ends in a byte after which a cover lets a body start.

The lines here are SYNTHETIC, built from the rules' own examples and generated bodies.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import re

import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from conftest import SAMPLES
from logscan.catalogue import load_catalogue
from logscan.errors import ConfigError
from logscan.files.reader import is_gzip
from logscan.scan.hyperscan_matcher import unlike_its_body
from logscan.scan.prefixes import strip_prefixes
from logscan.scan.raw_patterns import Untranslatable, _unique_group_names, body_start, raw_cover
from logscan.scan.scanner import Scanner

hyperscan = pytest.importorskip("hyperscan")

CATALOGUE = load_catalogue()
RULES = [rule for rule in CATALOGUE.matchers if rule.keywords]
PATTERNS = sorted({p for rule in RULES for p in rule.patterns})


def test_every_builtin_rule_pattern_has_a_cover():
    for pattern in PATTERNS:
        assert raw_cover(pattern), pattern


def test_a_pattern_with_no_cover_worth_having_is_untranslatable():
    for pattern in (r"^\s*$", r"(?:x)?", r"\p{L}+error"):
        with pytest.raises(Untranslatable):
            raw_cover(pattern)


def _single(expression: bytes):
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(expressions=[expression], ids=[0], elements=1,
                     flags=hyperscan.HS_FLAG_MULTILINE)
    return database


def _matches(database, data: bytes) -> bool:
    found = []
    database.scan(data, match_event_handler=lambda *_: found.append(1))
    return bool(found)


@pytest.fixture(scope="module")
def scanners():
    try:
        return Scanner(CATALOGUE, matcher="hyperscan"), Scanner(CATALOGUE, matcher="python")
    except ConfigError:
        pytest.skip("hyperscan is not usable here")


try:
    FINDER = Scanner(CATALOGUE, matcher="hyperscan").finder
except ConfigError:
    FINDER = None
RULE_OF = {pattern: rule for rule in RULES for pattern in rule.patterns}


@st.composite
def written_bodies(draw):
    """(pattern, a body it matches that holds its rule's keyword, the raw line a log holds it in)"""
    pattern = draw(st.sampled_from(PATTERNS))
    body = draw(st.from_regex(re.compile(_unique_group_names(pattern)), fullmatch=False))
    assume(not any(ch in body for ch in "\n\r") and not any(0xD800 <= ord(ch) < 0xE000 for ch in body))
    assume(regex.search(pattern, body) is not None)  # the rule engine reads it as re does
    assume(any(kw in body for kw in RULE_OF[pattern].keywords))  # else no rule is tried on it
    undecodable = draw(st.booleans())
    # each non-ASCII character as UTF-8, or as a byte decoding replaced by U+FFFD
    raw = b"".join(ch.encode() if ch.isascii() or not undecodable else b"\xff" for ch in body)
    prefix = draw(st.sampled_from([b"", b"[rank3]:", b"[default0]:", b"2026-11-29T18:00:04.5Z stderr F ",
                                   b"2026-11-29 18:00:01,123 INFO train: ", b"[rank0]:\x1b[31m",
                                   b"step 3 loss 1.0\r", b"[I1129 18:00:01.123 c10d.cpp:12] "]))
    return pattern, body, prefix + raw + draw(st.sampled_from([b"", b"\x1b[0m", b"\xe2\x80\xa6"]))


@pytest.mark.skipif(FINDER is None, reason="hyperscan is not usable here")
@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(case=written_bodies())
def test_hyperscan_finds_every_line_whose_body_a_rule_matches(case):
    pattern, body, raw = case
    block = b"first line\n" + raw + b"\nlast line\n"
    starts, _ = FINDER.scan(block)
    assert len(b"first line\n") in starts, (pattern, body, raw)


def test_a_line_whose_body_is_not_its_bytes_is_found_through_the_keywords(scanners):
    # U+017F LATIN SMALL LETTER LONG S folds to s: `(?i)loss` matches `loſs`, no ASCII cover does
    body = "non-finite lo\u017fs at step 3"
    rule = next(r for r in RULES if r.id == "cause-non-finite-loss")
    assert rule.match(body) is not None
    assert not _matches(_single(raw_cover(rule.patterns[0])), body.encode())
    fast, python = scanners
    for raw in (body.encode(), f"[rank0]:\x1b[1m{body}\x1b[0m".encode()):
        block = b"step 1 loss 2\n" + raw + b"\n"
        assert [line for _, line in fast.survey("x.log", content=(block, 0.0)).candidates] == [raw]
        assert [line for _, line in python.survey("x.log", content=(block, 0.0)).candidates] == [raw]


def _wrapped(line: str) -> list[bytes]:
    """A line as a log holds it: plain, behind torchrun's and a collector's prefixes, coloured
    around and inside, in a Docker json-file record, at the end of a `\r` redraw."""
    inside = line[: len(line) // 2] + "\x1b[1m" + line[len(line) // 2:]
    return [text.encode() for text in (
        line, f"[rank1]:{line}", f"[default0]:{line}", f"2026-11-29T18:00:04.5Z stderr F {line}",
        f"\x1b[31m{line}\x1b[0m", inside, f"[rank0]:\x1b[33m{inside}",
        json.dumps({"log": line + "\n", "stream": "stderr", "time": "2026-11-29T18:00:04Z"},
                   separators=(",", ":")),
        f"step 9 loss 1.0\r{line}")]


def _examples(kind: str) -> list[str]:
    return [line for rule in RULES for line in rule.tests.get(kind, ())]


# Ordinary lines that hold a keyword and match no rule: a script's timers, warnings that quote
# code, eval lines.
KEYWORD_ONLY = [
    "2026-11-29 18:00:01,123 INFO train: step 10/500 loss=2.1 forward=0.03s backward=0.05s",
    "2026-11-29 18:00:01,123 INFO eval: step 10 val error: 0.1",
    "[rank0]:/opt/torch/optim/lr_scheduler.py:216: UserWarning: Detected call of "
    "`lr_scheduler.step()` before `optimizer.step()`.",
    "[rank3]:  return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run "
    "the backward pass",
]


def test_both_matchers_give_the_same_scan_of_every_rule_example_however_it_is_written(
        tmp_path, scanners):
    fast, python = scanners
    lines = [raw for line in _examples("fire") + _examples("quiet") + KEYWORD_ONLY
             for raw in _wrapped(line)]
    log = tmp_path / "worker-0.log"
    log.write_bytes(b"\n".join(lines) + b"\n")
    scans = [dataclasses.asdict(s.scan_file(str(log), "worker-0.log")) for s in (fast, python)]
    assert scans[0] == scans[1]
    # known-harmless lines are kept apart from the hits (FileScan.harmless)
    hit_lines = {hit["where"]["line"] for hit in scans[0]["hits"] + scans[0]["harmless"]}
    # A line whose body and process were seen just before, with only rule lines between, keeps
    # only its first and latest copy (Survey.keep): each fire example's body is a hit somewhere.
    by_body: dict[str, set[int]] = {}
    for i, raw in enumerate(lines):
        stripped = strip_prefixes(raw.decode())
        by_body.setdefault(stripped.body, set()).add(i + 1)
    fire_bodies = {strip_prefixes(line).body for line in _examples("fire")}
    assert fire_bodies and all(by_body[body] & hit_lines for body in fire_bodies)


def test_lines_that_only_hold_a_keyword_are_kept_by_neither_matcher(scanners):
    block = b"\n".join(raw for line in KEYWORD_ONLY for raw in _wrapped(line)) + b"\n"
    for scanner in scanners:
        assert scanner.survey("x.log", content=(block, 0.0)).candidates == []


def _sample_lines() -> list[bytes]:
    """Every distinct line of the sample logs, REAL."""
    lines: set[bytes] = set()
    for path in SAMPLES.rglob("*"):
        if path.is_file() and "generate" not in path.parts and ".log" in path.name:
            data = path.read_bytes()
            lines.update((gzip.decompress(data) if is_gzip(data) else data).splitlines())
    return sorted(lines)


# Lines behind each kind of prefix logscan.scan.prefixes strips, SYNTHETIC.
PREFIXED = [b"2026-11-29T18:00:04.5955909Z stderr F x", b"2026-11-29T18:00:04Z x", b"[stderr] x",
            b"[1,3]<stderr>:x", b"<stdout>: x", b"(RayTrainWorker pid=123, ip=10.0.0.2) x",
            b"[default0]:x", b"[rank3]: x", b"[I1129 18:00:01.123456 1234 c10d.cpp:12] x",
            b"[W c10d.cpp:12] x", b"E1129 18:00:01.123456  1234 ProcessGroupNCCL.cpp:12] x",
            b"[2026-11-29 18:00:01,123] torch.distributed.run: [WARNING] x",
            b"2026-11-29 18:00:01,123 - x", b"INFO:torch.distributed.run:x",
            b"[INFO] 2021-06-29 12:04:55,391 api: x"]


def test_every_prefix_ends_where_a_body_may_start():
    """A cover's leading `^` is the line's start and any run of prefixes (body_start): it takes
    every prefix strip_prefixes takes off a line whose body is its bytes as they are."""
    prefixes = re.compile(body_start()[1:])  # the cover is Python `re` syntax too
    for raw in _sample_lines() + PREFIXED:
        if unlike_its_body(raw):
            continue
        text = raw.decode("utf-8", "replace")
        body = strip_prefixes(text).body
        if body and body != text:
            assert text.endswith(body)
            assert prefixes.fullmatch(raw[:len(raw) - len(body.encode())]), (raw, body)
