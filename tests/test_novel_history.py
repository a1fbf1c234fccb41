"""Novel lines against the same job's earlier healthy runs, in a sweep.

The sweep trees are built from real samples (sample_logs/, produced by really running torchrun):
healthy and failed runs of one shape (2 Workers x 2 GPUs, the plain training loop) copied into
run-N directories of one series, as a platform keeps a job's runs side by side. The unit tests of
the series and of the re-ranking say where their inputs are synthetic.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES
from logscan.diagnose.novel_lines import HealthyRun, template_of, with_history
from logscan.diagnosis import NovelLine
from logscan.limits import MAX_HISTORY_RUNS
from logscan.sweep.alerts import alert_text
from logscan.sweep.series import SeriesMode, place_of, run_order
from logscan.sweep.state import SCHEMA_VERSION

# The decisive line of each failed sample (tests/test_novel_lines.py), by its text.
DECISIVE = {"script-exit-1": "error: rank 1: label file ", "file-lock-wait": "rank 3: waiting for lock "}
SERIES = {"train/run-40": "healthy-2x2", "train/run-41": "script-exit-1", "train/run-42": "file-lock-wait",
          "train/run-43": "killed-silently"}


def _tree(tmp_path: Path, layout: dict[str, str]) -> Path:
    root = tmp_path / "outputs"
    for where, sample in layout.items():
        shutil.copytree(SAMPLES / sample, root / where, ignore=shutil.ignore_patterns("expected.json"))
    return root


def _sweep(run_cli, root: Path, state: Path, *args: str) -> dict:
    result = run_cli("sweep", root, "--state", state, "--format", "json", "--all", "--now", POST_MORTEM_NOW,
                     *args)
    assert result.exit_code == 0, result.output
    return {job["job_id"].removeprefix(f"{root}/"): job for job in json.loads(result.output)["jobs"]}


def _scan(run_cli, job: Path) -> list[dict]:
    result = run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW)
    return json.loads(result.stdout)["novel_lines"]


def _line(novel: list[dict], text: str) -> tuple[int, dict]:
    return next((i, n) for i, n in enumerate(novel) if text in n["text"])


def _history(state: Path) -> list[tuple[str, str]]:
    db = sqlite3.connect(state)
    try:
        return sorted(db.execute("SELECT run, ord FROM history"), key=lambda row: row[1])
    finally:
        db.close()


# -- real runs of one series --------------------------------------------------------------------

def test_a_failed_run_says_what_is_new_since_the_last_healthy_run_and_demotes_what_is_normal(run_cli, tmp_path):
    root = _tree(tmp_path, SERIES)
    jobs = _sweep(run_cli, root, tmp_path / "s.db")
    for rel, sample in (("train/run-41", "script-exit-1"), ("train/run-42", "file-lock-wait")):
        novel = jobs[rel]["novel_lines"]
        at, decisive = _line(novel, DECISIVE[sample])
        assert at < 3, novel
        assert decisive["why"].endswith("; new since run 40"), decisive
    # `step 8/30 loss ...` is rare among its peers (only Worker 0 prints progress) but every
    # healthy run of this job printed its like: it goes down, below the decisive line.
    alone = _scan(run_cli, root / "train/run-41")
    _, before = _line(alone, "step 8/30 loss")
    at, after = _line(jobs["train/run-41"]["novel_lines"], "step 8/30 loss")
    assert before["why"] == "only on node 0" and after["why"] == "only on node 0; in healthy run 40 too: normal for this job"
    assert after["score"] < before["score"] and at > _line(jobs["train/run-41"]["novel_lines"], DECISIVE["script-exit-1"])[0]
    # A job killed from outside stops at an ordinary line: where it stopped keeps its place.
    killed = jobs["train/run-43"]["novel_lines"]
    assert killed[0]["text"].startswith("step 10/60 loss ")
    assert killed[0]["why"].endswith("in healthy run 40 too: it stopped at a line normal for this job")
    assert killed[0]["score"] == _scan(run_cli, root / "train/run-43")[0]["score"]
    assert jobs["train/run-40"]["novel_lines"] == []


def test_without_a_series_the_sweep_ranks_as_scan_does(run_cli, tmp_path):
    root = _tree(tmp_path, {**SERIES, "run-44": "script-exit-1"})
    plain = _sweep(run_cli, root, tmp_path / "none.db", "--series", "none")
    kept = ("text", "score", "why")
    for rel in ("train/run-41", "train/run-42"):
        assert [[n[k] for k in kept] for n in plain[rel]["novel_lines"]] == \
            [[n[k] for k in kept] for n in _scan(run_cli, root / rel)]
    assert _history(tmp_path / "none.db") == []
    # A run directly in the swept directory is in no series (the directory is a platform's output).
    grouped = _sweep(run_cli, root, tmp_path / "parent.db")
    assert [n["why"] for n in grouped["run-44"]["novel_lines"]] == [n["why"] for n in plain["run-44"]["novel_lines"]]


def test_only_earlier_runs_count_and_run_9_comes_before_run_10(run_cli, tmp_path):
    root = _tree(tmp_path, {"train/run-8": "script-exit-1", "train/run-9": "healthy-2x2",
                            "train/run-10": "script-exit-1"})
    jobs = _sweep(run_cli, root, tmp_path / "s.db")
    _, decisive = _line(jobs["train/run-10"]["novel_lines"], DECISIVE["script-exit-1"])
    assert decisive["why"].endswith("; new since run 9")
    assert not any("healthy" in n["why"] or "since" in n["why"] for n in jobs["train/run-8"]["novel_lines"])


def test_flat_runs_group_by_their_name_with_series_name(run_cli, tmp_path):
    root = _tree(tmp_path, {"train-llama-40": "healthy-2x2", "train-llama-41": "script-exit-1",
                            "eval-7": "healthy-2x2"})
    jobs = _sweep(run_cli, root, tmp_path / "s.db", "--series", "name")
    _, decisive = _line(jobs["train-llama-41"]["novel_lines"], DECISIVE["script-exit-1"])
    assert decisive["why"].endswith("; new since run train-llama-40")
    assert [run for run, _ in _history(tmp_path / "s.db")] == ["eval-7", "train-llama-40"]


def test_the_history_keeps_the_latest_healthy_runs_and_follows_them(run_cli, tmp_path):
    layout = {f"train/run-{n}": "healthy-2x2" for n in range(1, MAX_HISTORY_RUNS + 3)}
    last = f"train/run-{MAX_HISTORY_RUNS + 3}"
    root = _tree(tmp_path, {**layout, last: "script-exit-1"})
    serial = _sweep(run_cli, root, tmp_path / "serial.db", "--jobs", "1")
    parallel = _sweep(run_cli, root, tmp_path / "parallel.db", "--jobs", "2")
    assert serial[last]["novel_lines"] == parallel[last]["novel_lines"]  # one answer, however many processes
    assert [run for run, _ in _history(tmp_path / "serial.db")] == [str(n) for n in range(3, MAX_HISTORY_RUNS + 3)]
    _, step = _line(serial[last]["novel_lines"], "step 8/30 loss")
    assert step["why"].endswith(f"in {MAX_HISTORY_RUNS} of {MAX_HISTORY_RUNS} earlier healthy runs too: "
                                f"normal for this job")
    # A healthy run that now failed, and one whose directory is gone, leave the history.
    (root / f"train/run-{MAX_HISTORY_RUNS + 2}/job_status").write_text("failed\n")
    shutil.rmtree(root / "train/run-3")
    _sweep(run_cli, root, tmp_path / "serial.db")
    assert [run for run, _ in _history(tmp_path / "serial.db")] == [str(n) for n in range(4, MAX_HISTORY_RUNS + 2)]


def test_a_schema_4_state_is_migrated_and_its_healthy_runs_teach_their_series(run_cli, tmp_path):
    root, state = _tree(tmp_path, SERIES), tmp_path / "s.db"
    first = _sweep(run_cli, root, state)
    # Synthetic: the state turned back into schema 4's layout (no history table).
    db = sqlite3.connect(state)
    db.executescript("DROP TABLE history; ALTER TABLE alerted DROP COLUMN version; "
                     "UPDATE meta SET value = '4' WHERE key = 'schema_version';")
    db.close()
    result = run_cli("sweep", root, "--state", state, "--format", "json", "--now", POST_MORTEM_NOW)
    assert result.exit_code == 0, result.output
    again = json.loads(result.output)
    assert again["jobs"] == []                  # jobs and alerts already sent are kept: nothing told twice
    assert again["sweep"]["refreshed"] == len(SERIES) and again["sweep"]["files_opened"] == 0
    assert [run for run, _ in _history(state)] == ["40"]
    db = sqlite3.connect(state)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == \
        (str(SCHEMA_VERSION),)
    db.close()
    now = _sweep(run_cli, root, state)
    assert now.keys() == first.keys()
    for rel, job in first.items():
        assert now[rel]["novel_lines"] == job["novel_lines"] and now[rel]["first_seen"] == job["first_seen"]


def test_an_alert_for_a_failure_no_rule_names_quotes_its_top_novel_line(run_cli, tmp_path):
    root = _tree(tmp_path, SERIES)
    result = run_cli("sweep", root, "--state", tmp_path / "s.db", "--format", "jsonl", "--now", POST_MORTEM_NOW)
    changes = {json.loads(line)["job_id"].removeprefix(f"{root}/"): json.loads(line)
               for line in result.output.splitlines()}
    killed = alert_text(changes["train/run-43"])
    assert "unexplained-failure" in killed
    assert "; top novel line run-43/worker-0/launch_ddp.log:" in killed and "step 10/60 loss " in killed
    assert "top novel line" not in alert_text(changes["train/run-41"])  # a rule names that failure


def test_a_series_value_logscan_does_not_know_is_one_line(run_cli, tmp_path):
    result = run_cli("sweep", tmp_path, "--state", tmp_path / "s.db", "--series", "siblings")
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "logscan: error: --series must be one of parent, name, none, not 'siblings'"]


# -- the series and the ranking, on synthetic names and lines -----------------------------------

def test_which_runs_are_one_job():
    train = place_of("/out", "alice/train/run-41", SeriesMode.PARENT)
    assert train.series == place_of("/out", "alice/train/attempt", SeriesMode.PARENT).series
    assert train.series != place_of("/out", "alice/eval/run-41", SeriesMode.PARENT).series
    assert train.run == "41" and place_of("/out", "alice/train/job-17", SeriesMode.PARENT).run == "job-17"
    assert place_of("/out", "run-41", SeriesMode.PARENT) is None
    assert place_of("/out", "alice/run-41", SeriesMode.NONE) is None
    assert place_of("/other", "alice/train/run-41", SeriesMode.PARENT).series != train.series
    flat = place_of("/out", "train-llama-41", SeriesMode.NAME)
    assert flat.series == place_of("/out", "train-llama-7", SeriesMode.NAME).series
    assert flat.series != place_of("/out", "eval-llama-41", SeriesMode.NAME).series
    assert flat.series != place_of("/out", "x/train-llama-41", SeriesMode.NAME).series
    odd = place_of("/out", "train/r\udce9-3", SeriesMode.PARENT)    # a name that is not UTF-8
    assert odd.run == "r\\xe9-3" and odd.series.encode("utf-8")


def test_runs_are_ordered_by_name_numbers_as_numbers():
    names = ["run-10", "run-9", "run-100", "2026-12-01_3", "2026-11-30_12", "run-9b"]
    assert sorted(names, key=run_order) == ["2026-11-30_12", "2026-12-01_3", "run-9", "run-9b", "run-10",
                                            "run-100"]


def _novel(text: str, score: float, why: str = "only on rank 1", last: bool = False) -> NovelLine:
    return NovelLine("run-41/worker-0/launch_ddp.log", 1, text, score, why, last)


def test_a_line_new_since_the_healthy_runs_goes_above_every_line_they_printed():
    # Synthetic lines and history.
    normal, new = _novel("step 8/30 loss 1.3145", 0.9), _novel("error: label file has 3 classes", 0.2)
    history = [HealthyRun("39", frozenset()), HealthyRun("40", frozenset({template_of("step 29/30 loss 1.2")}))]
    ranked = with_history((normal, new), history)
    assert [n.text for n in ranked] == [new.text, normal.text]
    assert ranked[0].why == "only on rank 1; new since run 40" and ranked[0].score > new.score
    assert ranked[1].why == "only on rank 1; in 1 of 2 earlier healthy runs too: normal for this job"
    assert ranked[1].score < normal.score
    assert with_history((normal, new), []) == (normal, new)
    stopped = _novel("step 8/30 loss 1.3145", 0.9, last=True)
    assert with_history((stopped,), history)[0].score == stopped.score


def test_templates_mask_what_changes_between_runs():
    assert template_of("[rank1]: step 8/30 loss 1.3145 at 2026-12-01T19:57:09Z on 10.0.0.1:29500") == \
        template_of("[rank3]:  step 9/60 loss 0.5   at 2026-12-02T01:00:00Z on 10.0.0.7:29400")
    assert template_of("waiting for lock /tmp/a/b.lock") != template_of("waiting for the lock /tmp/a/b.lock")
