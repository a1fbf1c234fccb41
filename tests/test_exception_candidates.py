"""An exception line is fed to the interpreter wherever EXCEPTION can read it, however the log
dresses it, and a line that only quotes an exception's name is not.

The lines here are SYNTHETIC, in the forms Python prints an exception's last line
(traceback.format_exception_only: `Type: detail`, or `Type` alone) behind the dress a log gives
it, and the quoted words of the bench's adversarial style.
"""

from __future__ import annotations

import json

import pytest

from logscan.catalogue import load_catalogue
from logscan.errors import ConfigError
from logscan.scan.scanner import Scanner

FED = [
    b"RuntimeError: CUDA error: device-side assert triggered",
    b"[rank1]: ValueError: expected 16 features",
    b"KeyboardInterrupt",
    b"StopIteration",
    b"SystemExit: 2",
    b"GeneratorExit",
    b"torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    b"KeyboardInterrupt   \r",
    "KeyboardInterrupt\u00a0".encode(),  # a trailing no-break space, which rstrip drops
    b"\x1b[31mOSError\x1b[0m: [Errno 5] Input/output error",
    json.dumps({"log": "KeyboardInterrupt\n", "stream": "stderr", "time": "2026-11-29T18:00:04Z"},
               separators=(",", ":")).encode(),
]
NOT_FED = [
    b'2026-11-29 18:00:01,123 INFO data: sample 1094 text="..Error.." tokens=512',
    b"2026-11-29 18:00:01,123 INFO eval: ErrorRate=0.1 InterruptCount=3",
    b"step 10/500 loss=2.1 Exceptional=1 Exited=0",
]


@pytest.fixture(scope="module", params=["hyperscan", "python"])
def scanner(request):
    try:
        return Scanner(load_catalogue(), matcher=request.param)
    except ConfigError:
        pytest.skip(f"{request.param} is not usable here")


@pytest.mark.parametrize("line", FED)
def test_an_exception_line_in_any_dress_is_fed(scanner, line):
    found = scanner.survey("x.log", content=(b"step 1 loss 2\n" + line + b"\n", 0.0)).candidates
    assert [raw for _, raw in found] == [line]


def test_a_line_that_only_quotes_an_exception_name_is_not_fed(scanner):
    """Hyperscan, given the exact patterns, does not even give it to the judge of what a line
    tells (the pure-Python finder gives every line holding a literal, and the judge drops it)."""
    block = b"\n".join(NOT_FED) + b"\n"
    if scanner.finder.marks_native:
        assert scanner.finder.scan(block)[0] == []
    assert scanner.survey("x.log", content=(block, 0.0)).candidates == []
