"""SARIF 2.1.0 for code-scanning UIs: rule metadata (name, help, default level) from the
catalogue, one result per finding with its fingerprint, the verdict as a tool notification. An
unmet expectation of a gate is a result marked `expectation`; one the lines cannot check is a
warning notification; the run's properties list each expectation asked and what it found.

A file inside the directory logscan ran in (the checkout, in CI) is a URI relative to the base
`%SRCROOT%`, which `originalUriBaseIds` resolves, so code scanning opens it in the repository; a
file elsewhere is an absolute file: URI. What is not a file (the launch command given as text, a
log read from standard input, a job with no file to point at) is a logical location, never a
made-up file URI.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

from logscan.diagnosis import Diagnosis
from logscan.render.context import RenderContext
from logscan.render.inert import no_legacy_commands_in_data
from logscan.render.order import ordered, rules_of
from logscan.vocabulary import LEVEL_OF_SEVERITY, ExpectationStatus

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
BASE_ID = "%SRCROOT%"


def artifact_location(path: str, base_dir: str | None) -> dict:
    """A file as SARIF names it: relative to BASE_ID when it lies under `base_dir` (or is
    relative, as typed from there), else an absolute file: URI."""
    if not os.path.isabs(path):
        relative = os.path.normpath(path)
        if base_dir is not None and not relative.startswith(".."):
            return {"uri": quote(relative), "uriBaseId": BASE_ID}
        path = os.path.join(base_dir or os.getcwd(), path)
    if base_dir is not None:
        inside = os.path.relpath(path, base_dir)
        if not inside.startswith(".."):
            return {"uri": quote(inside), "uriBaseId": BASE_ID}
    return {"uri": Path(os.path.normpath(path)).as_uri()}


def is_file_label(path: str) -> bool:
    """False for the names logscan gives what is not a file: `<launch command>`, `<stdin>`."""
    return not (path.startswith("<") and path.endswith(">"))


def _location(path: str, line: int, d: Diagnosis, base_dir: str | None, snippet: str | None = None,
              **extra) -> dict:
    files = {file for w in d.workers for file in w.files}
    if is_file_label(path) and (path != d.job or path in files):
        region = {"startLine": max(1, line)}
        if snippet is not None:
            region["snippet"] = {"text": snippet}
        return {**extra, "physicalLocation": {"artifactLocation": artifact_location(path, base_dir),
                                              "region": region}}
    return {**extra, "logicalLocations": [{"name": path.strip("<>"), "fullyQualifiedName": path,
                                           "kind": "resource"}]}


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
        "defaultConfiguration": {"level": LEVEL_OF_SEVERITY[rule.severity]},
        "properties": {"stage": rule.stage, "role": rule.role, "kind": rule.kind},
    })
    if rule.references:
        entry["helpUri"] = str(rule.references[0])
    return entry


def render(d: Diagnosis, context: RenderContext) -> str:
    base_dir = context.base_dir
    rules = rules_of(d, context.catalogue, context.checked)
    index = {rule_id: i for i, (rule_id, _) in enumerate(rules)}
    results = []
    for f in ordered(d):
        results.append({
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": f.level,
            "message": {"text": f"{f.title}\nHint: {f.hint}"},
            "locations": [_location(f.location.file, f.location.line, d, base_dir)],
            "relatedLocations": [_location(e.file, e.line, d, base_dir, snippet=e.text, id=i)
                                 for i, e in enumerate(f.evidence[1:], 1)],
            "partialFingerprints": {"logscanFingerprint": f.fingerprint},
            "properties": {"root_cause": f.is_root, "consequence": f.is_consequence,
                           **({"expectation": ExpectationStatus.NOT_MET} if d.is_expectation(f) else {})},
        })
    driver = {"name": "logscan",
              "rules": [_rule(rule_id, rule) for rule_id, rule in rules]}
    if context.tool_version:
        driver["version"] = context.tool_version
    if context.information_uri:
        driver["informationUri"] = context.information_uri
    run = {
        "tool": {"driver": driver},
        "invocations": [{
            "executionSuccessful": True,
            "toolExecutionNotifications": [{
                "level": "error" if d.fails else "note",
                "message": {"text": d.summary()},
                "descriptor": {"id": "verdict"}}] + [{
                # The gate could not hold the lines to this expectation: said, not failed.
                "level": "warning",
                "message": {"text": f"not checked: {e.asked}: {e.why}"},
                "descriptor": {"id": e.rule}} for e in d.expectations
                if e.status == ExpectationStatus.NOT_CHECKED],
        }],
        "results": results,
        "properties": {"verdict": d.verdict, "verdict_reason": d.verdict_reason,
                       **({"expectations": [{"rule": e.rule, "asked": e.asked, "status": e.status, "why": e.why}
                                            for e in d.expectations]} if d.expectations else {})},
    }
    if base_dir is not None:
        run["originalUriBaseIds"] = {BASE_ID: {"uri": Path(base_dir).as_uri().rstrip("/") + "/"}}
    log = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    document = json.dumps(log, indent=2, ensure_ascii=True)
    return no_legacy_commands_in_data(document, "\\u0023") + "\n"
