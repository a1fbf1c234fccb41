"""Benchmark: `logscan sweep` over a shared output directory of many jobs.

    python bench/bench_sweep.py                 # 1000 jobs
    python bench/bench_sweep.py --jobs 200 --runs 3

Builds (once, cached in bench/out/, which git ignores) a tree of N jobs copied from real samples
at mixed depths (`outputs/user-U/job-J/worker-N/launch_ddp.log`, a few with gzip, --log-dir and
logs/ layouts), then times, as whole commands (start-up included, output into a pipe):

- the first sweep (every job read and diagnosed), with its files opened and bytes read;
- an unchanged sweep (nothing opened), median of --runs, with the sweep's own duration (walk,
  state, report: the figure beyond start-up) and the command's start-up alone
  (`logscan sweep --help`);
- a sweep after one job's log grew by a real traceback;
- `--all --format json` (every job listed, one document).

Each command's peak memory (the largest resident set of the command and its forked workers,
from wait4) is printed beside its time: the first sweep and `--all` stream their changes and
jobs, so it should not grow with the number of jobs.

    python bench/bench_sweep.py --jobs 10000 --runs 1   # the size the memory figures are for
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SAMPLES = REPO / "sample_logs"
KINDS = ["healthy-2x2", "crash-mid-training", "healthy-2x2", "import-error-one-rank",
         "healthy-gzip", "healthy-2x2", "healthy-log-dir", "healthy-timestamps", "healthy-2x2",
         "stall-mid-training"]
NOW = "2030-01-01T00:00:00Z"


def build(root: Path, jobs: int) -> None:
    marker = root / f".built-{jobs}"
    if marker.exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    for i in range(jobs):
        sample = KINDS[i % len(KINDS)]
        where = root / f"user-{i % 17}" / (f"proj-{i % 3}" if i % 2 else "") / f"job-{i:05d}"
        shutil.copytree(SAMPLES / sample, where, ignore=shutil.ignore_patterns("expected.json"))
    marker.touch()


def logscan(*args: str) -> tuple[float, str]:
    took, out, _ = measured(*args)
    return took, out


def measured(*args: str) -> tuple[float, str, float]:
    """(seconds, standard output, peak resident MiB) of one logscan command."""
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-m", "logscan", *args], cwd=REPO, stdout=out,
                                   stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        took = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if process.returncode != 0:
            sys.exit(f"logscan {' '.join(args)} failed ({process.returncode}): "
                     f"{err.read().decode(errors='replace').strip()}")
        return took, out.read().decode(), usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    root = HERE / "out" / f"sweep-{options.jobs}"
    build(root, options.jobs)
    state = HERE / "out" / f"sweep-{options.jobs}.sqlite3"
    for leftover in state.parent.glob(state.name + "*"):
        leftover.unlink()
    sweep = ["sweep", str(root), "--state", str(state), "--format", "json", "--now", NOW]

    took, out, peak = measured(*sweep)
    first = json.loads(out)["sweep"]
    print(f"{options.jobs} jobs, first sweep: {took:.2f} s, peak {peak:.0f} MiB "
          f"({first['files_opened']} files opened, {first['bytes_read'] / 2**20:.1f} MiB read, "
          f"{len(json.loads(out)['jobs'])} changes)")

    startup = statistics.median(logscan("sweep", "--help")[0] for _ in range(options.runs))
    walls, inside = [], []
    for _ in range(options.runs):
        took, out = logscan(*sweep)
        report = json.loads(out)["sweep"]
        assert report["files_opened"] == 0 and report["bytes_read"] == 0, report
        walls.append(took)
        inside.append(report["duration_seconds"])
    print(f"unchanged sweep: {statistics.median(walls):.3f} s the command, "
          f"{statistics.median(inside):.3f} s the sweep itself (walk + state + report); "
          f"start-up alone (`sweep --help`): {startup:.3f} s; 0 files opened")

    log = next(root.rglob("job-00000/worker-0/launch_ddp.log"))
    crash = (SAMPLES / "crash-mid-training" / "worker-0" / "launch_ddp.log").read_bytes()
    with log.open("ab") as handle:
        handle.write(b"".join(crash.splitlines(keepends=True)[8:]))
    took, out = logscan(*sweep)
    report = json.loads(out)
    print(f"one job grew: {took:.3f} s, {report['sweep']['files_opened']} files opened, "
          f"{report['sweep']['bytes_read']} bytes read, "
          f"changes: {[j['change'] for j in report['jobs']]}")
    shutil.copyfile(SAMPLES / "healthy-2x2" / "worker-0" / "launch_ddp.log", log)

    took, out, peak = measured(*sweep, "--all")
    print(f"--all --format json: {took:.2f} s, peak {peak:.0f} MiB, "
          f"{len(json.loads(out)['jobs'])} jobs listed")


if __name__ == "__main__":
    main()
