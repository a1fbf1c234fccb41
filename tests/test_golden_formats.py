"""Every report format of a few real samples, compared with the committed text in
tests/golden/formats/<sample>/, so that no renderer drifts unseen (the JSON report of every
sample is tests/test_golden_reports.py's).

Each report is the command's own output (`logscan scan --format FORMAT`, and `logscan report`
for the page), run in a copy of the sample whose files all carry one pinned mtime (a Worker's
last activity falls back to its log's mtime, which a fresh clone sets anew), with the sample's
name as PATH, `--now`, `--isolated`, NO_COLOR, a fixed width, and no CI variables. The tool's
version and directory in SARIF, the host and duration in JUnit, are masked. After a deliberate change, rewrite the files with
`LOGSCAN_UPDATE_GOLDEN=1 python -m pytest tests/test_golden_formats.py` (the variable rewrites the
JSON goldens too) and review `git diff tests/golden`.
"""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES, expected

GOLDEN = Path(__file__).resolve().parent / "golden" / "formats"
# A healthy job, a crash with its cause, a crash with its consequences, a hang, a launch mismatch.
SHOWN = ("healthy-2x2", "collate-error", "crash-mid-training", "stall-mid-training",
         "launch-mismatch")
# format → the golden file's extension
FORMATS = {"human": "txt", "concise": "txt", "markdown": "md", "github": "txt",
           "gitlab": "json", "junit": "xml", "sarif": "json", "html": "html"}
PINNED_MTIME = datetime(2026, 11, 29, tzinfo=timezone.utc).timestamp()
ENV = {"NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb", "GITHUB_ACTIONS": None,
       "GITHUB_STEP_SUMMARY": None, "CI_PROJECT_DIR": None}


def test_every_format_but_json_has_goldens_here():
    from logscan.render import RENDERERS

    assert set(RENDERERS) - {"json"} <= set(FORMATS)


@pytest.fixture(scope="module")
def copies(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("samples")
    for name in SHOWN:
        shutil.copytree(SAMPLES / name, root / name)
        for path in (root / name).rglob("*"):
            os.utime(path, (PINNED_MTIME, PINNED_MTIME))
    return root


def _masked(fmt: str, text: str, copies: Path) -> str:
    """What differs between machines and runs, masked: the tool's version and the run's directory
    in SARIF; the host and how long the run took in JUnit."""
    import re

    if fmt == "junit":
        attributes = re.compile(r'<testsuite name="[^"]*" timestamp="[^"]*" hostname="([^"]*)"[^>]* time="([^"]*)">')
        found = attributes.search(text)
        assert found, "the JUnit suite's hostname and time are not where they were"
        return (text[:found.start(1)] + "(the host)" + text[found.end(1):found.start(2)]
                + "(the duration)" + text[found.end(2):])
    if fmt != "sarif":
        return text
    from logscan.cli.common import version

    tool = f'"version": "{version()}"'
    assert text.count(tool) == 1, "the SARIF driver's version is not where it was"
    base = f'"uri": "{copies.as_uri()}/"'
    assert text.count(base) == 1, "the SARIF base directory is not where it was"
    return text.replace(tool, '"version": "(the tool version)"').replace(base, '"uri": "(the run directory)"')


def _run(copies: Path, sample: str, fmt: str):
    from typer.testing import CliRunner

    from logscan.cli import app

    args = (["report", sample] if fmt == "html" else ["scan", sample, "--format", fmt])
    here = os.getcwd()
    os.chdir(copies)  # paths are shown as typed: `healthy-2x2/worker-0/launch_ddp.log`
    try:
        return CliRunner().invoke(app, [*args, "--now", POST_MORTEM_NOW, "--isolated"], env=ENV)
    finally:
        os.chdir(here)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("sample", SHOWN)
def test_report_format_is_unchanged(copies, sample, fmt):
    result = _run(copies, sample, fmt)
    healthy = expected(SAMPLES / sample)["expect"]["verdict"] == "HEALTHY"
    assert result.exit_code == (0 if healthy else 1), result.output
    got = _masked(fmt, result.stdout, copies)
    golden = GOLDEN / sample / f"{fmt}.{FORMATS[fmt]}"
    if os.environ.get("LOGSCAN_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(got, encoding="utf-8")
    assert golden.exists(), f"no golden {fmt} report for {sample}: run with LOGSCAN_UPDATE_GOLDEN=1"
    assert got == golden.read_text(encoding="utf-8"), f"{sample}: {fmt} report changed (see module docstring)"
