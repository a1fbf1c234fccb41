"""A container runtime's log is split between processes only where no line being joined from
partial records can be open, and the pieces read apart give the scan of the whole file.

The logs here are SYNTHETIC: records in each runtime's documented format (containerd's CRI
`<time> <stream> <P|F> <text>`, Docker json-file `{"log": ..., "stream": ..., "time": ...}`), long
lines cut into 16 KiB pieces as the runtimes cut them, around real step lines.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from logscan.catalogue import load_catalogue
from logscan.files.reader import MAX_LINE, line_ranges
from logscan.scan.scanner import Scanner

PIECE = 16 * 1024


def _cri(stream: str, text: str) -> list[str]:
    parts = [text[i:i + PIECE] for i in range(0, len(text), PIECE)] or [""]
    return [f"2026-11-29T18:00:04.5Z {stream} {'F' if i == len(parts) - 1 else 'P'} {part}\n"
            for i, part in enumerate(parts)]


def _docker(stream: str, text: str) -> list[str]:
    text += "\n"
    parts = [text[i:i + PIECE] for i in range(0, len(text), PIECE)]
    return [json.dumps({"log": part, "stream": stream, "time": "2026-11-29T18:00:04Z"},
                       separators=(",", ":")) + "\n" for part in parts]


def _log(record, middle_pieces: int) -> str:
    """Step lines, then, at the middle of the file, a long line cut into pieces with stderr
    lines between them, then more step lines: the naive middle falls inside the long line."""
    lines = []
    for step in range(6000):
        lines += record("stdout", f"[rank0]:step {step}/12000 loss 1.25")
    long_line = "Epoch 3: " + "#" * (PIECE * middle_pieces) + " 450/1000"
    for i, piece in enumerate(record("stdout", long_line)):
        lines.append(piece)
        lines += record("stderr", f"[rank1]:warning between pieces {i}")
    lines += record("stderr", "[rank0]: RuntimeError: boom")
    for step in range(6000, 12000):
        lines += record("stdout", f"[rank0]:step {step}/12000 loss 1.25")
    return "".join(lines)


@pytest.mark.parametrize("record", [_cri, _docker], ids=["cri", "docker"])
def test_a_container_log_is_cut_only_where_no_line_is_being_joined(tmp_path, record):
    log = tmp_path / "launch_ddp.log"
    log.write_text(_log(record, middle_pieces=12))
    data = log.read_bytes()
    ranges = line_ranges(str(log), 2, 1 << 16)
    assert len(ranges) == 2  # split, not read in one piece
    cut = ranges[1][0]
    first_piece = data.find(b"Epoch 3: ")
    last_piece = data.rfind(b"#" * 16)
    # the cut is not inside the long line's pieces, nor within reach of its last one
    assert cut < first_piece or cut > last_piece + 2 * MAX_LINE - PIECE
    assert data[cut - 1:cut] == b"\n"


@pytest.mark.parametrize("record", [_cri, _docker], ids=["cri", "docker"])
def test_the_pieces_read_apart_give_the_scan_of_the_whole_file(tmp_path, record):
    log = tmp_path / "launch_ddp.log"
    log.write_text(_log(record, middle_pieces=12))
    scanner = Scanner(load_catalogue())
    whole = scanner.scan_file(str(log), "launch_ddp.log")
    ranges = line_ranges(str(log), 2, 1 << 16)
    assert len(ranges) == 2
    apart = scanner.merge(str(log), "launch_ddp.log",
                          [scanner.survey(str(log), start=start, end=end) for start, end in ranges])
    assert dataclasses.asdict(apart) == dataclasses.asdict(whole)
    assert [e.exc_type for e in whole.exceptions] == ["RuntimeError"]


def test_a_docker_piece_ending_in_a_backslash_and_n_is_still_a_piece():
    """Synthetic: Docker cut a line right after a literal `\\n` pair (a backslash, then n) of its
    text. The record's "log" ends in `\\\\n`, not in an escaped newline: the bytes alone must not
    take it for a whole line."""
    from logscan.files.records import join_partial_records

    first = json.dumps({"log": "path C:\\new\\n", "stream": "stderr", "time": "T1"}, separators=(",", ":"))
    rest = json.dumps({"log": "ext part\n", "stream": "stderr", "time": "T2"}, separators=(",", ":"))
    assert first.endswith('\\\\n","stream":"stderr","time":"T1"}')
    block = (first + "\n" + rest + "\n").encode()
    joined = b"".join(join_partial_records([block], 1 << 16)).decode().split("\n")
    assert json.loads(joined[0])["log"] == "path C:\\new\\next part\n"
    assert joined[1] == ""
