"""Which Worker rows and ranks each finding is about, for the views that place findings: where
each finding is shown, the ranks left waiting by a hang, and each Worker's findings."""

from __future__ import annotations

from dataclasses import replace

from logscan.diagnosis import Finding, Location, Place, WorkerSummary
from logscan.rule_ids import HANG_IN_RENDEZVOUS
from logscan.vocabulary import ProcessRole, RunStage, Severity


def stuck_places(findings, workers, processes) -> tuple[Place, ...]:
    """Where a hang left things waiting: the Workers stuck in rendezvous, and every process that
    did not fail by itself when processes hung or a collective timed out. The straggler a hang
    names is not one of them: it is what the others waited for, and the hang's evidence quotes
    its last line."""
    hangs = [f for f in findings if f.hang and f.severity == Severity.ERROR]
    places = [Place(f.node_rank, None) for f in hangs
              if f.rule == HANG_IN_RENDEZVOUS and f.node_rank is not None]
    stragglers = {f.rank for f in hangs if f.rank is not None}
    if any(f.rule != HANG_IN_RENDEZVOUS for f in hangs):
        waiting = [Place(p.node_rank, p.rank) for p in processes
                   if (p.failed is None or p.cascade) and p.rank not in stragglers]
        places += waiting or [Place(w.node_rank, None) for w in workers
                              if w.node_rank is not None and w.stage != RunStage.LAUNCH]
    return tuple(dict.fromkeys(places))


class _Rows:
    """Where the Worker rows are, by node_rank, label and file, and each rank's node_rank: what
    `_about` looks up for every finding (scanning every row per finding was quadratic)."""

    def __init__(self, workers: tuple[WorkerSummary, ...], processes):
        self.workers = workers
        self.at_node: dict = {}
        self.named: dict = {}
        self.in_file: dict = {}
        for i, w in enumerate(workers):
            self.at_node.setdefault(w.node_rank, []).append(i)
            self.named.setdefault(w.label, []).append(i)
            for file in w.files:
                self.in_file.setdefault(file, []).append(i)
        self.node_of_rank: dict = {}
        for p in processes:
            self.node_of_rank.setdefault(p.rank, set()).add(p.node_rank)

    def labels(self, rows: set[int]) -> list[str]:
        return [self.workers[i].label for i in sorted(rows)]


def _about(f, rows: _Rows) -> list[str]:
    """Labels of the Workers a finding is about: its node_rank(s) or Worker, else the Workers of
    its ranks, else those whose files hold its evidence."""
    nodes = {f.node_rank} if f.node_rank is not None else set(f.node_ranks)
    hit = {i for n in nodes for i in rows.at_node.get(n, ())} | set(rows.named.get(f.worker, ()))
    if hit or nodes:
        return rows.labels(hit)  # a node_rank with no log has no Worker row: the report shows it apart
    ranks = {f.rank} if f.rank is not None else set(f.ranks)
    nodes = {n for r in ranks for n in rows.node_of_rank.get(r, ()) if n is not None}
    hit = {i for n in nodes for i in rows.at_node.get(n, ())}
    if hit:
        return rows.labels(hit)
    files = {e.file for e in f.evidence}
    return rows.labels({i for file in files for i in rows.in_file.get(file, ())})


def with_findings(workers, processes, findings) -> tuple[WorkerSummary, ...]:
    about: dict[str, list[str]] = {}
    rows = _Rows(workers, processes)
    for f in findings:
        for label in _about(f, rows):
            about.setdefault(label, []).append(f.fingerprint)
    return tuple(replace(w, findings=tuple(about.get(w.label, ()))) for w in workers)


def with_roles(processes, root, stuck) -> tuple:
    """Each process with its one role: the root cause's rank, else a failure of its own or a
    cascade, else waiting on a hang, else none."""
    waiting = {(p.node_rank, p.rank) for p in stuck}
    out = []
    for p in processes:
        if root is not None and root.rank is not None and p.rank == root.rank:
            role = ProcessRole.ROOT_CAUSE
        elif (p.node_rank, p.rank) in waiting:
            role = ProcessRole.WAITING
        elif p.failed is not None:
            role = ProcessRole.CASCADE if p.cascade else ProcessRole.FAILED
        else:
            role = ProcessRole.NO_FAILURE
        out.append(replace(p, role=role))
    return tuple(out)


def location(f: Finding, workers, job: str) -> Location:
    """Where a report shows a finding: its first evidence; else its Worker's first file (line 1);
    else the first file scanned; else the job's name."""
    if f.evidence:
        return Location(f.evidence[0].file, f.evidence[0].line)
    for w in workers:
        if w.files and ((f.node_rank is not None and w.node_rank == f.node_rank)
                        or (f.worker and w.label == f.worker)):
            return Location(w.files[0], 1)
    return next((Location(w.files[0], 1) for w in workers if w.files), Location(job, 1))
