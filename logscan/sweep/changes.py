"""What changed in a job since the last sweep. A failure is told once: by its fingerprint
(logscan.diagnose.fingerprint), which survives a rotation, a log growing around the failure and line
numbers moving; Finding.key (rule@place@file:line) does not."""

from __future__ import annotations

from enum import StrEnum

from logscan.diagnose.fingerprint import fingerprint
from logscan.rule_ids import HANG_RULES
from logscan.vocabulary import Severity, Verdict


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
    if diagnosis.verdict != Verdict.FAILED:
        return None
    finding = diagnosis.root_finding
    if finding is not None:
        return fingerprint(finding)
    errors = [f for f in diagnosis.findings if f.severity == Severity.ERROR]
    return fingerprint(errors[0]) if errors else "failed"


def change_of(previous_verdict: str | None, previous_fingerprint: str | None, diagnosis,
              alerted: bool) -> Change | None:
    """The change to report, or None.
    `alerted`: this failure's fingerprint was told before."""
    verdict = diagnosis.verdict
    if verdict == Verdict.FAILED:
        if alerted:
            return None
        if previous_verdict == Verdict.FAILED and previous_fingerprint is not None:
            return Change.ROOT_CAUSE_CHANGED
        root = diagnosis.root_cause
        return Change.HUNG if root is not None and root.rule in HANG_RULES else Change.FAILED
    if previous_verdict == Verdict.FAILED and verdict in (Verdict.HEALTHY, Verdict.RUNNING):
        return Change.RECOVERED
    if verdict == Verdict.HEALTHY and previous_verdict in (Verdict.RUNNING, Verdict.INCONCLUSIVE):
        return Change.FINISHED
    return None
