"""The CI formats: each parsed by a real parser, text built to attack them kept inert, GitHub's
escaping and limits, several reports from one run, the step summary.

The hostile logs are SYNTHETIC: the REAL lines of sample_logs/healthy-2x2 with hostile text on
the lines that become evidence.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES

WORKER0 = (SAMPLES / "healthy-2x2" / "worker-0" / "launch_ddp.log").read_text()
WORKER1 = (SAMPLES / "healthy-2x2" / "worker-1" / "launch_ddp.log").read_text()
ATTACK = ("100% ::error file=x,line=1::forged ::add-mask::secret %0A::stop-commands::tok "
          "a:b,c \x1b]52;c;cm0=\x07 \x00\x0b\x1f\ufffe </failure>]]> ``` <script>")
FORMATS = ("human", "json", "concise", "github", "gitlab", "junit", "sarif", "markdown")


@pytest.fixture(autouse=True)
def _not_under_github(monkeypatch):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture
def hostile_job(tmp_path):
    job = tmp_path / "job, a:b%"
    lines = WORKER0.splitlines()
    launch = next(i for i, line in enumerate(lines) if "DDP launch:" in line)
    lines += ["Traceback (most recent call last):", f"RuntimeError: boom {ATTACK}"]
    lines[launch] = lines[launch] + " " + ATTACK
    for name, text in (("worker-0", "\n".join(lines) + "\n"), ("worker-1", WORKER1)):
        (job / name).mkdir(parents=True)
        (job / name / "launch_ddp.log").write_text(text)
    return job


def reports(run_cli, tmp_path, job, *args):
    files = {fmt: tmp_path / f"report.{fmt}" for fmt in FORMATS}
    extra = [a for fmt, path in files.items() for a in (f"--{fmt}-output", path)]
    result = run_cli("check", job, "--now", POST_MORTEM_NOW, "--isolated", "--format", "github",
                     *extra, *args)
    assert result.exit_code == 1, result.output  # the hostile job's RuntimeError fails it
    return result, {fmt: path.read_text() for fmt, path in files.items()}


def check_sarif(log: dict) -> None:
    """The structure SARIF 2.1.0 requires of what logscan writes."""
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert run["tool"]["driver"]["name"] == "logscan"
    for rule in rules:
        assert isinstance(rule["id"], str)
        if "defaultConfiguration" in rule:
            assert rule["defaultConfiguration"]["level"] in ("none", "note", "warning", "error")
            assert rule["shortDescription"]["text"] and rule["help"]["text"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("none", "note", "warning", "error")
        assert isinstance(result["message"]["text"], str)
        for location in result["locations"]:
            physical = location["physicalLocation"]
            assert physical["region"]["startLine"] >= 1
            assert not re.search(r"[ ,]", physical["artifactLocation"]["uri"])
        assert all(isinstance(v, str) for v in result["partialFingerprints"].values())


def test_every_format_parses_and_the_attack_stays_inert(run_cli, tmp_path, hostile_job):
    result, out = reports(run_cli, tmp_path, hostile_job, "--expect-workers", "3")
    json.loads(out["json"])
    issues = json.loads(out["gitlab"])
    assert {"description", "check_name", "fingerprint", "severity", "location"} <= set(issues[0])
    assert all(i["severity"] in ("info", "minor", "major", "critical", "blocker") for i in issues)
    assert all(i["location"]["lines"]["begin"] >= 1 for i in issues)
    junit = ET.fromstring(out["junit"].encode())
    assert junit.find("testsuite").get("name") == "job, a:b%"
    assert any(c.find("failure") is not None and "expect-workers" in c.get("name") for c in junit.iter("testcase"))
    check_sarif(json.loads(out["sarif"]))
    for fmt, text in out.items():
        assert "\x1b" not in text and "\x00" not in text and "\x07" not in text, fmt
        assert not re.search(r"^\s*::(?!error |warning |notice |error::|notice::)", text, re.M), fmt
    # Markdown: log text in messages is escaped; evidence sits in a fence longer than its backticks.
    assert "&lt;script&gt;" in out["markdown"] and "````text" in out["markdown"]


def test_github_commands_escape_data_and_properties(run_cli, tmp_path, hostile_job):
    result, out = reports(run_cli, tmp_path, hostile_job)
    assert out["github"] == result.stdout
    for line in result.stdout.splitlines():
        if not line.startswith("::"):
            continue
        head, _, message = line[2:].partition("::")
        kind, _, props = head.partition(" ")
        assert kind in ("error", "warning", "notice"), line
        assert "\r" not in message and "::" not in re.sub(r"%0A", "", message).split("%0A")[0][:2]
        for prop in props.split(",") if props else ():
            key, _, value = prop.partition("=")
            assert key in ("file", "line", "title") and ":" not in value and "," not in value, prop
        # Every % the log holds is escaped, so the runner cannot decode a forged %0A.
        assert "%0A::" not in message.replace("%250A", "")
    annotated = [line for line in result.stdout.splitlines() if line.startswith("::error")]
    assert "file=" in annotated[0] and "job%2C a%3Ab%25" in annotated[0]
    assert "100%25" in result.stdout and "%0A" in result.stdout


def test_github_puts_the_root_cause_first_and_keeps_to_its_limits(run_cli, tmp_path):
    result = run_cli("check", SAMPLES / "missing-worker", "--now", POST_MORTEM_NOW, "--isolated",
                     "--format", "github", "--expect-workers", "2", "--expect-world-size", "4",
                     "--expect-first-batch", "--expect-finished", "--max-time-to-first-batch", "1m")
    errors = [line for line in result.stdout.splitlines() if line.startswith("::error")]
    assert "root cause%3A missing-worker" in errors[0], errors[0]
    assert len(errors) <= 10


def test_step_summary_and_default_format_under_github_actions(run_cli, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = run_cli("check", SAMPLES / "self-sigkill", "--now", POST_MORTEM_NOW, "--isolated")
    assert result.exit_code == 1
    assert result.stdout.startswith("::error file="), result.stdout
    text = summary.read_text()
    assert text.startswith("earlier step\n") and "## ❌ logscan: FAILED self-sigkill" in text
    human = run_cli("check", SAMPLES / "self-sigkill", "--now", POST_MORTEM_NOW, "--isolated", "-f", "human")
    assert human.stdout.startswith("FAILED self-sigkill")


def test_fingerprints_are_stable_and_distinct(run_cli, tmp_path):
    from logscan.config import parse_time
    from logscan.diagnose.pipeline import diagnose_paths
    from logscan.settings import Settings

    settings = Settings(now=parse_time(POST_MORTEM_NOW))
    paths = [str(SAMPLES / "missing-worker")]
    runs = [diagnose_paths(paths, settings) for _ in range(2)]
    prints = [[f.fingerprint for f in d.findings] for d in runs]
    assert prints[0] == prints[1] and len(set(prints[0])) == len(prints[0]) > 1
    assert all(re.fullmatch(r"v3:[0-9a-f]{32}", p) for p in prints[0])


def test_scan_writes_the_new_formats_too_and_rejects_a_clash(run_cli, tmp_path):
    out = tmp_path / "r.sarif"
    result = run_cli("scan", SAMPLES / "self-sigkill", "--now", POST_MORTEM_NOW, "--isolated",
                     "-f", "concise", "--sarif-output", out)
    assert result.exit_code == 1 and result.stdout.startswith(f"{SAMPLES}/self-sigkill/worker-1/launch_ddp.log:22:")
    check_sarif(json.loads(out.read_text()))
    clash = run_cli("scan", SAMPLES / "self-sigkill", "--isolated", "-o", out, "--json-output", out)
    assert clash.exit_code == 2 and "already written" in clash.output


@pytest.mark.parametrize("sample, cause", [("restart-not-recovered", None), ("collate-error", "collator")])
def test_a_crash_cause_is_shown_alike_in_the_terminal_the_page_and_markdown(sample, cause):
    """`other` (no cause signal explained the crash) says nothing, so no view shows it; a cause
    that a signal named shows in each. REAL: restart-not-recovered's cause is `other` (a RuntimeError no cause signal knows)."""
    from logscan.config import parse_time
    from logscan.diagnose.pipeline import diagnose_paths
    from logscan.render import render
    from logscan.settings import Settings

    diagnosis = diagnose_paths([str(SAMPLES / sample)], Settings(now=parse_time(POST_MORTEM_NOW)))
    assert [f.cause for f in diagnosis.findings if f.is_root] == [cause or "other"]
    for fmt in ("human", "html", "markdown", "concise", "github", "gitlab", "sarif"):
        text = render(fmt, diagnosis)
        assert "cause: other" not in text, fmt
        if cause:
            assert f"cause: {cause}" in text, fmt
