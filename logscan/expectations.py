"""What a gate (`logscan check`) asks the logs to show: the Expectations one run carries.

Each expectation is declared once, in EXPECTATIONS: its field, kind, flag, help and the catalogue
id of the check that holds the job model to it (`rules/expect-*.toml`, role = "expectation",
implemented in `logscan.findings.expectations`). The Expectations dataclass, the `check` command's
options, the `[tool.logscan.check]` keys (the flags without `--`) and the validation in
`Settings.resolve` are all made from that table.
"""

from __future__ import annotations

from dataclasses import dataclass, make_dataclass
from datetime import timedelta
from enum import Enum

from logscan import rule_ids as ids


class Kind(Enum):
    """What an expectation's value is: (its type in Expectations, the value it has when not
    asked for, the least whole number it may be)."""

    COUNT = (int | None, None, 1)
    LIMIT = (int | None, None, 0)
    SWITCH = (bool, False, None)
    DURATION = (timedelta | None, None, None)  # such as 10m

    def __init__(self, type_, unset, least) -> None:
        self.type = type_
        self.unset = unset
        self.least = least


@dataclass(frozen=True)
class Expectation:
    field: str        # of Expectations
    kind: Kind
    flag: str         # of `logscan check`; its [tool.logscan.check] key is the flag without `--`
    metavar: str | None
    help: str
    rule: str         # the catalogue id of its check

    @property
    def key(self) -> str:
        return self.flag.removeprefix("--")

    def asked(self, value) -> str:
        """The flag and value as a user types them: `--expect-workers 2`, `--max-time-to-first-batch 5m`."""
        if self.kind is Kind.SWITCH:
            return self.flag
        if self.kind is Kind.DURATION:
            return f"{self.flag} {_duration_text(value)}"
        return f"{self.flag} {value}"


def _duration_text(value: timedelta) -> str:
    seconds = int(value.total_seconds())
    parts = [(seconds // 86400, "d"), (seconds % 86400 // 3600, "h"), (seconds % 3600 // 60, "m"),
             (seconds % 60, "s")]
    return "".join(f"{n}{unit}" for n, unit in parts if n) or "0s"


EXPECTATIONS = (
    Expectation("workers", Kind.COUNT, "--expect-workers", "N",
                "The logs show N Workers (launch lines, nnodes=N).", ids.EXPECT_WORKERS),
    Expectation("gpus_per_node", Kind.COUNT, "--expect-gpus-per-node", "G",
                "Every launch line says gpus_per_node=G.", ids.EXPECT_GPUS_PER_NODE),
    Expectation("world_size", Kind.COUNT, "--expect-world-size", "W",
                "W processes in all, each printed WORLD_SIZE=W.", ids.EXPECT_WORLD_SIZE),
    Expectation("first_batch", Kind.SWITCH, "--expect-first-batch", None,
                "Every Worker (so every rank) got past its first batch.", ids.EXPECT_FIRST_BATCH),
    Expectation("finished", Kind.SWITCH, "--expect-finished", None,
                "The run ended normally: progress at its total, or an end line.", ids.EXPECT_FINISHED),
    Expectation("max_time_to_first_batch", Kind.DURATION, "--max-time-to-first-batch", "DURATION",
                "Each Worker's first batch within DURATION of its launch line (needs timestamps).",
                ids.EXPECT_TIME_TO_FIRST_BATCH),
    Expectation("max_warnings", Kind.LIMIT, "--max-warnings", "N",
                "At most N warning findings.", ids.EXPECT_MAX_WARNINGS),
)


def asked_for(expect) -> list[Expectation]:
    """The expectations a run's Expectations ask for."""
    return [e for e in EXPECTATIONS if getattr(expect, e.field) != e.kind.unset]


Expectations = make_dataclass(
    "Expectations", [(e.field, e.kind.type, e.kind.unset) for e in EXPECTATIONS], frozen=True,
    namespace={"any": property(lambda self: bool(asked_for(self))),
               "__doc__": "The expectations of one run, a field each (EXPECTATIONS)."})
Expectations.__module__ = __name__  # so that it pickles, as a class written here would
