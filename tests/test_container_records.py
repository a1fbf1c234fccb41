"""A container runtime's partial records are joined into the line they split before anything
reads it: per stream, bounded by the long-line limit, the joined line numbered as its first record.

Three kinds of input: the real container-cri and container-docker-json-split samples (torch
runs whose long lines the runtime's format split, written by sample_logs/generate/container_log.py), logs written here by that same
writer around a small command (real records, no torch), and synthetic records built from each
runtime's documented format (their tests say so).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import POST_MORTEM_NOW, REPO, SAMPLES
from logscan.files.records import join_partial_records

WRITER = REPO / "sample_logs" / "generate" / "container_log.py"


def _joined(text: str, max_line: int = 1 << 16, block_lines: int | None = None) -> list[str]:
    data = text.encode()
    if block_lines is None:
        blocks = [data]
    else:  # blocks of whole lines, as the reader gives them
        lines = data.splitlines(keepends=True)
        blocks = [b"".join(lines[i:i + block_lines]) for i in range(0, len(lines), block_lines)]
    return b"".join(join_partial_records(blocks, max_line)).decode().split("\n")


def test_cri_pieces_are_joined_per_stream_in_place_of_the_first():
    # Synthetic, in the CRI format: stdout's line is split in three, a stderr line interleaves.
    log = ("T1 stdout P step 3/10 \n"
           "T2 stderr F [rank0]: warning in between\n"
           "T3 stdout P loss 0.\n"
           "T4 stdout F 5\n"
           "T5 stdout F step 4/10\n")
    for block_lines in (None, 1, 2):
        assert _joined(log, block_lines=block_lines) == [
            "T1 stdout P step 3/10 loss 0.5", "T2 stderr F [rank0]: warning in between", "", "",
            "T5 stdout F step 4/10", ""]


def test_a_file_without_partial_records_passes_through_unchanged():
    blocks = [b"T1 stdout F a\nT2 stderr F b\n", b"plain line\n"]
    assert list(join_partial_records(blocks, 1 << 16)) == blocks


def test_a_line_that_never_ends_is_cut_at_the_limit_and_does_not_hold_the_file_back():
    # Synthetic: a stderr line whose F record never comes, while stdout goes on.
    log = "".join(["T0 stderr P " + "x" * 40 + "\n"] * 5 + [f"T{i} stdout F line {i}\n" for i in range(20)])
    out = _joined(log, max_line=100, block_lines=3)
    assert out[0] == "T0 stderr P " + "x" * 100
    assert out[1:5] == [""] * 4
    assert out[5:25] == [f"T{i} stdout F line {i}" for i in range(20)]
    assert len(out) == 26  # one output line per input line, and the final newline


def test_the_last_line_without_a_newline_stays_without_one():
    assert _joined("T1 stdout P ab\nT2 stdout F cd") == ["T1 stdout P abcd", ""]


def test_docker_pieces_are_joined_with_the_first_records_time():
    # Synthetic, in Docker's json-file format: a record whose "log" lacks "\n" is a piece.
    log = ('{"log":"[rank1]: RuntimeError: a long ","stream":"stderr","time":"2026-12-01T19:00:00Z"}\n'
           '{"log":"step 2/9\\n","stream":"stdout","time":"2026-12-01T19:00:01Z"}\n'
           '{"log":"message\\n","stream":"stderr","time":"2026-12-01T19:00:02Z"}\n')
    out = _joined(log)
    assert json.loads(out[0]) == {"log": "[rank1]: RuntimeError: a long message\n",
                                  "stream": "stderr", "time": "2026-12-01T19:00:00Z"}
    assert out[1].startswith('{"log":"step 2/9') and out[2] == ""


def _scan_json(run_cli, path):
    result = run_cli("scan", path, "--format", "json", "--now", POST_MORTEM_NOW)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _first_piece(line: str) -> bool:
    """A record that does not end its line: CRI's P, or json-file's "log" without its newline."""
    return " stderr P " in line or (line.startswith('{"log":') and '\\n","stream"' not in line)


@pytest.mark.parametrize("sample", ["container-cri", "container-docker-json-split"])
def test_a_real_samples_split_error_is_read_whole_at_its_first_records_line(sample, run_cli):
    """Real runs whose long lines the writer split into records (container_log.py, as containerd
    and Docker's json-file driver split at their buffer): rank 0's lost-peer error is cited at
    its first record's line and holds the end of the message, which only a later record carries."""
    log_path = next((SAMPLES / sample / "worker-0").iterdir())
    log = log_path.read_text().splitlines()
    first = next(i for i, line in enumerate(log, 1)
                 if _first_piece(line) and "[rank0]: RuntimeError:" in line and "Connection closed" in line)
    assert "before reporting an error" not in log[first - 1]  # the message really was split
    report = _scan_json(run_cli, SAMPLES / sample)
    evidence = [e for f in report["findings"] for e in f["evidence"]
                if e["file"].endswith(log_path.name) and "[rank0]: RuntimeError" in e["text"]]
    assert evidence and evidence[0]["line"] == first
    assert "before reporting an error" in evidence[0]["text"]


def test_docker_json_pieces_written_by_the_real_writer_are_read_whole(tmp_path, run_cli):
    """container_log.py writes a real json-file log around a command printing an exception line
    longer than the (here small) buffer: the exception is read as one line."""
    log = tmp_path / "job" / "worker-0" / "container-json.log"
    log.parent.mkdir(parents=True)
    detail = "storage shard " + "0123456789" * 12 + " could not be read"
    script = ("import sys; print('DDP launch: nnodes=1 node_rank=0 gpus_per_node=1 total_procs=1 "
              "master=127.0.0.1:29500'); sys.stdout.flush(); "
              f"print('[rank0]: RuntimeError: {detail}', file=sys.stderr)")
    subprocess.run([sys.executable, WRITER, "docker-json", log, "--max-line", "40", "--",
                    sys.executable, "-c", script], check=True)
    records = log.read_text().splitlines()
    assert len(records) > 4  # the exception line really was split into pieces
    (tmp_path / "job" / "job_status").write_text("failed\n")
    report = _scan_json(run_cli, tmp_path / "job")
    messages = " ".join(f["message"] for f in report["findings"])
    assert detail in messages, messages
    evidence = [e for f in report["findings"] for e in f["evidence"] if "RuntimeError" in e["text"]]
    first = next(i for i, record in enumerate(records, 1) if "RuntimeError" in record)
    assert evidence[0]["line"] == first  # the first piece's record


def test_pieces_of_a_line_that_never_ends_are_not_held_without_bound():
    # Synthetic: nothing but stdout pieces, no F record. Past the limit the line is given out
    # cut, and the pieces after it start a line of their own.
    log = "".join(f"T{i} stdout P {i % 10}\n" for i in range(300))
    out = _joined(log, max_line=100, block_lines=7)
    assert len(out) == 301 and out[0].startswith("T0 stdout P 0123456789")
    given_out = [i for i, line in enumerate(out) if line]
    assert given_out[0] == 0 and len(given_out) > 2  # cut and started again, more than once
    assert all(len(out[i]) <= len("T000 stdout P ") + 100 for i in given_out)


def test_an_ordinary_log_is_not_read_for_records():
    """A block whose first line is no record is passed on as it is, even if a line in it looks
    like a piece (a runtime writes every line of its log as a record)."""
    blocks = [b"step 1/10\nT1 stdout P looks like a piece\nT2 stdout F rest\n"]
    assert list(join_partial_records(blocks, 1 << 16)) == blocks
