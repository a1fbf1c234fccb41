"""`logscan sweep`: a tree of jobs built from copies of the real samples at mixed depths, swept
again and again as logs grow, rotate, and sweeps are killed."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import POST_MORTEM_NOW, REPO, SAMPLES

# Where each sample goes in the shared output directory: depth 1 to 4.
LAYOUT = {
    "alice/job-1": "crash-mid-training",
    "alice/job-2": "healthy-2x2",
    "bob/proj/run-7": "healthy-gzip",
    "bob/run-9": "healthy-log-dir",
    "run-top": "import-error-one-rank",
    "carol/x/y/ts": "healthy-timestamps",
}
FAILING = {"alice/job-1", "run-top"}


@pytest.fixture
def outputs(tmp_path) -> Path:
    root = tmp_path / "outputs"
    for where, sample in LAYOUT.items():
        shutil.copytree(SAMPLES / sample, root / where, ignore=shutil.ignore_patterns("expected.json"))
    return root


def scanned(job: Path, settings):
    """What `logscan scan` gives for a run directory typed as its name from the directory above
    it: sweep shows a job's files under the run directory's name, whatever the current directory."""
    from logscan.diagnose.pipeline import diagnose_paths

    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(job.parent)
        return diagnose_paths([job.name], settings)


def sweep(run_cli, outputs: Path, state: Path, *args, now: str = POST_MORTEM_NOW) -> dict:
    result = run_cli("sweep", outputs, "--state", state, "--format", "json", "--now", now, *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def changed(report: dict) -> dict[str, str]:
    return {job["job_id"]: job["change"] for job in report["jobs"]}


def test_every_job_found_at_any_depth_and_diagnosed_as_scan_does(run_cli, outputs, tmp_path):
    from logscan.render.json_record import diagnosis_record
    from logscan.settings import Settings

    report = sweep(run_cli, outputs, tmp_path / "s.db", "--all")
    jobs = {job["job_id"]: job for job in report["jobs"]}
    assert set(jobs) == {f"{outputs}/{where}" for where in LAYOUT}
    assert {j for j, job in jobs.items() if job["change"]} == {f"{outputs}/{w}" for w in FAILING}
    settings = Settings.resolve({"now": POST_MORTEM_NOW})
    for where in ("alice/job-1", "bob/proj/run-7", "bob/run-9"):
        alone = diagnosis_record(scanned(outputs / where, settings))
        swept = jobs[f"{outputs}/{where}"]
        assert {k: swept[k] for k in alone if k not in ("job", "summary")} == \
            {k: v for k, v in alone.items() if k not in ("job", "summary")}


def test_second_sweep_opens_no_file_and_reports_nothing(run_cli, outputs, tmp_path):
    first = sweep(run_cli, outputs, tmp_path / "s.db")
    assert first["sweep"]["files_opened"] > 0
    assert set(changed(first).values()) == {"failed"}
    second = sweep(run_cli, outputs, tmp_path / "s.db")
    assert second["jobs"] == []
    assert (second["sweep"]["files_opened"], second["sweep"]["bytes_read"]) == (0, 0)
    assert second["sweep"]["jobs"] == len(LAYOUT) and second["sweep"]["refreshed"] == 0


def _running_job(root: Path) -> tuple[Path, bytes]:
    """healthy-2x2 cut at step 10 of node 0, the platform saying running; and the rest of a
    real crash (crash-mid-training's node 0, from its traceback on) to append."""
    job = root / "live" / "job-9"
    shutil.copytree(SAMPLES / "healthy-2x2", job, ignore=shutil.ignore_patterns("expected.json"))
    log = job / "worker-0" / "launch_ddp.log"
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:17]))
    (job / "job_status").write_text("running\n")
    for path in job.rglob("*"):
        os.utime(path)  # written just now: live
    crash = (SAMPLES / "crash-mid-training" / "worker-0" / "launch_ddp.log").read_bytes()
    return log, b"".join(crash.splitlines(keepends=True)[8:])


