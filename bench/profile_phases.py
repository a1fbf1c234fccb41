"""Where the time of one `logscan scan LOG` goes: each phase timed in order, in one process
(--jobs 1, so nothing overlaps) through the pipeline the command runs; then the scan's hottest functions.

Usage: python bench/profile_phases.py LOG
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

import cProfile  # noqa: E402
import io  # noqa: E402
import pstats  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from datetime import datetime, timezone  # noqa: E402


def main() -> None:
    log = sys.argv[1]
    phases = []
    mark = T0

    def lap(name: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        phases.append((name, now - mark))
        mark = now

    import logscan.cli  # noqa: F401  typer, click
    lap("import the CLI (typer)")
    from logscan.diagnose.pipeline import diagnose_paths
    from logscan.render import render
    from logscan.settings import Settings
    lap("import the pipeline, scanner, renderers (rich)")
    from logscan.catalogue import load_catalogue
    catalogue = load_catalogue()
    lap("load the rule catalogue (TOML, regex)")
    profiler = cProfile.Profile()
    names = {"discover": "discover", "scan": "scan (cProfile on: a little slower)",
             "job model": "build the job model",
             "rules and root cause": "rules, root cause"}

    def on_phase(name: str) -> None:
        if name == "discover":
            profiler.enable()  # the scan is what the profile below is about
        elif name == "scan":
            profiler.disable()
        if name in names:
            lap(names[name])

    settings = Settings(now=datetime(2030, 1, 1, tzinfo=timezone.utc), processes=1)
    diagnosis = diagnose_paths([log], settings, catalogue, on_phase=on_phase)
    render("human", diagnosis)
    lap("render the report")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    interpreter = time.perf_counter() - start
    size = diagnosis.bytes_scanned
    total = sum(t for _, t in phases) + interpreter
    print(f"{log}: {size / (1 << 20):.0f} MiB, {diagnosis.lines_scanned} lines")
    print(f"  {'start the interpreter':45} {interpreter:6.3f} s")
    for name, seconds in phases:
        print(f"  {name:45} {seconds:6.3f} s  {100 * seconds / total:4.0f}%")
    print(f"  {'total':45} {total:6.3f} s")

    stats = pstats.Stats(profiler)
    # C functions (bytes.translate, re search, ...) count for the Python function that called them.
    groups = {
        "count lines (bytes.count, numpy on big logs)":
            lambda f, n: f.endswith("reader.py") and n == "count_newlines",
        "read blocks (reader.py, file reads)": lambda f, n: f.endswith("reader.py"),
        "find candidate lines (Hyperscan, or the LineFinder fallback)":
            lambda f, n: f.endswith("hyperscan_matcher.py") or (
                f.endswith("finders.py") and n in ("scan", "_rekey", "_choose_keys", "on_match",
                                                   "<listcomp>", "<dictcomp>", "<genexpr>")),
        "first and last progress line per block":
            lambda f, n: (f.endswith("finders.py") and n in (
                "first", "last", "_edge", "_by_default", "_by_user", "_is_progress", "_literal_lines",
                "_lines_forward", "_lines_backward")) or (f.endswith("scanner.py") and n == "_line_at"),
        "confirm and number candidate lines":
            lambda f, n: f.endswith("scanner.py") and n in ("_survey_block", "of", "survey"),
        "interpret candidate lines (parsers, rules)":
            lambda f, n: f.endswith(("interpret.py", "scanner.py", "finders.py", "prefixes.py",
                                     "lineparse.py", "catalogue.py", "events.py")),
    }

    def group_of(function) -> str:
        filename, _, name = function
        return next((g for g, test in groups.items() if test(filename, name)), "other")

    totals = dict.fromkeys([*groups, "other"], 0.0)
    for function, (_, _, tottime, _, callers) in stats.stats.items():
        if function[0] == "~" and callers:  # a C function: split by caller
            for caller, entry in callers.items():
                totals[group_of(caller)] += entry[2]
        else:
            totals[group_of(function)] += tottime
    scan_total = sum(totals.values())
    print("\n  the scan, by kind of work (cProfile self time; C calls count for their caller):")
    for group, seconds in totals.items():
        print(f"    {group:58} {seconds:6.3f} s  {100 * seconds / scan_total:4.0f}%")
    buffer = io.StringIO()
    pstats.Stats(profiler, stream=buffer).sort_stats("tottime").print_stats(10)
    print("\n  hottest functions:")
    lines = buffer.getvalue().splitlines()
    start = next(i for i, l in enumerate(lines) if l.strip().startswith("ncalls"))
    print("\n".join("    " + l for l in lines[start:] if l.strip()))


if __name__ == "__main__":
    main()
