"""A rule's pattern, which reads a line's body, as a Hyperscan pattern over the raw line.

A catalogue rule matches the body of a line: decoded, its colour codes and prefixes stripped,
what the last `\r` left on screen (logscan.scan.prefixes.strip_prefixes). Hyperscan reads the
raw bytes. `raw_cover` turns a body pattern into one that matches some stretch of every raw line
whose body the pattern matches, so only such lines need reach Python, where the rule decides:

- anchors, word boundaries and lookarounds are dropped (the body starts after prefixes; a
  boundary may sit next to a prefix or a colour code that is gone from the body);
- a back-reference may be anything on the line;
- a character that may be non-ASCII may be one to four bytes of 0x80-0xff (UTF-8, or the bytes
  that decoding replaced by U+FFFD), so a class that holds one takes those bytes, and its repeat
  four times as many;
- under `(?i)` an ASCII letter takes both cases;
- a pattern's leading `^` (the body's start) is the line's start followed by any run of the
  prefixes logscan.scan.prefixes strips (their own grammar, as a cover: BODY_START), so a line
  that only quotes `optimizer.step(` after other words is not found by a cover anchored there;
  a record glued into a line after other text is found through the glue's mark
  (logscan.scan.hyperscan_matcher), not through the cover.

This holds for lines whose bytes reach the body as they are. A line with an escape byte (colour
codes inside a match), a `\r` inside it, a Docker json-file record (the line JSON-escaped) or a
non-ASCII case partner of an ASCII letter (ſ, K, İ, ı) does not; the matcher finds those through
the rule's keywords instead (logscan.scan.hyperscan_matcher.unlike_its_body).
A pattern the `re` parser cannot read, or reads otherwise than the regex module (a POSIX class,
a fuzzy match), or whose cover would match an empty stretch, is Untranslatable: its rule is
found through its keywords alone.
"""

from __future__ import annotations

import functools
import re
from re import _constants as sre
from re import _parser as sre_parse

import regex


class Untranslatable(ValueError):
    """A pattern Hyperscan cannot be given as it is, nor as a cover of it."""


_ASCII = frozenset(range(128))
_NOT_IN_A_BODY = frozenset(b"\n\r")  # a body is one line, one `\r` segment
_CATEGORY_ESCAPES = {
    sre.CATEGORY_DIGIT: r"\d", sre.CATEGORY_NOT_DIGIT: r"\D",
    sre.CATEGORY_SPACE: r"\s", sre.CATEGORY_NOT_SPACE: r"\S",
    sre.CATEGORY_WORD: r"\w", sre.CATEGORY_NOT_WORD: r"\W",
}


def _members(module, escape: str) -> frozenset[int]:
    return frozenset(b for b in _ASCII if module.match(escape, chr(b)))


# The ASCII members of each category, as the rules' regex module reads them and as re does
# (they differ on \x1c-\x1f for \s): their union where more is safe, their intersection where
# a class is negated and less is.
_CATEGORY_MOST = {c: _members(regex, e) | _members(re, e) for c, e in _CATEGORY_ESCAPES.items()}
_CATEGORY_LEAST = {c: _members(regex, e) & _members(re, e) for c, e in _CATEGORY_ESCAPES.items()}
_HIGH = b"\\x80-\\xff"
_WIDEST_CHAR = 4  # bytes of one character, at most
_BOUNDED = 256  # bytes; a repeat bounded above this is left unbounded


def prefix_grammar() -> tuple[str, int]:
    """(pattern, flags) of a run of the prefixes logscan.scan.prefixes strips: its number tag,
    then its prefixes. A cover anchored at a body's start is made from it, so what a compiled
    cover was made from includes the patterns it is made of (logscan.scan.hyperscan_matcher
    keys its cache by them)."""
    from logscan.scan.prefixes import NUMBER_TAG, PREFIX

    return f"(?:{NUMBER_TAG.pattern})?(?:{PREFIX.pattern})*", PREFIX.flags & re.VERBOSE


def body_start() -> bytes:
    """A Hyperscan pattern of where a body may start: a line's start, then any run of prefixes
    (prefix_grammar, as a cover of itself)."""
    return _body_start(*prefix_grammar())


@functools.lru_cache(maxsize=4)
def _body_start(grammar: str, flags: int) -> bytes:
    cover, _ = _sequence(list(sre_parse.parse(grammar, flags)), caseless=False)
    return b"^" + cover


_GROUP_NAME = re.compile(r"\(\?P<(\w+)>")
# Syntax the rules' regex module reads otherwise than re's parser, which a cover is made from:
# a POSIX class (`[[:digit:]]`, which re reads as the class `[:digt` and a `]`) and a fuzzy
# match's constraints (`(?:error){e<=1}`, braces re reads as text). A brace that is no
# repeat's bounds is taken as one of these, a class's `{` too: the keywords find those rules.
_READ_OTHERWISE = re.compile(r"\[:\^?[A-Za-z]+:\]|(?<!\\)(?:\\\\)*\{(?!\d*(?:,\d*)?\})")


