"""What the renderers share: findings in report order, root cause first, which rules a
testcase or a SARIF rule list covers, and where the waiting ranks of a hang stopped. Read from the
Diagnosis and the catalogue only."""

from __future__ import annotations

from datetime import datetime, timezone

from logscan.diagnosis import Diagnosis, Finding, Mark, Place
from logscan.times import YearlessTime
from logscan.vocabulary import Severity

ELLIPSIS = "…"


def ordered(d: Diagnosis) -> list[Finding]:
    """Root cause first, then the other errors that stand alone, their cascades, warnings, info:
    what a reader who sees only the first few should see."""
    def rank(f: Finding):
        if f.is_root:
            return 0
        if f.severity == Severity.ERROR:
            return 2 if f.is_consequence else 1
        return 3 if f.severity == Severity.WARNING else 4
    return sorted(d.findings, key=lambda f: (rank(f), f.sort_key))


def place_of(f: Finding) -> str:
    """The Worker a finding is about, as a testcase names it; `job` when it is about the job."""
    if f.node_rank is not None:
        return f"node {f.node_rank}"
    if f.worker:
        return f.worker
    if len(f.node_ranks) == 1:
        return f"node {f.node_ranks[0]}"
    return "job"


def readable_time(when: datetime) -> str:
    """A time as a person reads it at night: `2026-12-01 17:41:37 UTC` (seconds, in UTC where
    the time has a zone); a header time without a year as `12-01 17:41:37 (no year on the line)`."""
    if isinstance(when, YearlessTime):
        return when.strftime("%m-%d %H:%M:%S") + " (no year on the line)"
    if when.tzinfo is None:
        return when.strftime("%Y-%m-%d %H:%M:%S")
    return when.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def first_failure_apart(d: Diagnosis) -> Place | None:
    """The first failure where it is not the root cause's own rank: there the root cause says
    it, and a rank has one role."""
    first, root = d.first_failure, d.root_cause
    if first is None or (root is not None and (first.node_rank, first.rank) == (root.node_rank, root.rank)):
        return None
    return first


def straggler_line(d: Diagnosis, f: Finding) -> Mark | None:
    """The straggler's own last line when a hang's first evidence is it: what the rank did
    last, shown apart from the others' timeouts."""
    if not f.hang or f.rank is None or not f.evidence:
        return None
    first = f.evidence[0]
    return next((p.last_line for p in d.processes if p.rank == f.rank and p.last_line is not None
                 and (p.last_line.file, p.last_line.line) == (first.file, first.line)), None)


def stuck_lines(d: Diagnosis) -> list[tuple[str, Mark, str | None]]:
    """For a hang: (who, its last line, when its Worker's log last moved, where a report may say
    it) for each waiting rank (or Worker, when no rank is known) whose last line is known."""
    workers = {w.node_rank: w for w in d.workers if w.node_rank is not None}
    processes = {(p.node_rank, p.rank): p for p in d.processes}
    out = []
    for place in d.stuck:
        worker = workers.get(place.node_rank)
        owner = worker if place.rank is None else processes.get((place.node_rank, place.rank))
        mark = owner.last_line if owner is not None else None
        if mark is not None:
            who = (f"node {place.node_rank}" if place.rank is None
                   else f"rank {place.rank} (node {place.node_rank})")
            out.append((who, mark, worker.last_known if worker else None))
    return out


def rules_of(d: Diagnosis, catalogue, checked) -> list:
    """The catalogue rules a report covers: those checked in this run (every rule with no
    catalogue given), and every rule a finding names."""
    ids = list(checked) if checked is not None else (
        list(catalogue.rules) if catalogue is not None else [])
    ids += [f.rule for f in d.findings]
    ids = sorted(dict.fromkeys(ids))
    return [(rule_id, catalogue.rules.get(rule_id) if catalogue is not None else None)
            for rule_id in ids]


def shorten_path(path: str, room: int) -> str:
    """A path that fits `room` columns, shortened from the left at a `/` where it can be."""
    if len(path) <= room:
        return path
    tail = path[-(room - 1):] if room > 1 else path[-1:]
    cut = tail.find("/")
    if 0 <= cut < len(tail) - 1 and len(tail) - cut > room // 3:
        tail = tail[cut:]
    return ELLIPSIS + tail


def novel_lines_reason(d: Diagnosis) -> str:
    """Why a report shows the novel lines: the only lead, or context for a known root cause."""
    return "no rule explains this job" if d.unexplained else "context for the root cause"
