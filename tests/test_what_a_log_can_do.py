"""What a log can do to those who read logscan's output (issue 20): GitHub's legacy `##[command]`
(read anywhere in a line) in the human, concise, markdown and github output, Slack's mentions
and links in the webhook text, a file name's raw newline, C1 CSI and U+202E in JUnit, logscan's
own reports saved beside the logs read as Worker logs, and a rotation that cut the head of
torchrun's own traceback.

The jobs are SYNTHETIC: copies of real samples (conftest.sample_copy) with hostile text put on a
line that becomes evidence and the verdict, a file renamed, reports written beside them, or a
log's head cut away.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES, sample_copy
from logscan.render.inert import slack_text
from logscan.sweep.alerts import message

CRASH = "crash-mid-training"
CRASH_LINE = "[rank1]: RuntimeError: non-finite loss encountered at step 10 (loss=nan); stopping"
LEGACY = "##[stop-commands]tok ##[error title=x]forged ###[warning]too"
UNSAFE_NAME = "launch\n::error::x\u009b31m\u202egol.log"


def scan(run_cli, job, *args):
    return run_cli("scan", job, "--isolated", "--now", POST_MORTEM_NOW, *args)


@pytest.mark.parametrize("fmt", ["human", "concise", "markdown", "github"])
def test_legacy_workflow_commands_anywhere_in_a_line_are_defused(run_cli, tmp_path, fmt):
    job = sample_copy(tmp_path, CRASH, "worker-0/launch_ddp.log", CRASH_LINE, f"{CRASH_LINE} {LEGACY}")
    result = scan(run_cli, job, "--format", fmt)
    assert result.exit_code == 1, result.output
    assert "##[" not in result.stdout, result.stdout
    assert "\\x23#[stop-commands]tok" in result.stdout  # still readable
    verdicts = [line for line in result.stdout.splitlines() if "FAILED" in line and "non-finite" in line]
    assert verdicts and not any("##[" in line for line in verdicts), result.stdout


def test_the_webhook_text_mentions_no_one_and_hides_no_link():
    summary = "FAILED job: <!channel> <!here> <@U024BE7LH> said <https://evil.example|the docs> & more"
    change = {"change": "failed", "summary": summary, "job_id": "job", "verdict": "FAILED",
              "root_cause": {"rule": "crash-during-training"}}
    text = message(change)["text"]
    assert "<" not in text and ">" not in text, text
    assert "&lt;!channel&gt;" in text and "&lt;https://evil.example|the docs&gt; &amp; more" in text
    assert slack_text("a\x1b[2Jb") == "a\\x1b[2Jb"


def test_junit_keeps_no_raw_newline_c1_csi_or_bidi_override_from_a_file_name(run_cli, tmp_path):
    job = sample_copy(tmp_path, CRASH)
    (job / "worker-0" / "launch_ddp.log").rename(job / "worker-0" / UNSAFE_NAME)
    result = scan(run_cli, job, "--format", "junit")
    assert result.exit_code == 1, result.output
    root = ET.fromstring(result.stdout.encode())
    texts = [t for e in root.iter() for t in (e.text or "", *e.attrib.values())]
    shown = [t for t in texts if "gol.log" in t]
    assert shown, result.stdout
    for text in shown:
        assert "\u009b" not in text and "\u202e" not in text, text
        assert all("::error::x" not in line or not line.startswith("::") for line in text.split("\n"))
        assert "launch\\x0a::error::x\\x9b31m\\u202egol.log" in text, text


def _reports(run_cli, tmp_path, sample: str) -> dict[str, str]:
    """Every format's report of a sample, as `scan -o` and `report -o` write them."""
    reports = {}
    for fmt in ("human", "json", "sarif", "junit", "gitlab", "markdown", "github", "concise"):
        out = tmp_path / f"report.{fmt}.txt"
        run_cli("scan", SAMPLES / sample, "--isolated", "--now", POST_MORTEM_NOW, "--format", fmt, "-o", out)
        reports[f"report-{fmt}.txt"] = out.read_text()
    out = tmp_path / "report.html"
    assert run_cli("report", SAMPLES / sample, "--isolated", "-o", out).exit_code in (0, 1)
    reports["report.html"] = out.read_text()
    return reports


