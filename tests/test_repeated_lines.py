"""A line that tells something only through rules, repeated (a warning every step), is kept
once at the start of its run and once at its latest copy; what the log says is unchanged.

The logs here are SYNTHETIC: a real sample line (crash-training-silent's DDP
`find_unused_parameters=True` warning, behind torchrun's `[rankN]:` prefix and torch's C++ log
header) repeated as the bench's rank-warnings style repeats its warnings, with the header's time
kept or varied, and a traceback in the form Python prints it.
"""

from __future__ import annotations

import pytest

from conftest import SAMPLES
from logscan.catalogue import load_catalogue
from logscan.scan.scanner import Scanner

TRAINING_STEP_WARNING = "training-step-warning"
_REAL = next(line for line in (SAMPLES / "crash-training-silent" / "worker-0" / "launch_ddp.log")
             .read_text().splitlines() if line.startswith("[rank0]:[W") and "find_unused" in line)
# `[rank{rank}]:[W1201 22:08:57.{micros} reducer.cpp:1529] Warning: find_unused_parameters=...`
_HEAD, _, _REST = _REAL.partition(".")
_MICROS, _, _TAIL = _REST.partition(" ")
WARNING = _HEAD.replace("[rank0]", "[rank{rank}]") + ".{micros} " + _TAIL
TRACEBACK = [
    "[rank{rank}]: Traceback (most recent call last):",
    '[rank{rank}]:   File "/work/train.py", line 40, in <module>',
    "[rank{rank}]:     main()",
    "[rank{rank}]: RuntimeError: boom",
]


@pytest.fixture(scope="module", params=["hyperscan", "python"])
def scanner(request):
    if request.param == "hyperscan":
        pytest.importorskip("hyperscan")
    return Scanner(load_catalogue(), matcher=request.param)


def _write(tmp_path, lines):
    log = tmp_path / "worker-0.log"
    log.write_text("".join(line + "\n" for line in lines))
    return str(log)


def _warning_lines(scan, rank):
    return [h.where.line for h in scan.hits
            if h.rule_id == TRAINING_STEP_WARNING and h.where.rank == rank]


def test_a_run_of_copies_keeps_its_first_and_latest_per_process(tmp_path, scanner):
    lines = []
    for step in range(300):
        lines += [WARNING.format(rank=0, micros=_MICROS), WARNING.format(rank=1, micros=_MICROS),
                  f"[rank0]:step {step}/300 loss 1.0"]
    scan = scanner.scan_file(_write(tmp_path, lines), "worker-0.log")
    assert _warning_lines(scan, 0) == [1, 1 + 3 * 299]
    assert _warning_lines(scan, 1) == [2, 2 + 3 * 299]


def test_a_native_line_between_starts_a_new_run(tmp_path, scanner):
    lines = [WARNING.format(rank=0, micros=f"{n:09d}") for n in range(50)]
    lines += [line.format(rank=1) for line in TRACEBACK]
    lines += [WARNING.format(rank=0, micros=f"{n:09d}") for n in range(50, 100)]
    scan = scanner.scan_file(_write(tmp_path, lines), "worker-0.log")
    after = 50 + len(TRACEBACK)
    assert _warning_lines(scan, 0) == [1, 50, after + 1, after + 50]
    assert [e.exc_type for e in scan.exceptions] == ["RuntimeError"]


def test_copies_told_apart_by_their_header_time_are_still_copies(tmp_path, scanner):
    """The header's time is a prefix, not the body: each kept copy is the line where it is."""
    lines = [WARNING.format(rank=n % 4, micros=f"{n:09d}") for n in range(400)]
    scan = scanner.scan_file(_write(tmp_path, lines), "worker-0.log")
    for rank in range(4):
        assert _warning_lines(scan, rank) == [rank + 1, 400 - 3 + rank]
    assert all(h.where.text == lines[h.where.line - 1] for h in scan.hits)


@pytest.mark.parametrize("pieces", [2, 3, 5])
def test_a_run_that_goes_on_from_one_piece_into_the_next_is_one_run(tmp_path, scanner, pieces):
    """A big file is surveyed in line-aligned pieces, in parallel: the merge keeps a run crossing
    a boundary as one scan of the whole file does (its first and latest copies, their count)."""
    from logscan.files.reader import line_ranges

    lines = ["[rank0]:step 0/300 loss 1.0"] + [WARNING.format(rank=n % 2, micros=f"{n:09d}") for n in range(40)]
    lines += [line.format(rank=1) for line in TRACEBACK] + [WARNING.format(rank=0, micros="0") for _ in range(9)]
    path = _write(tmp_path, lines)
    whole = scanner.scan_file(path, "worker-0.log")
    surveys = [scanner.survey(path, 64, start=start, end=end) for start, end in line_ranges(path, pieces, min_size=1)]
    assert len(surveys) == pieces
    merged = scanner.merge(path, "worker-0.log", surveys)
    assert [(h.rule_id, h.where.line) for h in merged.hits] == [(h.rule_id, h.where.line) for h in whole.hits]
    assert merged.repeats == whole.repeats and sum(whole.repeats.values()) > 0
