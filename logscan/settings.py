"""What one run of logscan was asked to do: one frozen object, built in one place.

`Settings.resolve(flags, config, config_path)` is that place. It takes the command-line flags
(keyed by field name; None or an empty list means "not given"), the `[tool.logscan]` table or
logscan.toml found by `logscan.config` (kebab-case keys, as written in the file) and that file's
path, checks the type and range of every value, and returns a Settings or raises a one-line
ConfigError that names the flag, or the file and the key.

Precedence: a flag given on the command line wins over the config file, which wins over the
default; a list flag (`--select`, `--ignore`, `--progress-pattern`) replaces the file's list
rather than adding to it. Rule directories are the exception: the file's `rules` and every
`--rules DIR` add up (the file's first). Relative `rules` directories in a config file are taken
relative to that file.

Whether `select`/`ignore` name real rules is checked against the catalogue by the command that
loads it, not here.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from pathlib import Path

from logscan.catalogue import selected, too_costly
from logscan.config import display_path, parse_duration, parse_time
from logscan.errors import ConfigError
from logscan.expectations import EXPECTATIONS, Expectations, Kind
from logscan.limits import MAX_COUNT, MAX_DURATION, MAX_PROCESSES, STALL_AFTER
from logscan.vocabulary import FailOn, Format, JobStatus, WebhookPayload

MATCHERS = ("python", "hyperscan", "auto")  # LOGSCAN_MATCHER, read by the scanner

# Keys of a config file, and the Settings field each one sets.
CONFIG_KEYS = {
    "rules": "rule_dirs",
    "select": "select",
    "ignore": "ignore",
    "progress-patterns": "progress_patterns",
    "fail-on": "fail_on",
    "stall-after": "stall_after",
    "format": "format",
    "webhook-url": "webhook_url",      # a secret: read only from a file no one else can read
    "webhook-payload": "webhook_payload",
    "check": "expectations",  # the table [tool.logscan.check]: keys are the flags without `--`
}
# Flags, by the Settings field each one sets (for messages).
FLAG_NAMES = {
    "rule_dirs": "--rules",
    "select": "--select",
    "ignore": "--ignore",
    "progress_patterns": "--progress-pattern",
    "job_status": "--job-status",
    "now": "--now",
    "stall_after": "--stall-after",
    "processes": "--jobs",
    "format": "--format",
    "fail_on": "--fail-on",
    "output": "--output",
    "reports": "--FORMAT-output",  # (format, file) pairs: extra reports from the same run
    "default_format": "--format",  # the format when neither flag nor file names one
    "webhook_url": "--webhook",
    "webhook_payload": "--webhook-payload",
    **{f"expect_{e.field}": e.flag for e in EXPECTATIONS},
}
# Keys of the [tool.logscan.check] table, and the expectation each one sets.
CHECK_KEYS = {e.key: e for e in EXPECTATIONS}
# Leading global inline flags, such as `(?i)`, which Python allows only at the very start of a
# whole expression: the scanner joins the patterns into one, so they are made scoped groups.
_GLOBAL_FLAGS = re.compile(r"\A(?:\(\?[aiLmsux]+\))+")


# `-o -`: the report to standard output, as every tool takes `-` (a file named `-` is `./-`).
STANDARD_OUTPUT = "-"


@dataclass(frozen=True)
class Settings:
    # What the pipeline reads.
    rule_dirs: tuple[str, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    progress_patterns: tuple[str, ...] = ()
    job_status: JobStatus | None = None
    now: datetime | None = None
    stall_after: timedelta = STALL_AFTER
    processes: int = 0  # processes scanning (a sweep: diagnosing jobs) in parallel; 0 = one per core
    # What the command does with the diagnosis.
    format: Format = Format.HUMAN
    fail_on: FailOn = FailOn.ERROR
    # None: not given, standard output; STANDARD_OUTPUT: `-o -`, standard output asked for.
    output: Path | str | None = None
    reports: tuple[tuple[Format, Path], ...] = ()  # (format, file): more reports of the same run
    expectations: Expectations = Expectations()  # what `logscan check` asks the logs to show
    config_path: Path | None = None  # the config file these settings came from, if any
    # Where alerts are POSTed (a sweep's, a watch's), and as what: --webhook, else
    # $LOGSCAN_WEBHOOK_URL, else the config file's `webhook-url` (the file's mode checked).
    webhook_url: str | None = None
    webhook_payload: str = "auto"

    def selects(self, rule_id: str) -> bool:
        return selected(rule_id, self.select, self.ignore)

    @classmethod
    def resolve(cls, flags: Mapping[str, object], config: Mapping[str, object] | None = None,
                config_path: Path | str | None = None,
                env: Mapping[str, str] | None = None, gate: bool = False) -> "Settings":
        """The settings of one run: flags over the config file over the defaults, every value
        checked. `env` (default: os.environ) is checked for LOGSCAN_MATCHER. The file's
        expectations ([tool.logscan.check]) are read for the gate alone (`gate`, the `check`
        command): a scan, report or sweep run from the same repository is not held to them."""
        unknown_flags = set(flags) - set(FLAG_NAMES)
        if unknown_flags:
            raise TypeError(f"not a settings flag: {sorted(unknown_flags)[0]!r}")
        config = dict(config or {})
        path = Path(config_path) if config_path is not None else None
        file_label = display_path(path) if path is not None else "config"
        unknown = sorted(set(config) - set(CONFIG_KEYS))
        if unknown:
            raise ConfigError(f"{file_label}: unknown setting {unknown[0]!r}; "
                              f"known: {', '.join(sorted(CONFIG_KEYS))}")
        from_file = {CONFIG_KEYS[key]: (f"{file_label}: setting {key!r}", value)
                     for key, value in config.items()}

        def given(name: str):
            value = flags.get(name)
            if value is None or (isinstance(value, (list, tuple)) and not value):
                return None
            return value

        def pick(name: str):
            """(where it came from, value) of the flag, else of the file, else (None, None)."""
            value = given(name)
            if value is not None:
                return FLAG_NAMES[name], value
            return from_file.get(name, (None, None))

        values: dict[str, object] = {}
        # Rule directories add up: the file's (relative to it), then the flags'.
        rule_dirs: list[str] = []
        if "rule_dirs" in from_file:
            where, value = from_file["rule_dirs"]
            base = path.parent if path is not None else Path(".")
            rule_dirs += [str(base / d) for d in _strings(where, value, "directories")]
        if given("rule_dirs") is not None:
            rule_dirs += list(_strings("--rules", flags["rule_dirs"], "directories"))
        values["rule_dirs"] = tuple(rule_dirs)

        for name in ("select", "ignore"):
            where, value = pick(name)
            if where is not None:
                values[name] = _strings(where, value, "rule ids")
        where, value = pick("progress_patterns")
        if where is not None:
            values["progress_patterns"] = tuple(
                _progress_pattern(where, p) for p in _strings(where, value, "regular expressions"))
        where, value = pick("format")
        if where is None and given("default_format") is not None:
            where, value = FLAG_NAMES["default_format"], flags["default_format"]
        if where is not None:
            values["format"] = _choice(where, value, Format)
        where, value = pick("fail_on")
        if where is not None:
            values["fail_on"] = _choice(where, value, FailOn)
        where, value = pick("job_status")
        if where is not None:
            values["job_status"] = _choice(where, value, JobStatus)
        where, value = pick("stall_after")
        if where is not None:
            values["stall_after"] = _duration(where, value, example="30m")
        where, value = pick("now")
        if where is not None:
            values["now"] = _now(where, value)
        where, value = pick("processes")
        if where is not None:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"{where} must be a whole number, not {_kind(value)}")
            if not 0 <= value <= MAX_PROCESSES:
                raise ConfigError(f"{where} must be between 0 (one per core) and {MAX_PROCESSES}, "
                                  f"not {value}")
            values["processes"] = value
        where, value = pick("output")
        if where is not None:
            if not isinstance(value, (str, os.PathLike)) or not os.fspath(value):
                raise ConfigError(f"{where} must be a file name, not {_kind(value)}")
            values["output"] = STANDARD_OUTPUT if value == STANDARD_OUTPUT else Path(value)
        if given("reports") is not None:
            values["reports"] = _reports(flags["reports"], values.get("output"))
        where, value = pick("webhook_url")
        environ = os.environ if env is None else env
        if given("webhook_url") is None and environ.get(WEBHOOK_VARIABLE):
            where, value = f"${WEBHOOK_VARIABLE}", environ[WEBHOOK_VARIABLE]
        elif where is not None and given("webhook_url") is None:
            _private(path, file_label)
        if where is not None:
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"{where} must be a URL, not {_kind(value)}")
            values["webhook_url"] = value.strip()
        where, value = pick("webhook_payload")
        if where is not None:
            values["webhook_payload"] = str(_choice(where, value, WebhookPayload))
        values["expectations"] = _expectations(
            flags, from_file.get("expectations") if gate else None, given)
        check_matcher(os.environ if env is None else env)
        return cls(**values, config_path=path)


WEBHOOK_VARIABLE = "LOGSCAN_WEBHOOK_URL"


def _private(path: Path | None, file_label: str) -> None:
    """A config file that holds a webhook URL (a secret: anyone who has it can post to the
    channel) must be readable by its owner alone."""
    if path is None:
        return
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if mode & 0o077:
        raise ConfigError(f"{file_label}: setting 'webhook-url' is a secret, but the file is readable "
                          f"by others (mode {mode & 0o777:o}): chmod 600 it, or set ${WEBHOOK_VARIABLE} instead")


def _reports(value, output: Path | None) -> tuple[tuple[Format, Path], ...]:
    out, files = [], {os.path.normpath(output)} if output is not None else set()
    for fmt, file in value:
        where = f"--{getattr(fmt, 'value', fmt)}-output"
        fmt = _choice(where, fmt, Format)
        if not isinstance(file, (str, os.PathLike)) or not os.fspath(file):
            raise ConfigError(f"{where} must be a file name, not {_kind(file)}")
        if os.path.normpath(file) in files:
            raise ConfigError(f"{where}: {os.fspath(file)} is already written by another report")
        files.add(os.path.normpath(file))
        out.append((fmt, Path(file)))
    return tuple(out)


def _expectations(flags: Mapping[str, object], from_file, given) -> Expectations:
    """The flags over the [tool.logscan.check] table, each value checked."""
    table_where, table = from_file if from_file is not None else (None, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{table_where} must be a table ([tool.logscan.check]), not {_kind(table)}")
    unknown = sorted(set(table) - set(CHECK_KEYS))
    if unknown:
        raise ConfigError(f"{table_where}: unknown expectation {unknown[0]!r}; "
                          f"known: {', '.join(sorted(CHECK_KEYS))}")
    picked = {CHECK_KEYS[key]: (f"{table_where[:-1]}.{key}'", value) for key, value in table.items()}
    for expectation in EXPECTATIONS:
        value = given(f"expect_{expectation.field}")
        if value is not None:
            picked[expectation] = (expectation.flag, value)
    return Expectations(**{expectation.field: _expected(expectation.kind, where, value)
                           for expectation, (where, value) in picked.items()})


def _expected(kind: Kind, where: str, value: object):
    """One expectation's value, checked for its kind."""
    if kind is Kind.SWITCH:
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, not {_kind(value)}")
        return value
    if kind is Kind.DURATION:
        return _duration(where, value, example="10m")
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{where} must be a whole number, not {_kind(value)}")
    if not kind.least <= value <= MAX_COUNT:
        raise ConfigError(f"{where} must be between {kind.least} and {MAX_COUNT}, not {value}")
    return value


