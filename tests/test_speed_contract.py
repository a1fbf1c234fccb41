"""What keeps logscan fast, checked without timing anything (timings are bench/'s job):

- `logscan --help` and `logscan rules` never import pandas (or numpy): they must start in well
  under 0.3 s, and pandas alone takes about that long to import.
- Nor does the scan of a small job: its job model and rules are plain Python (pandas is for the
  fleet view of `logscan sweep`), and numpy counts lines only in big logs.
- Progress lines, the bulk of a training log, are not matched one by one, and neither is any
  other line that holds no candidate literal.
- With the default matcher (Hyperscan), no ordinary line reaches Python, whatever words it
  holds: in every bench style (bench/styles.py: `[rank 0]`, `elapsed time per iteration`,
  NCCL's `rank 3 nranks 16`, warnings every step), only the lines the confirm pattern keeps.
- Memory does not grow with the size of a log, nor with the length of its longest line.
- The benchmark log can still be built from the sample logs.

The logs here are SYNTHETIC, made of REAL lines of sample_logs/healthy-2x2, and of lines written
the way the tools in bench/styles.py print.
"""

from __future__ import annotations

import os
from pathlib import Path
import subprocess
import sys
import gc
import tracemalloc

import pytest

from conftest import SAMPLES
from logscan.catalogue import load_catalogue
from logscan.errors import ConfigError
from logscan.files.reader import CHUNK_SIZE
from logscan.scan.scanner import Scanner

HEAVY = ("pandas", "numpy")
WORKER0 = (SAMPLES / "healthy-2x2" / "worker-0" / "launch_ddp.log").read_bytes()
HEAD, _, _ = WORKER0.partition(b"\nstep ")


