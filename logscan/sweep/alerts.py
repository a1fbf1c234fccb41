"""Webhook alerts: each new failure POSTed as JSON with a `text` field (what Slack's incoming
webhooks show), the diagnosis beside it.

An alert is delivered when the server answers 2xx, and only then: any other status (a redirect
included: following a 302 would turn the POST into a body-less GET), a closed connection or a
reply not finished by the deadline leaves it in the state's outbox for the next sweep. The whole
delivery of one sweep has a deadline, counted across every request and every read (a server
that dribbles its reply is cut at it; a request is only started with time to finish it), so an endpoint that hangs cannot hold the sweep, nor its
lock, for long. A 429 or 503 that says when to come back (Retry-After) is waited for when that
falls within the deadline; otherwise no sweep posts to that URL again before then. The wait is
bounded (RETRY_AFTER_MAX): a server, or anyone between, cannot silence the alerts for a day or
a century; a Retry-After no one can read, or that asks for more than a year, is a short wait.

A webhook that has never answered 2xx for this state (a first sweep, a new state) gets one digest
of every failure found rather than one message each: the first sweep of a big tree would
otherwise flood it (Slack drops most of such a burst). So does a later sweep with more than
DIGEST_BURST alerts to post (a storage outage failing every job at once).
"""

from __future__ import annotations

import email.utils
import hashlib
import http.client
import itertools
import json
import math
import socket
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from logscan.errors import InputError
from logscan.vocabulary import WebhookPayload as Payload
from logscan.render.inert import slack_text
from logscan.rule_ids import UNEXPLAINED_FAILURE
from logscan.sweep.changes import FAILED_CHANGES, Change

TIMEOUT = 5.0          # seconds for one request, connection to the end of the reply
ATTEMPTS = 3           # tries of one alert within a sweep
BACKOFF = 0.5          # seconds before the second attempt, doubled after
DEADLINE = 15.0        # seconds for every alert of one sweep together
SCHEMES = ("http", "https")
DIGEST_LISTS = 20      # failures named in a digest; the rest are counted
DIGEST_BURST = 10      # more alerts than this in one sweep are posted as one digest
RETRY_AFTER_MAX = 3600.0         # seconds: the longest wait a server's Retry-After is granted
RETRY_AFTER_UNREADABLE = 60.0    # seconds: the wait for a Retry-After that asks nothing sensible
RETRY_AFTER_ABSURD = 366 * 86400.0  # seconds: asking longer than this is a garbled header
ALERT_LINE_CHARS = 200  # of a log line quoted in an alert


# Hosts of each service's incoming webhooks: Slack's, Teams' Workflows (Power Automate, Logic Apps)
# and the retired Office 365 connectors' host, which still names a Teams channel.
_PAYLOAD_HOSTS = ((Payload.SLACK, ("hooks.slack.com",)),
                  (Payload.TEAMS, (".webhook.office.com", ".logic.azure.com", ".powerautomate.com",
                                   ".powerplatform.com")))


def payload_for(url: str, asked: Payload | str = Payload.AUTO) -> Payload:
    """The payload a URL gets: the one asked for, else the one its host's service reads."""
    if Payload(asked) != Payload.AUTO:
        return Payload(asked)
    host = (urllib.parse.urlsplit(url).hostname or "").lower()
    for payload, hosts in _PAYLOAD_HOSTS:
        if any(host == h or host.endswith(h if h.startswith(".") else "." + h) for h in hosts):
            return payload
    return Payload.JSON


