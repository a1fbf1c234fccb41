"""Benchmark `logscan scan` against `grep -n -E` (and `rg -n`) on big Worker logs of every style.

    python bench/run_bench.py                          # every style, 1 GiB each
    python bench/run_bench.py --style megatron --size 256M
    python bench/run_bench.py --profile --style warnings

For each style (see styles.py) and size it builds, once (cached under bench/out/), one Worker's
log, reads it once so the page cache is warm, then runs, alternating, the whole `logscan scan`
command and `grep -n -E` with the patterns logscan looks for (its candidate patterns, the
lookbehind rewritten as for Hyperscan, and every catalogue keyword) and `rg -n` with the same
patterns where ripgrep is installed, all writing into a pipe that is drained: GNU grep stops
at the first match when its output is /dev/null. It reports the median wall time of each, the
ratio to grep, and logscan's peak RSS: of its largest process (wait4) and of its whole process
tree (sampled from /proc every 10 ms).

Then a 2-Worker job (node 0's and node 1's logs of the benchmark's own style in one directory)
is scanned three ways: as one job (worker processes for big files), as one job with --jobs 1
(one process, the files one after the other), and as two separate commands.

Each measurement is made with every candidate-line matcher this Python can use: Hyperscan (the
default) and the pure-Python fallback (LOGSCAN_MATCHER).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shlex
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
from styles import ALL as STYLES, GZIPPED, cached_log as cached_style_log  # noqa: E402

NOW = "2030-01-01T00:00:00Z"


def logscan_command() -> list[str]:
    script = Path(sys.executable).with_name("logscan")
    return [str(script)] if script.exists() else [sys.executable, "-m", "logscan"]


def grep_patterns() -> list[str]:
    """logscan's candidate patterns and keywords, as POSIX extended regexes that match the same
    lines: what Hyperscan is given, in grep's syntax."""
    from logscan.catalogue import load_catalogue
    from logscan.scan.hyperscan_matcher import line_pattern
    from logscan.scan.lineparse import CANDIDATES

    def ere(pattern: bytes) -> str:
        text = line_pattern(pattern).decode().replace("\\n]", "]").replace("(?:", "(")
        return text.replace("\\t", "\t").replace('\\"', '"')

    patterns = [ere(c.pattern) for c in CANDIDATES]
    patterns += [re.sub(r"([.\[\]()*+?{}|^$\\])", r"\\\1", k) for k in sorted(load_catalogue().keywords())]
    return patterns


