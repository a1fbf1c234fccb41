"""Finding fingerprints: stable across runs, and the same however the paths were typed.

A fingerprint names what failed, not where a file put it: the rule, the places (node_rank, rank
and the lists of them), the Worker, the cause, and the first evidence line's text with numbers,
hex and times masked. So it survives a log that grows around the failure, line numbers that move
from one smoke run to the next, and a rotation (`x.log` → `x.log.1`); a CI system and the cron
sweep both track a failure by it.

Paths are shown as the user gave them from discovery on (logscan.files.discovery): `runs/job` gives
`runs/job/worker-0/launch_ddp.log`, which opens from the current directory; nothing rewrites them
for reports. A fingerprint must not change with that spelling (`runs/job`, `./runs/job`,
`/abs/runs/job`, or `.` from inside it), nor between a scan and a sweep of the job, so it hashes
each path *within the job*: relative to the deepest directory that holds all the job's log files.
The Diagnosis carries every fingerprint (logscan.diagnose.build sets them once); no report and no
sweep computes one of its own.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace

from logscan.diagnosis import Finding
from logscan.files.discovery import printable

# Written before every fingerprint (`v3:3f0c...`): a consumer that stored fingerprints of another
# version knows they cannot match, rather than seeing every failure as new. v3: paths within the
# job are taken relative to the directory that holds the job's logs.
FINGERPRINT_VERSION = "v3"
_NUMBERS = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?")
MASKED_TEXT_CHARS = 400
_HEX_CHARS = 32


def within_logs(files: Iterable[str]) -> Callable[[str], str]:
    """Paths relative to the directory that holds every one of the job's log files: the same
    however the job's PATHs were typed, and the same for a scan and a sweep of it."""
    files = list(files)
    if not files:
        return lambda shown: shown
    cwd = printable(os.getcwd())
    absolute = lambda shown: shown if os.path.isabs(shown) else os.path.join(cwd, shown)  # noqa: E731
    root = os.path.commonpath([os.path.dirname(absolute(f)) for f in files])

    def within(shown: str) -> str:
        return os.path.relpath(absolute(shown), root).replace(os.sep, "/") if shown else "-"

    return within


def _hashed(*parts: str) -> str:
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8", "backslashreplace")).hexdigest()
    return f"{FINGERPRINT_VERSION}:{digest[:_HEX_CHARS]}"


def fingerprint(f: Finding, worker_within: Callable[[str], str] = lambda shown: shown) -> str:
    """A hash of what the finding is (see the module docstring). No `None` goes into it."""
    said = f.evidence[0].text if f.evidence else f.message
    return _hashed(
        FINGERPRINT_VERSION, f.rule,
        "-" if f.node_rank is None else str(f.node_rank),
        "-" if f.rank is None else str(f.rank),
        ",".join(map(str, f.node_ranks)), ",".join(map(str, f.ranks)),
        worker_within(f.worker) if f.worker else "-",
        f.cause or "-",
        _NUMBERS.sub("N", said.strip())[:MASKED_TEXT_CHARS],
    )


def with_fingerprints(findings: Iterable[Finding], worker_within: Callable[[str], str] = lambda shown: shown
                      ) -> list[Finding]:
    """Each finding with its fingerprint; two that would share one are told apart by order."""
    seen: Counter = Counter()
    out = []
    for f in findings:
        base = fingerprint(f, worker_within)
        seen[base] += 1
        value = base if seen[base] == 1 else _hashed(f"{base}#{seen[base]}")
        out.append(replace(f, fingerprint=value))
    return out


def verdict_fingerprint(verdict: str) -> str:
    """What a CI report tracks for a verdict that fails with no error finding to name."""
    return _hashed(FINGERPRINT_VERSION, "logscan-verdict", verdict)


def is_current(value: str | None) -> bool:
    """A fingerprint of this version (one stored by an older logscan cannot match it)."""
    return value is not None and value.startswith(FINGERPRINT_VERSION + ":")
