"""JUnit XML as GitLab, Jenkins and GitHub test-report actions read it.

One testsuite per job; one testcase per (rule or expectation, Worker) for every rule checked,
passing ones included, so a fixed failure shows as resolved; a `job` testcase per rule for what is
about the whole job, and a `verdict` testcase that fails when the job FAILED or the logs show
nothing to judge (INCONCLUSIVE). An error finding is a failure carrying message, hint and evidence;
a warning or note stays a pass with the finding in system-out. XML 1.0 cannot hold most control
characters (and the standard library would write them raw, leaving a file no parser reads): they
are removed.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from logscan.diagnosis import Diagnosis, Finding
from logscan.render.order import place_of, rules_of, verdict_fails
from logscan.vocabulary import Severity

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    return _NOT_XML.sub("", text)


def _detail(f: Finding) -> str:
    lines = [f.message]
    lines += [f"{e.file}:{e.line}  {e.text.strip()}" for e in f.evidence]
    lines.append(f"hint: {f.hint}")
    if f.fingerprint:
        lines.append(f"fingerprint: {f.fingerprint}")
    return "\n".join(lines)


def _places(d: Diagnosis) -> list[str]:
    return [w.label if w.node_rank is None else f"node {w.node_rank}" for w in d.workers]


def render_junit(d: Diagnosis, catalogue=None, checked=None, **_) -> str:
    suites = ET.Element("testsuites", name="logscan")
    suite = ET.SubElement(suites, "testsuite", name=xml_text(d.job))
    by_case: dict[tuple[str, str], list[Finding]] = {}
    for f in d.findings:
        by_case.setdefault((f.rule, place_of(f)), []).append(f)
    cases = [("verdict", "job")]
    for rule_id, _rule in rules_of(d, catalogue, checked):
        places = dict.fromkeys([*_places(d), "job"])
        places.update(dict.fromkeys(place for rule, place in by_case if rule == rule_id))
        cases += [(rule_id, place) for place in places]
    failures = 0
    for rule_id, place in cases:
        case = ET.SubElement(suite, "testcase", classname=xml_text(f"logscan.{d.job}.{rule_id}"),
                             name=xml_text(f"{rule_id} [{place}]"))
        if rule_id == "verdict":
            if verdict_fails(d):
                failures += 1
                failure = ET.SubElement(case, "failure", type=d.verdict, message=xml_text(d.summary()))
                failure.text = xml_text(f"{d.summary()}\nwhy: {d.verdict_reason}")
            else:
                ET.SubElement(case, "system-out").text = xml_text(d.summary())
            continue
        found = by_case.get((rule_id, place), [])
        errors = [f for f in found if f.severity == Severity.ERROR]
        if errors:
            failures += 1
            failure = ET.SubElement(case, "failure", type=errors[0].severity,
                                    message=xml_text(errors[0].message))
            failure.text = xml_text("\n\n".join(_detail(f) for f in errors))
        others = [f for f in found if f.severity != Severity.ERROR]
        if others:
            ET.SubElement(case, "system-out").text = xml_text(
                "\n\n".join(f"{f.severity}: {_detail(f)}" for f in others))
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    suites.set("tests", str(len(cases)))
    suites.set("failures", str(failures))
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
