"""`logscan sweep` across a fleet: an indexed Job's shard from its environment, one meaning per
count, ISO 8601 times in every output, Parquet times typed, the terminal table's job ids whole,
alert text without placeholders, and logscan's own words for bad values."""

from __future__ import annotations

import json
import shutil
import tomllib
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from conftest import POST_MORTEM_NOW, REPO, SAMPLES

LAYOUT = {
    "alice/job-1": "crash-mid-training",
    "alice/job-2": "healthy-2x2",
    "bob/run-9": "healthy-log-dir",
    "run-top": "import-error-one-rank",
}


@pytest.fixture
def outputs(tmp_path) -> Path:
    root = tmp_path / "outputs"
    for where, sample in LAYOUT.items():
        shutil.copytree(SAMPLES / sample, root / where, ignore=shutil.ignore_patterns("expected.json"))
    return root


def sweep(run_cli, outputs: Path, state: Path, *args) -> dict:
    result = run_cli("sweep", outputs, "--state", state, "--format", "json", "--now",
                     POST_MORTEM_NOW, *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def is_utc_iso(text) -> bool:
    return isinstance(text, str) and datetime.fromisoformat(text).utcoffset() == timedelta(0)


# --shard auto/N: a Kubernetes indexed Job's pods share one manifest, and its args are not expanded.

def test_shard_auto_takes_the_index_from_job_completion_index(run_cli, outputs, tmp_path,
                                                              monkeypatch):
    seen = {}
    for k in (0, 1):
        monkeypatch.setenv("JOB_COMPLETION_INDEX", str(k))
        auto = sweep(run_cli, outputs, tmp_path / f"auto{k}.db", "--shard", "auto/2", "--all")
        given = sweep(run_cli, outputs, tmp_path / f"given{k}.db", "--shard", f"{k}/2", "--all")
        seen[k] = sorted(job["job_id"] for job in auto["jobs"])
        assert seen[k] == sorted(job["job_id"] for job in given["jobs"])
    assert sorted(seen[0] + seen[1]) == sorted(f"{outputs}/{where}" for where in LAYOUT)
    assert seen[0] and seen[1]  # the layout falls in both shards: an index really chose


def test_shard_auto_without_a_usable_index_is_one_line(run_cli, outputs, tmp_path, monkeypatch):
    monkeypatch.delenv("JOB_COMPLETION_INDEX", raising=False)
    for value, environment, words in (("auto/2", None, "$JOB_COMPLETION_INDEX is not set"),
                                      ("auto/2", "2", "not a shard index from 0 to 1"),
                                      ("auto/2", "x", "not a shard index"),
                                      ("2", None, "must be K/N or auto/N"),
                                      ("auto/0", "0", "N >= 1")):
        if environment is not None:
            monkeypatch.setenv("JOB_COMPLETION_INDEX", environment)
        result = run_cli("sweep", outputs, "--state", tmp_path / "s.db", "--shard", value)
        assert result.exit_code == 2, result.output
        assert words in result.output and result.output.count("\n") == 1, result.output
        assert not (tmp_path / "s.db").exists()


# One meaning per count: the fleet view counts jobs, the findings metric counts findings.

def test_summary_counts_jobs_where_the_metric_counts_findings(run_cli, outputs, tmp_path):
    from prometheus_client.parser import text_string_to_metric_families

    state, metrics = tmp_path / "s.db", tmp_path / "logscan.prom"
    every = sweep(run_cli, outputs, state, "--all", "--prometheus", metrics)
    result = run_cli("sweep", outputs, "--state", state, "--now", POST_MORTEM_NOW, "--summary",
                     "--format", "json")
    assert result.exit_code == 0, result.output
    view = json.loads(result.output)["summary"]
    jobs_with = {}
    findings_of = {}
    for job in every["jobs"]:
        for rule in {f["rule"] for f in job["findings"]}:
            jobs_with[rule] = jobs_with.get(rule, 0) + 1
        for finding in job["findings"]:
            findings_of[finding["rule"]] = findings_of.get(finding["rule"], 0) + 1
    assert view["jobs_by_rule"] == {r: n for r, n in jobs_with.items() if r in view["jobs_by_rule"]}
    assert len(view["jobs_by_rule"]) == min(10, len(jobs_with))
    family = {f.name: f for f in text_string_to_metric_families(metrics.read_text())}["logscan_sweep_findings"]
    assert {s.labels["rule"]: s.value for s in family.samples} == findings_of
    # The sample set has a job with several findings of one rule: the two counts differ there.
    assert any(findings_of[r] > jobs_with[r] for r in jobs_with)
    assert "Findings (not jobs)" in family.documentation
    human = run_cli("sweep", outputs, "--state", state, "--now", POST_MORTEM_NOW, "--summary")
    assert "jobs by rule (a job counted once per rule it has findings of)" in human.output


def test_prometheus_client_is_a_dependency_of_the_command():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert any(d.startswith("prometheus-client") for d in project["dependencies"])


# ISO 8601 everywhere; Parquet typed.

def test_every_time_in_the_sweep_outputs_is_iso_8601_utc(run_cli, outputs, tmp_path):
    state = tmp_path / "s.db"
    report = sweep(run_cli, outputs, state, "--all")
    assert report["schema_version"] == 2
    assert is_utc_iso(report["sweep"]["started"]) and is_utc_iso(report["sweep"]["finished"])
    assert report["sweep"]["started"] <= report["sweep"]["finished"]
    for job in report["jobs"]:
        assert all(is_utc_iso(job[k]) for k in ("first_seen", "changed_at", "diagnosed_at")), job
    result = run_cli("sweep", outputs, "--state", state, "--now", POST_MORTEM_NOW, "--summary",
                     "--format", "json")
    assert is_utc_iso(json.loads(result.output)["sweep"]["started"])
    result = run_cli("sweep", outputs, "--state", state, "--now", POST_MORTEM_NOW, "--all",
                     "--format", "jsonl")
    for line in result.output.splitlines():
        assert is_utc_iso(json.loads(line)["first_seen"])


def test_parquet_export_types_its_times(run_cli, outputs, tmp_path):
    pyarrow = pytest.importorskip("pyarrow")
    import pyarrow.parquet

    from logscan.sweep.fleet import TIME_COLUMNS

    sweep(run_cli, outputs, tmp_path / "s.db", "--export", tmp_path / "jobs.parquet")
    table = pyarrow.parquet.read_table(tmp_path / "jobs.parquet")
    for column in TIME_COLUMNS:
        assert table.schema.field(column).type == pyarrow.timestamp("us", tz="UTC"), column
    assert table.schema.field("day").type == pyarrow.date32()
    rows = table.to_pylist()
    assert len(rows) == len(LAYOUT) and all(row["first_seen"] is not None for row in rows)
    assert all(row["day"] == row["last_activity"].date() for row in rows if row["last_activity"])


# The terminal table.

def test_the_terminal_table_never_splits_a_job_id():
    from logscan.sweep.listing import render_table

    job_id = "/mnt/public/project-a/outputs/alice/job-2026-11-29-0017"
    rows = [{"job_id": job_id, "verdict": "FAILED",
             "root_cause": {"rule": "collective-timeout", "node_rank": 1, "rank": 3},
             "workers": [{"last_activity": "2026-11-29T18:00:00+00:00"}] * 4, "change": "failed"},
            {"job_id": "/mnt/public/project-a/outputs/bob/run-8", "verdict": "HEALTHY",
             "root_cause": None, "workers": [], "change": "finished"}]
    stats = dict(jobs=2, refreshed=2, changes=2, files_opened=8, bytes_read=1, duration_seconds=0.1)
    for width in (60, 100, 140):
        text = render_table(rows, stats, color=False, width=width)
        # a row of the table, or (too narrow for it) a line of its own
        assert any(line.rstrip() == job_id or line.startswith(job_id + " ") for line in text.splitlines()), text
        assert "collective-timeout" in text and "finished" in text, text


# Alert text: a group that did not match leaves no "?".

def test_an_alert_for_an_oom_without_its_numbers_has_no_placeholder(run_cli, tmp_path, webhook_server):
    outputs = tmp_path / "outputs"
    job = outputs / "u" / "job"
    shutil.copytree(SAMPLES / "crash-mid-training", job, ignore=shutil.ignore_patterns("expected.json"))
    # Synthetic edit of a real log: rank 1's exception becomes the driver's bare OOM, which
    # names neither the GPU nor the size.
    log = job / "worker-0" / "launch_ddp.log"
    lines = log.read_text().splitlines(keepends=True)
    cut = [i for i, line in enumerate(lines) if line.startswith("[rank1]: RuntimeError: non-finite")]
    assert len(cut) == 1
    lines[cut[0]] = "[rank1]: RuntimeError: CUDA error: out of memory\n"
    log.write_text("".join(lines))
    url, received = webhook_server
    sweep(run_cli, outputs, tmp_path / "s.db", "--webhook", url)
    [alert] = received
    assert "cuda-out-of-memory" in alert["text"] and alert["text"].endswith("GPU ran out of memory.")
    assert "?" not in alert["text"], alert["text"]


def test_a_template_part_is_dropped_when_its_group_did_not_match():
    from logscan.catalogue import load_catalogue

    rule = load_catalogue().rules["cuda-out-of-memory"]
    assert rule.render_message({"gpu": "3", "size": "2.00 GiB"}) == \
        "GPU 3 ran out of memory while allocating 2.00 GiB."
    assert rule.render_message({"size": "2.00 GiB"}) == "GPU ran out of memory while allocating 2.00 GiB."
    assert rule.render_message({}) == "GPU ran out of memory."
    from dataclasses import replace

    literal = replace(rule, message="[rank0] said [{detail}] {code}")
    assert literal.render_message({}) == "[rank0] said  ?"
    assert literal.render_message({"detail": "x", "code": "7"}) == "[rank0] said x 7"


# Bad values in logscan's words.

@pytest.mark.parametrize("flag, value, words", [
    ("--jobs", "x", "--jobs must be a whole number, not 'x'"),
    ("--jobs", "-1", "--jobs must be a whole number"),
    ("--format", "xml", "--format 'xml' must be one of human, json, jsonl"),
])
def test_bad_values_are_logscans_own_one_line(run_cli, outputs, tmp_path, flag, value, words):
    result = run_cli("sweep", outputs, "--state", tmp_path / "s.db", flag, value)
    assert result.exit_code == 2, result.output
    assert result.output == f"logscan: error: {words}\n" or \
        (result.output.startswith(f"logscan: error: {words}") and result.output.count("\n") == 1), \
        result.output
    assert "Invalid value" not in result.output and "Usage:" not in result.output


def test_the_deployment_pages_kubernetes_manifest_sweeps_one_shard_per_index_with_its_state_on_a_volume(
        run_cli, outputs, tmp_path, monkeypatch):
    import yaml

    page = (REPO / "docs" / "deployment.md").read_text()
    section = page[page.index("## Kubernetes"):page.index("## systemd")]
    manifest = yaml.safe_load(section.split("```yaml\n", 1)[1].split("```", 1)[0])
    job = manifest["spec"]["jobTemplate"]["spec"]
    (container,) = job["template"]["spec"]["containers"]
    command = container["command"]
    assert job["completionMode"] == "Indexed" and manifest["spec"]["concurrencyPolicy"] == "Forbid"
    assert command[command.index("--shard") + 1] == f"auto/{job['completions']}"
    state_home = {e["name"]: e.get("value") for e in container["env"]}["XDG_STATE_HOME"]
    volumes = {v["name"]: v for v in job["template"]["spec"]["volumes"]}
    mounted = {m["mountPath"]: volumes[m["name"]] for m in container["volumeMounts"]}
    assert "persistentVolumeClaim" in mounted[state_home]
    # The command as a pod runs it, on this tree: each index its own state file under the volume.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "volume"))
    args = command[1:]
    for index in range(job["completions"]):
        monkeypatch.setenv("JOB_COMPLETION_INDEX", str(index))
        result = run_cli(*[str(outputs) if a == "/mnt/outputs" else a for a in args],
                         "--now", POST_MORTEM_NOW)
        assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "volume" / "logscan" / "sweeps").glob("*.sqlite3"))) == job["completions"]


