"""Shared fixtures: the real sample jobs and a CLI runner with a fixed width."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_logs"
# Later than any sample was written, so staleness is judged as a post-mortem would.
POST_MORTEM_NOW = "2030-01-01T00:00:00Z"


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
