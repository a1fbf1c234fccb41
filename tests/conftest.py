"""Shared fixtures: the real sample jobs and a CLI runner with a fixed width."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_logs"
# Later than any sample was written, so staleness is judged as a post-mortem would.
POST_MORTEM_NOW = "2030-01-01T00:00:00Z"


def torch_source_entries() -> list[dict]:
    """The message families of tests/torch_source/formats.toml: lines built from torch's format
    strings, per release (not from runs)."""
    import tomllib

    return tomllib.loads((REPO / "tests" / "torch_source" / "formats.toml").read_text())["entry"]


def sample_copy(tmp_path: Path, sample: str, log: str | None = None, old: str | None = None,
                new: str | None = None) -> Path:
    """A copy of a real sample, to make a synthetic job from: with `log`, the line `old` of that
    log replaced by `new` (or `new` appended when `old` is None). The tests that use it say so."""
    import shutil

    job = tmp_path / "job"
    shutil.copytree(SAMPLES / sample, job)
    if log is not None:
        path = job / log
        text = path.read_text()
        if old is None:
            text += new
        else:
            assert old in text, f"{sample}/{log} no longer holds {old!r}"
            text = text.replace(old, new)
        path.write_text(text)
    return job


def sample_dirs() -> list[Path]:
    return sorted(p.parent for p in SAMPLES.glob("*/expected.json"))


def expected(sample: Path) -> dict:
    return json.loads((sample / "expected.json").read_text())


def healthy_samples() -> list[Path]:
    return [p for p in sample_dirs() if expected(p)["expect"]["healthy"]]


@pytest.fixture
def run_cli():
    from typer.testing import CliRunner

    from logscan.cli import app

    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})

    return run


def paste_report(run_cli, tmp_path: Path, text: str) -> dict:
    """The JSON diagnosis of `text` written as one pasted log, read alone (--isolated) after the job."""
    import json

    (tmp_path / "paste.log").write_text(text)
    result = run_cli("scan", tmp_path / "paste.log", "--format", "json", "--isolated", "--now", POST_MORTEM_NOW)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def job_model(path, status: str | None = "failed"):
    """The job model of a directory of Worker logs (what the rules read), the platform's status
    given."""
    from logscan.catalogue import load_catalogue
    from logscan.config import parse_time
    from logscan.files.discovery import discover
    from logscan.model.build import build_job
    from logscan.scan.pool import PendingScans, ScanPool
    from logscan.settings import Settings

    catalogue = load_catalogue()
    settings = Settings(now=parse_time(POST_MORTEM_NOW))
    found = discover([str(path)])
    pool = ScanPool(catalogue, settings)
    try:
        scans = PendingScans(found.logs, pool, found.contents, found.sizes).result()
    finally:
        pool.close()
    return build_job("job", found.logs, scans, catalogue, job_status=status)


def render_human(diagnosis, **view) -> str:
    """The human report of `diagnosis` as `render(record, context)` writes it; `view`: the
    context's color, width, verbose, timeline."""
    from logscan.render import human
    from logscan.render.context import RenderContext

    return human.render(diagnosis, RenderContext(**view))


def render_html(diagnosis) -> str:
    from logscan.render import render

    return render("html", diagnosis)


@pytest.fixture
def webhook_server():
    """A local HTTP server that answers every POST 200 and keeps its JSON body: (url, received)."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    received = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self):
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *_):
            pass

    server = HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/hook", received
    server.shutdown()
