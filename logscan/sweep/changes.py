"""What changed in a job since the last sweep, and the fingerprint that tells a failure once.

A finding's fingerprint names what failed, not where the file put it: the rule, the node_rank,
rank and Worker, and the first evidence line's text with numbers, hex and times masked. It
survives a rotation (`x.log` → `x.log.1`), a log growing around the failure and line numbers
moving; Finding.key (rule@place@file:line) does not.
"""

from __future__ import annotations

import hashlib
import re

FAILED_CHANGES = ("failed", "hung", "root-cause-changed")
CHANGES = (*FAILED_CHANGES, "recovered", "finished")

_NUMBERS = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?")


def fingerprint(finding) -> str:
    """A stable id of a finding across sweeps (see the module docstring)."""
    first = finding.evidence[0].text if finding.evidence else finding.message
    text = _NUMBERS.sub("N", first.strip())[:400]
    key = "\0".join(map(str, (finding.rule, finding.node_rank, finding.rank, finding.worker, text)))
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def root_finding(diagnosis):
    root = diagnosis.root_cause
    if root is None:
        return None
    return next((f for f in diagnosis.findings if (f.rule, f.node_rank, f.rank) ==
                 (root.rule, root.node_rank, root.rank)), None)


def root_fingerprint(diagnosis) -> str | None:
    if diagnosis.verdict != "FAILED":
        return None
    finding = root_finding(diagnosis)
    if finding is not None:
        return fingerprint(finding)
    errors = [f for f in diagnosis.findings if f.severity == "error"]
    return fingerprint(errors[0]) if errors else "failed"


def change_of(previous_verdict: str | None, previous_fingerprint: str | None, diagnosis,
              alerted: bool) -> str | None:
    """The change to report, or None. `alerted`: this failure's fingerprint was told before."""
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
