"""Line prefixes added by collectors, loggers and torchrun: stripped before matching, kept as data.

A line may carry several, in this order or another: `kubectl logs --timestamps` time, torchrun's
`[default0]:` (--tee) or `[rank3]:` (child stderr), glog or c10d headers, Python logging headers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import re

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")

_PREFIX = re.compile(
    r"""
      (?P<rfc3339>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)[ \t]+
    | \[default(?P<tee_local>\d+)\]:[ \t]?
    | \[rank(?P<rank>\d+)\]:[ \t]?
    | \[(?P<c10d_level>[IWEF])(?P<c10d_md>\d{4})[ ](?P<c10d_time>\d{2}:\d{2}:\d{2})(?:\.\d+)?
        (?:[ ]\d+)?[ ][^\]\s]+:\d+\][ \t]?
    | \[[IWEF][ ][^\]\s]+:\d+\][ \t]?
    | (?P<glog_level>[IWEF])(?P<glog_md>\d{4})[ ](?P<glog_time>\d{2}:\d{2}:\d{2})(?:\.\d+)?[ ]+\d+[ ]
        [^\]\s]+:\d+\][ \t]?
    | \[(?P<pylog_bracket>\d{4}-\d{2}-\d{2}[ ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)\][ ]
        (?:[\w.]+:[ ])?(?:\[\w+\][ ])?
    | (?P<pylog>\d{4}-\d{2}-\d{2}[ ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)(?:[ ]+[-|:][ ]+|[ ]+)
    | (?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:[ \t]?
    """,
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class Stripped:
    body: str
    rank: int | None = None
    local_rank: int | None = None
    time: datetime | None = None


def _parse_rfc3339(text: str) -> datetime | None:
    # Python 3.11 takes at most microseconds: trim nanoseconds before parsing.
    main, dot, rest = text.partition(".")
    if dot:
        digits = "".join(ch for ch in rest if ch.isdigit())
        zone = rest[len(digits):]
        text = f"{main}.{digits[:6]}{zone}"
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def _parse_plain(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace(",", "."))
    except ValueError:
        return None


def clean(text: str) -> str:
    """Remove colour codes and keep what the last carriage return left on screen."""
    if "\x1b" in text:
        text = ANSI.sub("", text)
    if "\r" in text:
        parts = [part for part in text.split("\r") if part.strip()]
        text = parts[-1] if parts else ""
    return text


def strip_prefixes(line: str) -> Stripped:
    body = clean(line)
    rank = local_rank = None
    stamp: datetime | None = None
    pos = 0
    while True:
        match = _PREFIX.match(body, pos)
        if not match or match.end() == pos:
            break
        pos = match.end()
        groups = match.groupdict()
        if groups["rank"] is not None:
            rank = int(groups["rank"])
        elif groups["tee_local"] is not None:
            local_rank = int(groups["tee_local"])
        elif stamp is None:
            if groups["rfc3339"]:
                stamp = _parse_rfc3339(groups["rfc3339"])
            elif groups["pylog"]:
                stamp = _parse_plain(groups["pylog"])
            elif groups["pylog_bracket"]:
                stamp = _parse_plain(groups["pylog_bracket"])
    return Stripped(body=body[pos:], rank=rank, local_rank=local_rank, time=stamp)
