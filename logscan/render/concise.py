"""`path:line: rule-id message`, one line per finding (what editors and grep read), then the
verdict as `job: VERDICT reason`."""

from __future__ import annotations

from logscan.diagnosis import Diagnosis, place_label
from logscan.render.inert import inert, no_workflow_commands
from logscan.render.order import location, ordered


def render_concise(d: Diagnosis, **_) -> str:
    lines = []
    for f in ordered(d):
        path, line = location(f, d)
        lines.append(inert(f"{path}:{line}: {f.rule} {f.severity}{place_label(f.node_rank, f.rank)}: "
                           f"{f.message}"))
    lines.append(inert(d.summary()))
    return no_workflow_commands("\n".join(lines) + "\n")
