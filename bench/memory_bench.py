"""Is memory flat in the log's size? Peak RSS of `logscan scan` at two sizes of the same style.

    python bench/memory_bench.py                                  # the default styles, 256M and 1G
    python bench/memory_bench.py --style keyword-steps --sizes 256M,1G --repeat 3
    python bench/memory_bench.py --style keyword-steps --case user-loss-keyword

For each style, size and case it runs the whole command (output to a pipe) `--repeat` times and
reports the median wall time, the peak RSS of logscan's largest process (wait4) and the peak PSS
of its process tree (sampled every 10 ms), as run_bench.py measures them. Cases:

- `plain`: `logscan scan LOG`;
- `user-progress`: with `--progress-pattern 'loss='`, a user's progress pattern that matches
  every step line;
- `user-loss-keyword`: with a user signal rule (written to a temporary --rules directory) whose
  keyword `loss=` is on every step line and whose pattern, `loss=nan`, matches none of them.

Logs are built once, as run_bench.py builds them (styles.py, cached in bench/out/).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_log import parse_size  # noqa: E402
from run_bench import NOW, logscan_command, mib, run, warm  # noqa: E402
from styles import cached_log  # noqa: E402

USER_RULE = '''id = "user-loss-nan"
kind = "signal"
stage = "training"
summary = "The loss became NaN (a user's signal)."
keywords = ["loss="]
patterns = ['loss=nan\\b']

[docs]
what = "A step line whose loss is NaN."
why = "Training diverged."
example = "step 3 loss=nan"
fix = "Lower the learning rate."

[tests]
fire = ["step 3 loss=nan"]
quiet = ["step 3 loss=2.1"]
'''
CASES = ("plain", "user-progress", "user-loss-keyword")


def case_args(case: str, rules_dir: Path) -> list[str]:
    if case == "user-progress":
        return ["--progress-pattern", "loss="]
    if case == "user-loss-keyword":
        return ["--rules", str(rules_dir)]
    return []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--style", default="rank-warnings,adversarial,keyword-steps")
    parser.add_argument("--sizes", default="256M,1G")
    parser.add_argument("--case", default="plain", help=f"comma separated: {', '.join(CASES)}")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rules_dir = Path(tmp)
        (rules_dir / "user-loss-nan.toml").write_text(USER_RULE)
        print("| style | case | log | logscan | peak RSS | tree PSS |")
        print("|---|---|--:|--:|--:|--:|")
        for style in args.style.split(","):
            for case in args.case.split(","):
                for size_text in args.sizes.split(","):
                    size = parse_size(size_text)
                    log = cached_log(style, size, args.out)
                    warm(log)
                    command = [*logscan_command(), "scan", str(log), "--now", NOW,
                               *case_args(case, rules_dir)]
                    runs = [run(command) for _ in range(args.repeat)]
                    wall = statistics.median(r["wall"] for r in runs)
                    print(f"| {style} | {case} | {size >> 20} MiB | {wall:.2f} s | "
                          f"{mib(max(r['rss'] for r in runs))} | "
                          f"{mib(max(r['tree_rss'] for r in runs))} |", flush=True)


if __name__ == "__main__":
    main()
