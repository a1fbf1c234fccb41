"""The CI gate as a platform team meets it: expectations of the config file bind `check` alone;
a passing check says what it verified; one failure is one ::error; JUnit valid against the strict
Ant schema and Jenkins' xunit-plugin schema, with a testcase per rule (not per rule and Worker); SARIF relative to a base URI, with
no made-up file URI for what is not a file."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES

SCHEMAS = Path(__file__).resolve().parent / "schemas"
GATE = ("--expect-workers", "2", "--expect-first-batch", "--max-warnings", "0")


@pytest.fixture(autouse=True)
def _not_under_github(monkeypatch):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture(scope="module")
def junit_schemas():
    """The strict Ant schema and Jenkins' xunit-plugin schema (tests/schemas/, as published)."""
    import xmlschema

    return [xmlschema.XMLSchema(SCHEMAS / name) for name in ("junit-ant.xsd", "junit-xunit-plugin.xsd")]


def test_the_config_files_expectations_bind_check_alone(run_cli, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLES / "healthy-2x2", repo / "job")
    (repo / "pyproject.toml").write_text("[tool.logscan.check]\nexpect-workers = 3\n")
    monkeypatch.chdir(repo)
    check = run_cli("check", "job", "--now", POST_MORTEM_NOW, "--format", "concise")
    assert check.exit_code == 1 and "expect-workers" in check.stdout, check.output
    scan = run_cli("scan", "job", "--now", POST_MORTEM_NOW, "--format", "json")
    assert scan.exit_code == 0, scan.output
    assert json.loads(scan.stdout)["config_file"].endswith("pyproject.toml")  # the file was read ...
    assert "expect-workers" not in scan.stdout  # ... but not its expectations
    report = run_cli("report", "job", "--now", POST_MORTEM_NOW, "-o", tmp_path / "page.html")
    assert report.exit_code == 0, report.output
    sweep = run_cli("sweep", repo, "--state", tmp_path / "state.db", "--now", POST_MORTEM_NOW,
                    "--all", "--format", "jsonl")
    assert sweep.exit_code == 0, sweep.output
    assert "FAILED" not in sweep.stdout and "expect-workers" not in sweep.stdout, sweep.stdout


def test_a_passing_check_says_which_expectations_it_verified(run_cli, tmp_path):
    markdown, junit = tmp_path / "summary.md", tmp_path / "junit.xml"
    result = run_cli("check", SAMPLES / "healthy-2x2", *GATE, "--isolated", "--now", POST_MORTEM_NOW,
                     "--markdown-output", markdown, "--junit-output", junit)
    assert result.exit_code == 0, result.output
    assert result.stderr == ("logscan: check passes: 3 expectation(s) held: --expect-workers 2, "
                             "--expect-first-batch, --max-warnings 0\n")
    summary = markdown.read_text()
    for asked in ("--expect-workers 2", "--expect-first-batch", "--max-warnings 0"):
        assert f"| `{asked}` | held |" in summary
    suite = ET.parse(junit).getroot().find("testsuite")
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties == {"expect-workers": "--expect-workers 2",
                          "expect-first-batch": "--expect-first-batch",
                          "expect-max-warnings": "--max-warnings 0"}
    passed = {c.get("name") for c in suite.iter("testcase") if c.find("failure") is None}
    assert {"expect-workers (--expect-workers 2)", "expect-first-batch (--expect-first-batch)",
            "expect-max-warnings (--max-warnings 0)"} <= passed
    unmet = run_cli("check", SAMPLES / "healthy-2x2", "--expect-workers", "3", "--isolated",
                    "--now", POST_MORTEM_NOW, "--markdown-output", markdown)
    assert unmet.exit_code == 1
    assert unmet.stderr == "logscan: check fails (not met: --expect-workers 3)\n"
    assert "| `--expect-workers 3` | **not met** |" in markdown.read_text()
    nothing = run_cli("check", SAMPLES / "healthy-2x2", "--isolated", "--now", POST_MORTEM_NOW)
    assert "no expectation was asked for" in nothing.stderr


def test_the_root_cause_is_the_one_error_annotation_its_consequences_notices(run_cli):
    result = run_cli("scan", SAMPLES / "crash-mid-training", "--isolated", "--now", POST_MORTEM_NOW,
                     "--format", "github")
    commands = [line for line in result.stdout.splitlines() if line.startswith("::")]
    errors = [line for line in commands if line.startswith("::error ")]
    assert len(errors) == 1 and "root cause" in errors[0], commands
    consequences = [line for line in commands if "consequence" in line]
    assert consequences and all(line.startswith("::notice ") for line in consequences), commands


