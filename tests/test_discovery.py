"""Finding a job's logs in real layouts. Directory trees are built here (SYNTHETIC) from lines of
the real healthy-2x2 sample, so the layout is what varies."""

from __future__ import annotations

import gzip
import shutil

from conftest import SAMPLES
from logscan.discovery import discover
from logscan.pipeline import diagnose_paths
from logscan.settings import Settings

REAL = SAMPLES / "healthy-2x2"


def worker_log(n: int) -> bytes:
    return (REAL / f"worker-{n}" / "launch_ddp.log").read_bytes()


def test_real_sample_skips_the_checkpoint_beside_the_logs():
    found = discover([str(REAL)])
    assert [log.display for log in found.logs] == [
        "healthy-2x2/worker-0/launch_ddp.log", "healthy-2x2/worker-1/launch_ddp.log"]
    assert any(s.endswith("checkpoint.pt") for s in found.skipped)
    assert found.job_status_files


def test_gzip_detected_by_content_not_name(tmp_path):
    (tmp_path / "launch_ddp.0.log").write_bytes(gzip.compress(worker_log(0)))
    (tmp_path / "launch_ddp.1.log").write_bytes(worker_log(1))
    d = diagnose_paths([str(tmp_path)], Settings())
    assert d.healthy and [w.node_rank for w in d.workers] == [0, 1]


def test_rotated_pieces_join_into_one_worker(tmp_path):
    lines = worker_log(0).splitlines(keepends=True)
    (tmp_path / "launch_ddp.log.1").write_bytes(b"".join(lines[:8]))
    (tmp_path / "launch_ddp.log").write_bytes(b"".join(lines[8:]))
    other = tmp_path / "w1"
    other.mkdir()
    (other / "launch_ddp.log").write_bytes(worker_log(1))
    d = diagnose_paths([str(tmp_path)], Settings())
    assert [w.node_rank for w in d.workers] == [0, 1]
    assert len(d.workers[0].files) == 2
    assert d.healthy


def test_log_without_launch_line_is_still_a_worker(tmp_path):
    (tmp_path / "host-a.log").write_bytes(worker_log(0))
    (tmp_path / "host-b.log").write_bytes(b"Traceback (most recent call last):\nKeyError: 'RANK'\n")
    d = diagnose_paths([str(tmp_path)], Settings())
    labels = [w.label for w in d.workers]
    assert f"{tmp_path.name}/host-b.log" in labels
    assert "missing-worker" in {f.rule for f in d.findings}


def test_files_named_on_the_command_line_form_one_job(tmp_path):
    shutil.copy(REAL / "worker-0" / "launch_ddp.log", tmp_path / "a.log")
    shutil.copy(REAL / "worker-1" / "launch_ddp.log", tmp_path / "b.log")
    d = diagnose_paths([str(tmp_path / "a.log"), str(tmp_path / "b.log")], Settings())
    assert d.healthy and len(d.workers) == 2


def test_tensorboard_and_binary_files_are_skipped_quietly(tmp_path):
    shutil.copytree(REAL, tmp_path / "run")
    (tmp_path / "run" / "events.out.tfevents.1700000000.host").write_bytes(b"\x00\x01\x02" * 100)
    (tmp_path / "run" / "notes.out").write_bytes(bytes(range(256)) * 10)
    d = diagnose_paths([str(tmp_path / "run")], Settings())
    assert d.healthy and not d.inputs
