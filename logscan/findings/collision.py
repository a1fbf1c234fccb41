"""Several Workers writing one log path: the second `tee` overwrites the first."""

from __future__ import annotations

from collections import defaultdict

from logscan.findings.base import few, finding, plural
from logscan.model.job import Job


def log_collision(job: Job, rule):
    out = []
    by_file = defaultdict(list)
    for worker in job.launched:
        for launch in worker.launches:
            by_file[launch.where.file].append(launch)
    for file, launches in sorted(by_file.items()):
        node_ranks = sorted({l.node_rank for l in launches if l.node_rank is not None})
        if len(node_ranks) > 1:
            out.append(finding(rule, f"{file} holds launch lines of node_ranks {few(node_ranks)}",
                               [l.where for l in launches]))
    for worker in job.launched:
        foreign = worker.foreign_envs
        if foreign and not worker.shared_file:
            ranks = sorted({e.rank for e in foreign})
            homes = sorted({h for e in foreign if (h := job.home_node(e)) is not None})
            owner = plural(homes, "node_rank", "node_ranks") if homes else "another node_rank"
            out.append(finding(
                rule, f"{worker.files[0]} ({worker.label}) holds env lines of "
                      f"rank{'s' if len(ranks) > 1 else ''} {few(ranks)}, "
                      f"which belong to {owner}: another Worker wrote the same file",
                [worker.launch.where] + [e.where for e in foreign], node_rank=worker.node_rank))
    # One file with one Worker's lines only is that Worker's log, not a collision: scanning one
    # Worker's directory of a bigger job is missing-worker's business.
    return out
