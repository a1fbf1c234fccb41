"""SARIF 2.1.0 for code-scanning UIs: rule metadata (name, help, default level) from the
catalogue, one result per finding with its fingerprint, the verdict as a tool notification."""

from __future__ import annotations

import json
from urllib.parse import quote

from logscan.diagnosis import Diagnosis, place_label
from logscan.diagnose.fingerprint import fingerprint
from logscan.render.order import LEVELS, location, ordered, rules_of, verdict_fails

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def artifact_uri(path: str) -> str:
    """A relative path as a relative URI reference; an absolute one as a file: URI."""
    if path.startswith("/"):
        return "file://" + quote(path)
    return quote(path[2:] if path.startswith("./") else path)


def _name(rule_id: str) -> str:
    return "".join(part.capitalize() for part in rule_id.split("-"))


def _rule(rule_id: str, rule) -> dict:
    entry = {"id": rule_id, "name": _name(rule_id)}
    if rule is None:
        return entry
    docs = rule.docs
    entry.update({
        "shortDescription": {"text": str(rule.summary)},
        "fullDescription": {"text": str(docs.get("what", rule.summary))},
        "help": {"text": f"{docs.get('fix', '')}\n\nHint: {rule.hint}".strip(),
                 "markdown": f"**Why it matters.** {docs.get('why', '')}\n\n"
                             f"**How to fix.** {docs.get('fix', '')}\n\n**Hint.** {rule.hint}"},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"stage": rule.stage, "role": rule.role, "kind": rule.kind},
    })
    if rule.references:
        entry["helpUri"] = str(rule.references[0])
    return entry


def render_sarif(d: Diagnosis, catalogue=None, checked=None, tool_version: str = "", **_) -> str:
    rules = rules_of(d, catalogue, checked)
    index = {rule_id: i for i, (rule_id, _) in enumerate(rules)}
    results = []
    for f in ordered(d):
        path, line = location(f, d)
        results.append({
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": LEVELS[f.severity],
            "message": {"text": f"{f.rule}{place_label(f.node_rank, f.rank)}: {f.message}\nHint: {f.hint}"},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": artifact_uri(path)},
                "region": {"startLine": max(1, line)}}}],
            "relatedLocations": [{"id": i, "physicalLocation": {
                "artifactLocation": {"uri": artifact_uri(e.file)},
                "region": {"startLine": max(1, e.line), "snippet": {"text": e.text}}}}
                for i, e in enumerate(f.evidence[1:], 1)],
            "partialFingerprints": {"logscanFingerprint/v1": f.fingerprint or fingerprint(f)},
            "properties": {"cascade": f.cascade, "caused_by": f.caused_by},
        })
    driver = {"name": "logscan",
              "rules": [_rule(rule_id, rule) for rule_id, rule in rules]}
    if tool_version:
        driver["version"] = tool_version
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": driver},
            "invocations": [{
                "executionSuccessful": True,
                "toolExecutionNotifications": [{
                    "level": "error" if verdict_fails(d) else "note",
                    "message": {"text": d.summary()},
                    "descriptor": {"id": "verdict"}}],
            }],
            "results": results,
            "properties": {"verdict": d.verdict, "verdict_reason": d.verdict_reason},
        }],
    }
    return json.dumps(log, indent=2, ensure_ascii=True) + "\n"
