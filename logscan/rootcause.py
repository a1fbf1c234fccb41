"""Which finding explains the job, and which are cascades of it."""

from __future__ import annotations

from logscan.findings import Finding, Place, RootCause
from logscan.model import Job

# Launch-shape problems explain everything that happens after them, in this order.
STRUCTURAL = (
    "launch-env-missing",
    "duplicate-node-rank",
    "launch-mismatch",
    "gpu-count-mismatch",
    "world-size-mismatch",
    "missing-worker",
    "port-in-use",
)


def choose_root_cause(job: Job, findings: list[Finding]):
    errors = [f for f in findings if f.severity == "error"]
    if not errors:
        return findings, None, None
    for rule_id in STRUCTURAL:
        for f in errors:
            if f.rule == rule_id:
                return findings, _root(f), Place(f.node_rank, f.rank)
    first = min(errors, key=lambda f: f.sort_key)
    return findings, _root(first), Place(first.node_rank, first.rank)


def _root(f: Finding) -> RootCause:
    return RootCause(f.rule, f.node_rank, f.rank, f.message)
