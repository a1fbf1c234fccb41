"""Benchmark `logscan scan` against `grep -n -E` on large generated Worker logs.

    python bench/run_bench.py                  # 256 MiB
    python bench/run_bench.py --size 256M,1G   # both sizes: shows whether time is linear
    python bench/run_bench.py --profile        # where the time goes, phase by phase

For each size it builds (once, cached under bench/out/) a realistic log from the sample logs'
lines (see make_log.py), reads it once so the page cache is warm, then runs, alternating,
the whole `logscan scan` command and `grep -n -E` with the rare patterns logscan looks for (its
candidate patterns and every catalogue keyword), both writing into a pipe that is drained: GNU
grep stops at the first match when its output is /dev/null. It reports the median wall time of
each, their ratio, and logscan's peak RSS: of its largest process (wait4) and of its whole process
tree (sampled from /proc every 10 ms).

Then a 2-Worker job (node 0's and node 1's logs in one directory) is scanned three ways: as one
job (worker processes for big files), as one job with --jobs 1 (one process, the files one after
the other), and as two separate commands (each of which also uses both cores on its file).

Each measurement is made with every candidate-line matcher installed: the default pure-Python
one and, if the optional `hyperscan` package is installed, Hyperscan (LOGSCAN_MATCHER).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_log import cached_log, parse_size  # noqa: E402

NOW = "2030-01-01T00:00:00Z"


def logscan_command() -> list[str]:
    script = Path(sys.executable).with_name("logscan")
    return [str(script)] if script.exists() else [sys.executable, "-m", "logscan"]


def grep_patterns() -> list[str]:
    """logscan's candidate patterns and keywords, as POSIX extended regexes."""
    from logscan.catalogue import load_catalogue
    from logscan.lineparse import CANDIDATES

    def ere(pattern: str) -> str:
        pattern = pattern.replace("(?<![A-Za-z_])", "").replace("(?:", "(")
        return pattern.replace("\\t", "\t").replace('\\"', '"')

    patterns = [ere(c.pattern.decode()) for c in CANDIDATES]
    patterns += [re.sub(r"([.\[\]()*+?{}|^$\\])", r"\\\1", k) for k in sorted(load_catalogue().keywords())]
    return patterns


def tree_pss_kib(pid: int) -> int:
    """Proportional set size of a process and all its descendants, in KiB: memory the command
    really holds (pages that forked workers share with it count once in the sum)."""
    total = 0
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/smaps_rollup") as fh:
                total += next(int(l.split()[1]) for l in fh if l.startswith("Pss:"))
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as fh:
                    stack += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            continue
    return total


def run(command: list[str], matcher: str | None = None) -> dict:
    """Wall time, peak RSS of the largest process, peak PSS of the whole tree, output size."""
    env = dict(os.environ)
    if matcher:
        env["LOGSCAN_MATCHER"] = matcher
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], tree_pss_kib(proc.pid))
            done.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}): {err.decode()[-2000:]}")
    return {"wall": wall, "rss": usage.ru_maxrss, "tree_rss": peak[0], "out": len(out),
            "exit": proc.returncode}


def warm(*paths: Path) -> None:
    for path in paths:
        with open(path, "rb") as fh:
            while fh.read(1 << 24):
                pass