# Names anyone with write access to the shared directory can give (synthetic: real jobs, renamed).

def _named_groups(outputs: Path, names: list[str]) -> None:
    for name in names:
        shutil.copytree(SAMPLES / "crash-mid-training", outputs / name / "job",
                        ignore=shutil.ignore_patterns("expected.json"))


@pytest.mark.parametrize("name", ['=HYPERLINK("https:example.com","open")', "+1+2", "-2+3",
                                  "@SUM(A1)", "\tTAB", "\rCR"])
def test_an_export_cell_a_spreadsheet_would_run_is_neutralised(run_cli, outputs, tmp_path, name):
    import csv

    _named_groups(outputs, [name])
    export = tmp_path / "jobs.csv"
    sweep(run_cli, outputs, tmp_path / "s.db", "--export", export)
    with export.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    cells = [cell for row in rows for cell in row.values() if cell]
    assert not [cell for cell in cells if cell[0] in "=+-@\t\r"], cells
    assert f"'{name}" in {row["group"] for row in rows}  # still there, as text


def test_the_summary_escapes_control_characters_as_the_table_does(run_cli, outputs, tmp_path):
    _named_groups(outputs, ["esc\x1b]52;c;SGVsbG8=\x07", "bell\x07", "new\nline", "::error::x"])
    result = run_cli("sweep", outputs, "--state", tmp_path / "s.db", "--summary", "--now",
                     POST_MORTEM_NOW)
    assert result.exit_code == 0, result.output
    assert not any(c in result.stdout for c in "\x1b\x07\r"), repr(result.stdout)
    assert "esc\\x1b]52;c;SGVsbG8=\\x07" in result.stdout and "new\\x0aline" in result.stdout
    assert not [line for line in result.stdout.splitlines() if line.lstrip().startswith("::")]
    assert not [line for line in result.stdout.splitlines() if line.startswith("line")]