@pytest.mark.parametrize("sample", ["healthy-2x2", "healthy-tee-1x4", "crash-mid-training",
                                    "missing-worker", "stall-mid-training"])
def test_junit_is_valid_against_the_strict_ant_schema_and_xunits(run_cli, tmp_path, junit_schemas, sample):
    junit = tmp_path / "junit.xml"
    run_cli("check", SAMPLES / sample, *GATE, "--isolated", "--now", POST_MORTEM_NOW, "--junit-output", junit)
    for schema in junit_schemas:
        schema.validate(junit)
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("timestamp") == "2030-01-01T00:00:00"  # --now is the run's time, in UTC
    assert suite.get("hostname")


def test_junit_has_a_testcase_per_rule_whatever_the_number_of_workers(run_cli, tmp_path):
    """A SYNTHETIC 2-Worker job made 6 Workers by copying its Worker logs under new node_ranks."""
    from logscan.catalogue import load_catalogue
    from logscan.vocabulary import Role

    def cases(job) -> list[str]:
        junit = tmp_path / "junit.xml"
        run_cli("check", job, "--isolated", "--now", POST_MORTEM_NOW, "--junit-output", junit)
        return [c.get("name") for c in ET.parse(junit).getroot().iter("testcase")]

    two = cases(SAMPLES / "healthy-2x2")
    rules = [r for r in load_catalogue(()).rules.values() if r.role != Role.EXPECTATION]
    assert len(two) == 1 + len(rules) and len(set(two)) == len(two)
    assert two[0] == "verdict"
    big = tmp_path / "six"
    shutil.copytree(SAMPLES / "healthy-2x2", big)
    for extra in range(2, 6):
        shutil.copytree(big / "worker-1", big / f"worker-{extra}")
    assert len(cases(big)) == len(two)


def test_junit_of_hostile_text_is_still_valid(run_cli, tmp_path, junit_schemas):
    """SYNTHETIC: a real sample's log with control characters and markup on its failing line."""
    from conftest import sample_copy

    job = sample_copy(tmp_path, "crash-mid-training", "worker-0/launch_ddp.log", old=None,
                      new="[rank1]: RuntimeError: \x00\x1b[31m</failure>]]> \ufffe & <x/>\n")
    junit = tmp_path / "junit.xml"
    run_cli("check", job, "--isolated", "--now", POST_MORTEM_NOW, "--junit-output", junit)
    assert "&lt;/failure&gt;]]&gt;" in junit.read_text()  # the hostile line is in the report
    for schema in junit_schemas:
        schema.validate(junit)


def _sarif(run_cli, *args) -> dict:
    now = () if args[0] == "lint" else ("--now", POST_MORTEM_NOW)
    result = run_cli(*args, "--isolated", *now, "--format", "sarif")
    return json.loads(result.stdout)["runs"][0]


def test_sarif_paths_are_relative_to_the_base_uri(run_cli, tmp_path, monkeypatch):
    shutil.copytree(SAMPLES / "crash-mid-training", tmp_path / "job")
    monkeypatch.chdir(tmp_path)
    for given in ("job", str(tmp_path / "job"), "./job"):
        run = _sarif(run_cli, "scan", given)
        assert run["tool"]["driver"]["informationUri"].startswith("https://")
        assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": tmp_path.as_uri() + "/"}}
        locations = [loc for r in run["results"] for loc in (*r["locations"], *r["relatedLocations"])]
        assert locations
        for loc in locations:
            artifact = loc["physicalLocation"]["artifactLocation"]
            assert artifact["uriBaseId"] == "%SRCROOT%" and artifact["uri"].startswith("job/worker-"), artifact


def test_sarif_names_a_file_outside_the_base_by_its_file_uri(run_cli, tmp_path, monkeypatch):
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    run = _sarif(run_cli, "scan", SAMPLES / "crash-mid-training")
    artifact = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert "uriBaseId" not in artifact
    assert artifact["uri"].startswith((SAMPLES / "crash-mid-training").as_uri() + "/worker-")


def test_sarif_never_makes_a_file_uri_of_the_launch_command(run_cli):
    run = _sarif(run_cli, "lint", "--command", "torchrun --nnodes 2 train.py")
    assert run["results"]
    for result in run["results"]:
        (loc,) = result["locations"]
        assert "physicalLocation" not in loc
        assert loc["logicalLocations"][0]["fullyQualifiedName"] == "<launch command>"
    assert "launch%20command" not in json.dumps(run) and "file:" not in json.dumps(run["results"])