def alternate(commands: dict[str, list[str]], repeat: int, matcher: str | None = None
              ) -> dict[str, list[dict]]:
    results: dict[str, list[dict]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            results[name].append(run(command, matcher))
    return results


def matchers() -> list[str]:
    """logscan's candidate-line matchers this Python can use: the default pure-Python one, and
    Hyperscan when the optional package is installed."""
    found = ["python"]
    try:
        import hyperscan  # noqa: F401
        found.append("hyperscan")
    except ImportError:
        pass
    return found


def median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def mib(kib: float) -> str:
    return f"{kib / 1024:.0f} MiB"


def machine() -> str:
    model = "?"
    try:
        with open("/proc/cpuinfo") as fh:
            model = next(l.split(":", 1)[1].strip() for l in fh if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    grep = subprocess.run(["grep", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return (f"{os.cpu_count()} cores ({model}), Python {platform.python_version()}, {grep}, "
            f"{platform.system()} {platform.release()}")


def single_file(size: int, out: Path, repeat: int, patterns: list[str], matcher: str) -> dict:
    log = cached_log(size, out)
    warm(log)
    grep = ["grep", "-n", "-E", *(a for p in patterns for a in ("-e", p)), str(log)]
    results = alternate({"logscan": [*logscan_command(), "scan", str(log), "--now", NOW],
                         "grep": grep}, repeat, matcher)
    ls, gr = results["logscan"], results["grep"]
    return {"size": size, "matcher": matcher, "logscan": median(ls, "wall"),
            "grep": median(gr, "wall"), "rss": max(r["rss"] for r in ls),
            "tree_rss": max(r["tree_rss"] for r in ls), "runs": results}


def two_workers(size: int, out: Path, repeat: int, matcher: str) -> dict:
    logs = [cached_log(size, out, node_rank) for node_rank in (0, 1)]
    job = out / f"job-{size >> 20}M"
    for node_rank, log in enumerate(logs):
        target = job / f"worker-{node_rank}" / "launch_ddp.log"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            os.link(log, target)
    warm(*logs)
    base = [*logscan_command(), "scan"]
    parallel = alternate({"job": [*base, str(job), "--now", NOW],
                          "job --jobs 1": [*base, str(job), "--now", NOW, "--jobs", "1"]},
                         repeat, matcher)
    separate = []
    for _ in range(repeat):
        separate.append(sum(run([*base, str(log), "--now", NOW], matcher)["wall"] for log in logs))
    return {"size": size, "job": median(parallel["job"], "wall"),
            "jobs1": median(parallel["job --jobs 1"], "wall"),
            "separate": statistics.median(separate),
            "tree_rss": max(r["tree_rss"] for r in parallel["job"]),
            "rss": max(r["rss"] for r in parallel["job"])}


def profile(size: int, out: Path, matcher: str) -> None:
    """Phase timings of one in-process run (--jobs 1), then the scan's hottest functions."""
    log = cached_log(size, out)
    warm(log)
    driver = HERE / "profile_phases.py"
    print(f"matcher: {matcher}")
    subprocess.run([sys.executable, str(driver), str(log)], check=True,
                   env={**os.environ, "LOGSCAN_MATCHER": matcher})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="256M",
                        help="log size(s), comma separated: 256M, 1G ... (default 256M)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each command (default 5)")
    parser.add_argument("--out", type=Path, default=HERE / "out", help="where generated logs go")
    parser.add_argument("--no-workers", action="store_true", help="skip the 2-Worker job")
    parser.add_argument("--profile", action="store_true", help="say where the time goes instead")
    parser.add_argument("--clean", action="store_true", help="delete generated logs first")
    parser.add_argument("--matcher", default=",".join(matchers()),
                        help="logscan matcher(s) to time, comma separated (default: every one "
                             "installed: python, hyperscan)")
    args = parser.parse_args()
    sizes = [parse_size(s) for s in args.size.split(",")]
    if args.clean and args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.profile:
        for size in sizes:
            for matcher in args.matcher.split(","):
                profile(size, args.out, matcher)
        return

    print(f"machine: {machine()}")
    patterns = grep_patterns()
    print(f"grep: -n -E with {len(patterns)} patterns; every command's output goes to a pipe; "
          f"median of {args.repeat} alternating runs, warm page cache; peak RSS: largest "
          f"process; tree PSS: all of the command's processes\n")
    chosen = args.matcher.split(",")
    rows = [single_file(size, args.out, args.repeat, patterns, m) for size in sizes for m in chosen]
    print(f"{'log':>8}  {'matcher':>9}  {'logscan':>8}  {'grep -n -E':>10}  {'ratio':>6}  "
          f"{'s/GiB':>6}  {'peak RSS':>9}  {'tree PSS':>9}")
    for row in rows:
        gib = row["size"] / (1 << 30)
        print(f"{row['size'] >> 20:>5} MiB  {row['matcher']:>9}  {row['logscan']:>7.2f}s  "
              f"{row['grep']:>9.2f}s  {row['logscan'] / row['grep']:>5.2f}x  "
              f"{row['logscan'] / gib:>6.2f}  {mib(row['rss']):>9}  {mib(row['tree_rss']):>9}")
    if args.no_workers:
        return
    print()
    print(f"{'2 Workers':>12}  {'matcher':>9}  {'one job':>8}  {'--jobs 1':>8}  {'ratio':>6}  "
          f"{'2 commands':>10}  {'ratio':>6}  {'tree PSS':>9}")
    for size in sizes:
        for matcher in chosen:
            row = two_workers(size, args.out, args.repeat, matcher)
            print(f"{'2 x ' + str(size >> 20) + ' MiB':>12}  {matcher:>9}  {row['job']:>7.2f}s  "
                  f"{row['jobs1']:>7.2f}s  {row['job'] / row['jobs1']:>5.2f}x  "
                  f"{row['separate']:>9.2f}s  {row['job'] / row['separate']:>5.2f}x  "
                  f"{mib(row['tree_rss']):>9}")


if __name__ == "__main__":
    main()
