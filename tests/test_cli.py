"""The command line: formats, output file, and every exit status."""

from __future__ import annotations

import json

from conftest import SAMPLES

HEALTHY = SAMPLES / "healthy-2x2"
FAILED = SAMPLES / "missing-worker"


def test_healthy_job_exits_0(run_cli):
    result = run_cli("scan", HEALTHY)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("HEALTHY healthy-2x2")


def test_failed_job_exits_1_and_names_root_cause(run_cli):
    result = run_cli("scan", FAILED)
    assert result.exit_code == 1, result.output
    assert "missing-worker" in result.output.splitlines()[0]


def test_fail_on_never_exits_0_on_a_failed_job(run_cli):
    assert run_cli("scan", FAILED, "--fail-on", "never").exit_code == 0


def test_fail_on_warning_exits_1_on_warnings_only(run_cli):
    collision = SAMPLES / "log-collision"
    result = run_cli("scan", collision, "--fail-on", "warning", "--select", "log-collision")
    assert result.exit_code == 1, result.output
    result = run_cli("scan", collision, "--select", "log-collision")
    assert result.exit_code == 0, result.output


def test_missing_path_exits_2_with_one_line(run_cli, tmp_path):
    result = run_cli("scan", tmp_path / "nope")
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "no such file" in result.output
    assert "Traceback" not in result.output


def test_directory_without_logs_exits_2(run_cli, tmp_path):
    (tmp_path / "model.pt").write_bytes(b"PK\x03\x04" + bytes(100))
    result = run_cli("scan", tmp_path)
    assert result.exit_code == 2
    assert "no log found" in result.output


def test_unknown_rule_id_exits_2(run_cli):
    result = run_cli("scan", HEALTHY, "--select", "no-such-rule")
    assert result.exit_code == 2 and "no-such-rule" in result.output


def test_bad_progress_pattern_exits_2(run_cli):
    result = run_cli("scan", HEALTHY, "--progress-pattern", "(unclosed")
    assert result.exit_code == 2 and "progress-pattern" in result.output


def test_json_shape(run_cli):
    result = run_cli("scan", FAILED, "--format", "json")
    report = json.loads(result.output)
    assert report["schema_version"] == 2
    assert report["healthy"] is False
    assert report["missing_node_ranks"] == [2]
    for key in ("root_cause", "first_failure", "reached_first_batch", "missing_ranks", "workers", "findings"):
        assert key in report
    worker = report["workers"][0]
    assert set(worker) >= {"node_rank", "host", "files", "nnodes", "gpus_per_node", "total_procs",
                           "master", "ranks", "reached_first_batch"}
    crashed = json.loads(run_cli("scan", SAMPLES / "import-error-one-rank", "--format", "json").output)
    by_rank = {p["rank"]: p for p in crashed["processes"]}
    assert by_rank[2]["stage"] == "init" and by_rank[2]["node_rank"] == 1
    finding = report["findings"][0]
    assert set(finding) >= {"rule", "severity", "message", "hint", "node_rank", "rank", "evidence",
                            "stage", "cause", "caused_by"}
    assert set(finding["evidence"][0]) == {"file", "line", "text"}


def test_output_file_gets_the_report(run_cli, tmp_path):
    target = tmp_path / "report.json"
    result = run_cli("scan", HEALTHY, "--format", "json", "-o", target)
    assert result.exit_code == 0
    assert result.output == ""
    assert json.loads(target.read_text())["healthy"] is True


def test_unwritable_output_exits_2(run_cli, tmp_path):
    result = run_cli("scan", HEALTHY, "-o", tmp_path / "no" / "dir" / "r.txt")
    assert result.exit_code == 2 and "cannot write" in result.output


def test_rules_lists_every_rule(run_cli):
    from logscan.catalogue import load_catalogue

    result = run_cli("rules")
    assert result.exit_code == 0
    listed = {line.split()[0] for line in result.output.splitlines() if line[:1] != " "}
    assert listed == set(load_catalogue().rules)


def test_rules_explain_prints_every_section(run_cli):
    result = run_cli("rules", "explain", "missing-worker")
    assert result.exit_code == 0
    for section in ("What it detects", "Why it matters", "Example", "How to fix"):
        assert f"## {section}" in result.output


def test_rules_explain_unknown_exits_2(run_cli):
    assert run_cli("rules", "explain", "nope").exit_code == 2


def test_rules_fits_80_columns_with_whole_words():
    from typer.testing import CliRunner

    from logscan.catalogue import load_catalogue
    from logscan.cli import app

    result = CliRunner().invoke(app, ["rules", "--isolated"], env={"COLUMNS": "80", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    # Each summary is its words in order, wrapped between them: none is cut.
    rules = load_catalogue().rules
    said: dict[str, list[str]] = {}
    for line in lines:
        first = line.split(maxsplit=2)
        if line[:1] != " ":
            current = first[0]
            said[current] = first[2].split() if len(first) > 2 else []
        else:
            said[current] += line.split()
    assert set(said) == set(rules)
    for rule_id, words in said.items():
        assert words == str(rules[rule_id].summary).split(), rule_id
