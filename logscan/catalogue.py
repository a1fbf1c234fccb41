"""The rule catalogue: every rule and signal, loaded from TOML files in `rules/` and user dirs.

Signature rules and signals carry their own patterns; code rules carry only their catalogue entry
(severity, docs, hint) and are implemented in `logscan.findings` under the same id.

A user's rule file is checked whole when it loads: every pattern compiled, every group code reads
defined. The built-in rules ship with logscan, and the test suite checks each of them the same way
(tests/test_startup.py), so their patterns are compiled only when a line first needs them, and
their parsed tables are kept in the user's cache: a small job starts without parsing TOML or
compiling the patterns it never meets.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path

from logscan import rule_ids as ids
from logscan.config import read_small_file
from logscan.errors import ConfigError, RuleFileError
from logscan.limits import PATTERN_TIMEOUT
from logscan.vocabulary import Role, RuleKind, RunStage, Severity

# The source line a traceback prints under a frame that raised: `    raise RuntimeError(f"NCCL error:
# {error_str}")` names the message's words without being one.
RAISE_SOURCE = re.compile(r"\s+raise\s+[A-Za-z_][\w.]*\(")

# A user's rule file that says neither: a failure, after the built-in signatures (precedence 10).
DEFAULT_ROLE, DEFAULT_PRECEDENCE = Role.FAILURE, 50
DOC_SECTIONS = ("what", "why", "example", "fix")
class Group(StrEnum):
    """The named groups whose values code reads from a pattern's match. Each means the same in
    every rule that defines it; any other group is there for its rule's message."""

    RANK = "rank"                # the global rank the line is about
    LOCAL_RANK = "local_rank"    # the local rank the line is about
    NODE_RANK = "node_rank"      # a message's Worker: filled in by logscan, never matched
    PEER_RANK = "peer_rank"      # the rank a waiting process waited for
    OP = "op"                    # the collective the line's rank ran...
    OTHER_RANK = "other_rank"    # ...and another rank, with the one it ran
    OTHER_OP = "other_op"
    SEQ = "seq"                  # the collective's sequence number (NCCL's SeqNum)
    DETECTED_BY = "detected_by"  # the rank whose watchdog caught a timeout it told the others of
    WORLD_SIZE = "world_size"    # the world a process group waits to fill...
    JOINED = "joined"            # ...and how many of its ranks had checked in
    ATTEMPTS_LEFT = "left"       # the restarts torchrun has left
    RESTART_COUNT = "count"      # the worker group's restart_count
    SIGNAL = "signal"            # the signal a process received, by name or number
    STOPPED_BY = "stopped_by"    # why a scheduler stopped the job (Slurm's `DUE TO TIME LIMIT`)
    PID = "pid"                  # the process the line is about
    HOST = "host"                # the address a line names (the store a client tried to reach)
    PORT = "port"                # ...and its port
    # A rendezvous round's lines (Worker.rounds): which line it is, and what it says.
    ROUND_OPENS = "rendezvousing"          # `Rendezvous'ing worker group`: a round begins
    GROUP_STOPPING = "stopping"            # `Stopping worker group`
    NEW_NODES = "new_nodes"                # `Detected N new nodes`: a healthy group stopped
    GROUP_WORLD_SIZE = "group_world_size"  # the round's nodes
    GLOBAL_WORLD_SIZE = "global_world_size"  # the WORLD_SIZE the round gives its processes
    MIN_NODES = "min_nodes"                # the launch's --nnodes=MIN:MAX
    MAX_NODES = "max_nodes"
    # Training's numbers going wrong (a loss that is not finite, fp16 loss scaling skipping steps).
    NONFINITE_LOSS = "nonfinite_loss"      # the loss a progress line gives: nan, inf
    LOSS_SCALE = "loss_scale"              # the scale an overflow reduced it to...
    ATTEMPTED_SCALE = "attempted_scale"    # ...from this one
    STEP = "step"                          # the steps taken so far...
    SKIPPED = "skipped"                    # ...and how many of them were skipped on an overflow


