"""The post-mortem report read as an engineer paged at night reads it (issue 22): one role per
rank, times that are true, evidence that explains, hints tied to the cause and shown once, quiet
by default, and a page that says where it went. Real samples, unless a test says it is synthetic."""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from html import escape

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES, sample_copy
from conftest import render_html
from conftest import render_human
from logscan.render.order import readable_time
from test_human_report import diagnosed

# A hang with a straggler torchrun SIGTERMed afterwards, and one whose others timed out naming it.
STALLS = {"stall-mid-training": 1, "hang-before-ddp": 3}


def _words(text: str) -> str:
    """The report's words with its wrapping undone: a wrapped line reads as the whole line."""
    return " ".join(text.split())


# --- one role per rank ---

@pytest.mark.parametrize("sample", STALLS)
def test_the_straggler_is_the_root_cause_everywhere(sample):
    d, rank = diagnosed(sample), STALLS[sample]
    assert d.root_cause.rank == rank
    report = render_human(d, width=120, verbose=True, timeline=True)
    rows = [line for line in report.splitlines() if re.match(rf"  rank {rank} +[-=LTEBPX|]+ ", line)]
    assert rows and "root cause:" in rows[0] and "cascade" not in rows[0], rows
    stuck = report.split("Where the waiting ranks stopped", 1)[1].split("\nTimeline", 1)[0]
    assert f"rank {rank} (node" not in stuck
    assert all(p.rank != rank for p in d.stuck)
    # the page: the straggler's row wears one badge, and its status is not a cascade's
    page = render_html(d)
    row = re.search(rf'<span class="label" title="rank {rank}">.*?</div></div>', page).group(0)
    assert row.count('class="badge') == 1 and "cascade" not in row


def test_a_first_failure_elsewhere_keeps_its_own_badge():
    """Synthetic: the real stall's diagnosis, its first failure moved to another rank."""
    from dataclasses import replace

    from logscan.diagnosis import Place

    d = replace(diagnosed("stall-mid-training"), first_failure=Place(1, 2))
    page = render_html(d)
    row = re.search(r'<span class="label" title="rank 2">.*?</div></div>', page).group(0)
    assert 'class="badge first"' in row
    root_row = re.search(r'<span class="label" title="rank 1">.*?</div></div>', page).group(0)
    assert root_row.count('class="badge') == 1
    assert "first failure: node 1, rank 2" in page
    assert 'class="badge first"' not in render_html(diagnosed("stall-mid-training"))


# --- times that are true ---

def test_copied_logs_with_no_time_say_so_once_and_show_no_file_time():
    d = diagnosed("stall-mid-training")  # a fresh checkout: every mtime is the clone's
    assert all(w.last_known is None for w in d.workers)
    for report in (render_human(d, width=100), render_html(d)):
        assert report.count("carry no full time (date and zone)") == 1
        assert "last written 20" not in report
    assert "<td>not known</td>" in render_html(d)


def test_a_running_jobs_file_time_is_shown_and_said_to_be_one(tmp_path):
    """Synthetic: a real stall's logs, told the platform still runs the job, freshly written."""
    from logscan.diagnose.pipeline import diagnose_paths
    from logscan.settings import Settings

    job = sample_copy(tmp_path, "hang-before-ddp")
    written = datetime(2026, 12, 1, 17, 41, 37, tzinfo=timezone.utc)
    for path in job.rglob("*"):
        os.utime(path, (written.timestamp(), written.timestamp()))
    d = diagnose_paths([str(job)], Settings(job_status="running", now=written))
    report = render_human(d, width=120)
    assert report.count("when its log file was last written") == 1
    assert "log last written 2026-12-01 17:41:37 UTC" in report
    assert "2026-12-01 17:41:37 UTC" in render_html(d)


def test_times_read_as_a_person_reads_them():
    from datetime import datetime

    from logscan.times import YearlessTime

    assert readable_time(datetime.fromisoformat("2026-12-01T17:41:37.594725+00:00")) == "2026-12-01 17:41:37 UTC"
    assert readable_time(datetime.fromisoformat("2026-12-01T18:41:37+01:00")) == "2026-12-01 17:41:37 UTC"
    assert readable_time(YearlessTime(2000, 12, 1, 17, 41, 37)) == "12-01 17:41:37 (no year on the line)"
    page = render_html(diagnosed("healthy-timestamps"))
    shown = re.sub(r'<[^>]*>', " ", page)  # what the reader sees, not the markup's attributes
    assert not re.search(r"\d\dT\d\d:\d\d:\d\d", shown)
    assert " UTC" in shown


# --- evidence that explains ---

def test_a_stalls_evidence_is_the_stragglers_last_line_then_the_timeouts():
    d = diagnosed("stall-mid-training")
    root = d.root_cause
    assert root.evidence[0].text.strip().startswith("torchrun env: RANK= 1")
    assert all("exitcode" not in e.text for e in root.evidence)
    assert "Timed out waiting" in root.evidence[1].text


