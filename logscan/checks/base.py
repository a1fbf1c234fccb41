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


def plural(items: Iterable[int], one: str, many: str) -> str:
    items = list(items)
    names = ", ".join(str(i) for i in items)
    return f"{one} {names}" if len(items) == 1 else f"{many} {names}"
