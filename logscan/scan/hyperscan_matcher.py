"""The candidate-line matcher of the default install: Hyperscan, fed the exact candidate patterns.

Every candidate pattern (logscan.scan.lineparse's declarations, each catalogue keyword) is compiled
into one Hyperscan database, in multiline mode, so a block is searched in one SIMD pass in C and
only the lines that some pattern really matches come back to Python: what a log prints on its
ordinary lines (`[rank 0]`, `elapsed time per iteration`) costs nothing in Python, whatever words
it holds. Hyperscan has no lookaround; the few the patterns use are rewritten to what matches
on the same lines (see line_pattern). A pattern that cannot be rewritten, or that Hyperscan
refuses, is looked for through its declared literals instead, and the scanner's confirm pattern
decides, as it does for the pure-Python LineFinder: both give the same confirmed lines.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
from pathlib import Path

from logscan.files.reader import count_newlines

# (?<!X) and (?<=X) where X is a character class or one (escaped) character.
_ONE_CHAR = r"(?:\[\^?\]?(?:\\.|[^\]\\])*\]|\\.|[^\\()\[\]|])"
_LOOKBEHIND = re.compile(rb"\(\?<([!=])(" + _ONE_CHAR.encode() + rb")\)")
_LOOKAROUND = re.compile(rb"\(\?<?[!=]")


class Untranslatable(ValueError):
    """A pattern Hyperscan cannot be given as it is."""


def _complement(one: bytes) -> bytes:
    """A class of the characters, newline excepted, that `one` (a class or a character) is not."""
    if one.startswith(b"[^"):
        raise Untranslatable(one)  # its complement is what it excludes: rarely worth it
    inner = one[1:-1] if one.startswith(b"[") else one
    return b"[^" + inner + b"\\n]"


def line_pattern(pattern: bytes) -> bytes:
    """`pattern` (Python `re` syntax) as a Hyperscan pattern that matches in the same lines.

    Only the line a match is in matters, so a lookbehind may consume what it looks at:
    `(?<![A-Za-z_])RANK` becomes `(?:^|[^A-Za-z_\\n])RANK` (with multiline `^`), `(?<=x)y`
    becomes `xy`. Other lookarounds and back-references raise Untranslatable."""

    def rewrite(found: re.Match) -> bytes:
        kind, one = found[1], found[2]
        if kind == b"=":
            return b"(?:" + one + b")"
        return b"(?:^|" + _complement(one) + b")"

    rewritten = _LOOKBEHIND.sub(rewrite, pattern)
    if _LOOKAROUND.search(rewritten) or re.search(rb"\\[1-9]|\(\?P=|\(\?\(", rewritten):
        raise Untranslatable(pattern)
    return rewritten


def _hex(literal: bytes) -> bytes:
    return b"".join(b"\\x%02x" % b for b in literal)


def _compile(expressions: list[bytes], flags: int):
    import hyperscan

    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(expressions=expressions, ids=list(range(len(expressions))),
                     elements=len(expressions), flags=flags)
    return database


def _cache_path(expressions: list[bytes], flags: int) -> Path:
    import hyperscan

    key = hashlib.sha256(repr((getattr(hyperscan, "__version__", ""), platform.machine(), flags,
                               expressions)).encode()).hexdigest()[:24]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "logscan" / f"hyperscan-{key}.db"


def compiled(expressions: list[bytes], flags: int):
    """The database of `expressions`, compiled once and then loaded from the user's cache
    (compiling the catalogue's patterns takes 60-90 ms, loading them well under 1 ms). A cache
    that cannot be read or written is only not used."""
    import hyperscan

    path = _cache_path(expressions, flags)
    try:
        database = hyperscan.loadb(path.read_bytes(), hyperscan.HS_MODE_BLOCK)
        database.scratch = hyperscan.Scratch(database)
        return database
    except (OSError, hyperscan.error):
        pass
    database = _compile(expressions, flags)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f"{path.name}.{os.getpid()}.part")
        part.write_bytes(hyperscan.dumpb(database))
        os.replace(part, path)
    except (OSError, hyperscan.error):
        pass
    return database


class HyperscanLineFinder:
    """Finds the lines of a block that a candidate pattern matches (see the module docstring).

    scan(block) → (sorted offsets of those lines, number of newlines in the block), as
    LineFinder.scan; the lines may be a few more than confirmed (a pattern looked for through
    its literals), never fewer. scan_marked(block) also says which of them a native parser's
    pattern matched (the others only some rule's cover, logscan.scan.raw_patterns).

    `wanted`: the native parsers' candidates (lineparse.CANDIDATES and their JSON forms);
    `rules`: (patterns, keyword literals) of each catalogue rule with keywords. A rule is looked
    for through its patterns' raw covers; a rule one of whose patterns has no cover, through its
    keywords. A line whose body is not its raw bytes (an escape byte, a Docker json-file record)
    is found through any keyword, as the pure-Python LineFinder finds every line."""

    marks_native = True

    def __init__(self, wanted, rules=()):
        import hyperscan

        exact: list[bytes] = []
        covers: list[bytes] = []
        for candidates in wanted:
            try:
                exact.append(line_pattern(candidates.pattern))
            except Untranslatable:
                covers += [_hex(lit) for lit in candidates.literals]
        flags = hyperscan.HS_FLAG_MULTILINE
        native = [*dict.fromkeys(exact), *dict.fromkeys(covers)]
        try:
            self._database = None
            rule_expressions = _rule_expressions(rules)
            expressions = native + [e for e in rule_expressions if e not in native]
            self._database = compiled(expressions, flags)
        except hyperscan.error:
            # Some pattern is beyond Hyperscan (the message does not say which): each that is
            # is looked for through its literals.
            native = []
            for candidates in wanted:
                try:
                    pattern = line_pattern(candidates.pattern)
                    _compile([pattern], flags)
                    native.append(pattern)
                except (Untranslatable, hyperscan.error):
                    native += [_hex(lit) for lit in candidates.literals]
            covers = [e for e in native if e not in exact]
            native = list(dict.fromkeys(native))
            rule_expressions = []
            for expression in _rule_expressions(rules):
                try:
                    _compile([expression], flags)
                    rule_expressions.append(expression)
                except hyperscan.error:
                    pass  # a cover Hyperscan refuses: its rule's keywords are among the rest
            rule_expressions += _keyword_expressions(
                [lit for _, keywords in rules for lit in keywords])
            expressions = native + [e for e in dict.fromkeys(rule_expressions) if e not in native]
            self._database = compiled(expressions, flags)
        self._natives = len(native)
        self.covered = tuple(covers)
        # Every native pattern went in as it is: a line marked native is one that some native
        # pattern matches, and the scanner need not confirm it again.
        self.exact = not covers

    def scan(self, block: bytes) -> tuple[list[int], int]:
        starts, _, newlines = self.scan_marked(block)
        return starts, newlines

    def scan_marked(self, block: bytes) -> tuple[list[int], list[bool], int]:
        """(sorted offsets of the lines found, for each whether a native pattern matched it,
        number of newlines in the block)"""
        starts: list[int] = []
        natives: list[bool] = []
        line_end = -1  # the newline ending the last line found: matches before it add nothing
        rfind, find = block.rfind, block.find
        size = len(block)
        first_rule = self._natives

        def on_match(index, _start, end, _flags, _context):
            nonlocal line_end
            last = end - 1  # the match's last byte: its line is the line
            if last > line_end or last < (starts[-1] if starts else 0):
                start = rfind(b"\n", 0, last) + 1
                starts.append(start)
                natives.append(index < first_rule)
                newline = find(b"\n", last)
                line_end = size if newline < 0 else newline
            elif index < first_rule and not natives[-1] and last >= starts[-1]:
                natives[-1] = True  # the line a rule's cover found holds a native match too

        if block:
            self._database.scan(block, match_event_handler=on_match)
        if len(starts) > 1 and any(a >= b for a, b in zip(starts, starts[1:])):
            # matches came out of end order: a line is native if any of its matches was
            merged: dict[int, bool] = {}
            for start, native in zip(starts, natives):
                merged[start] = merged.get(start, False) or native
            starts = sorted(merged)
            natives = [merged[s] for s in starts]
        return starts, natives, count_newlines(block)


# A line whose body is not its bytes as they are: colour codes anywhere in it, or a Docker
# json-file record (logscan.scan.prefixes unwraps it). Rule covers read raw bytes, so these
# lines are found through the keywords, as the pure-Python finder finds every line.
_ESCAPE = b"\\x1b"
_DOCKER_RECORD = b"^\\{\"log\":"


def _keyword_expressions(keywords: list[bytes]) -> list[bytes]:
    """Plain keyword literals, for rules that have no cover."""
    return [_hex(lit) for lit in dict.fromkeys(keywords)]


def _rule_expressions(rules) -> list[bytes]:
    """Hyperscan expressions that find every line a rule of `rules` may match: each rule's
    covers (or its keywords), then the lines with an escape byte or a Docker record holding
    any keyword."""
    from logscan.scan.raw_patterns import Untranslatable as NoCover, raw_cover

    expressions: list[bytes] = []
    every_keyword: list[bytes] = []
    for patterns, keywords in rules:
        every_keyword += keywords
        try:
            expressions += [raw_cover(pattern) for pattern in patterns]
        except NoCover:
            expressions += _keyword_expressions(list(keywords))
    if every_keyword:
        any_keyword = b"(?:" + b"|".join(_hex(lit) for lit in dict.fromkeys(every_keyword)) + b")"
        expressions += [_ESCAPE + b"[^\\n]*" + any_keyword, any_keyword + b"[^\\n]*" + _ESCAPE,
                        _DOCKER_RECORD + b"[^\\n]*" + any_keyword]
    return list(dict.fromkeys(expressions))
