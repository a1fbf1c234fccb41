"""JUnit XML as GitLab, Jenkins and GitHub test-report actions read it, valid against both the
strict Apache Ant schema and Jenkins' xunit-plugin schema.

One testsuite per job (in a <testsuites> of one), and a testcase a person can read per question the run asked: `verdict`
(fails when the job FAILED or the logs show nothing to judge), one per expectation asked, named
with its value (`expect-workers (--expect-workers 2)`) and skipped when the lines cannot check
it (no times), and one per rule checked, passing ones
included so that a fixed failure shows as resolved. The count does not grow with the Workers: a
rule's findings on every Worker are one testcase, its failure naming each place. An error finding
fails its testcase with message, places, evidence and hint; warnings and notes are listed in the
suite's system-out (the Ant schema allows no output inside a testcase). The suite's properties
are the expectations asked. XML 1.0 cannot hold most control characters (and the standard
library would write them raw, leaving a file no parser reads), and what it can hold (a newline
in a file name, a C1 CSI, U+202E) would reach whoever reads the report in a terminal or a CI
page: every piece of log text is made inert (`\\x0a`, `\\x9b`, `\\u202e`) before the pieces are
joined, and what remains outside XML is removed.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

from logscan.diagnosis import Diagnosis, Finding
from logscan.render.context import RenderContext
from logscan.render.inert import inert, no_legacy_commands_in_data
from logscan.render.order import ordered, place_of, rules_of
from logscan.vocabulary import ExpectationStatus, Severity

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
VERDICT_CASE = "verdict"


def xml_text(text: str) -> str:
    """One piece of text (a name, a message, a line): inert, and XML 1.0 can hold it."""
    return _NOT_XML.sub("", inert(text))


def _lines(lines) -> str:
    """Lines joined by the report's own newlines, each piece made inert first."""
    return "\n".join(xml_text(line) for line in lines)


def _detail(f: Finding) -> str:
    lines = [f"[{place_of(f)}] {f.message}"]
    lines += [f"{e.file}:{e.line}  {e.text.strip()}" for e in f.evidence]
    lines.append(f"hint: {f.hint}")
    if f.fingerprint:
        lines.append(f"fingerprint: {f.fingerprint}")
    return _lines(lines)


def _stamp(when: datetime | None) -> str:
    """The Ant schema's timestamp: UTC, to the second, with no zone written."""
    when = when or datetime.now(timezone.utc)
    if when.tzinfo is not None:
        when = when.astimezone(timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S")


def render(d: Diagnosis, context: RenderContext) -> str:
    """The context's `hostname`, `started` and `elapsed`: where, when and how long the check ran."""
    asked = {e.rule: e.asked for e in d.expectations}
    unchecked = {e.rule: e.why for e in d.expectations if e.status == ExpectationStatus.NOT_CHECKED}
    hostname, started, elapsed = context.hostname, context.started, context.elapsed
    job = xml_text(d.job) or "job"
    # The Ant schema allows no attribute on <testsuites>, and asks a suite inside it for an id
    # and a package.
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", name=job, timestamp=_stamp(started),
                          hostname=xml_text(hostname) or "localhost", package="logscan", id="0")
    properties = ET.SubElement(suite, "properties")
    for rule_id, flag in asked.items():
        ET.SubElement(properties, "property", name=rule_id, value=xml_text(flag))
    by_rule: dict[str, list[Finding]] = {}
    for f in ordered(d):  # root cause first: a testcase's failure message is about it
        by_rule.setdefault(f.rule, []).append(f)
    rule_ids = [rule_id for rule_id, _rule in rules_of(d, context.catalogue, context.checked)]
    # The verdict, then the expectations asked, then every other rule: what was asked reads first.
    cases = [VERDICT_CASE, *(r for r in rule_ids if r in asked), *(r for r in rule_ids if r not in asked)]
    failures, skipped, notes = 0, 0, []
    for rule_id in cases:
        name = f"{rule_id} ({asked[rule_id]})" if rule_id in asked else rule_id
        case = ET.SubElement(suite, "testcase", classname=xml_text(f"logscan.{d.job}") or "logscan",
                             name=xml_text(name), time="0")
        if rule_id == VERDICT_CASE:
            if d.fails:
                failures += 1
                failure = ET.SubElement(case, "failure", type=d.verdict, message=xml_text(d.summary()))
                failure.text = _lines([d.summary(), f"why: {d.verdict_reason}"])
            continue
        if rule_id in unchecked:
            skipped += 1
            ET.SubElement(case, "skipped", message=xml_text(f"not checked: {unchecked[rule_id]}"))
            continue
        found = by_rule.get(rule_id, [])
        errors = [f for f in found if f.severity == Severity.ERROR]
        if errors:
            failures += 1
            places = ", ".join(dict.fromkeys(place_of(f) for f in errors))
            failure = ET.SubElement(case, "failure", type=errors[0].severity,
                                    message=xml_text(f"{errors[0].message} ({places})"))
            failure.text = "\n\n".join(_detail(f) for f in errors)
        notes += [f"{f.severity} {f.rule}: {_detail(f)}" for f in found if f.severity != Severity.ERROR]
    ET.SubElement(suite, "system-out").text = "\n\n".join([xml_text(d.summary()), *notes])
    ET.SubElement(suite, "system-err")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    suite.set("time", f"{max(elapsed, 0.0):.3f}")
    ET.indent(suites)
    return no_legacy_commands_in_data(ET.tostring(suites, encoding="unicode", xml_declaration=True),
                                      "&#35;") + "\n"
