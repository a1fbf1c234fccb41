"""`logscan watch`'s follower, on real samples replayed line by line into a directory as a running
job writes them: each Worker's log grows a slice at a time, its mtime is the replay's clock, and the
follower is polled after every slice. Nothing is hand-written: the lines are the samples' own, only
their arrival is simulated (one slice a second of the replay's clock)."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from conftest import SAMPLES
from logscan.catalogue import load_catalogue
from logscan.scan.scanner import Scanner
from logscan.settings import Settings
from logscan.vocabulary import Verdict
from logscan.watch.follow import QUIET_AFTER_FAILURE, QUIET_AT_END, SETTLE, Follower

CATALOGUE = load_catalogue()
SLICES = 30


class Replay:
    """A sample's Worker logs written into `root` slice by slice, on a clock of the replay's own."""

    def __init__(self, sample: str, root: Path, stall_after: timedelta = timedelta(minutes=30)):
        source = SAMPLES / sample
        self.files = {path.relative_to(source): path.read_bytes().splitlines(keepends=True)
                      for path in sorted(source.rglob("*.log"))}
        self.root = root
        self.now = datetime.now(timezone.utc)
        self.written = {name: 0 for name in self.files}
        settings = Settings(stall_after=stall_after)
        self.follower = Follower(str(root), settings, CATALOGUE, Scanner(CATALOGUE, ()),
                                 clock=lambda: self.now)

    def write_slice(self, k: int) -> None:
        """The lines of every log up to fraction k/SLICES of it, appended."""
        for name, lines in self.files.items():
            upto = len(lines) * k // SLICES
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("ab") as out:
                out.writelines(lines[self.written[name]:upto])
            self.written[name] = upto
            stamp = self.now.timestamp()
            os.utime(path, (stamp, stamp))

    def tick(self, seconds: float = 1.0):
        self.now += timedelta(seconds=seconds)
        return self.follower.poll()

    def run(self):
        """Every slice, a poll after each: the updates, in order."""
        updates = []
        for k in range(1, SLICES + 1):
            self.write_slice(k)
            updates.append(self.tick())
        return updates


def told(updates) -> list[tuple[int, str]]:
    return [(i, finding.rule) for i, update in enumerate(updates) if update for finding in update.new]


def test_a_crash_is_told_within_seconds_of_its_traceback_and_never_before(tmp_path):
    replay = Replay("crash-mid-training-prod", tmp_path)
    updates = replay.run()
    # The poll after the slice (one second of the replay) that wrote the failing rank's exception.
    arrival = next(k for k in range(1, SLICES + 1)
                   if any(b"RuntimeError: non-finite loss" in b"".join(lines[:len(lines) * k // SLICES])
                          for lines in replay.files.values())) - 1
    first = next(i for i, update in enumerate(updates) if update and update.new)
    assert arrival <= first <= arrival + SETTLE.total_seconds() + 1, (arrival, told(updates))
    assert [rule for i, rule in told(updates) if i == first] == ["crash-during-training"], told(updates)
    assert updates[first].diagnosis.verdict == Verdict.FAILED and not updates[first].ended
    # The root cause once, its consequences with it in the report, not told as news of their own.
    assert [rule for _, rule in told(updates)] == ["crash-during-training"]


def test_a_healthy_run_is_quiet_then_ends_healthy_once_its_logs_are_quiet(tmp_path):
    replay = Replay("healthy-2x2-prod", tmp_path)
    updates = replay.run()
    assert told(updates) == []
    assert all(u is None or not u.ended for u in updates)
    end = replay.tick(QUIET_AT_END.total_seconds() + 1)
    assert end.ended and end.diagnosis.verdict == Verdict.HEALTHY, end.diagnosis.verdict_reason
    assert "end of the run" in end.ended_because


def test_a_stall_is_told_once_stall_after_has_passed_and_not_before(tmp_path):
    replay = Replay("stall-still-running-prod-plain", tmp_path, stall_after=timedelta(seconds=60))
    updates = replay.run()
    assert told(updates) == [] and all(u is None or not u.ended for u in updates)
    assert not replay.tick(30).new
    stalled = replay.tick(31)
    assert [f.rule for f in stalled.new] == ["stall-during-training"], stalled.diagnosis.verdict_reason
    straggler = stalled.new[0]
    assert (straggler.node_rank, straggler.rank) == (0, 1)
    assert not stalled.ended


def test_a_poll_with_nothing_new_reads_nothing_and_diagnoses_nothing(tmp_path, monkeypatch):
    replay = Replay("healthy-2x2-prod", tmp_path)
    replay.write_slice(SLICES // 2)
    first = replay.tick()
    import logscan.sweep.reading as reading

    opened = []
    monkeypatch.setattr(reading, "survey_job", lambda *a: opened.append(a) or pytest.fail("read again"))
    monkeypatch.setattr("logscan.watch.follow.survey_job", reading.survey_job)
    again = replay.tick(0.5)
    assert again.diagnosis is first.diagnosis and not again.new and not opened


def test_a_directory_of_several_jobs_is_refused_in_one_line(tmp_path):
    from logscan.errors import InputError

    for run in ("run-1", "run-2"):
        for name, lines in Replay("crash-mid-training-prod", tmp_path / "x").files.items():
            path = tmp_path / run / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"".join(lines))
        (tmp_path / run / "job_status").write_text("running\n")
    follower = Follower(str(tmp_path), Settings(), CATALOGUE, Scanner(CATALOGUE, ()))
    with pytest.raises(InputError, match="jobs' logs"):
        follower.poll()


def test_a_failed_job_ends_once_its_logs_stay_quiet_and_a_hung_one_does_not(tmp_path):
    replay = Replay("crash-mid-training-prod", tmp_path / "crash")
    replay.run()
    assert not replay.tick(QUIET_AFTER_FAILURE.total_seconds() - 2).ended
    end = replay.tick(3)
    assert end.ended and end.diagnosis.verdict == Verdict.FAILED and "no line since the failure" in end.ended_because
    stalled = Replay("stall-still-running-prod-plain", tmp_path / "stall", stall_after=timedelta(seconds=60))
    stalled.run()
    assert [f.rule for f in stalled.tick(61).new] == ["stall-during-training"]
    assert not stalled.tick(QUIET_AFTER_FAILURE.total_seconds() * 10).ended


def test_between_writes_a_quiet_job_is_not_diagnosed_again_until_time_can_change_it(tmp_path, monkeypatch):
    replay = Replay("healthy-2x2-prod", tmp_path)
    replay.write_slice(SLICES // 2)
    replay.tick()
    diagnosed = []
    original = Follower._diagnose
    monkeypatch.setattr(Follower, "_diagnose", lambda self, *a: diagnosed.append(a) or original(self, *a))
    for _ in range(30):
        replay.tick(0.1)            # three seconds of polls, nothing written: nothing to do
    assert diagnosed == []
    replay.tick(QUIET_AT_END.total_seconds())   # quiet long enough that the run may have ended
    assert diagnosed


# --- the command, on a directory a thread writes as a job would (real time, a few seconds) -------

def _replay_in_background(sample: str, root: Path, seconds: float):
    import threading
    import time

    files = {path.relative_to(SAMPLES / sample): path.read_bytes().splitlines(keepends=True)
             for path in sorted((SAMPLES / sample).rglob("*.log"))}

    def write():
        done = {name: 0 for name in files}
        for k in range(1, SLICES + 1):
            for name, lines in files.items():
                upto = len(lines) * k // SLICES
                path = root / name
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("ab") as out:
                    out.writelines(lines[done[name]:upto])
                done[name] = upto
            time.sleep(seconds / SLICES)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_watch_tells_a_crash_while_the_job_writes_and_exits_1(tmp_path):
    import json
    import subprocess
    import sys
    import time

    started = time.monotonic()
    writer = _replay_in_background("crash-mid-training-prod", tmp_path, seconds=2)
    done = subprocess.run([sys.executable, "-m", "logscan", "watch", str(tmp_path), "--interval", "0.2",
                           "--format", "jsonl", "--for", "60s"], capture_output=True, text=True, timeout=90)
    writer.join()
    assert done.returncode == 1, done.stderr
    (event,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert event["event"] == "finding" and event["finding"]["rule"] == "crash-during-training"
    assert (event["finding"]["node_rank"], event["finding"]["rank"]) == (0, 1)
    assert time.monotonic() - started < 2 + SETTLE.total_seconds() + 10
    assert done.stderr.startswith("logscan: watching ")


def test_watch_ends_healthy_when_the_launch_process_ends(tmp_path):
    import subprocess
    import sys

    writer = _replay_in_background("healthy-2x2-prod", tmp_path, seconds=1)
    launcher = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2)"])
    watcher = subprocess.Popen([sys.executable, "-m", "logscan", "watch", str(tmp_path), "--interval", "0.2",
                                "--pid", str(launcher.pid), "--for", "60s"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    launcher.wait()
    writer.join()
    out, err = watcher.communicate(timeout=60)
    assert watcher.returncode == 0, err
    assert f"ended (process {launcher.pid} ended): HEALTHY" in out


@pytest.mark.parametrize("args, words", [
    (["/nonexistent/run-1"], "no such directory"),
    (["{tmp}", "--format", "html"], "--format 'html' is not one of human, jsonl"),
    (["{tmp}", "--interval", "0"], "--interval '0' must be a number of seconds"),
    (["{tmp}", "--pid", "x"], "--pid must be a whole number"),
])
def test_watch_refuses_bad_input_in_one_line(run_cli, tmp_path, args, words):
    result = run_cli("watch", *[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert result.exit_code == 2, result.output
    assert words in result.output and result.output.count("\n") == 1 and "Traceback" not in result.output


def test_what_watch_writes_beside_the_logs_is_never_read_as_a_log(tmp_path):
    """The documented launch command sends the watch's output into the job's own directory."""
    from logscan.files.discovery import OWN_REPORT_NOTE, why_not_a_log
    from logscan.render import stream

    replay = Replay("crash-mid-training-prod", tmp_path / "job")
    updates = replay.run()
    finding, diagnosis = next((u.new[0], u.diagnosis) for u in updates if u and u.new)
    at = replay.now
    for text in (f"logscan: watching {tmp_path}/job (stall after 1800 s of silence)\n"
                 + stream.finding_text(finding, diagnosis, at),
                 stream.finding_text(finding, diagnosis, at), stream.finding_json(finding, diagnosis, at),
                 stream.end_text(diagnosis, "the platform says failed", at),
                 stream.end_json(diagnosis, "the platform says failed", at)):
        assert "RuntimeError" in text  # it quotes the log
        assert why_not_a_log("logscan-watch.log", text.encode(), named=False) == OWN_REPORT_NOTE, text


def test_a_log_whose_lines_only_look_like_the_watchs_stays_a_log():
    """A script's own `HH:MM:SS error name: message` lines, with no indented evidence under them,
    are a log (synthetic lines in that shape)."""
    from logscan.files.discovery import why_not_a_log

    text = (b"12:00:01 error data-loader: shard 17 missing, skipped\n"
            b"12:00:02 info train: step 1/100 loss 2.31\n"
            b"12:00:03 ended (epoch 0): loss 2.1\n")
    assert why_not_a_log("train.log", text, named=False) is None
