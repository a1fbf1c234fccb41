"""A Worker's lines grouped by the rank that wrote them: the rules that name a straggler quote its
own last line, and the timeline draws each rank from the same grouping."""

from __future__ import annotations

from collections import defaultdict

from logscan.diagnosis import Where
from logscan.model.job import Job, Worker
from logscan.rule_ids import DEATH_SIGNAL_RECEIVED, WAITING_EVIDENCE

# What a rank says while it waits on the others; torchrun's own signal report is torchrun's.
RANK_WAITING = tuple(s for s in WAITING_EVIDENCE if s != DEATH_SIGNAL_RECEIVED)


class RankLines:
    """One Worker's lines by rank, built once per Worker: a rank's own lines are its env print,
    its progress, its exceptions and what it said while waiting on others (torchrun's report
    about it is torchrun's, not the rank's)."""

    def __init__(self, w: Worker):
        self.position = w.position
        self.progress: dict[int, list[Where]] = defaultdict(list)
        self.own: dict[int, list[Where]] = defaultdict(list)
        for env in w.envs:
            if env.rank is not None:
                self.own[env.rank].append(env.where)
        for p in w.progress:
            if (rank := w.global_rank(p.where)) is not None:
                self.progress[rank].append(p.where)
                self.own[rank].append(p.where)
        said = [x.where for x in w.exceptions if not x.agent] + \
            [h.where for h in w.hits if h.rule_id in RANK_WAITING]
        for where in said:
            if (rank := w.global_rank(where)) is not None:
                self.own[rank].append(where)

    def last_own_line(self, rank: int) -> Where | None:
        lines = self.own.get(rank)
        return max(lines, key=self.position) if lines else None


def last_own_line(job: Job, rank: int) -> Where | None:
    """The last line the rank itself wrote, in the log of the Worker that ran it."""
    node_rank = job.node_of_rank(rank)
    for worker in job.workers:
        if node_rank is None or worker.node_rank == node_rank:
            line = RankLines(worker).last_own_line(rank)
            if line is not None:
                return line
    return None