def test_appending_a_traceback_to_a_running_job_alerts_once(run_cli, outputs, tmp_path):
    from logscan.settings import Settings

    from datetime import datetime, timedelta, timezone

    log, crash = _running_job(outputs)
    state = tmp_path / "s.db"
    now = (datetime.now(timezone.utc) + timedelta(minutes=1)).isoformat()
    sweep(run_cli, outputs, state, now=now)
    job = f"{outputs}/live/job-9"
    assert _jobs(sweep(run_cli, outputs, state, "--all", now=now))[job]["verdict"] == "RUNNING"
    size = log.stat().st_size
    half = len(crash) // 2 + 7  # mid-line: the unfinished line is read, and read again later
    with log.open("ab") as handle:
        handle.write(crash[:half])
    middle = sweep(run_cli, outputs, state, now=now)
    # Read from where it stopped: the appended bytes, the edge before them, the last 4 KiB
    # looked at for the last newline.
    assert half <= middle["sweep"]["bytes_read"] < half + 4096 + 512, (half, size)
    with log.open("ab") as handle:
        handle.write(crash[half:])
    after = sweep(run_cli, outputs, state, now=now)
    alerts = [j for j in middle["jobs"] + after["jobs"] if j["change"] == "failed"]
    assert [j["job_id"] for j in alerts] == [job]
    assert sweep(run_cli, outputs, state, now=now)["jobs"] == []
    # What the grown file's stored surveys give is what a whole read gives.
    swept = _jobs(sweep(run_cli, outputs, state, "--all", now=now))[job]
    whole = scanned(outputs / "live" / "job-9", Settings.resolve({"now": now}))
    from logscan.render.json_record import diagnosis_record
    assert swept["findings"] == json.loads(json.dumps(diagnosis_record(whole)["findings"]))
    assert swept["verdict"] == whole.verdict == "FAILED" and log.stat().st_size > size


def _jobs(report: dict) -> dict[str, dict]:
    return {job["job_id"]: job for job in report["jobs"]}


