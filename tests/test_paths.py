"""Paths as the user gave them (issue 11, "Paths and identity"): every path a report shows opens
from the current directory — relative when the PATH was typed relatively, absolute when it was
absolute — and fingerprints do not depend on that spelling. The jobs are the REAL samples, typed
from other directories."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES
from logscan.files.discovery import discover

SIGKILL = SAMPLES / "self-sigkill"
MISMATCH = SAMPLES / "collective-mismatch"   # six findings, cascades among them
REDIRECTS = SAMPLES / "crash-redirects-log-dir-torch1.13"   # tracebacks only in torchrun's copies
LOCATED = re.compile(r"^(?P<path>.+?):(?P<line>\d+): ")
EVERY_FORMAT = ("human", "json", "concise", "github", "gitlab", "junit", "sarif", "markdown")


# Every job these tests read failed (their samples' expected verdict is FAILED): exit status 1.
FAILED_EXIT = 1


def concise(run_cli, *paths: str, command: str = "scan") -> list[str]:
    """The `path:line: rule message` lines of the concise report (not its closing summary)."""
    result = run_cli(command, *paths, "--now", POST_MORTEM_NOW, "--isolated", "-f", "concise")
    assert result.exit_code == FAILED_EXIT, result.output
    return [line for line in result.stdout.splitlines() if LOCATED.match(line)]


def opens(line: str) -> str:
    """The `path:line:` of a concise line names a file that exists, with at least that many lines."""
    found = LOCATED.match(line)
    path, number = found["path"], int(found["line"])
    assert os.path.isfile(path), f"{path!r} does not open from {os.getcwd()}: {line}"
    with open(path, "rb") as handle:
        assert len(handle.read().splitlines()) >= number, line
    return path


def evidence_paths(record: dict) -> set[str]:
    return ({e["file"] for f in record["findings"] for e in f["evidence"]}
            | {p for w in record["workers"] for p in w["files"]})


def json_record(run_cli, *paths: str, command: str = "scan") -> dict:
    result = run_cli(command, *paths, "--now", POST_MORTEM_NOW, "--isolated", "-f", "json")
    assert result.exit_code == FAILED_EXIT, result.output
    return json.loads(result.stdout)


# --- discovery: the display is the path as typed -----------------------------------------------

@pytest.mark.parametrize("typed, shown", [
    ("sample_logs/self-sigkill", "sample_logs/self-sigkill/worker-1/launch_ddp.log"),
    ("sample_logs/self-sigkill/", "sample_logs/self-sigkill/worker-1/launch_ddp.log"),
    ("./sample_logs/self-sigkill", "./sample_logs/self-sigkill/worker-1/launch_ddp.log"),
    ("sample_logs/self-sigkill/worker-1/launch_ddp.log", "sample_logs/self-sigkill/worker-1/launch_ddp.log"),
    (str(SIGKILL), f"{SIGKILL}/worker-1/launch_ddp.log"),
])
def test_discovery_shows_the_path_as_typed(typed, shown, monkeypatch):
    monkeypatch.chdir(SAMPLES.parent)
    found = discover([typed])
    assert shown in [log.display for log in found.logs]
    assert all(os.path.isfile(log.display) for log in found.logs)


def test_discovery_of_dot_inside_a_job(monkeypatch):
    monkeypatch.chdir(SIGKILL)
    found = discover(["."])
    assert [log.display for log in found.logs] == ["worker-0/launch_ddp.log", "worker-1/launch_ddp.log"]
    monkeypatch.chdir(SIGKILL / "worker-1")
    assert [log.display for log in discover(["../worker-0", "."]).logs] == [
        "../worker-0/launch_ddp.log", "launch_ddp.log"]


# --- every command, every format: paths that open from the current directory ------------------

def test_a_relative_path_from_another_directory_opens_every_evidence_line(run_cli, tmp_path, monkeypatch):
    elsewhere = tmp_path / "ci" / "workspace"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    for sample in (SIGKILL, MISMATCH, REDIRECTS):
        typed = os.path.relpath(sample)  # ../../../…/sample_logs/<sample>
        assert typed.startswith("..")
        for command in ("scan", "check"):
            lines = concise(run_cli, typed, command=command)
            assert lines and all(opens(line).startswith(typed + "/") for line in lines), lines
            record = json_record(run_cli, typed, command=command)
            paths = evidence_paths(record)
            assert all(p.startswith(typed + "/") and os.path.isfile(p) for p in paths), paths
    assert any("/attempt_0/" in line for line in concise(run_cli, os.path.relpath(REDIRECTS)))


def test_dot_inside_the_job(run_cli, monkeypatch):
    monkeypatch.chdir(SIGKILL)
    lines = concise(run_cli, ".")
    assert lines[0].startswith("worker-1/launch_ddp.log:22: error: worker-killed"), lines
    for line in lines:
        opens(line)
    human = run_cli("scan", ".", "--now", POST_MORTEM_NOW, "--isolated").stdout
    assert "worker-1/launch_ddp.log:22" in human and "self-sigkill/worker-1" not in human


def test_an_absolute_path_stays_absolute(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lines = concise(run_cli, str(SIGKILL))
    assert lines[0].startswith(f"{SIGKILL}/worker-1/launch_ddp.log:22:"), lines
    for line in lines:
        assert os.path.isabs(opens(line))
    assert all(os.path.isabs(p) for p in evidence_paths(json_record(run_cli, str(SIGKILL))))


def test_two_paths_each_as_typed(run_cli, tmp_path, monkeypatch):
    """Two PATHs of one job, one relative and one absolute, from a directory above neither."""
    job = tmp_path / "runs" / "job"
    shutil.copytree(SIGKILL, job, ignore=shutil.ignore_patterns("expected.json"))
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    first, second = "../runs/job/worker-0", str(job / "worker-1")
    record = json_record(run_cli, first, second)
    assert record["verdict"] == "FAILED"
    assert {w["label"]: w["files"] for w in record["workers"]} == {
        "node 0": [f"{first}/launch_ddp.log"], "node 1": [f"{second}/launch_ddp.log"]}
    for line in concise(run_cli, first, second):
        assert opens(line).startswith((first + "/", second + "/")), line
    # Two files named one by one are shown as typed too.
    files = concise(run_cli, f"{first}/launch_ddp.log", f"{second}/launch_ddp.log")
    assert files[0].startswith(f"{second}/launch_ddp.log:22:"), files


def test_every_format_of_scan_and_check_shows_the_typed_path(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(SAMPLES.parent)
    typed = "sample_logs/self-sigkill"
    for command in ("scan", "check"):
        for fmt in EVERY_FORMAT:
            result = run_cli(command, typed, "--now", POST_MORTEM_NOW, "--isolated", "-f", fmt)
            assert result.exit_code == 1, result.output
            # Markdown escapes `_`.
            text = result.stdout.replace("\\_", "_")
            want = f"{typed}/worker-1/launch_ddp.log"
            assert want in text, (command, fmt)
            # The parent-relative form of the old scan never comes back.
            assert "self-sigkill/worker-1" not in text.replace(want, ""), (command, fmt)
    want = f"{typed}/worker-1/launch_ddp.log"
    page = run_cli("report", typed, "--now", POST_MORTEM_NOW, "--isolated")
    assert want in page.stdout


# --- identity: fingerprints and finding keys ----------------------------------------------------

def test_fingerprints_do_not_depend_on_how_the_paths_were_typed(run_cli, tmp_path, monkeypatch):
    """A job given as one directory, as its two Worker directories, relatively or absolutely:
    the same fingerprints (paths within the job), distinct, with no None in what they hash."""
    def prints(*paths: str) -> list[str]:
        out = tmp_path / "gl.json"
        run_cli("scan", *paths, "--now", POST_MORTEM_NOW, "--isolated", "--gitlab-output", out)
        return [issue["fingerprint"] for issue in json.loads(out.read_text())]

    monkeypatch.chdir(SAMPLES)
    runs = {"name": prints(MISMATCH.name), "absolute": prints(str(MISMATCH))}
    monkeypatch.chdir(MISMATCH)
    runs["."] = prints(".")
    runs["./"] = prints("./")
    monkeypatch.chdir(MISMATCH / "worker-0")
    runs[".. from a Worker"] = prints("..")
    values = list(runs.values())
    assert all(v == values[0] for v in values), runs
    assert len(set(values[0])) == len(values[0]) > 1

    monkeypatch.chdir(SAMPLES)
    workers = prints(f"{MISMATCH.name}/worker-0", f"{MISMATCH.name}/worker-1")
    assert workers == prints(str(MISMATCH / "worker-0"), str(MISMATCH / "worker-1"))
    assert len(set(workers)) == len(workers)
    # Both Worker directories: the job root is the directory holding them, so the paths within
    # the job, and the fingerprints, are those of the whole job given as one directory.
    assert workers == values[0]


def test_a_worker_without_node_rank_is_hashed_within_the_job(tmp_path, monkeypatch):
    """A Worker with no launch line is labelled by its log's path; its findings' fingerprints hash
    that path within the job, so they too do not change with how the job was typed."""
    from logscan.diagnose.pipeline import diagnose_paths
    from logscan.settings import Settings
    from logscan.config import parse_time

    job = tmp_path / "job"
    job.mkdir()
    # A job that failed before its first batch: host-b's KeyError is a crash of its own (beside
    # a finished run, an exception on a Worker that printed nothing else may have been survived).
    shutil.copy(SAMPLES / "import-error-one-rank-prod" / "worker-0" / "launch_ddp.log", job / "host-a.log")
    (job / "host-b.log").write_bytes(b"Traceback (most recent call last):\nKeyError: 'RANK'\n")
    settings = Settings(now=parse_time(POST_MORTEM_NOW))

    def prints(typed: str) -> list[str]:
        d = diagnose_paths([typed], settings)
        assert any(f.worker and f.worker.endswith("host-b.log") for f in d.findings)
        return [f.fingerprint for f in d.findings]

    monkeypatch.chdir(tmp_path)
    relative = prints("job")
    assert relative == prints(str(job))
    monkeypatch.chdir(job)
    assert relative == prints(".")


@pytest.mark.parametrize("sample", ["crash-mid-training", "collective-mismatch", "crash-log-dir",
                                    REDIRECTS.name])
def test_finding_fingerprints_point_at_their_findings_in_reports(sample, run_cli, tmp_path, monkeypatch):
    """`caused_by`, the root cause and each Worker's findings name findings of the report by
    fingerprint, under check as under scan."""
    from logscan.config import parse_time
    from logscan.diagnose.pipeline import diagnose_paths
    from logscan.settings import Settings

    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    typed = os.path.relpath(SAMPLES / sample)
    d = diagnose_paths([typed], Settings(now=parse_time(POST_MORTEM_NOW)))
    keys = {f.fingerprint for f in d.findings}
    assert d.root_cause.fingerprint in keys
    assert {f.caused_by for f in d.findings if f.caused_by} <= keys
    assert any(f.caused_by for f in d.findings), "a sample with cascades"
    assert all(k in keys for w in d.workers for k in w.findings)
    assert any(w.findings for w in d.workers)
    for command in ("scan", "check"):
        record = json_record(run_cli, typed, command=command)
        shown = {f["fingerprint"] for f in record["findings"]}
        assert {f["caused_by"] for f in record["findings"] if f["caused_by"]} <= shown
        assert all(e["file"].startswith(typed + "/") for f in record["findings"] for e in f["evidence"])
