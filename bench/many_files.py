"""A job folder that also holds many tiny metric files (`step-000001.txt`, a progress-like line
each), at a size the test suite does not build: are they still skipped, is the report still the
job's own and short, and how long does the scan take?

    python bench/many_files.py               # 100,000 files
    python bench/many_files.py --files 1000000

tests/test_bad_input.py checks the same with 5,000 files. The job is the healthy-2x2 sample's two
Worker logs, built in a temporary folder that is removed afterwards.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_logs" / "healthy-2x2"
NOW = "2030-01-01T00:00:00Z"


def build_job(root: Path, files: int) -> Path:
    job = root / "job"
    for worker in ("worker-0", "worker-1"):
        (job / worker).mkdir(parents=True)
        shutil.copyfile(SAMPLE / worker / "launch_ddp.log", job / worker / "launch_ddp.log")
    metrics = job / "metrics"
    metrics.mkdir()
    for i in range(files):
        fd = os.open(metrics / f"step-{i:06d}.txt", os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, b"step %d loss 1.%d\n" % (i, i % 997))
        os.close(fd)
    return job


def scan(job: Path) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "logscan", "scan", str(job), "--now", NOW],
                            capture_output=True, cwd=REPO, timeout=3600)
    return result, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000, help="metric files (default 100000)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="logscan-many-files-") as temp:
        root = Path(temp)
        alone, _ = scan(build_job(root / "alone", 0))
        started = time.monotonic()
        job = build_job(root / "many", args.files)
        print(f"built {args.files} files in {time.monotonic() - started:.1f} s", flush=True)
        result, elapsed = scan(job)
    text = result.stdout.decode("utf-8", "replace")
    head = alone.stdout.decode().splitlines()[0].split(":", 1)[1]
    checks = {
        "exit status 0": result.returncode == 0,
        "no traceback": b"Traceback" not in result.stderr,
        "the job's own diagnosis": text.splitlines()[0].split(":", 1)[1] == head,
        "only the 2 Worker logs scanned": "2 file(s)" in text.splitlines()[-1],
        "a report that does not grow with the files": len(text) < len(alone.stdout) + 1_000,
    }
    for name, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    print(f"scan of {args.files} tiny files beside the job: {elapsed:.1f} s")
    sys.exit(0 if all(checks.values()) else 1)


if __name__ == "__main__":
    main()
