"""GitLab Code Quality: a JSON list of issues (description, check_name, fingerprint, severity,
location.path relative to the project directory, location.lines.begin)."""

from __future__ import annotations

import json
import os

from logscan.diagnosis import Diagnosis, place_label
from logscan.diagnose.fingerprint import fingerprint
from logscan.render.inert import no_legacy_commands_in_data
from logscan.render.order import location, ordered, verdict_fails
from logscan.vocabulary import Severity

# Code Quality severities: info, minor, major, critical, blocker.
def _severity(d: Diagnosis, f) -> str:
    if f.severity == Severity.ERROR:
        if d.is_root(f):
            return "blocker"
        return "major" if (f.cascade or f.caused_by) else "critical"
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


def render_gitlab(d: Diagnosis, project_dir: str | None = None, **_) -> str:
    issues = []
    if verdict_fails(d) and not any(f.severity == Severity.ERROR for f in d.findings):
        path = d.workers[0].files[0] if d.workers and d.workers[0].files else d.job
        issues.append({
            "type": "issue", "check_name": "logscan-verdict", "description": d.summary(),
            "fingerprint": fingerprint_of_verdict(d), "severity": "blocker",
            "location": {"path": _relative(path, project_dir), "lines": {"begin": 1}}})
    for f in ordered(d):
        path, line = location(f, d)
        issues.append({
            "type": "issue",
            "check_name": f.rule,
            "description": f"{f.rule}{place_label(f.node_rank, f.rank)}: {f.message}",
            "content": {"body": f"hint: {f.hint}"},
            "categories": ["Bug Risk"],
            "fingerprint": f.fingerprint or fingerprint(f),
            "severity": _severity(d, f),
            "location": {"path": _relative(path, project_dir), "lines": {"begin": line}},
        })
    document = json.dumps(issues, indent=2, ensure_ascii=True)
    return no_legacy_commands_in_data(document, "\\u0023") + "\n"


def fingerprint_of_verdict(d: Diagnosis) -> str:
    import hashlib

    return hashlib.sha256(f"v1\x1flogscan-verdict\x1f{d.verdict}".encode()).hexdigest()[:32]