def shaped(body: dict, payload: Payload) -> dict:
    """An alert or digest (`text` and its fields) as `payload` reads it."""
    if payload == Payload.SLACK:
        return {"text": body["text"]}
    if payload == Payload.TEAMS:
        # Teams reads a card's text blocks as Markdown: no link a log line writes (`[x](url)`)
        # becomes one (a zero-width space between its parts); the text is otherwise as Slack's.
        lines = body["text"].replace("](", "]\u200b(").split("\n")
        blocks = [{"type": "TextBlock", "text": lines[0], "weight": "Bolder", "wrap": True}]
        blocks += [{"type": "TextBlock", "text": line, "wrap": True, "spacing": "None"} for line in lines[1:]]
        return {"type": "message", "summary": lines[0][:100], "attachments": [{
            "contentType": "application/vnd.microsoft.card.adaptive", "contentUrl": None,
            "content": {"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                        "type": "AdaptiveCard", "version": "1.4", "body": blocks}}]}
    return body


def check_url(url: str) -> None:
    """An http(s) URL with a host and a valid port, else an InputError (said before the sweep)."""
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        raise InputError(f"--webhook {url!r}: a URL holds no spaces or control characters")
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InputError(f"--webhook {url!r}: not a valid URL ({exc})") from None
    if parts.scheme.lower() not in SCHEMES:
        raise InputError(f"--webhook {url!r}: only http:// and https:// URLs are posted to")
    if not parts.hostname:
        raise InputError(f"--webhook {url!r}: the URL names no host")
    if port == 0:
        raise InputError(f"--webhook {url!r}: port 0 is no port")


def alert_text(change: dict) -> str:
    label = {Change.FAILED: "new failure", Change.HUNG: "job hung",
             Change.ROOT_CAUSE_CHANGED: "root cause changed"}.get(change["change"], change["change"])
    return slack_text(f"logscan: {label}: {change['summary']}{_lead(change)}")


def _lead(change: dict) -> str:
    """When no rule names what failed, the line that sets the failing rank apart most (its
    novel line, logscan.diagnose.novel_lines): what a reader has to go on."""
    root = change.get("root_cause") or {}
    novel = change.get("novel_lines") or []
    if root.get("rule") != UNEXPLAINED_FAILURE or not novel:
        return ""
    top = novel[0]
    text = top["text"].strip()
    if len(text) > ALERT_LINE_CHARS:
        text = text[:ALERT_LINE_CHARS - 1] + "…"
    return f"; top novel line {top['file']}:{top['line']}: {text} ({top['why']})"


def message(change: dict) -> dict:
    root = change.get("root_cause") or {}
    return {"text": alert_text(change), "job_id": change["job_id"], "change": change["change"],
            "verdict": change["verdict"], "root_cause": root.get("rule"),
            "summary": change["summary"]}


def is_alert(change: dict) -> bool:
    return change["change"] in FAILED_CHANGES


@dataclass
class Answer:
    """How one POST ended."""

    delivered: bool
    problem: str | None = None
    retry_after: float | None = None    # seconds, when the server said when to come back
    final: bool = False                 # retrying within this sweep will not help


def digest(changes: list[dict], count: int, first: bool = True) -> dict:
    """One message for `count` failures, the first DIGEST_LISTS of them (`changes`) named: those a
    `first` sweep found, or a burst of new ones."""
    lines = [f"logscan: first sweep: {count} failure(s) found" if first
             else f"logscan: {count} new failure(s)"]
    lines += [f"- {alert_text(change).removeprefix('logscan: ')}" for change in changes]
    if count > len(changes):
        lines.append(f"... and {count - len(changes)} more (logscan sweep --all lists every job)")
    return {"text": "\n".join(lines), "digest": True, "failures": count,
            "job_ids": [change["job_id"] for change in changes]}


@dataclass
class Outcome:
    """What one sweep's delivery came to."""

    problems: list[str]
    retry_at: float | None = None    # Unix time before which the server asked not to be posted to


def send(url: str, alerts: Iterable[tuple[int, dict]], delivered: Callable[[list[int]], None],
         as_digest: bool = False, deadline: float | None = None, payload: Payload = Payload.AUTO) -> Outcome:
    """POST each alert in order (or, `as_digest` or past DIGEST_BURST of them, one digest of them
    all), calling `delivered(seqs)` as each is acknowledged with a 2xx; the first that cannot be
    delivered ends this sweep's delivery (it and the rest are kept)."""
    ends = time.monotonic() + (DEADLINE if deadline is None else deadline)
    payload = payload_for(url, payload)
    encode = lambda body: json.dumps(shaped(body, payload), ensure_ascii=True).encode()  # noqa: E731
    alerts = iter(alerts)
    ahead = list(itertools.islice(alerts, DIGEST_BURST + 1))
    first = as_digest
    alerts = itertools.chain(ahead, alerts)
    if as_digest or len(ahead) > DIGEST_BURST:
        seqs, named = [], []
        for seq, change in alerts:
            seqs.append(seq)
            if len(named) < DIGEST_LISTS:
                named.append(change)
        if len(seqs) > 1:
            answer = _deliver(url, encode(digest(named, len(seqs), first)), ends)
            if answer.delivered:
                delivered(seqs)
                return Outcome([])
            return _kept(f"the digest of {len(seqs)} failures not delivered: {answer.problem}",
                         len(seqs), answer)
        alerts = zip(seqs, named)
    kept, problem, last = 0, None, None
    for seq, change in alerts:
        if problem is not None:
            kept += 1
            continue
        answer = _deliver(url, encode(message(change)), ends)
        if answer.delivered:
            delivered([seq])
        else:
            problem, last = f"alert for {change['job_id']} not delivered: {answer.problem}", answer
            kept += 1
    return Outcome([]) if problem is None else _kept(problem, kept, last)


def _kept(problem: str, kept: int, answer: Answer) -> Outcome:
    retry_at = None if answer.retry_after is None else time.time() + answer.retry_after
    return Outcome([f"webhook: {problem}; {kept} alert(s) kept in the state and sent by the next "
                    f"sweep"], retry_at)


def _deliver(url: str, body: bytes, ends: float) -> Answer:
    """One alert, tried up to ATTEMPTS times within the deadline."""
    delay = BACKOFF
    answer = Answer(False, "the delivery deadline passed")
    for attempt in range(ATTEMPTS):
        answer = post(url, body, ends)
        if answer.delivered or answer.final or attempt + 1 == ATTEMPTS:
            return answer
        wait = delay if answer.retry_after is None else answer.retry_after
        if time.monotonic() + wait + TIMEOUT > ends:
            if answer.retry_after is not None:
                answer.problem += f" (retry after {answer.retry_after:.0f} s, past this sweep's deadline)"
            return answer
        time.sleep(wait)
        delay *= 2
    return answer


def post(url: str, body: bytes, ends: float) -> Answer:
    """POST `body` as JSON; what came back. Redirects are not followed; the request, reads
    included, ends within TIMEOUT. None is started with less than TIMEOUT left before `ends`:
    a request cut short may have been taken by the server, and would be sent again by the next
    sweep."""
    parts = urllib.parse.urlsplit(url)
    budget = TIMEOUT
    if ends - time.monotonic() < budget:
        return Answer(False, "no time left before the delivery deadline to finish a request")
    connection, target = _connection(url, parts, budget)
    cut = threading.Event()

    def at_deadline() -> None:  # wakes a read that is still waiting: the budget is total
        cut.set()
        sock = connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(budget, at_deadline)
    watchdog.daemon = True
    watchdog.start()
    try:
        connection.request("POST", target, body=body,
                           headers={"Content-Type": "application/json", "User-Agent": "logscan-sweep"})
        response = connection.getresponse()
        status = response.status
        retry_after = _retry_after(response.getheader("Retry-After"))
        response.read(1 << 16)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if cut.is_set():
            return Answer(False, f"no complete answer within {budget:.1f} s")
        return Answer(False, _reason(exc))
    finally:
        watchdog.cancel()
        connection.close()
    if cut.is_set():
        return Answer(False, f"no complete answer within {budget:.1f} s")
    if 200 <= status < 300:
        return Answer(True)
    if 300 <= status < 400:
        return Answer(False, f"HTTP {status}: a redirect, not followed (give the webhook's final URL)",
                      final=True)
    if status in (429, 503):
        return Answer(False, f"HTTP {status}", retry_after=retry_after)
    # Another 4xx: the request is refused as it is, and retrying now will not change that.
    return Answer(False, f"HTTP {status}", final=400 <= status < 500)


def _connection(url: str, parts: urllib.parse.SplitResult, timeout: float
                ) -> tuple[http.client.HTTPConnection, str]:
    """A connection to the URL's host, through the proxy the environment names (http_proxy,
    https_proxy, no_proxy) as urllib would use, and the request target to send on it."""
    path = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
    https = parts.scheme.lower() == "https"
    host, port = parts.hostname, parts.port
    proxy = urllib.request.getproxies().get(parts.scheme.lower())
    if proxy and urllib.request.proxy_bypass(parts.hostname or ""):
        proxy = None
    kind = http.client.HTTPSConnection if https else http.client.HTTPConnection
    if not proxy:
        return kind(host, port, timeout=timeout), path
    via = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    if https:
        connection = http.client.HTTPSConnection(via.hostname, via.port or 3128, timeout=timeout)
        connection.set_tunnel(host, port or 443)
        return connection, path
    # A plain-HTTP proxy takes the whole URL as the target.
    return http.client.HTTPConnection(via.hostname, via.port or 3128, timeout=timeout), url


def destination(url: str) -> str:
    """What the state keeps of a webhook URL (which holds a secret): a hash that tells one
    destination from another."""
    return hashlib.sha256(url.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (a number of seconds, or an HTTP date), at most RETRY_AFTER_MAX;
    RETRY_AFTER_UNREADABLE for one that cannot be read or asks for more than a year."""
    value = (value or "").strip()
    if not value:
        return None
    if value.isascii() and value.isdigit():
        seconds = float(value) if len(value) < 16 else RETRY_AFTER_ABSURD + 1
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
            seconds = max(0.0, when.timestamp() - time.time())
        except (TypeError, ValueError, IndexError, AttributeError, OverflowError, OSError):
            return RETRY_AFTER_UNREADABLE
    if not math.isfinite(seconds) or seconds > RETRY_AFTER_ABSURD:
        return RETRY_AFTER_UNREADABLE
    return min(seconds, RETRY_AFTER_MAX)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the server closed the connection without an answer"
    if isinstance(exc, socket.timeout):
        return "timed out"
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
