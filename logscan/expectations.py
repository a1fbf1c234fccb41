"""What a gate (`logscan check`) asks the logs to show: the Expectations one run carries.

Plain data, validated by `Settings.resolve` (the flags `--expect-workers`, ... and the
`[tool.logscan.check]` table, whose keys are the flag names without `--`). The checks that hold the
job model to them are `logscan.findings.expectations`, each under its own catalogue id
(`rules/expect-*.toml`, role = "expectation").
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import timedelta


@dataclass(frozen=True)
class Expectations:
    workers: int | None = None                       # --expect-workers N
    gpus_per_node: int | None = None                 # --expect-gpus-per-node G
    world_size: int | None = None                    # --expect-world-size W
    first_batch: bool = False                        # --expect-first-batch
    finished: bool = False                           # --expect-finished
    max_time_to_first_batch: timedelta | None = None  # --max-time-to-first-batch DURATION
    max_warnings: int | None = None                  # --max-warnings N

    @property
    def any(self) -> bool:
        return any(getattr(self, f.name) not in (None, False) for f in fields(self))


# Expectations field → its flag; a `[tool.logscan.check]` key is the flag without `--`.
EXPECTATION_FLAGS = {
    "workers": "--expect-workers",
    "gpus_per_node": "--expect-gpus-per-node",
    "world_size": "--expect-world-size",
    "first_batch": "--expect-first-batch",
    "finished": "--expect-finished",
    "max_time_to_first_batch": "--max-time-to-first-batch",
    "max_warnings": "--max-warnings",
}
COUNTS = ("workers", "gpus_per_node", "world_size")   # at least 1
SWITCHES = ("first_batch", "finished")


def format_duration(value: timedelta) -> str:
    seconds = int(value.total_seconds())
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size:
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    return "".join(parts) or "0s"
