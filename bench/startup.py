"""What a small job costs: the median wall and CPU time of the commands a user runs on a small job
(a healthy and a crashed 2-Worker sample, JSON, `check`, `rules`, `--version`), then where it goes:
the interpreter, each package's imports (`python -X importtime`, self times summed per package),
the rule catalogue, and the rest (the command line, the scan, the report).

Usage: python bench/startup.py [--repeat N] [--only LABEL] [--against DIR]

The package run is this checkout's (each command runs in its directory, so `-m logscan` finds it
first). --against DIR runs every command also with another checkout's (DIR holding `logscan/`
and `rules/`, e.g. `git archive REV logscan rules | tar -x -C DIR`), in turn with this one, so
that both see the same load.

The commands run alternating, N times each (default 20), with bytecode caching on (as an installed
package runs: PYTHONDONTWRITEBYTECODE is dropped from their environment) after one warm-up run each.
CPU time is the command's own (wait4): on a loaded machine it moves less than the wall time.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_logs"
NOW = "2026-12-01T00:00:00"

# (label, arguments after `logscan`): the small-job commands.
COMMANDS = (
    ("scan healthy", ["scan", str(SAMPLES / "healthy-2x2"), "--now", NOW]),
    ("scan crash", ["scan", str(SAMPLES / "crash-mid-training"), "--now", NOW]),
    ("scan --format json", ["scan", str(SAMPLES / "healthy-2x2"), "--now", NOW, "--format", "json"]),
    ("check", ["check", str(SAMPLES / "healthy-2x2"), "--now", NOW, "--expect-workers", "2"]),
    ("rules", ["rules"]),
    ("--version", ["--version"]),
)

# Packages whose import is worth naming when a command loads it.
HEAVY = ("pandas", "numpy", "drain3", "rich", "pydantic", "regex", "hyperscan", "tree_sitter",
         "prometheus_client", "multiprocessing")

_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)$")


class Checkout:
    """Where a command runs (the checkout whose package `-m logscan` finds first), and with what
    environment (bytecode cached)."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.env = dict(os.environ)
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.env.pop("PYTHONPROFILEIMPORTTIME", None)

    def run(self, argv: list[str], **options):
        return subprocess.run(argv, cwd=self.directory, env=self.env, **options)

    def popen(self, argv: list[str]):
        return subprocess.Popen(argv, cwd=self.directory, env=self.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)


def command(args: list[str], *flags: str) -> list[str]:
    return [sys.executable, *flags, "-m", "logscan", *args]


def run_once(argv: list[str], checkout: Checkout) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process) of one run, output discarded."""
    start = time.perf_counter()
    child = checkout.popen(argv)
    _pid, _status, usage = os.wait4(child.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def medians(commands, repeat: int, checkouts: list[Checkout]) -> dict:
    """(label, checkout index) → (median wall, median CPU), the commands and checkouts taken in
    turn so that drifts in the machine's load hit all alike."""
    for checkout in checkouts:
        for _label, args in commands:
            run_once(command(args), checkout)  # writes the bytecode caches, warms the page cache
    samples = defaultdict(list)
    for _ in range(repeat):
        for label, args in commands:
            for index, checkout in enumerate(checkouts):
                samples[label, index].append(run_once(command(args), checkout))
    return {key: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
            for key, runs in samples.items()}


def owner(module: str) -> str:
    """Who an import's time is charged to: logscan's subpackage, else the top-level package."""
    parts = module.split(".")
    if parts[0] == "logscan":
        return ".".join(parts[:2])
    top = parts[0].lstrip("_")
    if top in sys.stdlib_module_names or top in ("encodings", "frozen_importlib_external"):
        return "(standard library)"
    return {"pydantic_core": "pydantic", "typing_extensions": "typing_extensions"}.get(top, top)


def import_profile(args: list[str], checkout: Checkout, runs: int = 3) -> tuple[float, dict[str, float], set[str]]:
    """(total import seconds, seconds per owner, top-level packages imported) of the least
    disturbed of `runs` runs."""
    return min((_import_profile(args, checkout) for _ in range(runs)), key=lambda profile: profile[0])


def _import_profile(args: list[str], checkout: Checkout) -> tuple[float, dict[str, float], set[str]]:
    result = checkout.run(command(args, "-X", "importtime"), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    per_owner: dict[str, float] = defaultdict(float)
    imported = set()
    for line in result.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match is None:
            continue
        own, module = int(match.group(1)) / 1e6, match.group(4)
        per_owner[owner(module)] += own
        imported.add(module.split(".")[0])
    return sum(per_owner.values()), dict(per_owner), imported


def catalogue_seconds(checkout: Checkout) -> float:
    """One load of the built-in rule catalogue (TOML, patterns), its module already imported."""
    code = ("import time; from logscan.catalogue import load_catalogue; t = time.perf_counter(); "
            "load_catalogue(); print(time.perf_counter() - t)")
    return float(checkout.run([sys.executable, "-c", code], check=True, capture_output=True,
                              text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--only", action="append", metavar="LABEL",
                        help="Only this command (repeatable): " + ", ".join(c[0] for c in COMMANDS))
    parser.add_argument("--against", metavar="DIR", help="Also run another checkout's package.")
    options = parser.parse_args()
    commands = [c for c in COMMANDS if not options.only or c[0] in options.only]
    trees = [("this", Checkout(REPO))]
    if options.against:
        trees.append((options.against, Checkout(Path(options.against).resolve())))
    times = medians(commands, options.repeat, [checkout for _name, checkout in trees])
    interpreter = statistics.median(
        run_once([sys.executable, "-c", "pass"], trees[0][1])[0] for _ in range(options.repeat))
    print(f"median of {options.repeat} runs each, in turn; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores; the interpreter alone (-c pass) {interpreter * 1000:.0f} ms\n")
    print(f"{'command':20} {'code':6} {'wall':>6} {'cpu':>6} {'imports':>7}  "
          "where the imports go (self times, ms)")
    for label, args in commands:
        for index, (name, checkout) in enumerate(trees):
            wall, cpu = times[label, index]
            total, per_owner, imported = import_profile(args, checkout)
            biggest = sorted(per_owner.items(), key=lambda item: -item[1])[:7]
            spread = ", ".join(f"{owner_} {seconds * 1000:.0f}" for owner_, seconds in biggest)
            heavy = ", ".join(name_ for name_ in HEAVY if name_ in imported) or "none"
            shown = name if index == 0 else "other"
            print(f"{label if index == 0 else '':20} {shown:6} {wall * 1000:4.0f}ms {cpu * 1000:4.0f}ms "
                  f"{total * 1000:5.0f}ms  {spread}; loaded: {heavy}")
    for name, checkout in trees:
        print(f"the built-in catalogue's load (TOML, patterns) in one process, {name}: "
              f"{catalogue_seconds(checkout) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
