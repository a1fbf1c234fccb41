"""What changed in a job since the last sweep. A failure is told once: by its fingerprint
(logscan.diagnose.fingerprint), which survives a rotation, a log growing around the failure and line
numbers moving; Finding.key (rule@place@file:line) does not.

The state keeps each fingerprint told with the version of the function that made it. When that
function changes, FINGERPRINT_VERSION goes up by one and FINGERPRINT_MIGRATIONS gains the rule by
which a failure told under the old version is known in a diagnosis made under the new one: an
upgrade of logscan then tells nothing again that its last sweep had told."""

from __future__ import annotations

from collections.abc import Callable
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

# The version of root_fingerprint's function that the state's fingerprints are stored with.
# Version 0: every fingerprint a state of schema 5 or older holds, made by whichever function that
# logscan had (they changed with schemas 1, 3 and 4 without being told apart).
FINGERPRINT_VERSION = 1


def _same_root_rule(told_rule: str | None, diagnosis) -> bool:
    root = diagnosis.root_cause
    return diagnosis.verdict == Verdict.FAILED and root is not None and root.rule == told_rule


# version → whether the failure a job's root cause was told as, under that version (`told_rule`
# its rule), is the one its diagnosis under the next version finds. Version 0 fingerprints
# differ from version 1 in how the place and message are normalised, never in the rule.
FINGERPRINT_MIGRATIONS: dict[int, Callable[[str | None, object], bool]] = {
    0: _same_root_rule,
}


def told_before(version: int, told_rule: str | None, diagnosis) -> bool:
    """The failure told under fingerprint `version` (the job's root cause then, of rule
    `told_rule`) is the one `diagnosis` finds, by every migration from that version to this."""
    return version < FINGERPRINT_VERSION and all(
        FINGERPRINT_MIGRATIONS[v](told_rule, diagnosis) for v in range(version, FINGERPRINT_VERSION))


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
