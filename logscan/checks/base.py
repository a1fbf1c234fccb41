"""What every check shares: turning a catalogue entry plus facts into a Finding."""

from __future__ import annotations

from collections.abc import Iterable

from logscan.catalogue import Rule
from logscan.events import SignalHit, Where
from logscan.diagnosis import Evidence, Finding, number_ranges
from logscan.model import Job, Worker

# Evidence lines a finding keeps: enough to show the failure and where it was seen again.
EVIDENCE_PER_FINDING = 4


def finding(rule: Rule, message: str, evidence: Iterable[Where] = (), *, node_rank=None,
            rank=None, worker=None, hint: str | None = None, limit: int = EVIDENCE_PER_FINDING,
            **extra) -> Finding:
    wheres = list(dict.fromkeys(w for w in evidence if w is not None))[:limit]
    stamp = next((w.time.isoformat() for w in wheres if w.time is not None), None)
    return Finding(
        rule=rule.id, severity=rule.severity, message=message, hint=hint or rule.hint, stage=rule.stage,
        node_rank=node_rank, rank=rank, evidence=tuple(Evidence.at(w) for w in wheres),
        worker=worker, time=stamp, **extra)


def plural(items: Iterable, one: str, many: str) -> str:
    items = list(items)
    return f"{one} {items[0]}" if len(items) == 1 else f"{many} {number_ranges(items)}"


def hits(worker: Worker, *rule_ids: str) -> list[SignalHit]:
    return [h for h in worker.hits if h.rule_id in rule_ids]


def duration(job: Job) -> str:
    """The stall threshold as a message says it."""
    minutes = int(job.stall_after.total_seconds() // 60)
    return f"{minutes} min" if minutes else f"{int(job.stall_after.total_seconds())} s"
