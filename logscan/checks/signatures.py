"""Signature rules: a catalogue pattern hit is the finding. One per rule, Worker and rank."""

from __future__ import annotations

from logscan.checks.base import finding
from logscan.model import Job


def signature_findings(job: Job, rule):
    groups_by_key: dict = {}
    for worker in job.workers:
        for hit in worker.hits:
            if hit.rule_id != rule.id:
                continue
            groups = dict(hit.groups)
            rank = worker.global_rank(hit.where, groups)
            key = (worker.label, rank)
            if key not in groups_by_key:
                groups_by_key[key] = (worker, rank, groups, [])
            groups_by_key[key][3].append(hit.where)
    out = []
    for worker, rank, groups, wheres in groups_by_key.values():
        groups.setdefault("node_rank", "?" if worker.node_rank is None else str(worker.node_rank))
        groups.setdefault("rank", "?" if rank is None else str(rank))
        out.append(finding(rule, rule.render_message(groups), wheres, node_rank=worker.node_rank,
                           rank=rank, worker=worker.label))
    return out
