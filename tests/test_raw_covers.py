"""A rule's raw cover (logscan.scan.raw_patterns) finds every line whose body the rule matches.

- Every built-in rule pattern has a cover: no built-in rule is looked for through its keywords.
- A body the pattern matches (generated from the pattern itself), written out as a log writes
  it (behind prefixes, amid other text, with non-ASCII or undecodable bytes), is matched by the
  cover: Hyperscan never loses a line the rule would have matched.
- Lines from every rule's own fire and quiet examples, behind every kind of prefix, colour codes
  inside them, in a Docker json-file record: both matchers give the same scan, and every fire
  line is a hit in it.
- Lines that only hold a keyword (`backward=0.05s`, a warning quoting `optimizer.step()`) are
  kept by neither matcher.

The lines here are SYNTHETIC, built from the rules' own examples and generated bodies.
"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from logscan.catalogue import load_catalogue
from logscan.errors import ConfigError
from logscan.scan.raw_patterns import Untranslatable, _unique_group_names, raw_cover
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


COVERS = {pattern: _single(raw_cover(pattern)) for pattern in PATTERNS}


def _matches(database, data: bytes) -> bool:
    found = []
    database.scan(data, match_event_handler=lambda *_: found.append(1))
    return bool(found)


@st.composite
def written_bodies(draw):
    """(pattern, a body it matches, the raw line a log holds it in)"""
    pattern = draw(st.sampled_from(PATTERNS))
    body = draw(st.from_regex(re.compile(_unique_group_names(pattern)), fullmatch=False))
    assume(not any(ch in body for ch in "\n\r\x1b") and not any(0xD800 <= ord(ch) < 0xE000 for ch in body))
    assume(regex.search(pattern, body) is not None)  # the rule engine reads it as re does
    undecodable = draw(st.booleans())
    # each non-ASCII character as UTF-8, or as a byte decoding replaced by U+FFFD
    raw = b"".join(ch.encode() if ch.isascii() or not undecodable else b"\xff" for ch in body)
    prefix = draw(st.sampled_from([b"", b"[rank3]:", b"[default0]:", b"2026-11-29T18:00:04.5Z stderr F ",
                                   b"2026-11-29 18:00:01,123 INFO train: ", b"step 3 \xc3\xa9 x"]))
    return pattern, body, prefix + raw + draw(st.sampled_from([b"", b" tail", b"\xe2\x80\xa6"]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(case=written_bodies())
def test_a_cover_matches_every_line_whose_body_the_pattern_matches(case):
    pattern, body, raw = case
    assert _matches(COVERS[pattern], b"first line\n" + raw + b"\nlast line"), (pattern, body, raw)


def test_caseless_letters_with_non_ascii_partners_are_covered():
    # U+212A KELVIN SIGN and U+017F LATIN SMALL LETTER LONG S fold to k and s
    for pattern, body in ((r"(?i)killed", "\u212aILLED"), (r"(?i)loss", "lo\u017f\u017f")):
        assert regex.search(pattern, body)
        assert _matches(_single(raw_cover(pattern)), body.encode())


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


@pytest.fixture(scope="module")
def scanners():
    try:
        return Scanner(CATALOGUE, matcher="hyperscan"), Scanner(CATALOGUE, matcher="python")
    except ConfigError:
        pytest.skip("hyperscan is not usable here")


def test_both_matchers_give_the_same_scan_of_every_rule_example_however_it_is_written(
        tmp_path, scanners):
    fast, python = scanners
    lines = [raw for line in _examples("fire") + _examples("quiet") + KEYWORD_ONLY
             for raw in _wrapped(line)]
    log = tmp_path / "worker-0.log"
    log.write_bytes(b"\n".join(lines) + b"\n")
    scans = [dataclasses.asdict(s.scan_file(str(log), "worker-0.log")) for s in (fast, python)]
    assert scans[0] == scans[1]
    hit_lines = {hit["where"]["line"] for hit in scans[0]["hits"]}
    plain_fire = [i + 1 for i, raw in enumerate(lines) if raw.decode() in _examples("fire")]
    assert plain_fire and set(plain_fire) <= hit_lines  # the test can fail: the hits are there


def test_lines_that_only_hold_a_keyword_are_kept_by_neither_matcher(scanners):
    block = b"\n".join(raw for line in KEYWORD_ONLY for raw in _wrapped(line)) + b"\n"
    for scanner in scanners:
        assert scanner.survey("x.log", content=(block, 0.0)).candidates == []
