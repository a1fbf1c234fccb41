"""The candidate-line matcher's machinery: its compiled-pattern cache and the newline count.

- A compiled Hyperscan database is cached; a damaged or unwritable cache only means compiling.
- Lines are counted the same whether by bytes.count or, on big logs, by numpy.

The blocks here are SYNTHETIC.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from logscan.files import reader
from logscan.scan.lineparse import CANDIDATES

hyperscan = pytest.importorskip("hyperscan")

from logscan.scan.hyperscan_matcher import HyperscanLineFinder  # noqa: E402

BLOCK = b"step 1 loss 2\n  rank      : 3 (local_rank: 1)\n[rank 0] RANK= 2\nRuntimeError: x\n"
EXPECTED = [14, 46, 63]


def test_a_compiled_database_is_cached_and_a_damaged_cache_is_compiled_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert HyperscanLineFinder(CANDIDATES).scan(BLOCK) == (EXPECTED, 4)
    (cached,) = (tmp_path / "logscan").iterdir()
    assert HyperscanLineFinder(CANDIDATES).scan(BLOCK) == (EXPECTED, 4)  # loaded
    cached.write_bytes(b"not a database")
    assert HyperscanLineFinder(CANDIDATES).scan(BLOCK) == (EXPECTED, 4)  # compiled again
    assert cached.read_bytes() != b"not a database"


def test_an_unusable_cache_only_means_compiling(tmp_path, monkeypatch):
    (tmp_path / "logscan").write_text("a file where the cache directory would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert HyperscanLineFinder(CANDIDATES).scan(BLOCK) == (EXPECTED, 4)


@settings(max_examples=60, deadline=None)
@given(block=st.lists(st.sampled_from([b"\n", b"a", b"\r", b"x" * 5000]), max_size=40).map(b"".join))
def test_numpy_counts_lines_as_bytes_count_does(block):
    numpy = pytest.importorskip("numpy")
    saved = reader._numpy
    try:
        reader._numpy = numpy  # as once NUMPY_AFTER bytes were counted, or preload_numpy
        assert reader.count_newlines(block) == block.count(b"\n")
    finally:
        reader._numpy = saved
