"""Where the time of one `logscan scan LOG` goes: each phase of the command timed in order, in
one process (as with --jobs 1, so nothing overlaps), then the scan's hottest functions.

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
    from logscan.engine import Settings, job_name
    from logscan.render import RENDERERS
    lap("import engine, scanner, renderers (rich)")
    from logscan.catalogue import load_catalogue
    catalogue = load_catalogue()
    lap("load the rule catalogue (TOML, regex)")
    from logscan.discovery import discover
    found = discover([log])
    lap("discover")
    from logscan.scanner import Scanner
    scanner = Scanner(catalogue)
    profiler = cProfile.Profile()
    profiler.enable()
    scans = [scanner.scan_file(f.path, f.display) for f in found.logs]
    profiler.disable()
    lap("scan (cProfile on: a little slower)")
    from logscan.diagnose import diagnose_job
    from logscan.model import build_job
    lap("import the job model and rules (pandas)")
    job = build_job(job_name([log]), found.logs, scans, catalogue,
                    now=datetime(2030, 1, 1, tzinfo=timezone.utc), stall_after=Settings().stall_after)
    diagnosis = diagnose_job(job, Settings(), found)
    lap("job model, rules, root cause")
    RENDERERS["human"](diagnosis)
    lap("render the report")

    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    interpreter = time.perf_counter() - start
    size = sum(s.size for s in scans)
    total = sum(t for _, t in phases) + interpreter
    print(f"{log}: {size / (1 << 20):.0f} MiB, {sum(s.lines for s in scans)} lines")
    print(f"  {'start the interpreter':45} {interpreter:6.3f} s")
    for name, seconds in phases:
        print(f"  {name:45} {seconds:6.3f} s  {100 * seconds / total:4.0f}%")
    print(f"  {'total':45} {total:6.3f} s")

    stats = pstats.Stats(profiler)
    groups = {
        "read blocks (reader.py, file reads)": ("reader.py", "'read' of", "readinto"),
        "bytes.translate: key bytes and newlines": ("'translate' of",),
        "bytes.find: literals, key byte places": ("'find' of", "'startswith' of"),
        "bytes.rfind / count: lines, line numbers": ("'rfind' of", "'count' of"),
        "progress lines (first and last per block)": ("ProgressFinder", "_lines_", "'lower' of",
                                                      "'search' of", "_block_progress",
                                                      "_progress_at"),
        "candidate lines: parsing, rules": ("_handle_line", "_summary", "strip_prefixes", "_where",
                                            "lineparse", "catalogue.py", "'decode' of"),
    }
    totals = dict.fromkeys(groups, 0.0)
    other = 0.0
    for (filename, _, function), (_, _, tottime, _, _) in stats.stats.items():
        label = f"{filename}:{function}"
        for group, needles in groups.items():
            if any(n in label for n in needles):
                totals[group] += tottime
                break
        else:
            other += tottime
    scan_total = sum(totals.values()) + other
    print("\n  the scan, by kind of work (cProfile self time):")
    for group, seconds in totals.items():
        print(f"    {group:45} {seconds:6.3f} s  {100 * seconds / scan_total:4.0f}%")
    print(f"    {'other':45} {other:6.3f} s  {100 * other / scan_total:4.0f}%")
    buffer = io.StringIO()
    pstats.Stats(profiler, stream=buffer).sort_stats("tottime").print_stats(10)
    print("\n  hottest functions:")
    lines = buffer.getvalue().splitlines()
    start = next(i for i, l in enumerate(lines) if l.strip().startswith("ncalls"))
    print("\n".join("    " + l for l in lines[start:] if l.strip()))


if __name__ == "__main__":
    main()