# The groups code reads from the lines of particular rules: a file for one of these rules whose
# patterns lack one of them is refused, since the code would read nothing there.
GROUPS_READ = {
    ids.COLLECTIVE_MISMATCH: (Group.RANK, Group.OP, Group.OTHER_RANK, Group.OTHER_OP),
    ids.COLLECTIVE_TIMEOUT_LINE: (Group.RANK, Group.SEQ, Group.DETECTED_BY),
    ids.DEATH_SIGNAL_RECEIVED: (Group.SIGNAL,),
    ids.LOSS_NOT_FINITE: (Group.NONFINITE_LOSS, Group.LOSS_SCALE, Group.ATTEMPTED_SCALE, Group.STEP, Group.SKIPPED),
    ids.PROCESS_GROUP_WAITING: (Group.RANK, Group.WORLD_SIZE, Group.JOINED),
    ids.RENDEZVOUS_ROUND: (Group.ROUND_OPENS, Group.GROUP_STOPPING, Group.NEW_NODES, Group.GROUP_WORLD_SIZE,
                           Group.GLOBAL_WORLD_SIZE, Group.MIN_NODES, Group.MAX_NODES),
    ids.SIBLING_TERMINATED: (Group.PID, Group.SIGNAL),
    ids.STORE_TIMEOUT: (Group.PEER_RANK,),
    ids.WORKER_GROUP_RESTART: (Group.ATTEMPTS_LEFT, Group.RESTART_COUNT),
}
# Groups a signature's message may name without matching them: logscan fills them in.
FILLED_GROUPS = (Group.RANK, Group.NODE_RANK)


@dataclass(frozen=True)
class Rule:
    id: str
    kind: RuleKind
    summary: str
    stage: RunStage
    docs: dict[str, str]
    source: str
    severity: Severity = Severity.INFO
    message: str = ""
    hint: str = ""
    # rules: among findings of one role, the lower precedence explains the higher
    role: Role = DEFAULT_ROLE
    precedence: int = DEFAULT_PRECEDENCE
    job_may_run: bool = False   # a shape the job can run despite: alone, it places no failure
    fallback: bool = False      # tried only when no other rule found an error
    # needs a fix of its own (a masked exit status: the launch command): never folded under the
    # root cause as its cascade, even when its role keeps it from leading
    independent: bool = False
    # it leaves processes or Workers waiting: a hang, for every reader (the report shows where
    # each one stopped, the sweep tells it as "hung")
    hang: bool = False
    # signals: the line means its process suffered another's failure
    cascade: bool = False
    # signals: the line tells where a Worker got, not that anything went wrong
    informational: bool = False
    # signals: the crash cause class a traceback holding the line has (lower precedence wins)
    cause: str | None = None
    # signals: a traceback holding the line was raised at this stage, whatever progress says
    traceback_stage: RunStage | None = None
    # harmless: the signal whose lines these are (the catalogue's patterns are declared once)
    reuses: str | None = None
    keywords: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    tests: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @cached_property
    def compiled(self):
        import regex

        return tuple(regex.compile(p) for p in self.patterns)

    @cached_property
    def compiled_exclude(self):
        import regex

        return tuple(regex.compile(p) for p in self.exclude)

    def match(self, text: str, timeout: float = PATTERN_TIMEOUT) -> dict[str, str] | None:
        """Named groups of the first pattern that matches `text` and no exclusion; else None.

        Raises TimeoutError when a pattern runs away on this text (takes `timeout` seconds).
        """
        if text[:1] in (" ", "\t") and RAISE_SOURCE.match(text):
            return None  # a traceback's source line quotes the message it raises: code, not an event
        for pattern in self.compiled:
            found = pattern.search(text, timeout=timeout)
            if found is None:
                continue
            for excluded in self.compiled_exclude:
                if excluded.search(text, timeout=timeout):
                    return None
            return {k: v for k, v in found.groupdict().items() if v is not None}
        return None

    def render_message(self, groups: dict[str, str]) -> str:
        """The message with each `{name}` replaced by that named group. A `[...]` part naming
        groups is kept only when each of them matched (`GPU[ {gpu}] ran out of memory`: "GPU
        ran out of memory", never "GPU ? ran ..."); a group outside one that did not match is
        "?".
        Templates are data: nothing but a plain name is ever looked up."""
        def optional(part: re.Match) -> str:
            names = _PLACEHOLDER.findall(part[1])
            if not names:
                return part[0]  # brackets that name no group are the message's own text
            return part[1] if all(name in groups for name in names) else ""

        kept = _OPTIONAL.sub(optional, self.message)
        return _PLACEHOLDER.sub(lambda m: groups.get(m[1], "?"), kept)

    def render_hint(self, groups: dict[str, str]) -> str:
        """The hint, its `{name}` placeholders filled the same way (a signal's hint names what
        its line captured: the module, the path, the variable)."""
        return _PLACEHOLDER.sub(lambda m: groups.get(m[1], "?"), self.hint)