def test_the_same_error_line_is_not_repeated():
    d = diagnosed("masked-pipe-tee")
    error = "could not open metrics writer under"
    for width in (80, 120, None):
        report = render_human(d, width=width)
        assert _words(report).count(error) == 2, width  # the verdict, and the root cause's line


@pytest.mark.parametrize("sample", ["masked-pipe-tee", "restart-loop", "import-error-one-rank"])
@pytest.mark.parametrize("width", [80, 120])
def test_consequences_are_wrapped_not_cut(sample, width):
    d = diagnosed(sample)
    report = render_human(d, width=width)
    words = _words(report)
    for f in d.findings:
        if f.is_consequence:
            assert _words(f.message) in words, f.message
    folded = report.split("then, as a consequence", 1)[1].split("\n\n", 1)[0]
    assert "…" not in folded


# --- hints tied to the cause, shown once ---

@pytest.mark.parametrize("sample,names", [
    ("import-error-one-rank", ("flash_attn", "node 1", "image")),
    ("missing-data-all-ranks", ("/mnt/public/project-a/data/train/shard-00000-of-00004.jsonl", "every node")),
    ("env-var-keyerror", ("DATA_ROOT", "export")),
])
def test_a_crash_hint_names_what_is_missing_and_where(sample, names):
    hint = diagnosed(sample).root_cause.hint
    for name in names:
        assert name in hint, hint
    assert "Pre-check on a dev machine what the guide lists" not in hint


def test_the_page_shows_each_hint_once():
    d = diagnosed("restart-loop")
    page = render_html(d)
    hints = {f.hint for f in d.findings if f.hint}
    assert hints
    for hint in hints:
        assert page.count("hint: " + escape(hint, quote=True)[:60]) == 1, hint


# --- quiet by default ---

def test_files_that_are_not_logs_are_noted_only_with_verbose():
    d = diagnosed("healthy-2x2")  # expected.json and a checkpoint beside the logs
    assert "not logs" not in render_human(d, width=120)
    assert "not logs" in render_human(d, width=120, verbose=True)


def test_a_skipped_file_named_like_a_log_is_always_noted(tmp_path):
    """Synthetic: a binary file named `extra.log` beside a real healthy job's logs."""
    from logscan.diagnose.pipeline import diagnose_paths
    from logscan.settings import Settings

    job = sample_copy(tmp_path, "healthy-2x2")
    (job / "extra.log").write_bytes(bytes(range(256)) * 8)
    d = diagnose_paths([str(job)], Settings())
    assert "extra.log" in render_human(d, width=120)


@pytest.mark.parametrize("sample,said", [("healthy-2x2", "finished (30/30 steps)"),
                                         ("healthy-tqdm-stamped", "finished (2000/2000 steps)"),
                                         ("healthy-timestamps", "finished (its last line: training finished")])
def test_a_healthy_run_that_printed_its_end_says_it_finished(sample, said):
    assert said in diagnosed(sample).summary()


# --- the page ---

def test_the_root_cause_card_is_not_repeated_under_findings():
    for sample in ("restart-loop", "stall-mid-training", "masked-pipe-tee"):
        d = diagnosed(sample)
        page = render_html(d)
        findings = page.split('<section id="findings">', 1)[1]
        assert "root cause</span>" not in findings
        assert page.count('<div class="card') == len(d.findings), sample
        # every consequence links to the card at the top
        top = re.search(r'<div class="card \w+" id="(f\d+)"', page.split('<section id="timeline">')[0]).group(1)
        assert f'href="#{top}"' in findings or not [f for f in d.findings if f.caused_by], sample


def test_report_says_where_the_page_went_and_the_verdict(tmp_path, run_cli):
    out = tmp_path / "page.html"
    result = run_cli("report", SAMPLES / "stall-mid-training", "-o", out, "--now", POST_MORTEM_NOW)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith(f"logscan: wrote {out}: FAILED stall-mid-training: collective-timeout")
    assert result.stderr.count("\n") == 1
    to_stdout = run_cli("report", SAMPLES / "healthy-2x2", "--now", POST_MORTEM_NOW)
    assert to_stdout.stdout.startswith("<!DOCTYPE html>") and "wrote" not in to_stdout.stderr


def test_the_header_names_the_first_failure_only_where_it_is_another_rank():
    stall = render_human(diagnosed("stall-mid-training"), width=120)
    assert "first failure" not in stall.split("\n\n", 1)[0]
    leak = diagnosed("world-size-leak")  # the first process to fail is not the root cause's place
    assert (leak.first_failure.node_rank, leak.first_failure.rank) == (1, 2)
    assert "first failure: node 1, rank 2" in render_human(leak, width=120).split("\n\n", 1)[0]
    assert "first failure: node 1, rank 2" in render_html(leak)
