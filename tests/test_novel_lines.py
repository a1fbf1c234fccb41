"""When no rule knows the failure: the failing rank's lines its peers did not print.

The real samples are runs whose failure no rule names (a rank waiting on a file lock, a script that
exits 1 after printing its own error, a job killed with nothing but its last normal line): the
decisive line is among the first three. The synthetic jobs are real samples with one line added
(conftest.sample_copy), to show what a peer's printing of the same line does.
"""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES, healthy_samples, sample_copy
from logscan.diagnose.novel_lines import MAX_NOVEL_LINES

DECISIVE = {
    "file-lock-wait": ("worker-1/launch_ddp.log", "rank 3: waiting for lock "),
    "script-exit-1": ("worker-0/launch_ddp.log", "error: rank 1: label file "),
    "killed-silently": ("worker-0/launch_ddp.log", "step 10/60 loss "),
}


def _report(run_cli, job, *extra) -> dict:
    return json.loads(run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW, *extra).stdout)


@pytest.mark.parametrize("sample", sorted(DECISIVE))
def test_the_decisive_line_of_a_failure_no_rule_names_is_in_the_top_three(run_cli, sample):
    log, text = DECISIVE[sample]
    novel = _report(run_cli, SAMPLES / sample)["novel_lines"]
    assert 1 <= len(novel) <= MAX_NOVEL_LINES
    top = [(n["file"].endswith(log), text in n["text"]) for n in novel[:3]]
    assert (True, True) in top, novel[:3]
    scores = [n["score"] for n in novel]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("sample", healthy_samples(), ids=lambda p: p.name)
def test_a_healthy_job_shows_no_novel_lines(run_cli, sample):
    report = _report(run_cli, sample)
    assert report["verdict"] == "HEALTHY"
    assert report["novel_lines"] == []


ODD = "rank 1: retrying the metrics upload to bucket gs://runs/9f3c (attempt 3 of 3)"


def test_a_line_only_the_failing_worker_printed_is_novel_and_one_every_peer_printed_is_not(run_cli, tmp_path):
    # Synthetic: script-exit-1 with the same odd line added before Worker 0's error, then also on Worker 1.
    anchor = "error: rank 1: label file"
    only_there = sample_copy(tmp_path / "a", "script-exit-1", "worker-0/launch_ddp.log", anchor, f"{ODD}\n{anchor}")
    novel = _report(run_cli, only_there)["novel_lines"]
    assert any(ODD in n["text"] and n["why"].startswith("only on node 0") for n in novel), novel
    everywhere = sample_copy(tmp_path / "b", "script-exit-1", "worker-0/launch_ddp.log", anchor, f"{ODD}\n{anchor}")
    peer = everywhere / "worker-1/launch_ddp.log"
    peer.write_text(peer.read_text() + ODD.replace("rank 1", "rank 2").replace("9f3c", "77aa") + "\n")
    novel = _report(run_cli, everywhere)["novel_lines"]
    assert not any(ODD in n["text"] for n in novel), novel
    assert any(anchor in n["text"] for n in novel[:3])


def test_the_human_report_leads_with_them_only_when_no_rule_explains_the_job(run_cli):
    heading = "Lines that set the failing rank apart from its peers"
    unexplained = run_cli("scan", SAMPLES / "killed-silently", "--now", POST_MORTEM_NOW).stdout
    assert heading in unexplained and "no rule explains this job" in unexplained
    explained = run_cli("scan", SAMPLES / "script-exit-1", "--now", POST_MORTEM_NOW).stdout
    assert heading not in explained
    verbose = run_cli("scan", SAMPLES / "script-exit-1", "-v", "--now", POST_MORTEM_NOW).stdout
    assert heading in verbose and "context for the root cause" in verbose
    assert "error: rank 1: label file" in verbose.split(heading, 1)[1]


def test_frames_torchruns_reaction_and_earlier_progress_are_never_novel(run_cli):
    for sample in ("crash-mid-training", "import-error-one-rank", "dataloader-shm-full"):
        for n in _report(run_cli, SAMPLES / sample)["novel_lines"]:
            text = n["text"]
            assert 'File "' not in text and "torch/distributed/elastic" not in text, (sample, n)
            assert "exitcode" not in text and "error_file" not in text, (sample, n)


def test_the_page_marks_them_on_the_timeline_and_lists_them(run_cli, tmp_path):
    page = tmp_path / "page.html"
    run_cli("report", SAMPLES / "file-lock-wait", "-o", page, "--now", POST_MORTEM_NOW)
    html = page.read_text()
    section = html.split('<section id="novel-lines">', 1)[1].split("</section>", 1)[0]
    assert "rank 3: waiting for lock" in section and "only on node 1" in section
    timeline = html.split('<section id="timeline">', 1)[1].split("</section>", 1)[0]
    assert 'class="badge novel" href="#novel-lines">1 novel line<' in timeline
    healthy = tmp_path / "healthy.html"
    run_cli("report", SAMPLES / "healthy-2x2", "-o", healthy, "--now", POST_MORTEM_NOW)
    assert "novel-lines" not in healthy.read_text()


@pytest.mark.parametrize("sample", ["script-exit-1", "file-lock-wait", "healthy-timestamps", "crash-mid-training"])
def test_a_lines_template_is_what_the_miner_masks_it_to(sample):
    # A sweep keeps healthy runs' lines as templates (template_of) and compares a failed run's novel
    # lines with them: both must be the miner's own masking, or history would miss what peers match.
    from logscan.diagnose.novel_lines import _body, _miner, template_of

    masker = _miner().masker
    lines = [line for log in sorted((SAMPLES / sample).rglob("*.log"))
             for line in log.read_text(errors="replace").splitlines()]
    assert lines
    for line in lines:
        assert template_of(line) == " ".join(masker.mask(_body(line).strip()).split()), line


@pytest.mark.parametrize("sample", sorted(DECISIVE))
def test_the_line_where_the_rank_stopped_is_marked_as_its_last(sample):
    # The sweep keeps that line's place against healthy history (a killed job stops at a normal line).
    from logscan.diagnose.pipeline import diagnose_paths
    from logscan.settings import Settings

    novel = diagnose_paths([str(SAMPLES / sample)], Settings()).novel_lines
    assert [n.last for n in novel] == [n.why.endswith("its last line") for n in novel]
    assert sum(n.last for n in novel) <= 1