def _not_a_regular_file(tmp_path: Path, kind: str, name: str) -> Path:
    """Synthetic: what an output path may name instead of a file."""
    import os
    import socket

    path = tmp_path / name
    if kind == "symlink":
        target = tmp_path / "kept.txt"
        target.write_text("kept\n")
        path.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.close()
    elif kind == "device":
        import stat

        try:  # a null device of its own, made in the test's directory (root only)
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("making a device node takes root")
    return path


@pytest.mark.parametrize("kind", ["symlink", "fifo", "socket", "device"])
@pytest.mark.parametrize("option,name", [("--prometheus", "m.prom"), ("--export", "jobs.csv")])
def test_a_metrics_or_export_path_that_is_no_regular_file_is_refused_never_replaced(
        outputs, tmp_path, kind, option, name):
    import os
    import subprocess
    import sys

    path = _not_a_regular_file(tmp_path, kind, name)
    before = os.lstat(path)
    result = subprocess.run([sys.executable, "-m", "logscan", "sweep", str(outputs), "--state",
                             str(tmp_path / "s.db"), "--now", POST_MORTEM_NOW, option, str(path)],
                            cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and str(path) in result.stderr, result.stderr
    after = os.lstat(path)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    if kind == "symlink":
        assert (tmp_path / "kept.txt").read_text() == "kept\n"
    assert not list(tmp_path.glob(f".{name}.*"))
