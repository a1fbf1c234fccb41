"""The exit status the platform shows against what the logs say."""

from __future__ import annotations

from logscan.findings.base import finding
from logscan.model.job import Job
from logscan.vocabulary import JobStatus, Severity


# A run whose last progress line says it got no further than this is taken as stopped early.
# Sparse logging ("step 25/30" then done) must not read as a failure, so the bar is low.
STOPPED_EARLY = 0.8


def masked_exit_code(job: Job, rule):
    if job.job_status != JobStatus.SUCCEEDED:
        return []
    failures = [f for f in job.failures if not f.cascade]
    unfinished = [w for w in job.workers if not job.reached_first_batch(w)]
    stopped = [w for w in job.workers if (fraction := w.progress_fraction()) is not None
               and fraction <= STOPPED_EARLY]
    errors = [h for w in job.workers for h in w.hits
              if (r := job.catalogue.rules.get(h.rule_id)) and r.severity == Severity.ERROR]
    if failures:
        # Named, not quoted: the root cause's block quotes the line itself.
        first = failures[0]
        reason = f"the logs show {first.summary.split(':', 1)[0]} at {first.where.file}:{first.where.line}"
        evidence = [f.where for f in failures[:2]]
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


# Of each Worker, this many of its last error-like lines are cited.
ERROR_LINES_PER_WORKER = 2


def unexplained_failure(job: Job, rule):
    if job.job_status != JobStatus.FAILED:
        return []
    evidence, told = [], []
    for worker in job.workers:
        errors = worker.error_lines(job.catalogue)[-ERROR_LINES_PER_WORKER:]
        evidence += errors
        if worker.last_line is not None:
            evidence.append(worker.last_line)
        if errors:
            told.append(f"{worker.label}: {errors[-1].text.strip()[:120]}")
    if told:
        reason = "the last error-like lines are " + "; ".join(told[:3]) + \
            (f" (and {len(told) - 3} more Workers)" if len(told) > 3 else "")
    else:
        reason = "no log line says what failed; the logs stop without an error"
    return [finding(rule, f"the platform reports the job failed and no rule explains it: {reason}",
                    evidence, limit=12)]
