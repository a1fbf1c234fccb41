"""`path:line: severity: rule (node N, rank R): message`, one line per finding (as compilers
write them, which editors and grep read), then the one-line verdict."""

from __future__ import annotations

from logscan.diagnosis import Diagnosis
from logscan.render.context import RenderContext
from logscan.render.inert import inert, no_workflow_commands
from logscan.render.order import ordered


def render(d: Diagnosis, context: RenderContext) -> str:
    lines = [inert(f"{f.location.file}:{f.location.line}: {f.severity}: {f.title}") for f in ordered(d)]
    lines.append(inert(d.summary()))
    return no_workflow_commands("\n".join(lines) + "\n")
