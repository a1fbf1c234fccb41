"""Lines in any dress: the wrappers and tags that collectors, container runtimes and launchers put
around a line are unwrapped before anything reads it, and a traceback's first and last lines are
recognised behind tags no prefix rule knows.

The lines here are synthetic, built from each wrapper's documented record format: Docker's
json-file driver (`{"log": ..., "stream": ..., "time": ...}`), the CRI log format of containerd
and CRI-O (`<RFC 3339 time> <stream> <F|P> <text>`), OpenMPI's `--tag-output`, Ray's worker
prefix.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from conftest import torch_source_entries
from logscan.scan.lineparse import is_traceback_start, parse_exception
from logscan.scan.prefixes import strip_prefixes

STAMP = datetime(2026, 12, 1, 19, 0, 0, 123456, tzinfo=timezone.utc)


@pytest.mark.parametrize("line, body, rank", [
    ('{"log":"[rank1]: Traceback (most recent call last):\\n","stream":"stderr",'
     '"time":"2026-12-01T19:00:00.123456789Z"}', "Traceback (most recent call last):", 1),
    ('{"log":"  File \\"train.py\\", line 3, in \\u003cmodule\\u003e\\n","stream":"stderr",'
     '"time":"2026-12-01T19:00:00.123456789Z"}', '  File "train.py", line 3, in <module>', None),
])
def test_docker_json_file_records_are_unwrapped_with_their_time(line, body, rank):
    stripped = strip_prefixes(line)
    assert (stripped.body, stripped.rank, stripped.time) == (body, rank, STAMP)


def test_a_docker_record_cut_short_still_gives_its_text():
    # Evidence keeps a line's first characters: the record's end, and its time, may be gone.
    assert strip_prefixes('{"log":"[rank0]: RuntimeError: boom \\"x\\" and more').body == \
        'RuntimeError: boom "x" and more'
    assert strip_prefixes('{"log":"ValueError: cut in an escape \\').body == "ValueError: cut in an escape "


def test_a_line_that_only_looks_like_json_is_left_alone():
    assert strip_prefixes('{"loss": 0.5, "step": 3}').body == '{"loss": 0.5, "step": 3}'


@pytest.mark.parametrize("line, body, rank, partial", [
    ("2026-12-01T19:00:00.123456789Z stderr F [rank2]: RuntimeError: boom", "RuntimeError: boom", 2, False),
    ("2026-12-01T19:00:00.123456789Z stdout P step 3/10 loss 0.5", "step 3/10 loss 0.5", None, True),
    ('2026-12-01T19:00:00.123456789Z stderr F   File "train.py", line 3, in main',
     '  File "train.py", line 3, in main', None, False),
])
def test_cri_records_lose_their_header_and_keep_indentation(line, body, rank, partial):
    stripped = strip_prefixes(line)
    assert (stripped.body, stripped.rank, stripped.time, stripped.partial) == (body, rank, STAMP, partial)


@pytest.mark.parametrize("line, body, rank, pid", [
    ("[1,3]<stderr>:Traceback (most recent call last):", "Traceback (most recent call last):", 3, None),
    ("<stderr>:ValueError: x", "ValueError: x", None, None),
    ("[stderr] KeyError: 'DATA_ROOT'", "KeyError: 'DATA_ROOT'", None, None),
    ("(RayTrainWorker pid=4242, ip=10.0.0.2) ValueError: x", "ValueError: x", None, 4242),
    ("(pid=77) [rank5]: RuntimeError: y", "RuntimeError: y", 5, 77),
])
def test_launcher_stream_and_process_tags(line, body, rank, pid):
    stripped = strip_prefixes(line)
    assert (stripped.body, stripped.rank, stripped.pid) == (body, rank, pid)


@pytest.mark.parametrize("body, expected", [
    ("RuntimeError: x", ("RuntimeError", "x")),
    ("[worker-3] [stderr] RuntimeError: boom: y", ("RuntimeError", "boom: y")),
    ("node-1: torch.distributed.DistBackendError: NCCL error", ("torch.distributed.DistBackendError", "NCCL error")),
    ("<12>|KeyError: 'A'", ("KeyError", "'A'")),
    ("loss error: 0.3", None),
    ("step 3 of RuntimeError tests done", None),
    ("a long sentence that only mentions: RuntimeError: x", None),
])
def test_exception_lines_behind_unknown_tags(body, expected):
    assert parse_exception(body) == expected


@pytest.mark.parametrize("body, expected", [
    ("Traceback (most recent call last):", True),
    ("[worker-3] Traceback (most recent call last):", True),
    ("node-1: [x] Traceback (most recent call last):", True),
    ("see the Traceback (most recent call last): above", False),
])
def test_traceback_headers_behind_unknown_tags(body, expected):
    assert is_traceback_start(body) is expected


@pytest.mark.parametrize("sample", ["container-cri", "container-docker-json"])
def test_a_container_runtimes_records_read_as_the_lines_they_wrap(sample, run_cli):
    """Real runs whose every line is a CRI or json-file record: the crash is the training
    script's RuntimeError, not torchrun's ChildFailedError (its agent frame `run.py", line` is
    `run.py\\", line` inside a JSON string), and its evidence carries the record's time."""
    import json

    from conftest import POST_MORTEM_NOW, SAMPLES

    result = run_cli("scan", SAMPLES / sample, "--format", "json", "--now", POST_MORTEM_NOW)
    report = json.loads(result.stdout)
    assert "raised RuntimeError: non-finite loss" in report["root_cause"]["message"]
    root = next(f for f in report["findings"] if f["message"] == report["root_cause"]["message"])
    assert root["time"].startswith("2026-12-01T")  # the CRI or json-file record's time