@pytest.mark.parametrize("sample", [CRASH, "healthy-2x2"])
def test_logscans_own_reports_in_a_job_directory_are_not_worker_logs(run_cli, tmp_path, sample):
    plain = json.loads(scan(run_cli, SAMPLES / "healthy-2x2", "--format", "json").stdout)
    job = sample_copy(tmp_path, "healthy-2x2")
    reports = _reports(run_cli, tmp_path, sample)
    for name, text in reports.items():
        (job / name).write_text(text)
    result = scan(run_cli, job, "--format", "json")
    report = json.loads(result.stdout)
    assert result.exit_code == 0 and report["findings"] == [], report["findings"]
    assert report["verdict"] == plain["verdict"] == "HEALTHY"
    noted = {note["path"].rsplit("/", 1)[-1] for note in report["inputs"]
             if "a logscan report" in note["problem"]}
    assert noted == set(reports), report["inputs"]


def _cut_above(text: str, marker: str, lines_before: int) -> str:
    """The log from `lines_before` lines above the first line holding `marker`: what is left of
    it after a rotation dropped its head."""
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if marker in line)
    return "".join(lines[at - lines_before:])


@pytest.mark.parametrize("lines_before", [0, 1, 2], ids=["raise", "launcher-frame", "launcher-frames"])
def test_a_rotation_cut_inside_torchruns_traceback_makes_no_childfailederror_crash(run_cli, tmp_path,
                                                                                   lines_before):
    # worker-1's log begins inside torchrun's own traceback: its header and the frames of
    # torch/distributed/run.py (which told it was the agent's) were rotated away.
    job = sample_copy(tmp_path, CRASH)
    log = job / "worker-1" / "launch_ddp.log"
    log.write_text(_cut_above(log.read_text(), "raise ChildFailedError(", lines_before))
    assert "torch/distributed/run.py" not in log.read_text()
    report = json.loads(scan(run_cli, job, "--format", "json").stdout)
    for finding in report["findings"]:
        assert "ChildFailedError" not in finding["message"], finding
    crashes = [f for f in report["findings"] if f["rule"] == "crash-during-training"]
    # Its node rank went with the launch line; its crash is the summary's exit of rank 2.
    assert [f["message"] for f in crashes if f["rank"] == 2] == [
        "rank 2 failed with exit code 1 after training had started"], crashes


def test_a_report_saved_in_a_swept_job_directory_is_no_new_failure(run_cli, tmp_path):
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    job = sample_copy(outputs, "healthy-2x2")
    state = tmp_path / "state.db"

    def sweep():
        result = run_cli("sweep", outputs, "--state", state, "--format", "json", "--now", POST_MORTEM_NOW)
        assert result.exit_code == 0, result.output
        return json.loads(result.output)["jobs"]

    sweep()
    assert run_cli("report", SAMPLES / CRASH, "--isolated", "-o", job / "report.html").exit_code in (0, 1)
    assert [j["change"] for j in sweep() if j["change"]] == []


@pytest.mark.parametrize("fmt", ["json", "sarif", "gitlab", "junit"])
def test_a_data_report_printed_in_a_ci_log_holds_no_legacy_command_yet_parses_the_same(run_cli, tmp_path,
                                                                                      fmt):
    job = sample_copy(tmp_path, CRASH, "worker-0/launch_ddp.log", CRASH_LINE, f"{CRASH_LINE} {LEGACY}")
    result = scan(run_cli, job, "--format", fmt)
    assert "##[" not in result.stdout
    if fmt == "junit":
        texts = [t for e in ET.fromstring(result.stdout.encode()).iter() for t in (e.text or "", *e.attrib.values())]
        assert any(LEGACY in t for t in texts)
    else:
        assert LEGACY in json.dumps(json.loads(result.stdout), ensure_ascii=False)


@pytest.mark.parametrize("worker", ["worker-0", "worker-1"])
def test_a_log_whose_tail_is_nuls_is_read_as_the_log_it_is(run_cli, tmp_path, worker):
    """Synthetic: a node's hard reset (or a preallocated file) leaves NULs after the last line
    written; here 1 KiB of them after a real log of under 8 KiB."""
    job = sample_copy(tmp_path, CRASH)
    log = job / worker / "launch_ddp.log"
    with log.open("ab") as handle:
        handle.write(b"\0" * 1024)
    result = scan(run_cli, job, "--format", "json")
    report = json.loads(result.stdout)
    assert report["root_cause"]["rule"] == "crash-during-training", result.output
    assert not [f for f in report["findings"] if f["rule"] == "missing-worker"]
    assert len(report["workers"]) == 2
