"""What every check shares: turning a catalogue entry plus facts into a Finding."""

from __future__ import annotations

from collections.abc import Iterable

from logscan.catalogue import Rule
from logscan.events import Where
from logscan.findings import Evidence, Finding

MAX_EVIDENCE_LINES = 4


def finding(rule: Rule, message: str, evidence: Iterable[Where] = (), *, node_rank=None,
            rank=None, worker=None, hint: str | None = None, **extra) -> Finding:
    wheres = list(dict.fromkeys(w for w in evidence if w is not None))[:MAX_EVIDENCE_LINES]
    stamp = next((w.time.isoformat() for w in wheres if w.time is not None), None)
    return Finding(
        rule=rule.id, severity=rule.severity, message=message, hint=hint or rule.hint, stage=rule.stage,
        node_rank=node_rank, rank=rank, evidence=tuple(Evidence.at(w) for w in wheres),
        worker=worker, time=stamp, **extra)


def plural(items: Iterable, one: str, many: str) -> str:
    items = list(items)
    return f"{one} {items[0]}" if len(items) == 1 else f"{many} {_ranges(items)}"


def _ranges(items: list) -> str:
    """`0-511, 600` for a long run of ints, so a large world still reads in one line."""
    if not all(isinstance(i, int) for i in items):
        return ", ".join(str(i) for i in items)
    ordered, out, start = sorted(items), [], 0
    for i in range(1, len(ordered) + 1):
        if i == len(ordered) or ordered[i] != ordered[i - 1] + 1:
            run = ordered[start:i]
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 2 else ", ".join(map(str, run)))
            start = i
    return ", ".join(out)