def test_truncated_and_rotated_logs_are_read_again_and_rotation_keeps_its_surveys(
        run_cli, outputs, tmp_path):
    from logscan.render.json_record import diagnosis_record
    from logscan.settings import Settings

    state = tmp_path / "s.db"
    sweep(run_cli, outputs, state)
    job = outputs / "alice" / "job-2"
    log = job / "worker-0" / "launch_ddp.log"
    lines = log.read_bytes().splitlines(keepends=True)
    # Rotated: the log becomes launch_ddp.log.1 and a new, short one starts.
    log.rename(job / "worker-0" / "launch_ddp.log.1")
    log.write_bytes(b"".join(lines[-3:]))
    rotated = sweep(run_cli, outputs, state)
    assert rotated["sweep"]["bytes_read"] < len(b"".join(lines))  # the old one is not read again
    # Truncated in place (copytruncate) and rewritten shorter.
    other = job / "worker-1" / "launch_ddp.log"
    other.write_bytes(other.read_bytes()[: other.stat().st_size // 2])
    sweep(run_cli, outputs, state)
    swept = {j["job_id"]: j for j in sweep(run_cli, outputs, state, "--all")["jobs"]}[str(job)]
    whole = diagnosis_record(scanned(job, Settings.resolve({"now": POST_MORTEM_NOW})))
    for key in ("verdict", "findings", "workers", "processes", "root_cause"):
        assert swept[key] == whole[key], key


KILL_AFTER_COMMITS = """
import os, signal, sys
import logscan.sweep.engine as engine
commit, done = engine.Sweep._commit, []
def commit_then_die(self, *args):
    commit(self, *args)
    done.append(1)
    if len(done) == 2:
        os.kill(os.getpid(), signal.SIGKILL)
engine.Sweep._commit = commit_then_die
sys.argv = ["logscan", *sys.argv[1:]]
from logscan.cli import main
main()
"""


def test_a_sweep_killed_midway_then_rerun_reports_each_failure_once(run_cli, outputs, tmp_path):
    state = tmp_path / "s.db"
    args = ["sweep", str(outputs), "--state", str(state), "--format", "jsonl", "--now", POST_MORTEM_NOW,
            "--jobs", "1"]
    killed = subprocess.run([sys.executable, "-c", KILL_AFTER_COMMITS, *args], cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    told = [json.loads(line) for line in killed.stdout.splitlines()]
    rerun = run_cli(*args)
    assert rerun.exit_code == 0, rerun.output
    told += [json.loads(line) for line in rerun.output.splitlines()]
    assert sorted(j["job_id"] for j in told) == sorted(f"{outputs}/{w}" for w in FAILING)
    assert run_cli(*args).output == ""


def test_prometheus_file_parses(run_cli, outputs, tmp_path):
    parser = pytest.importorskip("prometheus_client.parser")
    metrics = tmp_path / "textfile" / "logscan.prom"
    metrics.parent.mkdir()
    sweep(run_cli, outputs, tmp_path / "s.db", "--prometheus", metrics)
    families = {f.name: f for f in parser.text_string_to_metric_families(metrics.read_text())}
    jobs = {s.labels["verdict"]: s.value for s in families["logscan_sweep_jobs"].samples}
    assert jobs["FAILED"] == len(FAILING) and sum(jobs.values()) == len(LAYOUT)
    assert families["logscan_sweep_bytes_read"].samples[0].value > 0
    assert "logscan_sweep_last_run_timestamp_seconds" in families
    assert not any("job" in s.labels for f in families.values() for s in f.samples)
    assert [p.name for p in metrics.parent.iterdir()] == ["logscan.prom"]  # renamed into place


def test_webhook_posts_each_new_failure_to_a_local_server(run_cli, outputs, tmp_path, webhook_server):
    url, received = webhook_server
    sweep(run_cli, outputs, tmp_path / "s.db", "--webhook", url)
    sweep(run_cli, outputs, tmp_path / "s.db", "--webhook", url)
    # The first answer is one digest of every failure found (test_sweep_attacks follows on).
    assert [sorted(m["job_ids"]) for m in received] == [sorted(f"{outputs}/{w}" for w in FAILING)]
    assert all(line.startswith("- new failure: FAILED ") for line in received[0]["text"].splitlines()[1:])


def test_two_shards_cover_every_job_once(run_cli, outputs, tmp_path):
    seen = []
    for k in (0, 1):
        report = sweep(run_cli, outputs, tmp_path / f"s{k}.db", "--shard", f"{k}/2", "--all")
        seen += [job["job_id"] for job in report["jobs"]]
    assert sorted(seen) == sorted(f"{outputs}/{where}" for where in LAYOUT)


def test_export_and_summary(run_cli, outputs, tmp_path):
    from logscan.sweep.fleet import COLUMNS

    state = tmp_path / "s.db"
    result = run_cli("sweep", outputs, "--state", state, "--now", POST_MORTEM_NOW, "--summary",
                     "--export", tmp_path / "jobs.csv")
    assert result.exit_code == 0, result.output
    assert "by verdict" in result.output and "by user/project directory" in result.output
    header, *rows = (tmp_path / "jobs.csv").read_text().splitlines()
    assert tuple(header.split(",")) == COLUMNS and len(rows) == len(LAYOUT)
    sweep(run_cli, outputs, state, "--export", tmp_path / "jobs.jsonl")
    records = [json.loads(line) for line in (tmp_path / "jobs.jsonl").read_text().splitlines()]
    assert {r["group"] for r in records} == {"alice", "bob", "carol", ""}


@pytest.mark.parametrize("sample", [
    "hang-still-running",
    # production shape: no env print, so only the whole world's quiet since start-up tells
    "hang-still-running-prod",
    # stalled mid-training, lines without times: the files' mtimes tell how long
    "stall-still-running-prod-plain",
])
def test_a_live_job_turns_hung_after_stall_after_without_reading(run_cli, tmp_path, sample):
    outputs = tmp_path / "outputs"
    shutil.copytree(SAMPLES / sample, outputs / "u" / "job",
                    ignore=shutil.ignore_patterns("expected.json"))
    newest = max(p.stat().st_mtime for p in (outputs / "u" / "job").rglob("*.log"))
    from datetime import datetime, timedelta, timezone

    soon = datetime.fromtimestamp(newest, timezone.utc) + timedelta(minutes=1)
    first = sweep(run_cli, outputs, tmp_path / "s.db", "--all", now=soon.isoformat())
    assert first["jobs"][0]["verdict"] == "RUNNING" and first["jobs"][0]["change"] is None
    later = sweep(run_cli, outputs, tmp_path / "s.db", now=(soon + timedelta(hours=1)).isoformat())
    assert [j["change"] for j in later["jobs"]] == ["hung"]
    assert later["sweep"]["files_opened"] == 0


@pytest.mark.parametrize("sample", ["hang-still-running-prod", "stall-still-running-prod-plain"])
def test_a_job_without_status_seen_live_then_silent_turns_hung(run_cli, tmp_path, sample):
    """No platform status: an earlier sweep saw the logs grow (RUNNING by its live guess); once
    they have been quiet past --stall-after with nothing saying the job ended, it is hung. A log
    read for the first time long after it was written is no such evidence (a copy, a paste)."""
    outputs = tmp_path / "outputs"
    shutil.copytree(SAMPLES / sample, outputs / "u" / "job",
                    ignore=shutil.ignore_patterns("expected.json", "job_status"))
    newest = max(p.stat().st_mtime for p in (outputs / "u" / "job").rglob("*.log"))
    from datetime import datetime, timedelta, timezone

    soon = datetime.fromtimestamp(newest, timezone.utc) + timedelta(minutes=1)
    first = sweep(run_cli, outputs, tmp_path / "s.db", "--all", now=soon.isoformat())
    assert first["jobs"][0]["verdict"] == "RUNNING"
    later = sweep(run_cli, outputs, tmp_path / "s.db", now=(soon + timedelta(hours=1)).isoformat())
    assert [j["change"] for j in later["jobs"]] == ["hung"]
    cold = sweep(run_cli, outputs, tmp_path / "cold.db", "--all", now=(soon + timedelta(hours=1)).isoformat())
    assert cold["jobs"][0]["verdict"] == "INCONCLUSIVE"


def test_a_job_without_status_seen_live_that_finished_is_finished_not_running(run_cli, tmp_path):
    """Real healthy run, production shape, no status file: seen live, then quiet past --stall-after.
    Its logs say it finished: HEALTHY and `finished`, not RUNNING for ever by the sweep's memory."""
    outputs = tmp_path / "outputs"
    shutil.copytree(SAMPLES / "healthy-2x2-prod", outputs / "u" / "job",
                    ignore=shutil.ignore_patterns("expected.json", "job_status"))
    newest = max(p.stat().st_mtime for p in (outputs / "u" / "job").rglob("*.log"))
    from datetime import datetime, timedelta, timezone

    soon = datetime.fromtimestamp(newest, timezone.utc) + timedelta(minutes=1)
    first = sweep(run_cli, outputs, tmp_path / "s.db", "--all", now=soon.isoformat())
    assert first["jobs"][0]["verdict"] == "RUNNING"
    later = sweep(run_cli, outputs, tmp_path / "s.db", "--all", now=(soon + timedelta(hours=1)).isoformat())
    assert (later["jobs"][0]["verdict"], later["jobs"][0]["change"]) == ("HEALTHY", "finished")


def test_a_live_job_with_timed_lines_turns_hung_by_its_own_rhythm(run_cli, tmp_path):
    """Real: steps 0.1 s apart, then nothing after 11:48:48 (kubectl timestamps), the platform says
    running. Ten minutes of silence is a hundred times its rhythm and more: a sweep twelve minutes
    later tells it hung, without waiting for --stall-after's 30 min and without reading again."""
    outputs = tmp_path / "outputs"
    shutil.copytree(SAMPLES / "stall-still-running-prod", outputs / "u" / "job",
                    ignore=shutil.ignore_patterns("expected.json"))
    first = sweep(run_cli, outputs, tmp_path / "s.db", "--all", now="2026-12-02T11:50:00Z")
    assert first["jobs"][0]["verdict"] == "RUNNING" and first["jobs"][0]["change"] is None
    later = sweep(run_cli, outputs, tmp_path / "s.db", now="2026-12-02T12:01:00Z")
    assert [j["change"] for j in later["jobs"]] == ["hung"]
    assert later["sweep"]["files_opened"] == 0


def test_scan_refuses_to_merge_the_tree(run_cli, outputs):
    result = run_cli("scan", outputs)
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert f"{len(LAYOUT)} jobs" in result.output and "logscan sweep" in result.output


def test_state_is_never_inside_the_swept_directory(run_cli, outputs, monkeypatch, tmp_path):
    from logscan.sweep.state import default_state_path

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert default_state_path([str(outputs)], None).is_relative_to(tmp_path / "xdg")
    result = run_cli("sweep", outputs, "--state", outputs / "state.db")
    assert result.exit_code == 2 and "inside the swept directory" in result.output


@pytest.mark.parametrize("path, run", [
    ("w/job/worker-0/launch_ddp.log", "w/job"),
    ("job/node_1/x.log", "job"),
    ("job/logs/host-a.log", "job"),
    ("job/launch_ddp.0.log", "job"),
    ("job/worker-0/torchrun_logs/none_ab12/attempt_0/1/stdout.log", "job"),
    ("runs/12345/launch_ddp.log", "runs/12345"),
    ("launch_ddp.log", ""),
])
def test_run_directories(path, run):
    from logscan.files.jobroots import run_dir_of

    assert run_dir_of(path, set()) == run
    assert run_dir_of("a/b/worker-0/x.log", {"a"}) == "a"


def test_many_jobs_are_diagnosed_across_processes_as_in_one(run_cli, outputs, tmp_path, monkeypatch):
    import logscan.sweep.engine as engine

    alone = sweep(run_cli, outputs, tmp_path / "one.db", "--all", "--jobs", "1")
    monkeypatch.setattr(engine, "FAN_OUT_MIN_JOBS", 2)
    forked = sweep(run_cli, outputs, tmp_path / "two.db", "--all", "--jobs", "2")
    strip = ("changed_at", "diagnosed_at", "first_seen", "swept_at")
    assert [{k: v for k, v in j.items() if k not in strip} for j in forked["jobs"]] == \
        [{k: v for k, v in j.items() if k not in strip} for j in alone["jobs"]]


def test_sweep_all_lists_job_names_in_natural_order(run_cli, tmp_path):
    root = tmp_path / "outputs"
    names = ["job-12", "job-9", "job-100", "job-10", "job-2"]
    for name in names:
        shutil.copytree(SAMPLES / "healthy-2x2", root / name, ignore=shutil.ignore_patterns("expected.json"))
    state = tmp_path / "s.db"
    natural = ["job-2", "job-9", "job-10", "job-12", "job-100"]
    assert [Path(job["job_id"]).name for job in sweep(run_cli, root, state, "--all")["jobs"]] == natural
    lines = run_cli("sweep", root, "--state", state, "--now", POST_MORTEM_NOW, "--all", "--format", "human")
    listed = [re.search(r"outputs/(job-\d+)", line) for line in lines.stdout.splitlines()]
    assert [found[1] for found in listed if found] == natural, lines.stdout


def test_sweep_all_on_an_80_column_terminal_fits_and_never_splits_a_job_id(run_cli, outputs, tmp_path):
    from logscan.sweep.listing import render_table

    report = sweep(run_cli, outputs, tmp_path / "s.db", "--all")
    table = render_table(report["jobs"], report["sweep"], color=False, width=80)
    lines = table.splitlines()
    ids = {job["job_id"] for job in report["jobs"]}
    # Only a job id longer than the terminal itself is left to the terminal to wrap.
    assert all(len(line) <= 80 or line.strip() in ids for line in lines), table
    for job in report["jobs"]:
        assert any(line.strip() == job["job_id"] for line in lines), (job["job_id"], table)
    wide = render_table(report["jobs"], report["sweep"], color=False, width=400)
    assert wide.splitlines()[0].split() == ["job", "verdict", "root", "cause", "Workers", "last", "activity", "change"]
