"""Webhook alerts: each new failure POSTed as JSON with a `text` field (what Slack's incoming
webhooks show), the diagnosis beside it. Retried briefly; the whole delivery has a deadline, so
an endpoint that hangs cannot hold the sweep (nor its lock) for long."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

from logscan.sweep.changes import FAILED_CHANGES, Change

TIMEOUT = 5.0          # seconds for one request
ATTEMPTS = 3
BACKOFF = 0.5          # seconds before the second attempt, doubled after
DEADLINE = 15.0        # seconds for every alert of one sweep together


def alert_text(change: dict) -> str:
    label = {Change.FAILED: "new failure", Change.HUNG: "job hung",
             Change.ROOT_CAUSE_CHANGED: "root cause changed"}.get(change["change"], change["change"])
    return f"logscan: {label}: {change['summary']}"


def message(change: dict) -> dict:
    root = change.get("root_cause") or {}
    return {"text": alert_text(change), "job_id": change["job_id"], "change": change["change"],
            "verdict": change["verdict"], "root_cause": root.get("rule"),
            "summary": change["summary"]}


def send(url: str, changes: list[dict], deadline: float = DEADLINE) -> list[str]:
    """POST each failure change; return one problem line per alert that could not be sent."""
    ends = time.monotonic() + deadline
    problems = []
    for change in changes:
        if change["change"] not in FAILED_CHANGES:
            continue
        body = json.dumps(message(change), ensure_ascii=True).encode()
        error = _post(url, body, ends)
        if error is not None:
            problems.append(f"webhook: alert for {change['job_id']} not sent: {error}")
    return problems


def _post(url: str, body: bytes, ends: float) -> str | None:
    delay, error = BACKOFF, "deadline passed"
    for attempt in range(ATTEMPTS):
        left = ends - time.monotonic()
        if left <= 0:
            return error
        request = urllib.request.Request(url, data=body, method="POST",
                                         headers={"Content-Type": "application/json",
                                                  "User-Agent": "logscan-sweep"})
        try:
            with urllib.request.urlopen(request, timeout=min(TIMEOUT, left)) as response:
                response.read(1024)
            return None
        except urllib.error.HTTPError as exc:
            error = f"HTTP {exc.code}"
            if 400 <= exc.code < 500 and exc.code != 429:
                return error  # the request itself is wrong: retrying will not help
        except (urllib.error.URLError, OSError, ValueError) as exc:
            error = str(getattr(exc, "reason", exc))
        if attempt + 1 < ATTEMPTS:
            time.sleep(max(0.0, min(delay, ends - time.monotonic())))
            delay *= 2
    return error
