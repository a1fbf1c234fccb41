"""Paths as the user gave them, and finding fingerprints that do not depend on them.

Discovery shows a log found under a directory PATH relative to that directory's parent
(`job/worker-0/launch_ddp.log` for `runs/job`), and a file PATH as typed. A report for a CI system
or an editor needs the path that opens from the current directory (`runs/job/worker-0/...`), and a
fingerprint that stays the same whether the job was given as `runs/job`, `./runs/job` or
`/abs/runs/job`. `for_report` makes both, at the boundary between the pipeline and the renderers:
it returns a copy of the Diagnosis; nothing is derived from the logs again.

Messages keep the paths they were written with.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from dataclasses import dataclass, replace

from logscan.diagnosis import Diagnosis, Evidence, Finding, InputNote
from logscan.discovery import printable

FINGERPRINT_VERSION = "v1"


@dataclass(frozen=True)
class _Root:
    given: str     # the PATH as typed
    prefix: str    # what discovery puts before a file's path within it ("" for `.` or `/`)
    parent: str    # the typed path of the prefix's parent ("" when relative to the cwd)


class PathMap:
    """Discovery's display names → (the path as the user gave it, the path within the job)."""

    def __init__(self, paths: list[str]):
        self.files: dict[str, str] = {}
        self.roots: list[_Root] = []
        file_dirs = []
        for given in paths:
            if os.path.isdir(given):
                root = given.rstrip("/") or "/"
                shown = os.path.relpath(root, os.path.dirname(root) or ".")
                self.roots.append(_Root(printable(given), "" if shown == "." else printable(shown),
                                        printable(os.path.dirname(root))))
            else:
                file_dirs.append(os.path.dirname(os.path.abspath(given)))
                self.files[printable(given)] = printable(given)
        base = os.path.commonpath(file_dirs) if file_dirs else ""
        self.file_ids = {shown: printable(os.path.relpath(os.path.abspath(shown), base))
                         for shown in self.files}

    def _root(self, display: str) -> _Root | None:
        found = [r for r in self.roots if not r.prefix or display.startswith(r.prefix + "/")]
        if len(found) > 1:  # two roots with one name (`a/logs`, `b/logs`): the one holding it
            longest = max(len(r.prefix) for r in found)
            found = [r for r in found if len(r.prefix) == longest]
            there = [r for r in found if os.path.lexists(os.path.join(r.parent, display))]
            found = there or found
        return found[0] if found else None

    def typed(self, display: str) -> str:
        """The path as the user gave it: opens from the current directory."""
        if display in self.files:
            return display
        root = self._root(display)
        return os.path.join(root.parent, display) if root is not None else display

    def within_job(self, display: str) -> str:
        """The path relative to the PATH it was found under: the same however that was typed."""
        if display in self.file_ids:
            return self.file_ids[display]
        root = self._root(display)
        if root is None or not root.prefix:
            return display
        return display[len(root.prefix) + 1:]


def fingerprint(f: Finding, within_job=lambda path: path) -> str:
    """A hash of what the finding is and where: rule, places, first evidence line (its path
    within the job). No `None` goes into it."""
    first = f.evidence[0] if f.evidence else None
    parts = [
        FINGERPRINT_VERSION, f.rule,
        "-" if f.node_rank is None else str(f.node_rank),
        "-" if f.rank is None else str(f.rank),
        ",".join(map(str, f.node_ranks)), ",".join(map(str, f.ranks)),
        within_job(f.worker) if f.worker else "-",
        f.cause or "-",
        within_job(first.file) if first else "-",
        str(first.line) if first else "-",
    ]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "backslashreplace")).hexdigest()[:32]


def with_fingerprints(findings, within_job=lambda path: path) -> tuple[Finding, ...]:
    """Each finding with its fingerprint; two that would share one are told apart by order."""
    seen: Counter = Counter()
    out = []
    for f in findings:
        base = fingerprint(f, within_job)
        seen[base] += 1
        value = base if seen[base] == 1 else hashlib.sha256(
            f"{base}#{seen[base]}".encode()).hexdigest()[:32]
        out.append(replace(f, fingerprint=value))
    return tuple(out)


def for_report(d: Diagnosis, paths: list[str] | None = None, typed_paths: bool = True) -> Diagnosis:
    """The Diagnosis as reports show it: every finding fingerprinted; with `typed_paths`, every
    path (evidence, Worker files, input notes) as the user gave it."""
    if paths is None:
        return replace(d, findings=with_fingerprints(d.findings))
    paths_map = PathMap(paths)
    findings = with_fingerprints(d.findings, paths_map.within_job)
    if not typed_paths:
        return replace(d, findings=findings)
    typed = paths_map.typed
    findings = tuple(replace(
        f, evidence=tuple(Evidence(typed(e.file), e.line, e.text) for e in f.evidence),
        worker=typed(f.worker) if f.worker and f.node_rank is None else f.worker)
        for f in findings)
    workers = tuple(_marks(replace(w, files=tuple(typed(p) for p in w.files),
                                   label=typed(w.label) if w.node_rank is None else w.label), typed)
                    for w in d.workers)
    processes = tuple(_marks(p, typed) for p in d.processes)
    return replace(d, findings=findings, workers=workers, processes=processes,
                   inputs=tuple(InputNote(typed(n.path), n.problem) for n in d.inputs),
                   skipped=tuple(typed(p) for p in d.skipped))





def _marks(summary, typed):
    """A Worker's or process's timeline marks (where it has them) with typed paths."""
    changes = {}
    if getattr(summary, "stages", None):
        changes["stages"] = tuple(replace(m, file=typed(m.file)) for m in summary.stages)
    if getattr(summary, "last_line", None) is not None:
        changes["last_line"] = replace(summary.last_line, file=typed(summary.last_line.file))
    return replace(summary, **changes) if changes else summary