@pytest.mark.parametrize("line", [line for entry in torch_source_entries()
                                  if entry["family"] == "prefixes" for line in entry["examples"]])
def test_every_eras_logger_prefix_is_stripped(line):
    """Lines built from each release's formatter (tests/torch_source, read from torch's source):
    what is left is the message, which starts with a word or torch's own `[default]`/`[Rank 2]`/
    `[c10d]` tag, never a level, a time or a rank prefix."""
    import re

    body = strip_prefixes(line).body
    assert re.match(r"(?:\[(?:default|Rank \d+|c10d)\] )?[A-Za-z]", body), body


@pytest.mark.parametrize("line, body, rank, local_rank", [
    # a log viewer's line number pasted before torch's rank prefix and its C++ header
    ("[80746] [rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective "
     "operation timeout", "[Rank 0] Watchdog caught collective operation timeout", 0, None),
    # a logger's `[%(process)d] ` before torchrun's --tee prefix
    ("[4821] [default3]:Traceback (most recent call last):", "Traceback (most recent call last):", None, 3),
    # no known prefix after the number: the line stays as it is
    ("[12] items done", "[12] items done", None, None),
])
def test_a_bracketed_number_before_a_known_prefix_is_glue(line, body, rank, local_rank):
    stripped = strip_prefixes(line)
    assert (stripped.body, stripped.rank, stripped.local_rank) == (body, rank, local_rank)


@pytest.mark.parametrize("line, body, rank, stamp", [
    # a log collector's minute-resolution time, indented by the paste (as in a public NCCL report)
    (" 2025-02-18 12:54 [rank13]:[E218 04:54:22.864467604 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught",
     "[Rank 1] Watchdog caught", 13, datetime(2025, 2, 18, 12, 54)),
    ("2025-02-18 12:54 - [rank2]: RuntimeError: boom", "RuntimeError: boom", 2, datetime(2025, 2, 18, 12, 54)),
    ("\t2025-02-18 12:54:07,250 [rank0]: step 3", "step 3", 0, datetime(2025, 2, 18, 12, 54, 7, 250000)),
])
def test_a_date_and_time_to_the_minute_or_indented_is_a_prefix(line, body, rank, stamp):
    """Synthetic lines: a `YYYY-MM-DD HH:MM[:SS[,fff]]` stamp (a collector's or logging's), with or
    without seconds, at the line's start or after the blanks a paste put there."""
    stripped = strip_prefixes(line)
    assert (stripped.body, stripped.rank, stripped.time) == (body, rank, stamp)


def test_a_date_inside_text_stays_text():
    assert strip_prefixes("saved at 2025-02-18 12:54 to /ckpt").body == "saved at 2025-02-18 12:54 to /ckpt"
