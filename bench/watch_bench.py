"""Benchmark: what `logscan watch` costs beside a long, slowly writing job.

    python bench/watch_bench.py                        # 10 minutes, a step line every 0.5 s
    python bench/watch_bench.py --minutes 3 --every 0.1

Starts a job in bench/out/watch/ from the real healthy-2x2-prod sample's start-up (its launch
lines and torchrun's banner on both Workers), then appends a step line to Worker 0's log every
--every seconds as rank 0 of a production job does (`step N/M loss x`, M large: the run never ends
within the benchmark), while `logscan watch` follows the directory with its default interval. Every
30 s it reads the watch's CPU time (utime + stime from /proc) and resident set (VmRSS), and at the
end prints CPU per hour of job and the resident set's first and last readings: a watch that is
cheap beside every job uses a few CPU-seconds an hour and a resident set that does not grow with
the log.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "sample_logs" / "healthy-2x2-prod"
TOTAL_STEPS = 10_000_000


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--every", type=float, default=0.5, help="seconds between step lines")
    args = parser.parse_args()
    job = HERE / "out" / "watch"
    shutil.rmtree(job, ignore_errors=True)
    for worker in ("worker-0", "worker-1"):
        lines = (SAMPLE / worker / "launch_ddp.log").read_text().splitlines(keepends=True)
        start = [line for line in lines if not line.startswith(("step ", "training finished"))]
        (job / worker).mkdir(parents=True)
        (job / worker / "launch_ddp.log").write_text("".join(start[:6]))
    watcher = subprocess.Popen([sys.executable, "-m", "logscan", "watch", str(job), "--format", "jsonl"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    time.sleep(3)  # start-up: imports and the first diagnosis
    cpu0, began = _cpu_seconds(watcher.pid), time.monotonic()
    readings, step, next_reading = [], 0, began
    log = (job / "worker-0" / "launch_ddp.log").open("a", buffering=1)
    try:
        while time.monotonic() - began < args.minutes * 60:
            step += 1
            log.write(f"step {step}/{TOTAL_STEPS} loss {1.5 - (step % 100) / 1000:.4f}\n")
            if time.monotonic() >= next_reading:
                readings.append((time.monotonic() - began, _cpu_seconds(watcher.pid) - cpu0, _rss_mib(watcher.pid)))
                print(f"{readings[-1][0]:7.0f} s  steps {step:8d}  cpu {readings[-1][1]:7.2f} s  rss {readings[-1][2]:6.1f} MiB",
                      flush=True)
                next_reading += 30
            time.sleep(args.every)
        elapsed, cpu, rss = time.monotonic() - began, _cpu_seconds(watcher.pid) - cpu0, _rss_mib(watcher.pid)
    finally:
        log.close()
        watcher.terminate()
        out, _ = watcher.communicate(timeout=30)
    print(f"\n{step} step lines in {elapsed:.0f} s; watch CPU {cpu:.2f} s = {cpu / elapsed * 3600:.1f} s per hour "
          f"({cpu / elapsed * 100:.2f}% of a core); RSS {readings[0][2]:.1f} MiB at start, {rss:.1f} MiB at the end; "
          f"{len(out.splitlines())} event(s) told")
    shutil.rmtree(job, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