def _duration(where: str, value: object, example: str) -> timedelta:
    """A duration flag or setting: a timedelta, text such as `1h30m`, or a number of seconds (a
    number in a config file is seconds, as a bare number on the command line is)."""
    if isinstance(value, timedelta):
        duration = value
    elif isinstance(value, (int, str)) and not isinstance(value, bool):
        try:
            duration = parse_duration(str(value))
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    else:
        raise ConfigError(f"{where} must be a duration such as \"{example}\", not {_kind(value)}")
    if not timedelta(0) < duration <= MAX_DURATION:
        raise ConfigError(f"{where} must be more than 0 and at most {MAX_DURATION.days} days, "
                          f"not {value!r}")
    return duration


def check_matcher(env: Mapping[str, str]) -> None:
    """LOGSCAN_MATCHER, which the scanner reads, names a matcher that can be used."""
    matcher = env.get("LOGSCAN_MATCHER") or "auto"
    if matcher not in MATCHERS:
        raise ConfigError(f"environment variable LOGSCAN_MATCHER={matcher!r} is not a matcher: "
                          f"use {', '.join(MATCHERS)}")
    if matcher == "hyperscan":
        try:
            found = importlib.util.find_spec("hyperscan") is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ConfigError("LOGSCAN_MATCHER=hyperscan, but the hyperscan package is not "
                              "installed: pip install hyperscan, or unset LOGSCAN_MATCHER")


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, datetime):
        return "a date"
    return f"a {type(value).__name__}"