# `{name}`; a template may hold nothing else between braces (checked when the rule loads).
_PLACEHOLDER = re.compile(r"\{([A-Za-z_]\w{0,63})\}")
# `[...]` naming a group: a part of a template dropped when a group it names did not match.
_OPTIONAL = re.compile(r"\[([^\[\]]*)\]")
# A rule file is a page of TOML; anything much bigger is not a rule file.
MAX_RULE_FILE_BYTES = 1 << 20
MAX_PATTERN_CHARS = 4096


def _check_template(path: Path, template: str, key: str = "message") -> str:
    rest = _PLACEHOLDER.sub("", template)
    if "{" in rest or "}" in rest:
        raise RuleFileError(path, key, "may hold only {name} placeholders of named groups "
                                             "(no attributes, indexes or format specs)")
    return template


# Counted repeats and nesting beyond these make the regex engine build huge programs (a{4294967294}
# takes gigabytes before it fails): such patterns are refused before they are compiled.
MAX_REPEAT = 1000
MAX_NESTING = 50
_REPEAT = re.compile(r"(?<!\\)\{(\d+)(?:,(\d*))?\}")


def too_costly(pattern: str) -> str | None:
    """Why the rule engine will not compile `pattern` (a rule's, or a user's progress pattern),
    or None."""
    for low, high in _REPEAT.findall(pattern):
        if int(low) > MAX_REPEAT or (high and int(high) > MAX_REPEAT):
            return f"a counted repeat above {{{MAX_REPEAT}}}"
    depth = deepest = 0
    escaped = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif char == ")":
            depth -= 1
    return f"groups nested more than {MAX_NESTING} deep" if deepest > MAX_NESTING else None


def _check_pattern_text(path: Path, key: str, pattern: str) -> None:
    if len(pattern) > MAX_PATTERN_CHARS:
        raise RuleFileError(path, key, f"a pattern is longer than {MAX_PATTERN_CHARS} characters")
    if (why := too_costly(pattern)) is not None:
        raise RuleFileError(path, key, f"pattern {pattern[:40]!r}... has {why}: too costly to run")


def _compile(path: Path, key: str, pattern: str):
    import regex

    try:
        return regex.compile(pattern)
    except regex.error as exc:
        raise RuleFileError(path, key, f"bad pattern {pattern[:80]!r}: {exc}") from None
    except (RecursionError, OverflowError, MemoryError, ValueError) as exc:
        raise RuleFileError(path, key, f"pattern {pattern[:80]!r} cannot be compiled: "
                                       f"{type(exc).__name__}") from None


def _misspelt(name: str) -> Group | None:
    """The group code reads that `name` is a misspelling of: the same letters in another case,
    order or with other underscores (`peerRank`, `peer_rnak`)."""
    letters = sorted(name.lower().replace("_", ""))
    return next((g for g in Group if g != name and sorted(g.replace("_", "")) == letters), None)


