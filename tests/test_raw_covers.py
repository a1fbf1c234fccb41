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
- Every prefix stripped from a sample line, and each kind of prefix generated from PREFIX's own
  grammar, ends in a byte after which a cover lets a body start.
- A line's body is what strip_prefixes leaves (a header it does not strip, `INFO train: `, stays
  in it): the property asks the rule about that body.
- A cached database is not reused once a prefix is added; every character a caseless pattern
  reads as an ASCII letter, and every pattern in the regex module's own syntax, is found
  through the keywords.

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
from logscan.scan import prefixes
from logscan.scan.hyperscan_matcher import HyperscanLineFinder, unlike_its_body
from logscan.scan.interpret import _evidence_text
from logscan.scan.prefixes import PREFIX, strip_prefixes
from logscan.scan.raw_patterns import Untranslatable, _unique_group_names, body_start, raw_cover
from logscan.scan.scanner import Scanner

hyperscan = pytest.importorskip("hyperscan")

CATALOGUE = load_catalogue()
RULES = [rule for rule in CATALOGUE.matchers if rule.keywords]
PATTERNS = sorted({p for rule in RULES for p in rule.patterns})
ANCHORED = [p for p in PATTERNS if p.startswith("^")]


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


# A run of the prefixes strip_prefixes takes off, generated from their own grammar (SYNTHETIC):
# each kind of prefix logscan.scan.prefixes knows, a viewer's line number before them, and a
# prefix added there is tried here as soon as it is.
ONE_LINE = st.characters(exclude_characters="\n\r", exclude_categories=("Cs",))
PREFIX_RUNS = st.builds(lambda tag, prefixes: tag + "".join(prefixes),
                        st.sampled_from(["", "[80746] "]),
                        st.lists(st.from_regex(PREFIX, fullmatch=True, alphabet=ONE_LINE),
                                 max_size=3))
# Text before a body that is no prefix, or is one dressed: a header strip_prefixes leaves in the
# body (`INFO train: `), colour codes, a `\r` redraw.
DRESSED = st.just("") | st.sampled_from(["2026-11-29 18:00:01,123 INFO train: ", "[rank0]:\x1b[31m",
                                         "step 3 loss 1.0\r", "\x1b[1m"])


@st.composite
def written_bodies(draw):
    """(pattern, a body it matches, the raw line a log holds it in); the body may not be the
    line's body as strip_prefixes reads it: the test asks the rule about that one."""
    # half of them anchored at the body's start: those whose cover reads the prefixes
    pattern = draw(st.sampled_from(PATTERNS) | st.sampled_from(ANCHORED))
    body = draw(st.from_regex(re.compile(_unique_group_names(pattern)), fullmatch=False,
                              alphabet=ONE_LINE))
    prefix = draw(PREFIX_RUNS) + draw(DRESSED)
    undecodable = draw(st.booleans())
    # each non-ASCII character of the body as UTF-8, or as a byte decoding replaced by U+FFFD
    raw = prefix.encode() + b"".join(ch.encode() if ch.isascii() or not undecodable else b"\xff"
                                     for ch in body)
    raw += draw(st.sampled_from([b"", b"\x1b[0m", b"\xe2\x80\xa6"]))
    if draw(st.integers(0, 7)) == 0:  # in a Docker json-file record
        raw = json.dumps({"log": raw.decode("utf-8", "replace") + "\n", "stream": "stderr"},
                         separators=(",", ":")).encode()
    return pattern, body, raw


