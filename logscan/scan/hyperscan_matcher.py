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
from logscan.scan.glued import GLUED_RECORD_MARK

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


keyword_expression = _hex  # a literal as a Hyperscan expression that matches it byte for byte


def _compile(expressions: list[bytes], flags):
    """`flags`: one for every expression, or one list of them, in order."""
    import hyperscan

    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(expressions=expressions, ids=list(range(len(expressions))),
                     elements=len(expressions), flags=flags)
    return database


def _cache_path(source, flags: int) -> Path:
    """Where the database compiled from `source` is kept: its key is the source (the
    expressions, or what they are made from together with the code that makes them)."""
    import hyperscan

    key = hashlib.sha256(repr((getattr(hyperscan, "__version__", ""), platform.machine(), flags,
                               source)).encode()).hexdigest()[:24]
    from logscan.catalogue import cache_dir

    return cache_dir() / f"hyperscan-{key}.db"


def compiled(expressions, flags, source=None):
    """The database of `expressions` (a list, or a function that makes it) with `flags` (one for
    all, a list, or a function of the expressions), compiled once and then loaded from the user's cache (compiling the catalogue's patterns and covers takes
    0.1-0.3 s, loading them well under 1 ms); `source`, when given, keys the cache instead of
    the expressions, so a cached database costs no translating either. A cache that cannot be
    read or written is only not used."""
    import hyperscan

    # flags given as a function of the expressions are part of the source that keys the cache
    path = _cache_path(expressions if source is None else source, None if callable(flags) else flags)
    try:
        database = hyperscan.loadb(path.read_bytes(), hyperscan.HS_MODE_BLOCK)
        database.scratch = hyperscan.Scratch(database)
        return database
    except (OSError, hyperscan.error):
        pass
    if callable(expressions):
        expressions = expressions()
    database = _compile(expressions, flags(expressions) if callable(flags) else flags)
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
    its literals, a rule's cover), never fewer. scan_marked(block) also says which of them a
    native parser's pattern matched (the others only a rule's cover or keyword), and which hold
    a record glued after their start (logscan.scan.glued), so that only those are cut.

    `wanted`: the native parsers' candidates (lineparse.CANDIDATES and their JSON forms);
    `rules`: (patterns, keyword literals) of each catalogue rule with keywords. A rule is looked
    for through its patterns' raw covers (logscan.scan.raw_patterns); a rule one of whose
    patterns has no cover, through its keywords. A line whose body is not its bytes as they are
    (UNLIKE_ITS_BODY) is found through any keyword, as the pure-Python LineFinder finds every
    line: a second, small database of the keywords, run only on blocks that hold such a line."""

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
        rules = [(tuple(patterns), tuple(keywords)) for patterns, keywords in rules]
        # The covers are made from the rules by this module and raw_patterns: their code, and
        # the prefixes a body may start after (raw_patterns.prefix_grammar), are part of what a
        # cached database was compiled from: one cached before a prefix was added would miss
        # the lines behind it. (raw_patterns itself is not imported when the cache has it.)
        from logscan.scan import prefixes

        source = (native, rules, _UNLIKE_MARKS, _GLUED_MARKS, _TRANSLATOR.hexdigest(),
                  prefixes.NUMBER_TAG.pattern, prefixes.PREFIX.pattern, prefixes.PREFIX.flags)
        marks = len(_UNLIKE_MARKS)

        def flags_of(expressions):  # a mark is reported once a block: it says the block has one
            return ([flags | hyperscan.HS_FLAG_SINGLEMATCH] * marks
                    + [flags] * (len(expressions) - marks))

        try:
            self._database = compiled(
                lambda: [*_UNLIKE_MARKS, *_GLUED_MARKS, *native,
                         *(e for e in _rule_expressions(rules) if e not in native)],
                flags_of, source)
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
            for patterns, keywords in rules:
                try:
                    for expression in _rule_expressions([(patterns, keywords)]):
                        _compile([expression], flags)
                    rule_expressions += _rule_expressions([(patterns, keywords)])
                except hyperscan.error:  # a cover Hyperscan refuses: the rule's keywords
                    rule_expressions += _keyword_expressions(keywords)
            expressions = [*_UNLIKE_MARKS, *_GLUED_MARKS, *native,
                           *(e for e in dict.fromkeys(rule_expressions) if e not in native)]
            self._database = compiled(expressions, flags_of(expressions))
        every_keyword = [lit for _, keywords in rules for lit in keywords]
        self._keywords = (compiled(_keyword_expressions(every_keyword), flags)
                          if every_keyword else None)
        # expression ids: the marks, the glued records' marks, the native patterns, the rules'
        self._first_glued = marks
        self._first_native = marks + len(_GLUED_MARKS)
        self._first_rule = self._first_native + len(native)
        self.covered = tuple(covers)
        # Every native pattern went in as it is: a line marked native is one that some native
        # pattern matches, and the scanner need not confirm it again.
        self.exact = not covers

    def scan(self, block: bytes) -> tuple[list[int], int]:
        starts, _, _, newlines = self.scan_marked(block)
        return starts, newlines

    def scan_marked(self, block: bytes) -> tuple[list[int], list[bool], set[int], int]:
        """(sorted offsets of the lines found, for each whether a native pattern matched it,
        the offsets of the lines that may hold glued records, number of newlines in the block)"""
        starts, natives, unlike, glued = _lines_matched(
            self._database, block, self._first_glued, self._first_native, self._first_rule)
        if unlike and self._keywords is not None:
            found = set(starts)
            extra = [start for start in _lines_matched(self._keywords, block, 0, 0, 0)[0]
                     if start not in found and unlike_its_body(_line_at(block, start))]
            if extra:
                marks = dict(zip(starts, natives))
                marks.update(dict.fromkeys(extra, False))
                starts = sorted(marks)
                natives = [marks[start] for start in starts]
        return starts, natives, glued, count_newlines(block)


def _line_at(block: bytes, start: int) -> bytes:
    end = block.find(b"\n", start)
    return block[start:] if end < 0 else block[start:end]


def _lines_matched(database, block: bytes, first_glued: int, first_native: int, first_rule: int
                   ) -> tuple[list[int], list[bool], bool, set[int]]:
    """(sorted starts of the lines `database` matches in, whether an expression of
    [first_native, first_rule) matched each, whether one below first_glued, a mark, matched,
    the starts of the lines a glued record's mark, [first_glued, first_native), matched in)"""
    starts: list[int] = []
    natives: list[bool] = []
    marked = False
    glued: set[int] = set()
    line_end = -1  # the newline ending the last line found: matches before it add nothing
    rfind, find = block.rfind, block.find
    size = len(block)

    def on_match(index, _start, end, _flags, _context):
        nonlocal line_end, marked
        if index < first_native:
            if index < first_glued:
                marked = True
            else:  # it finds no line of its own: it says which found lines to cut
                glued.add(rfind(b"\n", 0, end - 1) + 1)
            return
        last = end - 1  # the match's last byte: its line is the line
        if last > line_end or last < (starts[-1] if starts else 0):
            start = rfind(b"\n", 0, last) + 1
            starts.append(start)
            natives.append(index < first_rule)
            newline = find(b"\n", last)
            line_end = size if newline < 0 else newline
        elif index < first_rule:
            natives[-1] = True  # the line a rule's cover found holds a native match too

    if block:
        database.scan(block, match_event_handler=on_match)
    if len(starts) > 1 and any(a >= b for a, b in zip(starts, starts[1:])):
        # matches came out of end order: a line is native if any of its matches was
        merged: dict[int, bool] = {}
        for start, native in zip(starts, natives):
            merged[start] = merged.get(start, False) or native
        starts = sorted(merged)
        natives = [merged[s] for s in starts]
    return starts, natives, marked, glued


# Lines whose body (logscan.scan.prefixes.strip_prefixes) is not a stretch of their bytes as
# they are, which rule covers read: colour codes anywhere in them, a `\r` inside (the body is
# what the last one left on screen, and a long line is kept as its head and tail), a Docker
# json-file record (the line JSON-escaped), Ray's deduplication note at its end, a character
# whose case partner is an ASCII letter (ſ, K, İ, ı: a caseless pattern may read them as s, k,
# i; they are every character that re or the regex module folds to an ASCII letter).
_UNLIKE_MARKS = (b"\\x1b", b"\\r[^\\n]", b'\\{"log":', b"\\xc5\\xbf", b"\\xe2\\x84\\xaa",
                 b"\\xc4\\xb0", b"\\xc4\\xb1", b"x across cluster\\]")
_UNLIKE = re.compile(b"|".join(_UNLIKE_MARKS))
_GLUED_MARKS = (GLUED_RECORD_MARK,)


def unlike_its_body(line: bytes) -> bool:
    """Whether a line may have a body its bytes do not show as they are."""
    return _UNLIKE.search(line.rstrip(b"\r")) is not None


def _keyword_expressions(keywords) -> list[bytes]:
    return [_hex(lit) for lit in dict.fromkeys(keywords)]


def _rule_expressions(rules) -> list[bytes]:
    """Hyperscan expressions that find every line, of those its bytes show as they are, that a
    rule of `rules` may match: each rule's covers, or its keywords."""
    from logscan.scan.raw_patterns import Untranslatable as NoCover, raw_cover

    expressions: list[bytes] = []
    for patterns, keywords in rules:
        try:
            expressions += [raw_cover(pattern) for pattern in patterns]
        except NoCover:
            expressions += _keyword_expressions(keywords)
    return list(dict.fromkeys(expressions))


def _translator_digest():
    digest = hashlib.sha256()
    here = Path(__file__)
    for module in (here, here.with_name("raw_patterns.py")):
        try:
            digest.update(module.read_bytes())
        except OSError:
            digest.update(str(module).encode())
    return digest


_TRANSLATOR = _translator_digest()
