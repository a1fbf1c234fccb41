"""Which finding explains the job, and which findings are only its consequences.

torchrun names a root cause per node, often a victim it SIGTERMed. Here the whole job is judged:
a launch-shape problem explains everything after it; otherwise the earliest failure that is not a
cascade wins, by the times the lines carry where they carry them and by how specific the failure
is where they do not.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

from logscan.findings import Finding, Place, RootCause
from logscan.model import Job

# Launch-shape problems, each explaining the ones after it.
STRUCTURAL = (
    "launch-env-missing",
    "port-in-use",
    "duplicate-node-rank",
    "launch-mismatch",
    "gpu-count-mismatch",
    "world-size-mismatch",
    "missing-worker",
)
# What processes suffer while waiting for, or after, another's failure. They follow a root cause
# and lead only when nothing else explains the job.
FOLLOWERS = (
    "hang-before-first-batch",
    "collective-timeout",
    "hang-in-rendezvous",
    "restart-loop",
    "missing-rank",
    "masked-exit-code",
)


def _time(f: Finding) -> datetime | None:
    if f.time is None:
        return None
    stamp = datetime.fromisoformat(f.time)
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def _specificity(job: Job, f: Finding) -> int:
    """Signature rules name a precise failure; generic crash rules come after them."""
    rule = job.catalogue.rules.get(f.rule)
    return 0 if rule is not None and rule.kind == "signature" else 1


def _pick_leader(job: Job, candidates: list[Finding]) -> Finding:
    timed = [f for f in candidates if _time(f) is not None]
    if len(timed) == len(candidates) and len(timed) > 1:
        # Every candidate carries a time: the earliest wins, specificity breaks ties.
        return min(candidates, key=lambda f: (_time(f), _specificity(job, f), f.sort_key))
    return min(candidates, key=lambda f: (_specificity(job, f), _time(f) is None,
                                          _time(f) or datetime.min.replace(tzinfo=timezone.utc),
                                          f.sort_key))


def _same_failure(a: Finding, b: Finding) -> bool:
    return (a.rank is not None and a.rank == b.rank) or bool(
        {(e.file, e.line) for e in a.evidence} & {(e.file, e.line) for e in b.evidence})


def _told_by(f: Finding, lines: set) -> bool:
    """Every line of `f` is evidence of cascades too: another rule telling the same failures."""
    own = {(e.file, e.line) for e in f.evidence}
    return bool(own) and own <= lines


# Launch-shape findings that describe a job which may still have run: alone, they are no failure.
SHAPE_ONLY = ("gpu-count-mismatch", "world-size-mismatch")


def _first_failure(job: Job, errors: list[Finding], root: Finding) -> Place | None:
    """Where the job first failed: the first failing process if any, else the root's place."""
    failing = [f for f in errors if f.rule not in STRUCTURAL and f.rule not in FOLLOWERS
               and not f.cascade]
    if failing:
        first = _pick_leader(job, failing)
        return Place(first.node_rank, first.rank)
    if all(f.rule in SHAPE_ONLY for f in errors):
        return None
    return Place(root.node_rank, root.rank)


def choose_root_cause(job: Job, findings: list[Finding]):
    errors = [f for f in findings if f.severity == "error"]
    if not errors:
        return findings, None, None
    structural = [f for f in errors if f.rule in STRUCTURAL]
    if structural:
        root = min(structural, key=lambda f: (STRUCTURAL.index(f.rule), f.sort_key))
        explained = lambda f: True  # noqa: E731 - everything after a launch-shape problem
    else:
        leaders = [f for f in errors if f.rule not in FOLLOWERS and not f.cascade]
        if leaders:
            root = _pick_leader(job, leaders)
            told = {(e.file, e.line) for f in errors if f.cascade for e in f.evidence}
            explained = lambda f: (f.rule in FOLLOWERS or f.cascade or _same_failure(f, root)  # noqa: E731
                                   or _told_by(f, told))
        else:
            root = min(errors, key=lambda f: (FOLLOWERS.index(f.rule), f.sort_key))
            explained = lambda f: f.rule in FOLLOWERS  # noqa: E731
    out = []
    for f in findings:
        if f is not root and f.severity == "error" and explained(f):
            f = replace(f, caused_by=root.key, cascade=True)
        out.append(f)
    return (out, RootCause(root.rule, root.node_rank, root.rank, root.message),
            _first_failure(job, errors, root))