def raw_cover(pattern: str) -> bytes:
    """A Hyperscan pattern (bytes, multiline mode) that matches in every raw line whose body
    `pattern` matches (see the module docstring); Untranslatable if there is none worth using."""
    if _READ_OTHERWISE.search(pattern):
        raise Untranslatable(pattern)
    try:
        parsed = sre_parse.parse(_unique_group_names(pattern))
    except (re.error, RecursionError, OverflowError, ValueError) as exc:
        raise Untranslatable(pattern) from exc
    items = list(parsed)
    start = b""
    if items and items[0][0] is sre.AT and items[0][1] in (sre.AT_BEGINNING, sre.AT_BEGINNING_STRING):
        items = items[1:]
        start = body_start()
    items = _trimmed(items, leading=not start)
    cover, empty = _sequence(items, bool(parsed.state.flags & sre.SRE_FLAG_IGNORECASE))
    if empty:
        raise Untranslatable(pattern)  # it would match every line
    return start + cover


def _trimmed(items: list, leading: bool = True, trailing: bool = True) -> list:
    """The items with a repeat at either free end cut to what a line must hold: once if it
    must be there, not at all if not. Only the line a cover matches in matters, and the lines
    `X+Y` matches in are those `XY` does; Hyperscan runs a pattern with an unbounded class at
    its start or end (`[^:]+: `) on every place its literal is, until the line ends."""
    items = list(items)
    while leading and items:
        cut = _cut_end(items[0], leading=True)
        if cut is None:
            break
        if cut == items[0]:
            break
        items[0:1] = cut
    while trailing and items:
        cut = _cut_end(items[-1], leading=False)
        if cut is None or cut == items[-1]:
            break
        items[-1:] = cut
    return items


def _cut_end(item, leading: bool):
    """`item` as a list of items with its free end cut (see _trimmed), `item` itself if that
    changes nothing, None if it cannot be cut."""
    op, av = item
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, _high, sub = av
        return [] if low == 0 else _trimmed(list(sub), leading, not leading)
    if op is sre.SUBPATTERN:
        group, add_flags, del_flags, sub = av
        if (add_flags | del_flags) & sre.SRE_FLAG_IGNORECASE:
            return None  # the case flag belongs to what is inside: left whole
        inner = _trimmed(list(sub), leading, not leading)
        return inner if inner != list(sub) else item
    if op is sre.BRANCH:
        alternatives = [_trimmed(list(alt), leading, not leading) for alt in av[1]]
        if any(not alt for alt in alternatives):
            return []  # an alternative that may be nothing: the whole may be nothing
        if alternatives == [list(alt) for alt in av[1]]:
            return item
        return [(sre.BRANCH, (None, alternatives))]
    return item


def _unique_group_names(pattern: str) -> str:
    """The regex module lets a name stand for several groups, re does not; what a group is
    called does not change what the pattern matches."""
    seen: dict[str, int] = {}

    def rename(found: re.Match) -> str:
        count = seen[found[1]] = seen.get(found[1], 0) + 1
        return found[0] if count == 1 else f"(?P<{found[1]}_{count}>"

    return _GROUP_NAME.sub(rename, pattern)


def _sequence(items, caseless: bool) -> tuple[bytes, bool]:
    """(cover of the items one after another, whether it may match nothing at all)"""
    parts, empty = [], True
    for op, av in items:
        part, may_be_empty = _item(op, av, caseless)
        parts.append(part)
        empty = empty and may_be_empty
    return b"".join(parts), empty


def _item(op, av, caseless: bool) -> tuple[bytes, bool]:
    if op in (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN):
        return _one_char(_char_class(op, av, caseless)), False
    if op is sre.AT or op in (sre.ASSERT, sre.ASSERT_NOT):
        return b"", True
    if op is sre.SUBPATTERN:
        _group, add_flags, del_flags, sub = av
        if add_flags & sre.SRE_FLAG_IGNORECASE:
            caseless = True
        if del_flags & sre.SRE_FLAG_IGNORECASE:
            caseless = False
        inner, empty = _sequence(list(sub), caseless)
        return _group_of(inner, empty)
    if op is sre.ATOMIC_GROUP:
        return _group_of(*_sequence(list(av), caseless))
    if op is sre.BRANCH:
        return _branches([_sequence(list(alt), caseless) for alt in av[1]])
    if op is sre.GROUPREF_EXISTS:
        _group, yes, no = av
        alts = [_sequence(list(yes), caseless), _sequence(list(no), caseless) if no else (b"", True)]
        return _branches(alts)
    if op is sre.GROUPREF:
        return b"[^\\n\\r]*", True
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        return _repeat(*av, caseless)
    raise Untranslatable(str(op))


