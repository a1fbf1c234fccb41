"""What changed in a job since the last sweep. A failure is told once: by its root cause's
fingerprint, the one the Diagnosis carries and every report shows (logscan.diagnose.fingerprint),
which survives a rotation, a log growing around the failure and line numbers moving.

The state keeps each fingerprint told with the version of the function that made it. When that
function changes, FINGERPRINT_VERSION goes up by one and FINGERPRINT_MIGRATIONS gains the rule by
which a failure told under the old version is known in a diagnosis made under the new one: an
upgrade of logscan then tells nothing again that its last sweep had told."""

from __future__ import annotations

from collections.abc import Callable
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

# The version of root_fingerprint's function that the state's fingerprints are stored with.
# Version 0: every fingerprint a state of schema 5 or older holds, made by whichever function that
# logscan had (they changed with schemas 1, 3 and 4 without being told apart).
# Version 1: the fingerprints of schema 6, made before the Diagnosis carried its own (`v3:...`).
FINGERPRINT_VERSION = 2


def _same_root_rule(told_rule: str | None, diagnosis) -> bool:
    root = diagnosis.root_cause
    return diagnosis.verdict == Verdict.FAILED and root is not None and root.rule == told_rule


# version → whether the failure a job's root cause was told as, under that version (`told_rule`
# its rule), is the one its diagnosis under the next version finds. Version 0 fingerprints
# differ from version 1, and version 1 from version 2 (paths within the job, `v3:` written before
# each), in how the place and message are normalised, never in the rule.
FINGERPRINT_MIGRATIONS: dict[int, Callable[[str | None, object], bool]] = {
    0: _same_root_rule,
    1: _same_root_rule,
}


def told_before(version: int, told_rule: str | None, diagnosis) -> bool:
    """The failure told under fingerprint `version` (the job's root cause then, of rule
    `told_rule`) is the one `diagnosis` finds, by every migration from that version to this."""
    return version < FINGERPRINT_VERSION and all(
        FINGERPRINT_MIGRATIONS[v](told_rule, diagnosis) for v in range(version, FINGERPRINT_VERSION))


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