def imported_modules(*args: str) -> set[str]:
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "logscan", *args],
                            capture_output=True, text=True, timeout=60,
                            env={**os.environ, "COLUMNS": "120"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip()
    return {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


@pytest.mark.parametrize("args", [("--help",), ("rules",), ("rules", "explain", "missing-worker"),
                                  ("scan", "--help")], ids=" ".join)
def test_quick_commands_do_not_import_pandas(args):
    modules = imported_modules(*args)
    assert "logscan.cli" in modules
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert not heavy, f"logscan {' '.join(args)} imports {heavy[:5]}"


def test_small_scan_imports_neither_pandas_nor_numpy():
    modules = imported_modules("scan", str(SAMPLES / "healthy-2x2"))
    # the whole scan ran: the job model was built and every rule read it
    assert {"logscan.model.job", "logscan.findings.launch", "logscan.findings.processes"} <= modules
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert not heavy, f"logscan scan of a small job imports {heavy[:5]}"


class Counting:
    """A compiled pattern that counts its searches."""

    def __init__(self, pattern):
        self.pattern = pattern
        self.calls = 0

    def search(self, *args):
        self.calls += 1
        return self.pattern.search(*args)


def progress_log(tmp_path, lines: int) -> str:
    path = tmp_path / "launch_ddp.log"
    with open(path, "wb") as handle:
        handle.write(HEAD + b"\n")
        for start in range(1, lines + 1, 10_000):
            handle.write(b"".join(b"step %d/%d loss 1.%04d\n" % (i, lines, i % 9973)
                                  for i in range(start, min(start + 10_000, lines + 1))))
    return str(path)


def test_progress_lines_are_not_matched_one_by_one(tmp_path):
    path = progress_log(tmp_path, 400_000)  # about 10 MiB: ten blocks
    blocks = os.path.getsize(path) // CHUNK_SIZE + 1
    scanner = Scanner(load_catalogue())
    header_candidates = sum(1 for line in HEAD.split(b"\n") if scanner.candidates.search(line))
    scanner.progress.pattern = progress = Counting(scanner.progress.pattern)
    scanner.native = candidates = Counting(scanner.native)
    scan = scanner.scan_file(path, "launch_ddp.log")
    assert scan.lines == 400_000 + HEAD.count(b"\n") + 1
    assert [p.where.text for p in scan.progress] == [
        "step 1/400000 loss 1.0001", f"step 400000/400000 loss 1.{400_000 % 9973:04d}"]
    assert progress.calls <= 2 * scanner.progress.LOOK * blocks
    # only the header's candidate lines (the launch line, env prints) were kept, and confirmed
    # by the native patterns in Python only where the finder looked for literals (Hyperscan
    # matched the patterns)
    assert candidates.calls == (0 if scanner.finder.exact else header_candidates)
    assert len(scanner.survey(path).candidates) == header_candidates


def _scan_peaks(tmp_path, long_line: int) -> list[int]:
    """The traced peak of scanning a 5 and a 20 MiB log, after a small one: measured in this
    process, which runs nothing else."""
    scanner = Scanner(load_catalogue())
    # Whatever the scanner builds once, on its first file (patterns compiled on first use, caches
    # filled), is not growth with the log: a small file first.
    scanner.scan_file(progress_log(tmp_path, 1_000), "launch_ddp.log")
    peaks = []
    for lines in (200_000, 800_000):  # about 5 and 20 MiB
        path = progress_log(tmp_path, lines)
        if long_line:
            with open(path, "ab") as handle:
                handle.write(b"x" * long_line + b"\nRuntimeError: after the long line\n")
        gc.collect()
        tracemalloc.start()
        try:
            scan = scanner.scan_file(path, "launch_ddp.log")
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        if long_line:
            assert scan.exceptions and scan.exceptions[-1].detail == "after the long line"
    return peaks


@pytest.mark.parametrize("long_line", [0, 10 << 20], ids=["short-lines", "10-MiB-line"])
def test_memory_does_not_grow_with_the_log(tmp_path, long_line):
    # tracemalloc counts every thread's allocations: in a process of its own, what other tests
    # left running (a server's thread, a progress bar's) cannot add to this scan's peak.
    import json

    code = (f"import json, sys, pathlib; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
            f"import test_speed_contract as t; "
            f"print(json.dumps(t._scan_peaks(pathlib.Path({str(tmp_path)!r}), {long_line})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    peaks = json.loads(done.stdout.splitlines()[-1])
    assert max(peaks) < 6 * CHUNK_SIZE + (1 << 20), peaks  # a few blocks, whatever the size
    assert abs(peaks[1] - peaks[0]) < CHUNK_SIZE, peaks


def test_benchmark_log_can_still_be_built_from_the_samples(tmp_path):
    """bench/make_log.py takes its lines from sample_logs/: it must keep finding them."""
    sys.path.insert(0, str(SAMPLES.parent / "bench"))
    try:
        import make_log
        import run_bench
    finally:
        sys.path.pop(0)
    log = make_log.generate(1 << 20, tmp_path / "worker-0.log")
    assert (1 << 20) <= log.stat().st_size < (2 << 20)
    scan = Scanner(load_catalogue()).scan_file(str(log), "worker-0.log")
    assert scan.launches and scan.envs and len(scan.progress) == 2 and scan.exceptions
    assert len(run_bench.grep_patterns()) > 20


def _bench_module(name: str):
    sys.path.insert(0, str(SAMPLES.parent / "bench"))
    try:
        return __import__(name)
    finally:
        sys.path.pop(0)


@pytest.mark.parametrize("style", ["pylogging", "nccl-tqdm", "warnings", "megatron",
                                   "kubectl-rank"])
def test_ordinary_lines_never_reach_python(tmp_path, style):
    """The default matcher hands Python only the lines the confirm pattern keeps: the same few
    (header, crash) in every style, however many ordinary lines hold `rank `, `time ` or
    English words."""
    try:
        scanner = Scanner(load_catalogue(), matcher="hyperscan")
    except ConfigError:
        pytest.skip("hyperscan is not installed")
    styles = _bench_module("styles")
    log = styles.generate(style, 2 << 20, tmp_path / f"{style}.log")
    scanner.native = candidates = Counting(scanner.native)
    survey = scanner.survey(str(log))
    assert survey.newlines > 3000
    assert len(survey.candidates) < 60
    # Hyperscan matched the candidate patterns themselves: Python confirms none of them again
    assert scanner.finder.exact and candidates.calls == 0
