"""Layouts and training loops the samples do not cover, that no one rule owns (a rule's own edge
cases are in its spec file, tests/rules/). Each input here is SYNTHETIC: a real sample log (named)
edited as stated, so the lines stay torch 2.13's own."""

from __future__ import annotations

from conftest import SAMPLES
from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings


def _write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_a_large_world_names_ranks_as_ranges(tmp_path):
    from logscan.findings.base import plural

    assert plural(list(range(512)), "rank", "ranks") == "ranks 0-511"
    assert plural([0, 1, 5, 6, 7, 9], "rank", "ranks") == "ranks 0, 1, 5-7, 9"
    assert plural([3], "rank", "ranks") == "rank 3"


def test_progress_in_an_error_message_is_not_progress(tmp_path):
    # masked-upload-sleep worker-1 alone: its only `step N` text is inside the exception line.
    data = (SAMPLES / "masked-upload-sleep" / "worker-1" / "launch_ddp.log").read_bytes()
    _write(tmp_path, "launch_ddp.log", data)
    d = diagnose_paths([str(tmp_path)], Settings())
    assert d.reached_first_batch is False
