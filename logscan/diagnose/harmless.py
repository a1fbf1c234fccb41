"""Known-harmless lines: warnings torch and its launchers print that do not mean failure.

The catalogue declares them as data (`rules/harmless/*.toml`); the scan keeps their lines apart
from every other hit (FileScan.harmless), so no rule and no part of the job model reads them. An
entry may instead name a signal whose lines these are (torchrun's banner is the signal
torchrun-started's): its patterns are declared once, there.

Here they are gathered for a report: each entry found, once, with its first line and its count
(a line the scan kept for a run of identical ones counts as the run: FileScan.repeats); and, for
the failing rank's novel lines, which lines are known to be harmless.
"""

from __future__ import annotations

from collections.abc import Iterator

from logscan.diagnosis import HarmlessNote, Where
from logscan.model.job import Job


def _harmless_hits(job: Job) -> Iterator[tuple[int, str, Where, int]]:
    """(scan index, entry id, line, copies it stands for) of every known-harmless line, in
    each file's line order."""
    reused = {entry.reuses: entry.id for entry in job.catalogue.harmless.values() if entry.reuses}
    for index, scan in enumerate(job.scans):
        hits = [(h.rule_id, h.where) for h in scan.harmless]
        hits += [(reused[h.rule_id], h.where) for h in scan.hits if h.rule_id in reused]
        for rule_id, where in sorted(hits, key=lambda hit: hit[1].line):
            yield index, rule_id, where, scan.repeats.get(where.line, 1)


def harmless_lines(job: Job) -> dict[tuple[str, int], str]:
    """(file, line) → the id of the known-harmless entry the line is."""
    return {(where.file, where.line): rule_id for _, rule_id, where, _ in _harmless_hits(job)}


def harmless_notes(job: Job) -> tuple[HarmlessNote, ...]:
    """Each known-harmless entry the logs hold, once, in the order they first appear: what it
    means, its first line, how many lines of it there are, and a reference."""
    first: dict[str, tuple[int, Where]] = {}
    counts: dict[str, int] = {}
    for index, rule_id, where, copies in _harmless_hits(job):
        if rule_id not in first or (index, where.line) < (first[rule_id][0], first[rule_id][1].line):
            first[rule_id] = (index, where)
        counts[rule_id] = counts.get(rule_id, 0) + copies
    notes = []
    for rule_id, (_, where) in sorted(first.items(), key=lambda item: (item[1][0], item[1][1].line, item[0])):
        entry = job.catalogue.harmless[rule_id]
        notes.append(HarmlessNote(rule=rule_id, meaning=entry.summary, file=where.file, line=where.line,
                                  text=where.text, count=counts[rule_id],
                                  reference=entry.references[0] if entry.references else ""))
    return tuple(notes)
