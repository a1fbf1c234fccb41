"""`logscan report PATH... -o report.html` (issue 13): one self-contained page that parses, keeps
hostile log text inert, has one timeline row per Worker, and shows each failing sample's root
cause on the right Worker row."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES, expected, sample_dirs
from conftest import render_html
from test_human_report import diagnosed

VOID = {"meta", "br", "img", "input", "link", "hr", "wbr", "source"}


class Page(HTMLParser):
    """Tags balanced, and what the tests look at: rows, scripts, external references."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.rows: list[dict] = []
        self.worker_rows = 0
        self.tags: list[str] = []
        self.urls: list[str] = []
        self.feed(text)
        self.close()
        if self.stack:
            self.errors.append(f"unclosed: {self.stack}")

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        self.urls += [v for k, v in attrs.items() if k in ("src", "href") and v and not v.startswith("#")]
        classes = (attrs.get("class") or "").split()
        if tag == "details" and "worker-row" in classes:
            self.worker_rows += 1
        if "tl-row" in classes:
            self.rows.append({"classes": classes, "node_rank": attrs.get("data-node-rank")})
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> does not close {self.stack[-1:]}")
            return
        self.stack.pop()


def _failing():
    """Failing samples whose root cause logscan names (a known gap is test_samples' business)."""
    return [p.name for p in sample_dirs() if expected(p)["expect"].get("root_cause")
            and not expected(p)["expect"].get("known_gap")]


@pytest.mark.parametrize("sample", [p.name for p in sample_dirs()])
def test_page_parses_and_has_one_row_per_worker(sample):
    d = diagnosed(sample)
    page = Page(render_html(d))
    assert not page.errors, page.errors[:3]
    assert page.worker_rows == len(d.workers)
    assert "script" not in page.tags and "link" not in page.tags and not page.urls  # self-contained


@pytest.mark.parametrize("sample", _failing())
def test_root_cause_sits_on_the_right_worker_row(sample):
    d = diagnosed(sample)
    want = expected(SAMPLES / sample)["expect"]["root_cause"]
    page = Page(render_html(d))
    marked = [r for r in page.rows if "root-cause" in r["classes"] and "rank" not in r["classes"]]
    assert marked, f"{sample}: no Worker row marked as the root cause"
    if want["node_rank"] is not None:
        assert {r["node_rank"] for r in marked} == {str(want["node_rank"])}, sample
    if want.get("rank") is not None:
        ranks = [r for r in page.rows if "root-cause" in r["classes"] and "rank" in r["classes"]]
        assert ranks, f"{sample}: the root cause's rank row is not marked"


def test_timeline_says_which_axis():
    timed = render_html(diagnosed("healthy-timestamps"))
    assert 'data-axis="time"' in timed and "on the clock" in timed
    ordered = render_html(diagnosed("restart-loop"))
    assert 'data-axis="order"' in ordered and "in stage order" in ordered
    assert "first failure" in ordered and 'href="#f' in ordered  # cascades link to their cause


HOSTILE = ('<script>alert(1)</script> "><img src=x onerror=alert(2)> '
           '\x1b]52;c;cm0gLXJmIH4=\x07 \u202egnp.exe &amp; </pre></details>')


def test_hostile_log_text_stays_inert(tmp_path, run_cli):
    log = (SAMPLES / "healthy-2x2" / "worker-0" / "launch_ddp.log").read_text().splitlines()
    log += ["Traceback (most recent call last):",
            '  File "/work/main/sample_logs/generate/train.py", line 231, in <module>',
            f"RuntimeError: boom {HOSTILE}"]
    job = tmp_path / "job <b>x</b>"
    (job / "worker-0").mkdir(parents=True)
    (job / "worker-0" / "launch_ddp.log").write_text("\n".join(log) + "\n")
    out = tmp_path / "report.html"
    result = run_cli("report", job, "-o", out, "--now", POST_MORTEM_NOW)
    assert result.exit_code == 1, result.output
    text = out.read_text(encoding="utf-8")
    page = Page(text)
    assert not page.errors, page.errors[:3]
    assert "script" not in page.tags and "img" not in page.tags and "b" not in page.tags
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "&amp;amp;" in text
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]", text)
    assert "\\x1b]52;c;cm0gLXJmIH4=\\x07" in text and "\\u202egnp.exe" in text


def test_report_command(tmp_path, run_cli):
    out = tmp_path / "r.html"
    result = run_cli("report", SAMPLES / "healthy-2x2", "-o", out, "--now", POST_MORTEM_NOW)
    # where the page went, and the verdict, on one line of stderr (an exit status of 1 alone
    # looks like a failure to write it)
    assert result.exit_code == 0 and result.stdout == "", result.output
    assert result.stderr == f"logscan: wrote {out}: HEALTHY healthy-2x2: 2 Worker(s), finished (30/30 steps)\n"
    assert out.read_text().startswith("<!DOCTYPE html>")
    missing = run_cli("report", tmp_path / "nope", "-o", out)
    assert missing.exit_code == 2 and missing.output.count("\n") == 1
