"""`logscan check`: unmet expectations are findings of the gate, apart from the job's verdict and root
cause; the gate's exit status, config, and paths as typed."""

from __future__ import annotations

import json
import re
import os
import xml.etree.ElementTree as ET

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES, expected

GATE = ("--expect-workers", "2", "--expect-gpus-per-node", "2", "--expect-first-batch")
FAILING = ["self-sigkill", "missing-worker", "crash-mid-training", "hang-before-ddp", "gpu-count-mismatch"]


@pytest.fixture(autouse=True)
def _not_under_github(monkeypatch):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def check(run_cli, *args):
    return run_cli("check", *args, "--now", POST_MORTEM_NOW, "--isolated")


def junit_failures(path) -> dict[str, str]:
    root = ET.parse(path).getroot()
    return {case.get("name"): case.find("failure").get("message")
            for case in root.iter("testcase") if case.find("failure") is not None}


def test_a_healthy_sample_passes_the_gate(run_cli, tmp_path):
    report = tmp_path / "junit.xml"
    result = check(run_cli, SAMPLES / "healthy-2x2", *GATE, "--junit-output", report)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("HEALTHY healthy-2x2")
    assert junit_failures(report) == {}
    names = {c.get("name") for c in ET.parse(report).getroot().iter("testcase")}
    assert {"expect-workers (--expect-workers 2)", "expect-first-batch (--expect-first-batch)",
            "worker-killed"} <= names


@pytest.mark.parametrize("sample", FAILING)
def test_each_failing_sample_fails_the_gate_with_its_root_cause_testcase(run_cli, tmp_path, sample):
    report = tmp_path / "junit.xml"
    result = check(run_cli, SAMPLES / sample, *GATE, "--junit-output", report, "--format", "concise")
    assert result.exit_code == 1, result.output
    root = expected(SAMPLES / sample)["expect"]["root_cause"]
    failing = junit_failures(report)
    assert "verdict" in failing
    assert root["rule"] in failing, failing


