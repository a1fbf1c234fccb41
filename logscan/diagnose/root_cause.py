"""Which finding explains the job, and which findings are only its consequences.

torchrun names a root cause per node, often a victim it SIGTERMed. Here the whole job is judged by
each rule's declared role and precedence (its catalogue file): a launch-shape problem explains
everything after it; otherwise the earliest failure that is not a cascade wins, by the times the
lines carry where they carry them and by precedence (how specific the failure is) where they do
not; a cascade rule leads only when nothing else explains the job.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

from logscan.diagnosis import Finding, Place
from logscan.model.job import Job
from logscan.scan.clock import aligned
from logscan.times import YearlessTime
from logscan.vocabulary import Role, Severity


def _role(job: Job, f: Finding) -> Role | None:
    rule = job.catalogue.rules.get(f.rule)
    return rule.role if rule is not None else None


def _precedence(job: Job, f: Finding) -> int:
    return job.catalogue.precedence(f.rule)


def _times(candidates: list[Finding]) -> dict[int, datetime | None]:
    """Each candidate's time (by id), comparable with the others': a year-less header time is
    placed in the year nearest the other year-less ones, and left out (None) when a full time
    is there too, since which year it belongs to is not known here."""
    read = [f.time for f in candidates]
    full = any(t is not None and not isinstance(t, YearlessTime) for t in read)
    read = aligned(read)
    out = {}
    for f, stamp in zip(candidates, read):
        if stamp is not None and isinstance(stamp, YearlessTime) and full:
            stamp = None
        elif stamp is not None and stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=timezone.utc)
        out[id(f)] = stamp
    return out


def _pick_leader(job: Job, candidates: list[Finding]) -> Finding:
    # Specific beats generic: a line that is both a known signature and a raised exception is
    # the signature's finding, the raise its context.
    told: dict[tuple[str, int], int] = {}
    for f in candidates:
        for e in f.evidence[:1]:
            key = (e.file, e.line)
            told[key] = min(told.get(key, _precedence(job, f)), _precedence(job, f))
    candidates = [f for f in candidates if not f.evidence or
                  told[(f.evidence[0].file, f.evidence[0].line)] == _precedence(job, f)]
    times = _times(candidates)
    timed = [f for f in candidates if times[id(f)] is not None]
    if len(timed) == len(candidates) and len(timed) > 1:
        # Every candidate carries a time: the earliest wins, specificity breaks ties.
        return min(candidates, key=lambda f: (times[id(f)], _precedence(job, f), f.rank is None,
                                              f.sort_key))
    # A finding that names its rank tells more than a rank-less report of the same failure.
    return min(candidates, key=lambda f: (_precedence(job, f), times[id(f)] is None,
                                          times[id(f)] or datetime.min.replace(tzinfo=timezone.utc),
                                          f.rank is None, f.sort_key))


def _same_failure(a: Finding, b: Finding) -> bool:
    return (a.rank is not None and a.rank == b.rank) or bool(
        {(e.file, e.line) for e in a.evidence} & {(e.file, e.line) for e in b.evidence})


def _told_by(f: Finding, lines: set) -> bool:
    """Every line of `f` is evidence of cascades too: another rule telling the same failures."""
    own = {(e.file, e.line) for e in f.evidence}
    return bool(own) and own <= lines


def _first_failure(job: Job, errors: list[Finding], root: Finding) -> Place | None:
    """Where the job first failed: the first failing process if any, else the root's place."""
    failing = [f for f in errors if _role(job, f) not in (Role.LAUNCH_SHAPE, Role.CASCADE) and not f.cascade]
    if failing:
        first = _pick_leader(job, failing)
        return Place(first.node_rank, first.rank)
    rules = job.catalogue.rules
    if all(f.rule in rules and rules[f.rule].job_may_run for f in errors):
        return None
    return Place(root.node_rank, root.rank)


def choose_root_cause(job: Job, findings: list[Finding]):
    """(the findings, the root cause marked and its consequences linked to its fingerprint; the
    root cause, one of them; where the job first failed). Every finding has its fingerprint."""
    # An unmet expectation (logscan check) is the gate's result: never the job's root cause, nor
    # a consequence of it.
    errors = [f for f in findings if f.severity == Severity.ERROR and _role(job, f) != Role.EXPECTATION]
    if not errors:
        return findings, None, None
    follows = lambda f: _role(job, f) == Role.CASCADE  # noqa: E731
    structural = [f for f in errors if _role(job, f) == Role.LAUNCH_SHAPE]
    if structural:
        root = min(structural, key=lambda f: (_precedence(job, f), f.sort_key))
        explained = lambda f: True  # noqa: E731 - everything after a launch-shape problem
    else:
        leaders = [f for f in errors if not follows(f) and not f.cascade]
        if leaders:
            root = _pick_leader(job, leaders)
            told = {(e.file, e.line) for f in errors if f.cascade for e in f.evidence}
            explained = lambda f: (follows(f) or f.cascade or _same_failure(f, root)  # noqa: E731
                                   or _told_by(f, told))
        else:
            root = min(errors, key=lambda f: (_precedence(job, f), f.sort_key))
            explained = follows
    out, judged = [], {id(f) for f in errors}
    rules = job.catalogue.rules
    for f in findings:
        # A finding that needs a fix of its own (a masked exit status: the launch command) is
        # never folded under the root as its consequence.
        independent = f.rule in rules and rules[f.rule].independent
        if f is root:
            f = replace(f, is_root=True)
        elif id(f) in judged and explained(f) and not independent:
            f = replace(f, caused_by=root.fingerprint, cascade=True)
        out.append(f)
    return out, next(f for f in out if f.is_root), _first_failure(job, errors, root)
