"""What changed in a job since the last sweep. A failure is told once: by its fingerprint
(logscan.diagnose.fingerprint), which survives a rotation, a log growing around the failure and line
numbers moving; Finding.key (rule@place@file:line) does not."""

from __future__ import annotations

from logscan.diagnose.fingerprint import fingerprint

FAILED_CHANGES = ("failed", "hung", "root-cause-changed")


def root_fingerprint(diagnosis) -> str | None:
    if diagnosis.verdict != "FAILED":
        return None
    finding = diagnosis.root_finding
    if finding is not None:
        return fingerprint(finding)
    errors = [f for f in diagnosis.findings if f.severity == "error"]
    return fingerprint(errors[0]) if errors else "failed"


def change_of(previous_verdict: str | None, previous_fingerprint: str | None, diagnosis,
              alerted: bool) -> str | None:
    """The change to report (one of FAILED_CHANGES, "recovered", "finished"), or None.
    `alerted`: this failure's fingerprint was told before."""
    verdict = diagnosis.verdict
    if verdict == "FAILED":
        if alerted:
            return None
        if previous_verdict == "FAILED" and previous_fingerprint is not None:
            return "root-cause-changed"
        root = diagnosis.root_cause
        return "hung" if root is not None and root.rule.startswith("hang-") else "failed"
    if previous_verdict == "FAILED" and verdict in ("HEALTHY", "RUNNING"):
        return "recovered"
    if verdict == "HEALTHY" and previous_verdict in ("RUNNING", "INCONCLUSIVE"):
        return "finished"
    return None
