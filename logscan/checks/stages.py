"""Stage rules: where each Worker and process stopped, and why."""

from __future__ import annotations

import re
from collections import defaultdict

from logscan.checks.base import finding, plural
from logscan.failures import (SIGKILL, SIGTERM, Failure, awaited_ranks, is_stale, job_ended,
                               process_failures)
from logscan.model import Job, Worker

RENDEZVOUS_SIGNALS = ("store-timeout", "connect-failed")
TERMINATED_SIGNALS = ("sigterm-received",)
# Signatures that already explain why a Worker's torchrun stopped before spawning.
LAUNCH_FAILURE_RULES = ("port-in-use", "launch-env-missing")


def _hits(worker: Worker, *rule_ids: str):
    return [h for h in worker.hits if h.rule_id in rule_ids]


def hang_in_rendezvous(job: Job, rule):
    out = []
    for worker in job.workers:
        if not worker.ran_torchrun or worker.started_processes or _hits(worker, *LAUNCH_FAILURE_RULES):
            continue
        waits = _hits(worker, *RENDEZVOUS_SIGNALS)
        terminated = _hits(worker, *TERMINATED_SIGNALS)
        if waits:
            reason = "its rendezvous timed out waiting for the other Workers"
            evidence = [h.where for h in waits]
        elif terminated:
            reason = "it was terminated while waiting in rendezvous"
            evidence = [h.where for h in terminated]
        elif is_stale(job, worker) and (job.job_status == "running" or not job_ended(job, worker)):
            reason = f"its log has been quiet for more than {_duration(job)} before any process started"
            evidence = [worker.last_line]
        elif job.job_status in ("failed", "succeeded") and not _own_failure(worker):
            reason = "its log stops there with no error of its own: it was still waiting when the job ended"
            evidence = [worker.last_line]
        else:
            continue
        out.append(finding(rule, f"{worker.label} launched but torchrun never started its "
                                 f"processes: {reason}",
                           [worker.launch.where if worker.launch else None, *evidence],
                           node_rank=worker.node_rank, worker=worker.label))
    return out


def _own_failure(worker: Worker) -> bool:
    """Did this Worker's torchrun or processes fail by themselves (anything error-like logged)?"""
    return bool(worker.exceptions or worker.exits or worker.hits)


def _straggler(job: Job, failures: list[Failure]) -> tuple[int | None, int | None, list]:
    """(node_rank, rank, evidence) of the one process the others waited for, if the logs say."""
    awaited = awaited_ranks(job)
    if len(awaited) == 1:
        rank = awaited.pop()
        evidence = [h.where for w in job.workers for h in w.hits if h.group("peer_rank") == str(rank)]
        return job.node_of_rank(rank), rank, evidence[:2]
    killed = _terminated_straggler(failures)
    if killed is not None:
        return killed.node_rank, killed.rank, [killed.where]
    return None, None, []


def _terminated_straggler(failures: list[Failure]) -> Failure | None:
    """The one process torchrun had to SIGTERM while every other one gave up waiting."""
    killed = [f for f in failures if f.exitcode == SIGTERM or "SignalException" in f.summary]
    killed_ranks = {f.rank for f in killed if f.rank is not None}
    waited = [f for f in failures if f.cascade and f not in killed]
    if len(killed_ranks) == 1 and waited:
        return next(f for f in killed if f.rank in killed_ranks)
    return None


def _waiting_evidence(job: Job, failures: list[Failure]):
    waited = [f for f in failures if f.cascade]
    hits = [h for w in job.workers for h in w.hits
            if h.rule_id in ("collective-timeout-line", "sigterm-received", "store-timeout",
                             "connect-failed", "peer-lost")]
    return waited, hits


