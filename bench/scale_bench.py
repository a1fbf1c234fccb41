"""Is the cost of a diagnosis linear in Workers, ranks and lines? Times whole diagnoses of big
generated jobs (bench/make_scale_logs.py) phase by phase, and prints the curve.

    python bench/scale_bench.py                       # the full curve (about 10 minutes)
    python bench/scale_bench.py --quick               # small sizes only (about a minute)
    python bench/scale_bench.py --only workers-3100   # one series: workers-3100, workers-30,
                                                      # shared, env, env-distinct, tracebacks
    python bench/scale_bench.py --profile workers-3100:1024   # cProfile of one job's model and rules

Each job is built once and kept in bench/out/scale/ (git ignores bench/out). Each is diagnosed in
a fresh process (`logscan.diagnose.pipeline.diagnose_paths`, then the JSON and the human report), so one
job's memory does not carry into the next: the figures are that process's phases, and its peak
RSS. "per unit" divides the time after the scan (job model, rules, reports) and the whole time by
the series' unit (Workers, lines, prints, tracebacks): flat columns mean linear cost.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out" / "scale"
NOW = "2026-12-02T00:00:00+00:00"

sys.path.insert(0, str(HERE))
import make_scale_logs  # noqa: E402

# series name → (unit, sizes, quick sizes, how to build a job of that size)
SERIES = {
    "workers-3100": ("Workers", (8, 64, 256, 1024, 4096), (8, 64, 256),
                     lambda n: ("workers", dict(workers=n, lines=3100, gpus=8))),
    "workers-30": ("Workers", (8, 256, 1024, 2048, 4096), (8, 256, 1024),
                   lambda n: ("workers", dict(workers=n, lines=30, gpus=8, healthy=True))),
    "rendezvous": ("Workers", (64, 1024, 4096), (64, 1024),
                   lambda n: ("rendezvous", dict(workers=n, gpus=8))),
    "shared": ("Workers", (8, 64, 512), (8, 64),
               lambda n: ("shared", dict(workers=n, lines=300 * n, gpus=8))),
    "env": ("prints", (10_000, 100_000, 1_000_000), (10_000, 100_000),
            lambda n: ("env", dict(prints=n, gpus=8))),
    "env-distinct": ("prints", (1_000, 10_000, 40_000), (1_000, 10_000),
                     lambda n: ("env", dict(prints=n, gpus=8, distinct=True, world_size=False))),
    "tracebacks": ("tracebacks", (10_000, 100_000, 1_000_000), (10_000, 100_000),
                   lambda n: ("tracebacks", dict(tracebacks=n, gpus=8))),
}


def job_dir(series: str, size: int) -> Path:
    kind, opts = SERIES[series][3](size)
    path = OUT / f"{series}-{size}-v{make_scale_logs.GENERATOR_VERSION}"
    if not path.exists():
        print(f"building {path.name} ...", file=sys.stderr, flush=True)
        make_scale_logs.build(kind, path, **opts)
    return path


def measure(path: Path, profile: bool = False) -> dict:
    """Diagnose one job in this process; the phases' wall times and the peak RSS."""
    sys.path.insert(0, str(REPO))
    from datetime import datetime

    from logscan.catalogue import load_catalogue
    from logscan.diagnose.pipeline import diagnose_paths
    from logscan.render import render
    from logscan.settings import Settings

    catalogue = load_catalogue()
    times: dict[str, float] = {}
    mark = time.perf_counter()
    profiler = None
    if profile:
        import cProfile
        profiler = cProfile.Profile()

    def lap(name: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        times[name] = times.get(name, 0.0) + now - mark
        mark = now
        if profiler is not None and name == "scan":
            profiler.enable()

    settings = Settings(now=datetime.fromisoformat(NOW))
    start = time.perf_counter()
    diagnosis = diagnose_paths([str(path)], settings, catalogue, on_phase=lap)
    render("json", diagnosis)
    lap("json report")
    render("human", diagnosis)
    lap("human report")
    if profiler is not None:
        profiler.disable()
        import pstats
        pstats.Stats(profiler, stream=sys.stderr).sort_stats(os.environ.get("SCALE_SORT", "cumulative")).print_stats(int(os.environ.get("SCALE_TOP", "40")))
    total = time.perf_counter() - start
    return {
        "total": total,
        "scan": times.get("discover", 0) + times.get("scan", 0),
        "model": times.get("job model", 0),
        "rules": times.get("rules and root cause", 0),
        "reports": times.get("json report", 0) + times.get("human report", 0),
        "lines": diagnosis.lines_scanned,
        "findings": len(diagnosis.findings),
        "root": diagnosis.root_cause.rule if diagnosis.root_cause else None,
        "rss_mib": _peak_rss_mib(),
    }


def _peak_rss_mib() -> float:
    """This process's peak RSS since it started (VmHWM: unlike ru_maxrss, not carried over from
    the parent that forked it, which may have built a big job)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(series: str, size: int, timeout: float) -> dict:
    path = job_dir(series, size)
    try:
        done = subprocess.run([sys.executable, __file__, "--measure", str(path)], capture_output=True,
                              text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    except subprocess.CalledProcessError as error:
        return {"error": error.stderr.strip().splitlines()[-1:] or ["?"]}
    return json.loads(done.stdout)


def table(series: str, rows: list[tuple[int, dict]]) -> str:
    unit = SERIES[series][0]
    out = [f"### {series}", "",
           f"| {unit} | lines | scan | model | rules | reports | total | after scan per {unit[:-1]} "
           f"| total per {unit[:-1]} | peak RSS | root cause |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for size, r in rows:
        if "timeout" in r or "error" in r:
            out.append(f"| {size:,} | | | | | | {r.get('timeout', '')} s timeout {r.get('error', '')} | | | | |")
            continue
        after = r["model"] + r["rules"] + r["reports"]
        out.append(f"| {size:,} | {r['lines']:,} | {r['scan']:.2f} s | {r['model']:.2f} s | {r['rules']:.2f} s "
                   f"| {r['reports']:.2f} s | {r['total']:.2f} s | {after / size * 1e6:.0f} µs "
                   f"| {r['total'] / size * 1e6:.0f} µs | {r['rss_mib']:.0f} MiB | {r['root']} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", action="append", choices=sorted(SERIES))
    parser.add_argument("--sizes", help="comma-separated sizes instead of the series' own")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--profile", metavar="SERIES:SIZE")
    parser.add_argument("--measure", metavar="JOB", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.measure))))
        return
    if args.profile:
        series, size = args.profile.split(":")
        print(json.dumps(measure(job_dir(series, int(size)), profile=True), indent=1))
        return
    for series in args.only or SERIES:
        unit, sizes, quick, _ = SERIES[series]
        if args.sizes:
            sizes = tuple(int(s.replace("_", "")) for s in args.sizes.split(","))
        elif args.quick:
            sizes = quick
        rows = []
        for size in sizes:
            rows.append((size, run_one(series, size, args.timeout)))
            print(f"{series} {size}: {rows[-1]}", file=sys.stderr, flush=True)
        print(table(series, rows) + "\n", flush=True)


if __name__ == "__main__":
    main()
