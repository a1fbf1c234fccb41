"""The exit status the platform shows against what the logs say."""

from __future__ import annotations

from logscan.checks.base import finding
from logscan.model import Job


# A run whose last progress line says it got no further than this is taken as stopped early.
# Sparse logging ("step 25/30" then done) must not read as a failure, so the bar is low.
STOPPED_EARLY = 0.8


def masked_exit_code(job: Job, rule):
    if job.job_status != "succeeded":
        return []
    failures = [f for f in job.failures if not f.cascade]
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
