"""Parsers for the structured lines logscan understands natively.

Each takes a prefix-stripped line body and returns fields or None. They know nothing of rules.
"""

from __future__ import annotations

import re
from datetime import datetime

LAUNCH = re.compile(r"DDP launch:(?P<rest>.*)")
_KEY_VALUE = re.compile(r"(?P<key>[A-Za-z_][\w.-]*)=(?P<value>\S*)")

# `RANK=` must not be read inside `LOCAL_RANK=` or `NODE_RANK=`.
ENV_TOKEN = re.compile(
    r"(?<![A-Za-z_])(?P<key>LOCAL_RANK|RANK|WORLD_SIZE)\s*[=:]\s*(?P<value>-?\d+|None|'[^']*'|\"[^\"]*\")?")
ENV_MARKER = "torchrun env"
# A continuation piece of an interleaved env print holds nothing but env tokens.
_ENV_ONLY = re.compile(
    r"\s*(?:(?:torchrun env:?|(?<![A-Za-z_])(?:LOCAL_RANK|RANK|WORLD_SIZE)\s*[=:]\s*(?:-?\d+|None)?|[,;])\s*)+")

TRACEBACK_START = "Traceback (most recent call last)"
CHAINED = ("During handling of the above exception", "The above exception was the direct cause",
           "Original Traceback")
EXCEPTION = re.compile(
    r"(?P<exc>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit))(?::[ ]?(?P<detail>.*))?")

SUMMARY_FIELD = re.compile(
    r"\s*(?P<key>time|host|rank|exitcode|error_file|traceback)\s*:\s?(?P<value>.*)")
SUMMARY_ROOT = "Root Cause (first observed failure)"
SUMMARY_FAILURES = "Failures:"
FAILED_LINE = re.compile(
    r"failed \(exitcode: (?P<exitcode>-?\d+)\) local_rank: (?P<local_rank>\d+) \(pid: (?P<pid>\d+)\)")


def _to_int(value: str | None) -> int | None:
    if value is None:
        return None
    value = value.strip().strip("'\"")
    try:
        return int(value)
    except ValueError:
        return None


def parse_launch(body: str) -> dict | None:
    found = LAUNCH.search(body)
    if not found:
        return None
    fields = {m["key"]: m["value"] for m in _KEY_VALUE.finditer(found["rest"])}
    master = fields.get("master") or ""
    addr, port = master, None
    if master.startswith("["):  # [IPv6]:port
        close = master.find("]")
        addr = master[1:close] if close > 0 else master[1:]
        port = _to_int(master[close + 2:]) if close > 0 and master[close + 1:close + 2] == ":" else None
    elif ":" in master:
        head, _, tail = master.rpartition(":")
        if tail.isdigit():
            addr, port = head, int(tail)
    return {
        "nnodes": _to_int(fields.get("nnodes")),
        "node_rank": _to_int(fields.get("node_rank")),
        "gpus_per_node": _to_int(fields.get("gpus_per_node")),
        "total_procs": _to_int(fields.get("total_procs")),
        "master_addr": addr or None,
        "master_port": port,
        "raw_fields": tuple(fields.items()),
    }


def env_tokens(body: str) -> tuple[int, list[tuple[str, int | None]]] | None:
    """(number of `torchrun env` markers, [(key, value)]) for an env print or a piece of one."""
    markers = body.count(ENV_MARKER)
    if not markers and not _ENV_ONLY.fullmatch(body):
        return None
    tokens = [(m["key"], _to_int(m["value"])) for m in ENV_TOKEN.finditer(body)]
    if not tokens and not markers:
        return None
    return markers, tokens


class EnvAssembler:
    """Rebuilds env prints from tokens, including prints that interleaved inside one line.

    Several processes share one stdout: `torchrun env:torchrun env: RANK= 2 LOCAL_RANK= 0 ...`
    followed by ` RANK= 3 LOCAL_RANK= 1 ...` is two prints. Each token fills the oldest print
    still missing that key, so the pieces are reassembled in the order they were written.
    """

    KEYS = ("RANK", "LOCAL_RANK", "WORLD_SIZE")

    def __init__(self):
        self.open: list[tuple[object, dict]] = []  # (where of first token, {key: value})

    def feed(self, where, tokens) -> list[tuple[object, dict]]:
        done = []
        for key, value in tokens:
            for _, record in self.open:
                if key not in record:
                    record[key] = value
                    break
            else:
                self.open.append((where, {key: value}))
            while self.open and len(self.open[0][1]) == len(self.KEYS):
                done.append(self.open.pop(0))
        return done

    def flush(self) -> list[tuple[object, dict]]:
        rest, self.open = self.open, []
        return rest


def parse_exception(body: str) -> tuple[str, str] | None:
    found = EXCEPTION.fullmatch(body.rstrip())
    if not found:
        return None
    return found["exc"], (found["detail"] or "").strip()


def parse_summary_time(value: str) -> datetime | None:
    try:
        return datetime.strptime(value.strip(), "%Y-%m-%d_%H:%M:%S")
    except ValueError:
        return None
