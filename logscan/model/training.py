"""What says that training had started: one declaration, read by the failure pass (did a crash
come after training had started?) and by the Workers' stages (Job.stage_of) alike.

The evidence has two reaches:
- the whole job: a progress line, or a collective numbered past start-up (NCCL's SeqNum). DDP
  steps together, so either one means that every process that had started was past its first
  batch;
- one process: a warning torch prints only inside a training step (the catalogue's informational
  signals of stage training: DDP's first-forward warning, the gradient-layout warnings). It places
  only the process that printed it, by its rank prefix; before torch 2.3 such a warning has no
  prefix, and torch prints it once per process, so as many of them as the Worker has processes
  place each of them.
"""

from __future__ import annotations

from datetime import timedelta
from statistics import median

from logscan.catalogue import Group
from logscan.diagnosis import Where
from logscan.limits import COLLECTIVES_AT_STARTUP
from logscan.rule_ids import COLLECTIVE_TIMEOUT_LINE


def collective_past_startup(hit) -> bool:
    """A collective numbered past start-up (NCCL's SeqNum): it ran in training."""
    if hit.rule_id != COLLECTIVE_TIMEOUT_LINE:
        return False
    seq = hit.group(Group.SEQ)
    return seq is not None and seq.isdigit() and int(seq) > COLLECTIVES_AT_STARTUP


def job_wide(workers) -> bool:
    """Some Worker logged progress, or a collective numbered past start-up ran somewhere."""
    return any(w.progress for w in workers) or any(
        collective_past_startup(h) for w in workers for h in w.hits)


class StepWarnings:
    """One Worker's warnings of a training step, by file and by the rank that printed them (None:
    no rank prefix), for lookups in O(1)."""

    def __init__(self, worker, step_signals: frozenset[str]):
        self.processes = worker.gpus
        self.lines: dict[tuple[str, int | None], list[int]] = {}
        self.first: Where | None = None
        for hit in worker.hits:
            if hit.rule_id not in step_signals:
                continue
            key = (hit.where.file, worker.global_rank(hit.where, dict(hit.groups)))
            self.lines.setdefault(key, []).append(hit.where.line)
            if self.first is None or worker.position(hit.where) < worker.position(self.first):
                self.first = hit.where

    def before(self, where: Where, rank: int | None) -> bool:
        """The process of `rank` had printed a warning of a training step before this line."""
        if rank is not None and any(line < where.line for line in self.lines.get((where.file, rank), ())):
            return True
        unranked = self.lines.get((where.file, None), ())
        return bool(self.processes) and sum(line < where.line for line in unranked) >= self.processes

    def placed(self, ranks) -> bool:
        """Every one of these ranks printed a warning of a training step, or the unranked ones
        are as many as the Worker's processes."""
        unranked = sum(len(lines) for (_, rank), lines in self.lines.items() if rank is None)
        if self.processes and unranked >= self.processes:
            return True
        warned = {rank for (_, rank) in self.lines if rank is not None}
        return bool(ranks) and set(ranks) <= warned


def step_interval(workers) -> timedelta | None:
    """The job's own rhythm: the median time between successive progress lines of one Worker,
    where they carry times of one kind (all aware or all naive)."""
    gaps = []
    for worker in workers:
        times = [p.where.time for p in worker.progress if p.where.time is not None]
        if len({t.tzinfo is None for t in times}) > 1:
            continue
        gaps += [b - a for a, b in zip(times, times[1:]) if b > a]
    return median(gaps) if gaps else None
