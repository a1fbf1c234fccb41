"""Training diverged: its numbers, not its processes, say it stopped learning."""

from __future__ import annotations

import re
from dataclasses import replace

from logscan.catalogue import Group
from logscan.findings.base import finding, hits
from logscan.model.job import Job
from logscan.rule_ids import LOSS_NOT_FINITE
from logscan.vocabulary import JobStatus, Severity

# So many lines of one kind before they say more than a spike loss scaling or the run recovers from.
AT_LEAST = 3
# DeepSpeed's own counts: this share of steps skipped, over at least this many steps.
SKIPPED_SHARE, COUNTED_STEPS = 0.5, 100
# A progress line that logs a finite loss: the run came back from a non-finite one.
FINITE_LOSS = re.compile(r"""(?i)\bloss['"]?\s*[:=]?\s*['"]?[-+]?\.?\d""")


def training_diverged(job: Job, rule):
    if any(not f.cascade for f in job.failures):
        return []  # a process stopped by itself (on its non-finite loss, or otherwise): its failure says so
    for worker in job.workers:
        lines = hits(worker, LOSS_NOT_FINITE)
        said = _divergence(worker, lines) if lines else None
        if said is not None:
            what, evidence = said
            one_worker = len(job.workers) == 1
            if _run_over(job):
                return [finding(rule, f"Training diverged on {worker.label}: {what}; its processes went on running "
                                      f"without learning", evidence,
                                node_rank=worker.node_rank if one_worker else None, worker=worker.label)]
            # Its processes still run: the job has not failed (yet), its training has. A warning, so the
            # verdict stays the running run's and a sweep or a watch still tells it.
            return [replace(finding(rule, f"Training is diverging on {worker.label}: {what}, and the run goes on "
                                          f"without learning (the logs show no end of it yet)", evidence,
                                    node_rank=worker.node_rank if one_worker else None, worker=worker.label),
                            severity=Severity.WARNING)]
    return []


def _run_over(job: Job) -> bool:
    """The job's run has ended, as its platform or its lines tell: an end status, an end of the run,
    torchrun's word that every process exited, any process's exit, or a stop."""
    if job.job_status in (JobStatus.SUCCEEDED, JobStatus.FAILED) or job.failures:
        return True
    return any(w.group_succeeded or w.exits or w.end_of_run() is not None or w.progress_fraction() == 1.0
               for w in job.workers)


def _copies(worker, hits) -> int:
    """How many lines the hits stand for: the scan keeps the first and the latest of a run of lines
    the same but for their numbers (a loss logged as nan every step)."""
    repeats = {scan.display: scan.repeats for scan in worker.scans}
    return sum(repeats.get(h.where.file, {}).get(h.where.line, 1) for h in hits)


def _divergence(worker, lines):
    """What the Worker's lines say of a divergence, and the lines that say it; None where they do not."""
    nonfinite = [h for h in lines if h.group(Group.NONFINITE_LOSS)]
    since = _since_last_finite(worker, nonfinite) if nonfinite else []
    if _copies(worker, since) >= AT_LEAST:
        last = worker.position(nonfinite[-1].where)
        recovered = [p for p in worker.progress if worker.position(p.where) > last
                     and FINITE_LOSS.search(p.where.text)]
        if not recovered:
            return (f"the loss was {since[-1].group(Group.NONFINITE_LOSS)} on the last {_copies(worker, since)} "
                    f"steps it logged",
                    [since[0].where, since[-1].where])
    scaled = [h for h in lines if h.group(Group.LOSS_SCALE) is not None]
    if _copies(worker, scaled) >= AT_LEAST:
        scales = [_number(h.group(Group.LOSS_SCALE)) for h in scaled]
        if scales[-1] is not None and scales[-1] < 1:
            return (f"every step overflowed and fp16 loss scaling skipped it, the scale falling to "
                    f"{scaled[-1].group(Group.LOSS_SCALE)}", [scaled[0].where, scaled[-1].where])
        at_minimum = [h for h in scaled if _at_most_one(_number(h.group(Group.ATTEMPTED_SCALE)))]
        if _copies(worker, at_minimum) >= AT_LEAST:
            return ("fp16 loss scaling kept skipping steps at its minimum scale of 1",
                    [scaled[0].where, scaled[-1].where])
    counted = [h for h in lines if h.group(Group.STEP) is not None and h.group(Group.SKIPPED) is not None]
    if counted:
        step, skipped = int(counted[-1].group(Group.STEP)), int(counted[-1].group(Group.SKIPPED))
        if step >= COUNTED_STEPS and skipped >= SKIPPED_SHARE * step:
            return (f"fp16 loss scaling skipped {skipped} of its {step} steps on overflows", [counted[-1].where])
    return None


def _since_last_finite(worker, nonfinite):
    """The non-finite lines after the last progress line that logged a finite loss."""
    finite = [worker.position(p.where) for p in worker.progress if FINITE_LOSS.search(p.where.text)]
    after = max((f for f in finite if f < worker.position(nonfinite[-1].where)), default=None)
    return [h for h in nonfinite if after is None or worker.position(h.where) > after]


def _at_most_one(scale: float | None) -> bool:
    return scale is not None and scale <= 1


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None