def hang_before_first_batch(job: Job, rule):
    started = [w for w in job.workers if w.started_processes]
    if not started or job.progressed:
        return []
    failures = process_failures(job)
    if any(not f.cascade for f in failures):
        return []  # something crashed by itself: that is the story, not a hang
    waited, hits = _waiting_evidence(job, failures)
    stale = [w for w in started if is_stale(job, w)
             and (job.job_status == "running" or not job_ended(job, w))]
    if not (waited or hits or stale):
        return []
    node_rank, rank, proof = _straggler(job, failures)
    if rank is not None:
        message = (f"processes started but none reached the first batch; rank {rank} "
                   f"never arrived and the others gave up waiting for it")
        evidence = proof + [f.where for f in waited[:2]]
        return [finding(rule, message, evidence, node_rank=node_rank, rank=rank)]
    if waited or hits:
        message = "processes started but none reached the first batch: they timed out waiting"
        evidence = [f.where for f in waited[:3]] + [h.where for h in hits[:2]]
    else:
        message = (f"processes started but none reached the first batch; the logs have been "
                   f"quiet for more than {_duration(job)}")
        evidence = [w.last_line for w in stale]
    return [finding(rule, message, evidence)]


def collective_timeout(job: Job, rule):
    if not job.progressed:
        return []
    failures = [f for f in process_failures(job) if f.after_progress]
    timed_out = [f for f in failures if "collective-timeout-line" in f.signals]
    hits = [h for w in job.workers for h in w.hits if h.rule_id == "collective-timeout-line"]
    if not (timed_out or hits):
        return []
    node_rank, rank, proof = _straggler(job, failures)
    ranks = sorted({f.rank for f in timed_out if f.rank is not None})
    message = f"a collective timed out after training had started ({plural(ranks, 'rank', 'ranks')} waited)" \
        if ranks else "a collective timed out after training had started"
    if rank is not None:
        message += f"; rank {rank} never arrived"
        return [finding(rule, message, proof + [f.where for f in timed_out[:3]],
                        node_rank=node_rank, rank=rank, ranks=tuple(ranks))]
    evidence = [f.where for f in timed_out[:3]] or [h.where for h in hits[:3]]
    return [finding(rule, message, evidence, ranks=tuple(ranks))]


def _crashes(job: Job, rule, during: bool):
    failures = [f for f in process_failures(job) if f.after_progress == during]
    # A SIGKILL has its own rule (worker-killed); a SIGTERM is what victims get.
    crashes = [f for f in failures if not f.cascade and f.exitcode not in (SIGKILL, SIGTERM)]
    when = "after training had started" if during else "before the first batch"
    out = [_crash_finding(job, rule, same, when) for same in _same_error(crashes)]
    if out:
        # The victims of these crashes, folded under them by the root-cause pass.
        victims = [f for f in failures if f.cascade]
        for same in _same_error(victims):
            out.append(_victim_finding(rule, same, when))
    return out


def _same_error(failures: list[Failure]) -> list[list[Failure]]:
    """Group failures that are one error told by several ranks (they differ only in numbers)."""
    groups = defaultdict(list)
    for f in failures:
        groups[(re.sub(r"\d+", "#", f.summary), f.cause)].append(f)
    for same in groups.values():
        same.sort(key=lambda f: (f.time is None, f.time or 0,
                                 f.rank if f.rank is not None else 1 << 30))
    return list(groups.values())


def _crash_finding(job: Job, rule, same: list[Failure], when: str):
    first = same[0]
    ranks = sorted({f.rank for f in same if f.rank is not None})
    verb = "raised" if first.exitcode is None else "failed with"
    if len(same) == 1:
        who = f"rank {first.rank}" if first.rank is not None else f"a process on {first.worker.label}"
    elif len(ranks) == len(same):
        who = f"{plural(ranks, 'rank', 'ranks')} all"
    else:
        who = f"{len(same)} processes" + (f" (first: rank {first.rank})" if first.rank is not None else "")
    nodes = sorted({f.node_rank for f in same if f.node_rank is not None})
    # Every process hit the same local error: it is the job's, not one rank's.
    everyone = len(same) > 1 and job.expected_processes is not None and \
        len(ranks) >= job.expected_processes
    return finding(rule, f"{who} {verb} {first.summary} {when}",
                   [w for f in same for w in (f.where, *f.more)],
                   node_rank=None if everyone else first.node_rank, node_ranks=tuple(nodes),
                   rank=None if everyone else first.rank,
                   ranks=tuple(ranks), cause=first.cause, worker=first.worker.label)


