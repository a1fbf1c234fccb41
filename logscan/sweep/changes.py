"""What changed in a job since the last sweep. A failure is told once: by its root cause's
fingerprint, the one the Diagnosis carries and every report shows (logscan.diagnose.fingerprint),
which survives a rotation, a log growing around the failure and line numbers moving."""

from __future__ import annotations

from enum import StrEnum

from logscan.diagnose.fingerprint import is_current
from logscan.vocabulary import Verdict


class Change(StrEnum):
    """What changed in a job since the last sweep, as the listing and the alerts say it."""

    FAILED = "failed"
    HUNG = "hung"
    ROOT_CAUSE_CHANGED = "root-cause-changed"
    RECOVERED = "recovered"
    FINISHED = "finished"


# The changes an alert is sent for.
FAILED_CHANGES = (Change.FAILED, Change.HUNG, Change.ROOT_CAUSE_CHANGED)


def root_fingerprint(diagnosis) -> str | None:
    """The failure a FAILED job is told by: its root cause's fingerprint (a FAILED verdict
    always has an error finding, and so a root cause)."""
    if diagnosis.verdict != Verdict.FAILED or diagnosis.root_cause is None:
        return None
    return diagnosis.root_cause.fingerprint


def change_of(previous_verdict: str | None, previous_fingerprint: str | None, diagnosis,
              alerted: bool) -> Change | None:
    """The change to report, or None.
    `alerted`: this failure's fingerprint was told before."""
    verdict = diagnosis.verdict
    if verdict == Verdict.FAILED:
        if alerted:
            return None
        if previous_verdict == Verdict.FAILED and previous_fingerprint is not None:
            # A fingerprint an older logscan stored is of another version: it cannot match, and
            # the job is not told again for that alone.
            return Change.ROOT_CAUSE_CHANGED if is_current(previous_fingerprint) else None
        root = diagnosis.root_cause
        return Change.HUNG if root is not None and root.hang else Change.FAILED
    if previous_verdict == Verdict.FAILED and verdict in (Verdict.HEALTHY, Verdict.RUNNING):
        return Change.RECOVERED
    if verdict == Verdict.HEALTHY and previous_verdict in (Verdict.RUNNING, Verdict.INCONCLUSIVE):
        return Change.FINISHED
    return None
