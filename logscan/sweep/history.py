"""A job series' healthy history in the sweep's state: the templates of its latest healthy runs,
kept as each run is committed, and what a failing run of the series is compared with.

Runs are committed in their series' order (logscan.sweep.series), so a first sweep of a tree gives
each failing run the healthy runs before it, as later sweeps do; a run is compared only with
runs earlier in that order, whichever sweep met them.
"""

from __future__ import annotations

import json
import sqlite3
import zlib

from logscan.limits import MAX_HISTORY_RUNS, MAX_RUN_TEMPLATES
from logscan.sweep.series import RunPlace
from logscan.sweep.state import stored_path

# A stored list inflates to at most this (MAX_RUN_TEMPLATES templates of a few hundred bytes).
_MAX_UNPACKED = 4 << 20


def recall(db: sqlite3.Connection, place: RunPlace) -> list:
    """The series' healthy runs before `place` (HealthyRun), at most MAX_HISTORY_RUNS, oldest
    first."""
    from logscan.diagnose.novel_lines import HealthyRun  # with the diagnosis: only for a failing run

    rows = db.execute("SELECT run, templates FROM history WHERE series = ? AND ord < ? "
                      "ORDER BY ord DESC LIMIT ?", (stored_path(place.series), place.order,
                                                    MAX_HISTORY_RUNS)).fetchall()
    runs = []
    for run, blob in reversed(rows):
        templates = _unpack(blob)
        if templates is not None:
            runs.append(HealthyRun(run, frozenset(templates)))
    return runs


def remember(db: sqlite3.Connection, job: str, place: RunPlace, templates: tuple[str, ...]) -> None:
    """A healthy run joins its series' history; the series keeps its latest MAX_HISTORY_RUNS."""
    series = stored_path(place.series)
    blob = zlib.compress(json.dumps(list(templates[:MAX_RUN_TEMPLATES])).encode("ascii"), 6)
    db.execute("INSERT OR REPLACE INTO history (job, series, run, ord, templates) VALUES (?, ?, ?, ?, ?)",
               (stored_path(job), series, place.run, place.order, blob))
    db.execute("DELETE FROM history WHERE series = ? AND job NOT IN (SELECT job FROM history "
               "WHERE series = ? ORDER BY ord DESC LIMIT ?)", (series, series, MAX_HISTORY_RUNS))


def forget(db: sqlite3.Connection, job: str) -> None:
    """The run is no longer healthy (or no longer there): it leaves its series' history."""
    db.execute("DELETE FROM history WHERE job = ?", (stored_path(job),))


def _unpack(blob: bytes) -> list[str] | None:
    """The stored templates, or None when they are damaged (the run is then left out)."""
    try:
        inflate = zlib.decompressobj()
        text = inflate.decompress(blob, _MAX_UNPACKED)
        if inflate.unconsumed_tail:
            return None
        found = json.loads(text.decode("ascii"))
    except (zlib.error, ValueError, TypeError, RecursionError):
        return None
    if not isinstance(found, list) or not all(isinstance(t, str) for t in found):
        return None
    return found