def _victim_finding(rule, same: list[Failure], when: str):
    first = same[0]
    ranks = sorted({f.rank for f in same if f.rank is not None})
    who = plural(ranks, "rank", "ranks") if ranks else f"{len(same)} process(es)"
    what = ("were terminated by torchrun" if first.exitcode is not None
            else f"then failed with {first.summary}")
    return finding(rule, f"{who} {what} {when}: a consequence of the failure above",
                   [f.where for f in same], node_rank=first.node_rank if len(same) == 1 else None,
                   rank=first.rank if len(same) == 1 else None, ranks=tuple(ranks),
                   worker=first.worker.label, cascade=True)


def crash_before_first_batch(job: Job, rule):
    return _crashes(job, rule, during=False)


def crash_during_training(job: Job, rule):
    return _crashes(job, rule, during=True)


def restart_loop(job: Job, rule):
    out = []
    for worker in job.workers:
        restarts = len(_hits(worker, "worker-group-restart"))
        prints = defaultdict(int)
        for env in worker.envs:
            prints[(env.rank, env.local_rank)] += 1
        restarts = max(restarts, max(prints.values(), default=1) - 1)
        if restarts < 1:
            continue
        failures = [f for f in process_failures(job) if f.worker is worker]
        if not failures and not worker.exits:
            continue
        first = min(failures, key=lambda f: (f.where.file, f.where.line), default=None)
        message = (f"{worker.label}: torchrun restarted the worker group {restarts} "
                   f"time{'s' if restarts > 1 else ''} and it failed again")
        if first is not None:
            message += f"; first failure: {first.summary}"
        evidence = [h.where for h in _hits(worker, "worker-group-restart")[:2]]
        if first is not None:
            evidence.insert(0, first.where)
        out.append(finding(rule, message, evidence or [worker.last_line], node_rank=worker.node_rank,
                           rank=first.rank if first else None, worker=worker.label))
    return out


# A run whose last progress line says it got no further than this is taken as stopped early.
# Sparse logging ("step 25/30" then done) must not read as a failure, so the bar is low.
STOPPED_EARLY = 0.8


def masked_exit_code(job: Job, rule):
    if job.job_status != "succeeded":
        return []
    failures = [f for f in process_failures(job) if not f.cascade]
    unfinished = [w for w in job.workers if not job.reached_first_batch(w)]
    stopped = [w for w in job.workers if (fraction := w.progress_fraction()) is not None
               and fraction <= STOPPED_EARLY]
    errors = [h for w in job.workers for h in w.hits
              if (r := job.catalogue.rules.get(h.rule_id)) and r.severity == "error"]
    if failures:
        reason, evidence = f"the logs show {failures[0].summary}", [f.where for f in failures[:2]]
    elif errors:
        reason, evidence = "the logs show a failure", [h.where for h in errors[:2]]
    elif unfinished:
        reason, evidence = f"{unfinished[0].label} never reached its first batch", []
    elif stopped:
        last = stopped[0].last_progress
        reason = f"training stopped early (its last progress line: {last.where.text.split(chr(13))[-1].strip()[:80]})"
        evidence = [last.where]
    else:
        return []
    ends = [w.last_line for w in job.workers if w.last_line is not None]
    evidence += ends[:2]
    where = f"; the log stops at {ends[0].file}:{ends[0].line}" if ends else ""
    return [finding(rule, f"the platform reports the job succeeded, but {reason}{where}", evidence)]


def _duration(job: Job) -> str:
    minutes = int(job.stall_after.total_seconds() // 60)
    return f"{minutes} min" if minutes else f"{int(job.stall_after.total_seconds())} s"
