"""Finding fingerprints: stable across runs, and the same however the paths were typed.

A fingerprint names what failed, not where a file put it: the rule, the places (node_rank, rank
and the lists of them), the Worker, the cause, and the first evidence line's text with numbers,
hex and times masked. So it survives a log that grows around the failure, line numbers that move
from one smoke run to the next, and a rotation (`x.log` → `x.log.1`); a CI system and the cron
sweep both track a failure by it.

Paths are shown as the user gave them from discovery on (logscan.files.discovery): `runs/job` gives
`runs/job/worker-0/launch_ddp.log`, which opens from the current directory; nothing rewrites them
for reports. A fingerprint must not change with that spelling (`runs/job`, `./runs/job`,
`/abs/runs/job`, or `.` from inside it), so it hashes each path *within the job*: relative to the
job root, the directory that holds everything given — the PATH itself for one directory, the
directory of a file PATH, the deepest directory holding them all for several PATHs.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from logscan.diagnosis import Diagnosis, Finding
from logscan.files.discovery import printable

FINGERPRINT_VERSION = "v2"
_NUMBERS = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?")
MASKED_TEXT_CHARS = 400


def job_root(paths: list[str]) -> str:
    """The directory that holds every PATH given, absolute: where paths within the job start."""
    dirs = [os.path.abspath(p) if os.path.isdir(p) else os.path.dirname(os.path.abspath(p))
            for p in paths]
    return printable(os.path.commonpath(dirs))


def within_job(paths: list[str]) -> Callable[[str], str]:
    """A shown path (as typed: relative to the current directory, or absolute) → the same path
    relative to the job root, which does not depend on how the PATHs were typed."""
    root = job_root(paths)
    cwd = printable(os.getcwd())

    def within(shown: str) -> str:
        if not shown:
            return "-"
        absolute = shown if os.path.isabs(shown) else os.path.join(cwd, shown)
        return os.path.relpath(absolute, root).replace(os.sep, "/")

    return within


def fingerprint(f: Finding, worker_within: Callable[[str], str] = lambda shown: shown) -> str:
    """A hash of what the finding is (see the module docstring). No `None` goes into it."""
    said = f.evidence[0].text if f.evidence else f.message
    parts = [
        FINGERPRINT_VERSION, f.rule,
        "-" if f.node_rank is None else str(f.node_rank),
        "-" if f.rank is None else str(f.rank),
        ",".join(map(str, f.node_ranks)), ",".join(map(str, f.ranks)),
        worker_within(f.worker) if f.worker else "-",
        f.cause or "-",
        _NUMBERS.sub("N", said.strip())[:MASKED_TEXT_CHARS],
    ]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "backslashreplace")).hexdigest()[:32]


def with_fingerprints(findings, worker_within: Callable[[str], str] = lambda shown: shown
                      ) -> tuple[Finding, ...]:
    """Each finding with its fingerprint; two that would share one are told apart by order."""
    seen: Counter = Counter()
    out = []
    for f in findings:
        base = fingerprint(f, worker_within)
        seen[base] += 1
        value = base if seen[base] == 1 else hashlib.sha256(
            f"{base}#{seen[base]}".encode()).hexdigest()[:32]
        out.append(replace(f, fingerprint=value))
    return tuple(out)


def for_report(d: Diagnosis, paths: list[str] | None = None) -> Diagnosis:
    """The Diagnosis as reports show it: every finding fingerprinted, each path hashed within
    the job (given the PATHs) or as shown (without them). Nothing else changes: paths, and so
    finding keys (`caused_by`, `root_key`, a Worker's `findings`), are the pipeline's own."""
    if paths is None:
        return replace(d, findings=with_fingerprints(d.findings))
    within = within_job(paths)
    # A finding's `worker` is a path (the Worker's log stream) only for a Worker with no
    # node_rank; otherwise it is `node N`, hashed as it is.
    streams = {w.label for w in d.workers if w.node_rank is None}
    return replace(d, findings=with_fingerprints(
        d.findings, lambda shown: within(shown) if shown in streams else shown))
