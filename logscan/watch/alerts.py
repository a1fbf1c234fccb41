"""A watch's alerts: each new error finding POSTed as the sweep posts a new failure (the same
payloads, the same delivery rules: 2xx or kept, a bounded wait when the server asks for one).
A watch keeps no state file: an alert not delivered is kept in memory and tried again at each
later look, and one still owed when the watch ends is said on stderr."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from logscan.sweep.alerts import send
from logscan.sweep.changes import Change
from logscan.vocabulary import WebhookPayload


def change_of_finding(finding, diagnosis, job: str) -> dict:
    """The finding as the sweep's alert of a changed job reads it."""
    return {"change": Change.HUNG if finding.hang else Change.FAILED, "job_id": job,
            "verdict": diagnosis.verdict, "summary": f"{diagnosis.verdict} {job}: {finding.title}",
            "root_cause": {"rule": finding.rule}, "novel_lines": []}


@dataclass
class Outbox:
    url: str
    payload: WebhookPayload | str = WebhookPayload.AUTO
    owed: dict[int, dict] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    _seq: int = 0
    _not_before: float = 0.0

    def add(self, finding, diagnosis, job: str) -> None:
        self._seq += 1
        self.owed[self._seq] = change_of_finding(finding, diagnosis, job)

    def deliver(self) -> None:
        """Try what is owed, unless the server asked to wait; what is delivered is forgotten."""
        if not self.owed or time.time() < self._not_before:
            return

        def delivered(seqs: list[int]) -> None:
            for seq in seqs:
                self.owed.pop(seq, None)

        outcome = send(self.url, sorted(self.owed.items()), delivered, payload=self.payload)
        self.problems = outcome.problems
        if outcome.retry_at is not None:
            self._not_before = outcome.retry_at