def test_unmet_expectations_are_findings_with_their_own_ids(run_cli):
    result = check(run_cli, SAMPLES / "healthy-2x2", "--expect-workers", "3", "--expect-world-size", "8",
                   "--expect-gpus-per-node", "4", "--format", "json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    rules = {f["rule"]: f for f in report["findings"]}
    assert set(rules) == {"expect-workers", "expect-world-size", "expect-gpus-per-node"}
    assert report["root_cause"] is None and report["verdict"] == "HEALTHY"
    for f in rules.values():
        assert f["hint"] and f["evidence"], f
        assert f["evidence"][0]["file"].startswith(str(SAMPLES / "healthy-2x2"))


def test_a_timed_run_that_finished_passes_a_gate_of_several_expectations(run_cli):
    # Each expectation's own fire and quiet cases are in its spec file, tests/rules/.
    ok = check(run_cli, SAMPLES / "healthy-timestamps", "--expect-finished",
               "--max-time-to-first-batch", "10m", "--max-warnings", "0")
    assert ok.exit_code == 0, ok.output
    slow = check(run_cli, SAMPLES / "healthy-timestamps", "--expect-finished",
                 "--max-time-to-first-batch", "1s", "--max-warnings", "0", "--format", "concise")
    assert slow.exit_code == 1, slow.output
    assert "expect-time-to-first-batch" in slow.stdout and "expect-finished" not in slow.stdout


def test_a_directory_of_non_logs_fails_the_gate_and_says_why(run_cli, tmp_path):
    job = tmp_path / "artifacts"
    job.mkdir()
    (job / "notes.txt").write_text("uploaded the wrong folder\n")
    (job / "metrics.log").write_text("epoch done\n")
    report = tmp_path / "junit.xml"
    result = check(run_cli, job, "--junit-output", report)
    assert result.exit_code == 1, result.output
    assert "INCONCLUSIVE" in result.stdout and "nothing to judge" in result.stderr
    assert "verdict" in junit_failures(report)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert check(run_cli, empty).exit_code == 2


def test_expectations_from_the_config_file_and_their_validation(run_cli, tmp_path, monkeypatch):
    (tmp_path / "logscan.toml").write_text('[check]\nexpect-workers = 3\nexpect-first-batch = true\n')
    monkeypatch.chdir(tmp_path)
    result = run_cli("check", SAMPLES / "healthy-2x2", "--now", POST_MORTEM_NOW, "--format", "concise")
    assert result.exit_code == 1 and "expect-workers" in result.stdout, result.output
    flag_wins = run_cli("check", SAMPLES / "healthy-2x2", "--now", POST_MORTEM_NOW, "--expect-workers", "2")
    assert flag_wins.exit_code == 0, flag_wins.output
    (tmp_path / "logscan.toml").write_text('[check]\nexpect-workers = "two"\n')
    bad = run_cli("check", SAMPLES / "healthy-2x2")
    assert bad.exit_code == 2 and "check.expect-workers' must be a whole number" in bad.output
    (tmp_path / "logscan.toml").write_text('[check]\nexpect-worker = 2\n')
    assert "unknown expectation 'expect-worker'" in run_cli("check", SAMPLES / "healthy-2x2").output
    assert run_cli("check", SAMPLES / "healthy-2x2", "--isolated", "--expect-workers", "0").exit_code == 2


def test_paths_are_as_typed_and_fingerprints_do_not_depend_on_it(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(SAMPLES)
    runs = {}
    for typed in ("self-sigkill", "./self-sigkill", str(SAMPLES / "self-sigkill")):
        out = tmp_path / "gl.json"
        result = check(run_cli, typed, *GATE, "--format", "concise", "--gitlab-output", out)
        first = result.stdout.splitlines()[0]
        path = first.split(":")[0]
        assert path.startswith(typed.rstrip("/") + "/") and os.path.isfile(path), first
        runs[typed] = [i["fingerprint"] for i in json.loads(out.read_text())]
    monkeypatch.chdir(SAMPLES / "self-sigkill")
    out = tmp_path / "gl.json"
    check(run_cli, ".", *GATE, "--gitlab-output", out)
    runs["."] = [i["fingerprint"] for i in json.loads(out.read_text())]
    values = list(runs.values())
    assert all(v == values[0] for v in values), runs
    assert len(set(values[0])) == len(values[0]) and all(re.fullmatch(r"v3:[0-9a-f]{32}", f) for f in values[0])


def test_no_warnings_allowed_is_an_expectation_of_its_own(run_cli):
    # `--max-warnings 0` alone: zero is a limit asked for, not "not asked".
    result = check(run_cli, SAMPLES / "log-collision", "--max-warnings", "0", "--format", "concise")
    assert result.exit_code == 1 and "expect-max-warnings" in result.stdout, result.output


def test_every_expectation_and_every_format_is_an_option_of_check(run_cli):
    from logscan.expectations import EXPECTATIONS
    from logscan.vocabulary import Format

    shown = run_cli("check", "--help").output
    for expectation in EXPECTATIONS:
        assert expectation.flag in shown
    for fmt in Format:
        assert f"--{fmt.value}-output" in shown


def test_each_format_output_file_gets_its_own_format(run_cli, tmp_path):
    from logscan.vocabulary import Format

    files = {fmt: tmp_path / f"report.{fmt.value}" for fmt in Format}
    args = [arg for fmt, file in files.items() for arg in (f"--{fmt.value}-output", file)]
    check(run_cli, SAMPLES / "self-sigkill", *args, "--format", "concise")
    assert json.loads(files[Format.JSON].read_text())["verdict"] == "FAILED"
    assert files[Format.HTML].read_text().startswith("<!DOCTYPE html>")
    assert files[Format.JUNIT].read_text().startswith("<?xml")
    assert "$schema" in json.loads(files[Format.SARIF].read_text())


def test_an_unmet_expectation_fails_the_gate_and_leaves_the_job_as_the_logs_show_it(run_cli, tmp_path):
    reports = {fmt: tmp_path / f"report.{fmt}" for fmt in ("junit", "sarif", "github")}
    args = [arg for fmt, file in reports.items() for arg in (f"--{fmt}-output", file)]
    result = check(run_cli, SAMPLES / "healthy-2x2", "--expect-workers", "4", "--expect-first-batch",
                   "--format", "json", *args)
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["verdict"] == "HEALTHY" and report["root_cause"] is None, report["summary"]
    assert {f["rule"]: f["role"] for f in report["findings"]} == {"expect-workers": "finding"}
    assert [(e["rule"], e["asked"], e["status"]) for e in report["expectations"]] == [
        ("expect-workers", "--expect-workers 4", "not met"),
        ("expect-first-batch", "--expect-first-batch", "held")]
    assert "expected 4 Worker(s)" in report["expectations"][0]["why"]
    assert "logscan: check fails (not met: --expect-workers 4)" in result.stderr
    assert set(junit_failures(reports["junit"])) == {"expect-workers (--expect-workers 4)"}
    sarif = json.loads(reports["sarif"].read_text())["runs"][0]
    (unmet,) = sarif["results"]
    assert unmet["ruleId"] == "expect-workers" and unmet["level"] == "error"
    assert unmet["properties"] == {"root_cause": False, "consequence": False, "expectation": "not met"}
    assert sarif["properties"]["verdict"] == "HEALTHY"
    github = reports["github"].read_text()
    assert "root cause" not in github and "consequence" not in github
    assert "title=logscan check%3A not met%3A --expect-workers 4" in github


def test_an_unmet_expectation_is_no_consequence_of_a_failed_jobs_root_cause(run_cli):
    result = check(run_cli, SAMPLES / "self-sigkill", "--expect-workers", "4", "--format", "json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    root = expected(SAMPLES / "self-sigkill")["expect"]["root_cause"]
    assert report["verdict"] == "FAILED" and report["root_cause"]["rule"] == root["rule"]
    (unmet,) = [f for f in report["findings"] if f["rule"] == "expect-workers"]
    assert unmet["role"] == "finding" and unmet["caused_by"] is None


def test_an_expectation_the_lines_cannot_check_is_not_checked_and_says_why(run_cli, tmp_path):
    # healthy-2x2's lines carry no times: how long the first batch took cannot be read from them.
    junit = tmp_path / "junit.xml"
    result = check(run_cli, SAMPLES / "healthy-2x2", "--max-time-to-first-batch", "5m",
                   "--expect-workers", "2", "--format", "json", "--junit-output", junit)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["findings"] == [] and report["verdict"] == "HEALTHY"
    unchecked = report["expectations"][1]
    assert (unchecked["asked"], unchecked["status"]) == ("--max-time-to-first-batch 5m", "not checked")
    assert "timestamp" in unchecked["why"]
    assert "not checked: --max-time-to-first-batch 5m (" in result.stderr, result.stderr
    skipped = [case for case in ET.parse(junit).getroot().iter("testcase") if case.find("skipped") is not None]
    assert [case.get("name") for case in skipped] == [
        "expect-time-to-first-batch (--max-time-to-first-batch 5m)"]
    human = check(run_cli, SAMPLES / "healthy-2x2", "--max-time-to-first-batch", "5m")
    assert "not checked" in human.stdout and "Look at what the slow Worker did" not in human.stdout