def _check_groups(path: Path, rule: Rule) -> Rule:
    """The rule's patterns define every group its code reads and misspell none of them; its
    message names only groups it has."""
    defined = {name for pattern in rule.compiled for name in pattern.groupindex}
    for name in sorted(defined):
        if (meant := _misspelt(name)) is not None:
            raise RuleFileError(path, "patterns", f"group {name!r} looks like a misspelling of "
                                                  f"{meant.value!r}, which logscan reads")
    for name in GROUPS_READ.get(rule.id, ()):
        if name not in defined:
            raise RuleFileError(path, "patterns", f"no pattern defines the group {name.value!r}, "
                                                  f"which logscan reads from {rule.id} lines")
    for name in _PLACEHOLDER.findall(rule.message):
        if name not in defined and name not in FILLED_GROUPS:
            raise RuleFileError(path, "message", f"names {{{name}}}, which no pattern defines")
    return rule


def _require_str(path: Path, data: dict, key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise RuleFileError(path, key, "is required and must be a non-empty string")
    return value


def _optional_str(path: Path, data: dict, key: str) -> str | None:
    return _require_str(path, data, key) if key in data else None


def _require_choice(path: Path, data: dict, key: str, words: type[StrEnum]) -> StrEnum:
    """The member of `words` the value names."""
    value = _require_str(path, data, key)
    try:
        return words(value)
    except ValueError:
        raise RuleFileError(path, key, f"must be one of {', '.join(words)}, not {value!r}") from None


def _optional_choice(path: Path, data: dict, key: str, words: type[StrEnum]) -> StrEnum | None:
    return _require_choice(path, data, key, words) if key in data else None


def _require_int(path: Path, data: dict, key: str) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 1000:
        raise RuleFileError(path, key, "is required and must be an integer from 0 to 1000")
    return value


def _bool(path: Path, data: dict, key: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise RuleFileError(path, key, "must be true or false")
    return value


def _str_list(path: Path, data: dict, key: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RuleFileError(path, key, "must be a list of strings")
    return tuple(value)


# The keys each kind of rule file may hold. Any other is refused: a misspelt key (`exlcude`,
# `severty`) would otherwise be dropped without a word, and the rule run without it.
_SHARED_KEYS = frozenset({"id", "kind", "summary", "stage", "docs", "references", "precedence"})
_PATTERN_KEYS = frozenset({"keywords", "patterns", "exclude", "tests"})
_RULE_KEYS = frozenset({"severity", "role", "job_may_run", "fallback", "independent", "hang", "hint"})
KEYS = {
    "signature": _SHARED_KEYS | _RULE_KEYS | _PATTERN_KEYS | {"message"},
    "code": _SHARED_KEYS | _RULE_KEYS,
    "lint": _SHARED_KEYS | _RULE_KEYS,
    "signal": _SHARED_KEYS | _PATTERN_KEYS | {"cascade", "informational", "cause", "hint",
                                              "traceback_stage"},
    # a known-harmless line: what it means in one sentence, and its patterns or the signal
    # whose lines it names
    "harmless": frozenset({"id", "kind", "meaning", "stage", "references", "signal"}) | _PATTERN_KEYS,
}
TABLE_KEYS = {"docs": frozenset(DOC_SECTIONS), "tests": frozenset({"fire", "quiet"})}
ANY_KEY = frozenset().union(*KEYS.values())


def _refuse_unknown_keys(path: Path, data: dict, kind: str | None = None) -> None:
    """A key no rule file has (of `kind`'s, when given) is an error that names it, with the
    key it was likely meant to be."""
    import difflib

    for table, allowed in ((None, KEYS[kind] if kind else ANY_KEY), *TABLE_KEYS.items()):
        given = data if table is None else data.get(table)
        if not isinstance(given, dict):
            continue
        for key in given:
            if key in allowed:
                continue
            close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
            guess = f"; did you mean {close[0]!r}?" if close else ""
            problem = f"is not a field of a {kind} rule" if kind else "is not a rule-file field"
            raise RuleFileError(path, key if table is None else f"{table}.{key}", problem + guess)


def parse_rule(path: Path, data: dict, compile_patterns: bool = True) -> Rule:
    """The rule a rule file's table describes, or RuleFileError. Without `compile_patterns` (the
    built-in rules) the patterns are checked as text only, and compiled when first used."""
    _refuse_unknown_keys(path, data)  # first: a misspelt `severty` is named, not `severity`
    kind = _require_choice(path, data, "kind", RuleKind)
    rule_id = _require_str(path, data, "id")
    if not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", rule_id):
        raise RuleFileError(path, "id", f"must be kebab-case, not {rule_id!r}")
    if kind == RuleKind.HARMLESS:
        return _parse_harmless(path, data, rule_id, compile_patterns)
    docs = data.get("docs")
    if not isinstance(docs, dict):
        raise RuleFileError(path, "docs", f"is required with sections {', '.join(DOC_SECTIONS)}")
    for section in DOC_SECTIONS:
        if not isinstance(docs.get(section), str) or not docs[section].strip():
            raise RuleFileError(path, f"docs.{section}", "is required and must be a non-empty string")
    fields: dict = dict(
        id=rule_id, kind=kind, source=str(path),
        summary=_require_str(path, data, "summary") if kind != RuleKind.SIGNAL else data.get("summary", docs["what"]),
        stage=_require_choice(path, data, "stage", RunStage),
        docs={s: docs[s].strip() for s in DOC_SECTIONS},
        references=_str_list(path, data, "references"),
    )
    if "precedence" in data:
        fields["precedence"] = _require_int(path, data, "precedence")
    if kind == RuleKind.SIGNAL:
        fields.update(
            cascade=_bool(path, data, "cascade"),
            informational=_bool(path, data, "informational"),
            cause=_optional_str(path, data, "cause"),
            hint=_check_template(path, _optional_str(path, data, "hint") or "", "hint"),
            traceback_stage=_optional_choice(path, data, "traceback_stage", RunStage),
        )
    else:
        fields.update(
            severity=_require_choice(path, data, "severity", Severity),
            role=_optional_choice(path, data, "role", Role) or DEFAULT_ROLE,
            job_may_run=_bool(path, data, "job_may_run"),
            fallback=_bool(path, data, "fallback"),
            independent=_bool(path, data, "independent"),
            hang=_bool(path, data, "hang"),
            hint=_require_str(path, data, "hint"),
        )
        unused = {"cascade", "cause", "traceback_stage", "informational"} & set(data)
        if unused:
            raise RuleFileError(path, sorted(unused)[0], "is a signal's field, not a rule's")
    if kind == RuleKind.SIGNATURE:
        # A code rule's message is built by its code; a signature's is this template.
        fields["message"] = _check_template(path, _require_str(path, data, "message"))
    elif "message" in data:
        raise RuleFileError(path, "message", "belongs to signature rules; a code rule's code writes its message")
    if kind not in (RuleKind.CODE, RuleKind.LINT):
        patterns = _str_list(path, data, "patterns")
        if not patterns:
            raise RuleFileError(path, "patterns", "needs at least one pattern")
        for key in ("patterns", "exclude"):
            for pattern in _str_list(path, data, key):
                _check_pattern_text(path, key, pattern)
                if compile_patterns:
                    _compile(path, key, pattern)
        fields.update(
            patterns=patterns,
            exclude=_str_list(path, data, "exclude"),
            keywords=_str_list(path, data, "keywords"),
        )
        tests = data.get("tests", {})
        if not isinstance(tests, dict):
            raise RuleFileError(path, "tests", "must be a table with 'fire' and 'quiet' lists")
        fields["tests"] = {k: _str_list(path, tests, k) for k in ("fire", "quiet")}
    # last: a field of another kind's that has a message of its own above gets that message
    _refuse_unknown_keys(path, data, kind)
    rule = Rule(**fields)
    return _check_groups(path, rule) if compile_patterns else rule


def _pattern_fields(path: Path, data: dict, compile_patterns: bool) -> dict:
    """patterns, exclude, keywords and tests of a file whose lines are matched."""
    for key in ("patterns", "exclude"):
        for pattern in _str_list(path, data, key):
            _check_pattern_text(path, key, pattern)
            if compile_patterns:
                _compile(path, key, pattern)
    tests = data.get("tests", {})
    if not isinstance(tests, dict):
        raise RuleFileError(path, "tests", "must be a table with 'fire' and 'quiet' lists")
    return dict(patterns=_str_list(path, data, "patterns"), exclude=_str_list(path, data, "exclude"),
                keywords=_str_list(path, data, "keywords"),
                tests={k: _str_list(path, tests, k) for k in ("fire", "quiet")})


def _parse_harmless(path: Path, data: dict, rule_id: str, compile_patterns: bool) -> Rule:
    """A known-harmless line: its meaning (one sentence), the stage it is printed at, at least
    one reference, and either patterns with keywords (a line the scan must find) or `signal`,
    the signal that already finds its lines."""
    _refuse_unknown_keys(path, data, RuleKind.HARMLESS)
    meaning = _require_str(path, data, "meaning")
    if "\n" in meaning.strip():
        raise RuleFileError(path, "meaning", "must be one sentence on one line")
    references = _str_list(path, data, "references")
    if not references:
        raise RuleFileError(path, "references", "needs at least one reference")
    fields = _pattern_fields(path, data, compile_patterns)
    reuses = _optional_str(path, data, "signal")
    if reuses is not None and (fields["patterns"] or fields["keywords"]):
        raise RuleFileError(path, "signal", "names the signal whose lines these are: patterns and "
                                            "keywords are that signal's, not repeated here")
    if reuses is None and not (fields["patterns"] and fields["keywords"]):
        raise RuleFileError(path, "patterns", "needs patterns and keywords (or `signal`, a signal "
                                              "that finds these lines)")
    if reuses is None and not fields["tests"]["fire"]:
        raise RuleFileError(path, "tests.fire", "needs at least one line the patterns match")
    # its docs: what the line means, and (when it has patterns) its first test line as example
    docs = {"what": meaning.strip(), **({"example": fields["tests"]["fire"][0]} if reuses is None else {})}
    return Rule(id=rule_id, kind=RuleKind.HARMLESS, summary=meaning.strip(),
                stage=_require_choice(path, data, "stage", RunStage), docs=docs,
                source=str(path), references=references, reuses=reuses, **fields)


def load_rule_file(path: Path, compile_patterns: bool = True) -> Rule:
    return parse_rule(path, _rule_table(path, _read_rule_file(path)), compile_patterns)


def _read_rule_file(path: Path) -> bytes:
    try:
        return read_small_file(path, MAX_RULE_FILE_BYTES, "a rule file")
    except OSError as exc:
        raise RuleFileError(path, "(file)", exc.strerror or str(exc)) from None


def _rule_table(path: Path, raw: bytes) -> dict:
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise RuleFileError(path, "(file)", "is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise RuleFileError(path, "(syntax)", str(exc)) from None
    except RecursionError:
        raise RuleFileError(path, "(syntax)", "nested too deeply") from None


# The built-in rule files' tables, as JSON in the user's cache, keyed by the files' names and
# bytes: Python's TOML parser was most of the catalogue's load, the JSON parser takes a
# fortieth of its time (bench/README.md, Start-up). The cache is only data, used when its key and
# its shape are those expected and the file is the user's own (not a link, not writable by
# others); every table still goes through parse_rule. A cache that cannot be read or written is
# only not used.
TABLES_CACHE_VERSION = 1
MAX_TABLES_CACHE_BYTES = 16 << 20


def cache_dir() -> Path:
    """Where logscan keeps what it can rebuild: $XDG_CACHE_HOME/logscan, else ~/.cache/logscan."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "logscan"


def _builtin_rules(directory: Path, paths: list[Path]) -> list[Rule]:
    """The built-in rules, their patterns compiled when first used, their tables from the cache
    when it holds these files' (see TABLES_CACHE_VERSION)."""
    import hashlib
    import sys

    names = [path.relative_to(directory).as_posix() for path in paths]
    raws = [_read_rule_file(path) for path in paths]
    digest = hashlib.sha256(repr((TABLES_CACHE_VERSION, sys.version_info[:2])).encode())
    for name, raw in zip(names, raws):
        digest.update(b"%d:%s\0%d:" % (len(name), name.encode(), len(raw)) + raw)
    key = digest.hexdigest()
    cache = cache_dir() / f"catalogue-{key[:24]}.json"
    cached = _cached_tables(cache, key, names)
    if cached is not None:
        try:
            return [parse_rule(path, table, compile_patterns=False) for path, table in zip(paths, cached)]
        except RuleFileError:
            pass  # a cache that does not say what the files say: read them, and replace it
    tables = [_rule_table(path, raw) for path, raw in zip(paths, raws)]
    rules = [parse_rule(path, table, compile_patterns=False) for path, table in zip(paths, tables)]
    _keep_tables(cache, {"key": key, "files": names, "tables": tables})
    return rules


def _cached_tables(cache: Path, key: str, names: list[str]) -> list[dict] | None:
    import json
    import stat

    try:
        fd = os.open(cache, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        status = os.fstat(handle.fileno())
        if (not stat.S_ISREG(status.st_mode) or status.st_size > MAX_TABLES_CACHE_BYTES
                or status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
                or (hasattr(os, "geteuid") and status.st_uid != os.geteuid())):
            return None
        try:
            payload = json.loads(handle.read(MAX_TABLES_CACHE_BYTES + 1))
        except (OSError, ValueError, RecursionError):
            return None
    if not (isinstance(payload, dict) and payload.get("key") == key and payload.get("files") == names):
        return None
    tables = payload.get("tables")
    if not (isinstance(tables, list) and len(tables) == len(names)
            and all(isinstance(table, dict) for table in tables)):
        return None
    return tables


def _keep_tables(cache: Path, payload: dict) -> None:
    import json

    try:
        text = json.dumps(payload, ensure_ascii=False)
    except (TypeError, ValueError):  # a TOML value JSON has no form for (a date): not cached
        return
    part = cache.with_name(f"{cache.name}.{os.getpid()}.part")
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(part, cache)
    except OSError:
        try:
            part.unlink(missing_ok=True)
        except OSError:
            pass


def builtin_rules_dir() -> Path:
    packaged = Path(__file__).parent / "_builtin_rules"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "rules"


@dataclass(frozen=True, eq=False)
class Catalogue:
    rules: dict[str, Rule]      # signature and code rules, by id
    signals: dict[str, Rule]    # signals, by id
    # known-harmless lines, by id: never findings, named when nothing failed
    harmless: dict[str, Rule] = field(default_factory=dict)

    @property
    def matchers(self) -> tuple[Rule, ...]:
        """Everything that carries patterns, signals first so code rules see them in order;
        known-harmless lines last (those that name a signal's lines carry none of their own)."""
        return tuple(self.signals.values()) + tuple(
            r for r in self.rules.values() if r.kind == RuleKind.SIGNATURE) + tuple(
            r for r in self.harmless.values() if r.patterns)

    def get(self, rule_id: str) -> Rule | None:
        return self.rules.get(rule_id) or self.signals.get(rule_id) or self.harmless.get(rule_id)

    def keywords(self) -> set[str]:
        return {kw for rule in self.matchers for kw in rule.keywords}

    def signals_with_cause(self) -> dict[str, str]:
        return {s.id: s.cause for s in self.signals.values() if s.cause}

    @cached_property
    def cause_order(self) -> tuple[str, ...]:
        """Crash cause classes, the most telling first: when a traceback shows several, the first
        of these names it (a collate frame explains a ValueError better than the data path)."""
        best: dict[str, int] = {}
        for signal in self.signals.values():
            if signal.cause:
                best[signal.cause] = min(best.get(signal.cause, 1 << 30), signal.precedence)
        return tuple(sorted(best, key=lambda cause: (best[cause], cause)))

    def cause_hint(self, cause: str | None, groups: dict[str, str] | None = None) -> str | None:
        """The hint a crash of this cause class gets, where its signal gives one, filled with
        `groups` (what the crash's lines captured, and where it happened)."""
        signal = next((s for s in self.signals.values() if cause and s.cause == cause and s.hint), None)
        return signal.render_hint(groups or {}) if signal is not None else None

    @cached_property
    def informational(self) -> frozenset[str]:
        return frozenset(s.id for s in self.signals.values() if s.informational)

    @cached_property
    def cascade_signals(self) -> frozenset[str]:
        return frozenset(s.id for s in self.signals.values() if s.cascade)

    @cached_property
    def rendezvous_waits(self) -> frozenset[str]:
        """Signals of an agent left waiting in rendezvous for the others (a store or connect timeout)."""
        return frozenset(s.id for s in self.signals.values() if s.cascade and s.stage == RunStage.RENDEZVOUS)

    @cached_property
    def launch_failures(self) -> frozenset[str]:
        """Signatures that explain why a Worker's torchrun stopped before spawning."""
        return frozenset(r.id for r in self.with_role(Role.LAUNCH_SHAPE) if r.kind == RuleKind.SIGNATURE)

    def reached(self, stage: RunStage) -> frozenset[str]:
        """Informational signals whose line says the process that printed it had reached this stage."""
        return frozenset(s.id for s in self.signals.values() if s.informational and s.stage == stage)

    def signals_at(self, traceback_stage: RunStage) -> frozenset[str]:
        """Signals whose line in a traceback places the exception at this stage."""
        return frozenset(s.id for s in self.signals.values() if s.traceback_stage == traceback_stage)

    def with_role(self, role: Role) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules.values() if r.role == role)

    def precedence(self, rule_id: str) -> int:
        """A rule's precedence: among findings of one role, the lower explains the higher."""
        rule = self.rules.get(rule_id)
        return rule.precedence if rule is not None else 1 << 30


def selected(rule_id: str, select: Collection[str], ignore: Collection[str]) -> bool:
    """--select (every rule when empty) and --ignore let this rule run."""
    return (not select or rule_id in select) and rule_id not in ignore


def check_selection(select: Iterable[str], ignore: Iterable[str], known: Collection[str],
                    what: str = "rule id") -> None:
    """Every id --select and --ignore name is one of `known` (ConfigError)."""
    for rule_id in (*select, *ignore):
        if rule_id not in known:
            raise ConfigError(f"unknown {what} {rule_id!r} (see 'logscan rules')")


def rule_files(directory: Path) -> list[Path]:
    """Every `*.toml` below `directory`, sorted by path. Iterative, so no tree is too deep for
    it; a linked directory is not entered (as rglob does not), so no link makes a loop."""
    found: list[Path] = []
    pending = [str(directory)]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                    elif entry.name.endswith(".toml") and not entry.is_dir():
                        found.append(Path(entry.path))
        except OSError as exc:
            raise RuleFileError(Path(folder), "(dir)", f"cannot be read: {exc.strerror or exc}") from None
    return sorted(found)


def load_catalogue(extra_dirs: Iterable[str | Path] = ()) -> Catalogue:
    rules: dict[str, Rule] = {}
    signals: dict[str, Rule] = {}
    harmless: dict[str, Rule] = {}
    builtin = builtin_rules_dir()
    for directory in (builtin, *(Path(d) for d in extra_dirs)):
        if not directory.is_dir():
            raise RuleFileError(directory, "(dir)", "is not a directory of rule files")
        paths = rule_files(directory)
        loaded = (_builtin_rules(directory, paths) if directory is builtin
                  else (load_rule_file(path) for path in paths))
        for path, rule in zip(paths, loaded):
            target = {RuleKind.SIGNAL: signals, RuleKind.HARMLESS: harmless}.get(rule.kind, rules)
            if rule.id in rules or rule.id in signals or rule.id in harmless:
                raise RuleFileError(path, "id", f"{rule.id!r} is already defined elsewhere")
            target[rule.id] = rule
    for rule in harmless.values():
        if rule.reuses is not None and rule.reuses not in signals:
            raise RuleFileError(Path(rule.source), "signal", f"names {rule.reuses!r}, which is no signal")
    return Catalogue(rules=rules, signals=signals, harmless=harmless)