def as_grep_argument(pattern: str) -> str:
    """A pattern with `\\xNN` and `\\r` escapes (which rg reads, POSIX grep does not) holding
    those bytes themselves instead: the bytes 0x80-0xff as os.fsencode gives them back."""
    pattern = pattern.replace("\\r", "\r")
    return re.sub(r"\\x([0-9a-fA-F]{2})",
                  lambda m: bytes([int(m[1], 16)]).decode("utf-8", "surrogateescape"), pattern)


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
    """Wall time, peak RSS of the largest process, peak PSS of the whole tree, output size.
    A command given as (directory, command) runs in that directory (--against)."""
    env = dict(os.environ)
    if matcher:
        env["LOGSCAN_MATCHER"] = matcher
    cwd = None
    if isinstance(command, tuple):
        cwd, command = command
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], tree_pss_kib(proc.pid))
            done.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    # The output is counted, never kept: a command that prints hundreds of MiB (grep on a
    # keyword-dense log) would grow this process, and each later child's peak RSS (wait4) would
    # count this process's pages it had until it exec'd.
    out = 0
    while chunk := proc.stdout.read(1 << 20):
        out += len(chunk)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}): {err.decode()[-2000:]}")
    return {"wall": wall, "rss": usage.ru_maxrss, "tree_rss": peak[0], "out": out,
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
    """logscan's candidate-line matchers this Python can use: Hyperscan (the default) when the
    package is installed, and the pure-Python fallback."""
    try:
        import hyperscan  # noqa: F401
        return ["hyperscan", "python"]
    except ImportError:
        return ["python"]


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


def single_file(style: str, size: int, out: Path, repeat: int, patterns: list[str],
                matcher: str, against: Path | None = None) -> dict:
    log = cached_style_log(style, size, out)
    warm(log)
    gzipped = style in GZIPPED
    grep = ["grep", "-n", "-E", *(a for p in patterns for a in ("-e", as_grep_argument(p)))]
    commands = {"logscan": [*logscan_command(), "scan", str(log), "--now", NOW],
                # a compressed log is decompressed into grep, as zgrep does
                "grep": (["sh", "-c", f"gzip -dc {shlex.quote(str(log))} | {shlex.join(grep)}"]
                         if gzipped else [*grep, str(log)]),
                # the read itself: what any tool pays before it looks at a byte
                "cat": ["sh", "-c", f"{'gzip -dc' if gzipped else 'cat'} {shlex.quote(str(log))} "
                                    f">/dev/null"]}
    if shutil.which("rg"):
        # (?-u): bytes, as grep and logscan match them; Unicode \b sends rg to its slow engine
        commands["rg"] = ["rg", "-n", "--no-config", *(["-z"] if gzipped else []),
                          *(a for p in patterns for a in ("-e", "(?-u)" + p)), str(log)]
    if against is not None:
        # another checkout's package, run in its directory so `-m logscan` finds it first
        commands["against"] = (str(against), [sys.executable, "-m", "logscan", "scan",
                                               str(log.resolve()), "--now", NOW])
    results = alternate(commands, repeat, matcher)
    ls = results["logscan"]
    return {"against": median(results["against"], "wall") if against is not None else None,
            "against_rss": max(r["rss"] for r in results["against"]) if against is not None else None,
            "style": style, "size": size, "matcher": matcher, "logscan": median(ls, "wall"),
            "grep": median(results["grep"], "wall"), "cat": median(results["cat"], "wall"),
            "rg": median(results["rg"], "wall") if "rg" in results else None,
            "rss": max(r["rss"] for r in ls), "tree_rss": max(r["tree_rss"] for r in ls),
            "runs": results}


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


def profile(style: str, size: int, out: Path, matcher: str) -> None:
    """Phase timings of one in-process run (--jobs 1), then the scan's hottest functions."""
    log = cached_style_log(style, size, out)
    warm(log)
    driver = HERE / "profile_phases.py"
    print(f"style: {style}, matcher: {matcher}")
    subprocess.run([sys.executable, str(driver), str(log)], check=True,
                   env={**os.environ, "LOGSCAN_MATCHER": matcher})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--style", default=",".join(STYLES),
                        help=f"log style(s), comma separated (default: all: {', '.join(STYLES)})")
    parser.add_argument("--size", default="1G",
                        help="log size(s), comma separated: 256M, 1G ... (default 1G)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each command (default 5)")
    parser.add_argument("--out", type=Path, default=HERE / "out", help="where generated logs go")
    parser.add_argument("--no-workers", action="store_true", help="skip the 2-Worker job")
    parser.add_argument("--profile", action="store_true", help="say where the time goes instead")
    parser.add_argument("--clean", action="store_true", help="delete generated logs first")
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="also time another checkout's logscan (DIR holds its logscan/ and "
                             "rules/, e.g. `git archive REV logscan rules | tar -x -C DIR`), "
                             "alternating with the others")
    parser.add_argument("--matcher", default=",".join(matchers()),
                        help="logscan matcher(s) to time, comma separated (default: every one "
                             "usable: hyperscan, python)")
    args = parser.parse_args()
    sizes = [parse_size(s) for s in args.size.split(",")]
    styles = args.style.split(",")
    unknown = sorted(set(styles) - set(STYLES))
    if unknown:
        parser.error(f"unknown style(s) {', '.join(unknown)}: use {', '.join(STYLES)}")
    chosen = args.matcher.split(",")
    if args.clean and args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.profile:
        for style in styles:
            for size in sizes:
                for matcher in chosen:
                    profile(style, size, args.out, matcher)
        return

    print(f"machine: {machine()}")
    patterns = grep_patterns()
    rg = "; rg -n with the same" if shutil.which("rg") else "; rg is not installed"
    print(f"grep: -n -E with {len(patterns)} patterns{rg}; every command's output goes to a pipe; "
          f"median of {args.repeat} alternating runs, warm page cache; peak RSS: largest "
          f"process; tree PSS: all of the command's processes\n", flush=True)
    print(f"{'style':>12}  {'log':>8}  {'matcher':>9}  {'logscan':>8}  {'grep -n -E':>10}  "
          f"{'ratio':>6}  {'rg -n':>7}  {'ratio':>6}  {'cat':>6}  {'ratio':>6}  {'peak RSS':>9}  "
          f"{'tree PSS':>9}", flush=True)
    for style in styles:
        for size in sizes:
            for matcher in chosen:
                row = single_file(style, size, args.out, args.repeat, patterns, matcher,
                                  args.against)
                rg_cells = (f"{row['rg']:>6.2f}s  {row['logscan'] / row['rg']:>5.2f}x"
                            if row["rg"] else f"{'':>7}  {'':>6}")
                print(f"{style:>12}  {row['size'] >> 20:>5} MiB  {matcher:>9}  "
                      f"{row['logscan']:>7.2f}s  {row['grep']:>9.2f}s  "
                      f"{row['logscan'] / row['grep']:>5.2f}x  {rg_cells}  "
                      f"{row['cat']:>5.2f}s  {row['logscan'] / max(row['cat'], 1e-3):>5.1f}x  "
                      f"{mib(row['rss']):>9}  {mib(row['tree_rss']):>9}"
                      + (f"  against: {row['against']:.2f}s {mib(row['against_rss'])}"
                         if row["against"] is not None else ""), flush=True)
    if args.no_workers:
        return
    print()
    print(f"{'2 Workers':>12}  {'matcher':>9}  {'one job':>8}  {'--jobs 1':>8}  {'ratio':>6}  "
          f"{'2 commands':>10}  {'ratio':>6}  {'tree PSS':>9}", flush=True)
    for size in sizes:
        for matcher in chosen:
            row = two_workers(size, args.out, args.repeat, matcher)
            print(f"{'2 x ' + str(size >> 20) + ' MiB':>12}  {matcher:>9}  {row['job']:>7.2f}s  "
                  f"{row['jobs1']:>7.2f}s  {row['job'] / row['jobs1']:>5.2f}x  "
                  f"{row['separate']:>9.2f}s  {row['job'] / row['separate']:>5.2f}x  "
                  f"{mib(row['tree_rss']):>9}", flush=True)


if __name__ == "__main__":
    main()