def _strings(where: str, value: object, what: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"{where} must be a list of {what}, not {_kind(value)}")
    for item in value:
        if not isinstance(item, str):
            raise ConfigError(f"{where} must be a list of {what}, not a list holding {_kind(item)}")
        if not item.strip():
            raise ConfigError(f"{where}: an empty string is not one of the {what}")
    return tuple(value)


def _choice(where: str, value: object, choices: type[StrEnum]) -> StrEnum:
    """The member of `choices` that a flag (already one, from typer) or a config value names."""
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be one of {', '.join(choices)}, not {_kind(value)}")
    try:
        return choices(value)
    except ValueError:
        raise ConfigError(f"{where} must be one of {', '.join(choices)}, not {value!r}") from None


def _now(where: str, value: object) -> datetime:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be an ISO 8601 time, not {_kind(value)}")
    try:
        return parse_time(value)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def scoped_flags(pattern: str) -> str:
    """`(?i)step` as `(?i:step)`: leading global flags made a scoped group, so the pattern still
    means the same once the scanner has joined it with others."""
    found = _GLOBAL_FLAGS.match(pattern)
    if found is None:
        return pattern
    flags = "".join(dict.fromkeys(re.findall(r"[aiLmsux]", found.group())))
    rest = pattern[found.end():]
    # A verbose pattern may end in a comment, which would swallow the closing parenthesis.
    return f"(?{flags}:{rest}\n)" if "x" in flags else f"(?{flags}:{rest})"


def _progress_pattern(where: str, pattern: str) -> str:
    """The pattern as the scanner will run it (logscan.scan.finders.compile_user_progress), once
    it is known to compile there: bytes, inside a group, on the rule engine."""
    import regex

    try:
        pattern.encode()
    except UnicodeEncodeError:
        raise ConfigError(f"{where}: pattern {pattern!r} is not valid UTF-8") from None
    if (why := too_costly(pattern)) is not None:
        raise ConfigError(f"{where}: pattern {pattern!r} has {why}: too costly to run")
    scoped = scoped_flags(pattern)
    try:
        compiled = regex.compile(f"(?:{scoped})".encode())
    except (regex.error, ValueError, OverflowError, RecursionError, MemoryError) as exc:
        raise ConfigError(f"{where}: invalid regular expression {pattern!r}: {exc}") from None
    if compiled.search(b"") is not None:
        raise ConfigError(f"{where}: pattern {pattern!r} matches an empty line, so every line "
                          "would count as progress")
    return scoped
