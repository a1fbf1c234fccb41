"""GitLab Code Quality: a JSON list of issues (description, check_name, fingerprint, severity,
location.path relative to the project directory, location.lines.begin)."""

from __future__ import annotations

import json
import os

from logscan.diagnosis import Diagnosis, Finding
from logscan.render.context import RenderContext
from logscan.render.inert import no_legacy_commands_in_data
from logscan.render.order import ordered
from logscan.vocabulary import Severity


def _severity(f: Finding) -> str:
    """Code Quality's severity (info, minor, major, critical, blocker): the root cause blocks,
    an error of its own is critical, a consequence major."""
    if f.severity == Severity.ERROR:
        if f.is_root:
            return "blocker"
        return "major" if f.is_consequence else "critical"
    return "minor" if f.severity == Severity.WARNING else "info"


def _relative(path: str, project_dir: str | None) -> str:
    if project_dir and os.path.isabs(path):
        try:
            inside = os.path.relpath(path, project_dir)
        except ValueError:
            return path
        if not inside.startswith(".."):
            return inside
    return path[2:] if path.startswith("./") else path


def render(d: Diagnosis, context: RenderContext) -> str:
    project_dir = context.project_dir
    issues = []
    if d.fails and not any(f.severity == Severity.ERROR for f in d.findings):
        path = d.workers[0].files[0] if d.workers and d.workers[0].files else d.job
        issues.append({
            "type": "issue", "check_name": "logscan-verdict", "description": d.summary(),
            "fingerprint": d.verdict_fingerprint, "severity": "blocker",
            "location": {"path": _relative(path, project_dir), "lines": {"begin": 1}}})
    for f in ordered(d):
        issues.append({
            "type": "issue",
            "check_name": f.rule,
            "description": f.title,
            "content": {"body": f"hint: {f.hint}"},
            "categories": ["Bug Risk"],
            "fingerprint": f.fingerprint,
            "severity": _severity(f),
            "location": {"path": _relative(f.location.file, project_dir),
                         "lines": {"begin": f.location.line}},
        })
    document = json.dumps(issues, indent=2, ensure_ascii=True)
    return no_legacy_commands_in_data(document, "\\u0023") + "\n"