def _group_of(inner: bytes, empty: bool) -> tuple[bytes, bool]:
    return (b"(?:" + inner + b")" if inner else b""), empty


def _branches(alts: list[tuple[bytes, bool]]) -> tuple[bytes, bool]:
    kept = list(dict.fromkeys(part for part, _ in alts if part))
    empty = any(may_be_empty for _, may_be_empty in alts)
    if not kept:
        return b"", True
    joined = b"(?:" + b"|".join(kept) + b")"
    # An alternative that may match nothing makes the whole one optional.
    return (joined + b"?" if any(not part for part, _ in alts) else joined), empty


def _repeat(low: int, high: int, item, caseless: bool) -> tuple[bytes, bool]:
    items = list(item)
    widest = 1
    if len(items) == 1 and items[0][0] in (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN):
        ascii_set, wide = _char_class(items[0][0], items[0][1], caseless)
        body = _class_text(ascii_set, wide)
        widest = _WIDEST_CHAR if wide else 1
    else:
        inner, inner_empty = _sequence(items, caseless)
        if not inner:
            return b"", True
        body = b"(?:" + inner + b")"
        if inner_empty:
            low = 0
    unbounded = high == sre.MAXREPEAT or high * widest > _BOUNDED
    if unbounded:
        bound = b"*" if low == 0 else b"+" if low == 1 else b"{%d,}" % low
    elif (low, high * widest) == (1, 1):
        bound = b""
    else:
        bound = b"{%d,%d}" % (low, high * widest)
    return body + bound, low == 0


def _char_class(op, av, caseless: bool) -> tuple[frozenset[int], bool]:
    """(the ASCII bytes the one-character item may be, whether it may be a non-ASCII one)"""
    if op is sre.LITERAL:
        return _literal(av, caseless)
    if op is sre.NOT_LITERAL:
        return _ASCII - {av}, True  # under (?i) the other case is in it too: more, safely
    if op is sre.ANY:
        return _ASCII, True
    items = list(av)
    if items and items[0][0] is sre.NEGATE:
        # What the negated class leaves out, counted low so that what it takes is not: no
        # case partners, the categories' certain members only.
        out: set[int] = set()
        for kind, value in items[1:]:
            if kind is sre.LITERAL and value < 128:
                out.add(value)
            elif kind is sre.RANGE:
                out.update(range(value[0], min(value[1], 127) + 1))
            elif kind is sre.CATEGORY and value in _CATEGORY_LEAST:
                out |= _CATEGORY_LEAST[value]
        return _ASCII - out, True
    ascii_set: set[int] = set()
    wide = False
    for kind, value in items:
        if kind is sre.LITERAL:
            members, value_wide = _literal(value, caseless)
            ascii_set |= members
            wide = wide or value_wide
        elif kind is sre.RANGE:
            low, high = value
            for code in range(low, min(high, 127) + 1):
                ascii_set |= _literal(code, caseless)[0]
            wide = wide or high > 127
            if caseless and high > 127:
                ascii_set |= set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        elif kind is sre.CATEGORY and value in _CATEGORY_MOST:
            ascii_set |= _CATEGORY_MOST[value]
            wide = True  # Unicode digits, spaces and letters; the negated ones too
        else:
            raise Untranslatable(str(kind))
    return frozenset(ascii_set), wide


def _literal(code: int, caseless: bool) -> tuple[frozenset[int], bool]:
    if code >= 128:
        # A non-ASCII character is bytes 0x80-0xff; under (?i) it may fold to an ASCII letter.
        letters = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") if caseless else set()
        return frozenset(letters), True
    char = chr(code)
    if caseless and char.isalpha():
        return frozenset({ord(char.lower()), ord(char.upper())}), False
    return frozenset({code}), False


def _one_char(char_class: tuple[frozenset[int], bool]) -> bytes:
    ascii_set, wide = char_class
    text = _class_text(ascii_set, wide)
    return text + b"{1,%d}" % _WIDEST_CHAR if wide else text


def _class_text(ascii_set: frozenset[int], wide: bool) -> bytes:
    members = sorted(ascii_set - _NOT_IN_A_BODY)
    if not wide and len(members) == 1:
        return _escaped(members[0])
    if not members and not wide:
        raise Untranslatable("a class nothing in a line is")
    ranges, start = [], None
    for i, b in enumerate(members):
        if start is None:
            start = b
        if i + 1 == len(members) or members[i + 1] != b + 1:
            ranges.append(_escaped(start) if start == b else _escaped(start) + b"-" + _escaped(b))
            start = None
    return b"[" + b"".join(ranges) + (_HIGH if wide else b"") + b"]"


def _escaped(byte: int) -> bytes:
    char = bytes((byte,))
    return char if char.isalnum() else b"\\x%02x" % byte