@pytest.mark.skipif(FINDER is None, reason="hyperscan is not usable here")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(case=written_bodies())
def test_hyperscan_finds_every_line_whose_body_a_rule_matches(case):
    """The line's body is read as the interpreter reads it (its evidence text, prefixes
    stripped); a line whose body the rule's pattern matches, holding one of its keywords, is
    a line the pure-Python matcher keeps, and Hyperscan must find it."""
    pattern, _, raw = case
    body = strip_prefixes(_evidence_text(raw)).body
    assume(any(kw in body for kw in RULE_OF[pattern].keywords))  # else no rule is tried on it
    assume(regex.search(pattern, body) is not None)
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
    """A line as a log holds it: plain, behind torchrun's, torchx's and a collector's prefixes,
    coloured around and inside, in a Docker json-file record, at the end of a `\r` redraw, inside a
    console box."""
    inside = line[: len(line) // 2] + "\x1b[1m" + line[len(line) // 2:]
    return [text.encode() for text in (
        line, f"[rank1]:{line}", f"[default0]:{line}", f"2026-11-29T18:00:04.5Z stderr F {line}",
        f"\x1b[31m{line}\x1b[0m", inside, f"[rank0]:\x1b[33m{inside}",
        json.dumps({"log": line + "\n", "stream": "stderr", "time": "2026-11-29T18:00:04Z"},
                   separators=(",", ":")),
        f"step 9 loss 1.0\r{line}",
        # torchx's tag and torchrun's tee header under torchx's empty role; a console box
        f"trainer/0 [1]:{line}", f"│ {line.ljust(120)} │",
        # logging's header as basicConfig writes it, a prefix; and one strip_prefixes leaves
        # in the body (`%(asctime)s %(levelname)s %(name)s: `), where a rule anchored at the
        # body's start matches neither matcher's line
        f"INFO:train:{line}", f"2026-11-29 18:00:01,123 INFO train: {line}")]


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


def _alternatives(verbose: str) -> list[str]:
    """The top-level alternatives of a verbose pattern, as patterns of their own."""
    alternatives, current, depth, in_class, i = [], [], 0, False, 0
    while i < len(verbose):
        ch = verbose[i]
        if ch == "\\":
            current.append(verbose[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]" or (current and current[-1] in ("[", "[^"))
        elif ch == "#":
            end = verbose.find("\n", i)
            i = len(verbose) if end < 0 else end
            continue
        elif ch == "[":
            in_class = True
            if verbose[i + 1:i + 2] == "^":
                current.append("[^")
                i += 2
                continue
        elif ch in "()":
            depth += 1 if ch == "(" else -1
        elif ch == "|" and depth == 0:
            alternatives.append("".join(current))
            current, i = [], i + 1
            continue
        current.append(ch)
        i += 1
    return [*alternatives, "".join(current)]


PREFIX_KINDS = _alternatives(PREFIX.pattern)


def test_the_prefix_grammar_is_read_as_its_alternatives():
    """PREFIX tries its alternatives in order: the first kind that matches a prefix matches it
    as PREFIX does."""
    assert len(PREFIX_KINDS) >= 15
    kinds = [re.compile(kind, PREFIX.flags) for kind in PREFIX_KINDS]
    for raw in PREFIXED:
        text = raw.decode()
        first = next(found for kind in kinds if (found := kind.match(text)) is not None)
        assert first.span() == PREFIX.match(text).span(), text


BEFORE_A_FRAME = '(?=[ ]{2}File[ ]"|[ ]{4}\\S)'


@pytest.mark.parametrize("kind", range(len(PREFIX_KINDS)))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.filter_too_much])
@given(data=st.data())
def test_every_kind_of_prefix_ends_where_a_body_may_start(kind, data):
    """Each kind of prefix strip_prefixes takes off, generated from its own pattern, alone or
    among other prefixes (SYNTHETIC): what is stripped is a run body_start matches whole."""
    prefixes = re.compile(body_start()[1:])
    # pdsh's tag is a prefix only before a traceback's line: what it needs after it is no part of it
    pattern = PREFIX_KINDS[kind].rstrip().removesuffix(BEFORE_A_FRAME)
    one = data.draw(st.from_regex(re.compile(pattern, PREFIX.flags), fullmatch=True, alphabet=ONE_LINE))
    before, after = data.draw(PREFIX_RUNS), data.draw(PREFIX_RUNS)
    # (a traceback's frame line too: pdsh's `host: ` tag is a prefix only before one)
    text = before + one + after + data.draw(st.sampled_from(["x", "Terminated", " 3 y", '  File "x.py", line 1, in f']))
    raw = text.encode()
    assume(not unlike_its_body(raw))
    body = strip_prefixes(_evidence_text(raw)).body
    assume(body.encode() != raw)  # something was stripped
    assert raw.endswith(body.encode()), (raw, body)
    assert prefixes.fullmatch(raw[:len(raw) - len(body.encode())]), (raw, body)


def test_every_character_a_caseless_pattern_reads_as_an_ascii_letter_is_found_by_keywords():
    """re and the regex module (the rules') fold a few non-ASCII characters to ASCII letters
    under (?i): a line holding one may match a rule that no ASCII cover finds in its bytes."""
    every = "".join(chr(code) for code in range(0x80, 0x110000) if not 0xD800 <= code < 0xE000)
    folded = set(regex.findall("(?i)[a-z]", every)) | set(re.findall("(?i)[a-z]", every))
    assert {"\u017f", "\u212a"} <= folded
    for char in folded:
        assert unlike_its_body(f"non-finite lo{char}s".encode()), char
    # U+0131 LATIN SMALL LETTER DOTLESS I: the regex module reads it as an I under (?i)
    pattern, body = "(?i)loss is INF", "loss is \u0131nf"
    assert regex.search(pattern, body) is not None
    if FINDER is not None:
        finder = HyperscanLineFinder([], [((pattern,), (b"loss",))])
        assert finder.scan(b"x\n[rank1]:" + body.encode() + b"\n")[0] == [2]


@pytest.mark.skipif(FINDER is None, reason="hyperscan is not usable here")
def test_a_cached_database_is_not_used_once_a_prefix_is_added(tmp_path, monkeypatch):
    """A cover anchored at a body's start is made from the prefixes: a database compiled and
    cached before a kind of prefix was added would miss the lines behind it. The added kind
    is SYNTHETIC."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    rules = [(("^(?P<signal>Terminated|Hangup)\\s*$",), (b"Terminated",))]
    line = b"<node3> Terminated"
    block = b"first line\n" + line + b"\n"
    assert HyperscanLineFinder([], rules).scan(block)[0] == []
    monkeypatch.setattr(prefixes, "PREFIX", re.compile(
        prefixes.PREFIX.pattern + "| <node\\d+>[ ]", prefixes.PREFIX.flags))
    assert strip_prefixes(line.decode()).body == "Terminated"
    assert HyperscanLineFinder([], rules).scan(block)[0] == [len(b"first line\n")]


@pytest.mark.skipif(FINDER is None, reason="hyperscan is not usable here")
@pytest.mark.parametrize("pattern, body", [
    ("^worker [[:digit:]]+ died", "worker 3 died"),
    ("^worker [a[:digit:]]+ died", "worker 3 died"),
    ("(?:worker died){e<=1} of signal", "worker dyed of signal"),
])
def test_a_pattern_the_regex_module_reads_otherwise_than_re_is_found_by_its_keywords(pattern, body):
    """A user's rule may use the regex module's own syntax (a POSIX class, a fuzzy match),
    which re's parser reads as other text: its rule is found through its keywords."""
    assert regex.search(pattern, body) is not None
    with pytest.raises(Untranslatable):
        raw_cover(pattern)
    finder = HyperscanLineFinder([], [((pattern,), (b"worker",))])
    assert finder.scan(b"x\n[rank1]:" + body.encode() + b"\n")[0] == [2]


def test_both_matchers_read_the_line_after_a_last_error_head(tmp_path, scanners):
    """torch's `Last error:` announces NCCL's message on the next line, which no keyword finds
    (synthetic lines in that form)."""
    log = tmp_path / "w.log"
    log.write_text("ncclInternalError: Internal check failed.\nLast error:\nsocketPollConnect poll() returned 1\n"
                   "step 3 loss 2.0\nLast error:\n")
    for scanner in scanners:
        hits = scanner.scan_file(str(log), "w.log").hits
        told = [dict(h.groups).get("last_error") for h in hits if h.rule_id == "nccl-error"]
        assert told == [None, "socketPollConnect poll() returned 1"]
