"""Which runs of a sweep are the same job run again: a job series, and each run's place in it.

Platforms keep a job's runs side by side: `train-llama/run-40`, `train-llama/run-41` (a Slurm job
name then its job ids, an MLflow experiment then its runs, a Kubernetes Job's name then its
attempts). A sweep's run directories group into series in one of three ways (`--series`):

- `parent` (the default): the run directories under one parent directory, below the swept DIR,
  are one series. Runs directly in DIR are in none: DIR is a platform's whole output, not a job.
- `name`: the run directory's name without its last number, under its parent, names the series:
  `outputs/train-llama-40` and `outputs/train-llama-41` are one (for flat layouts); a name without
  a number is a series of its own.
- `none`: no series; no run is compared with earlier runs.

Runs are ordered by their directory names with numbers compared as numbers (`run-9` before
`run-10`; dated names in date order): "earlier" means earlier in that order, whatever order the
sweep met them in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class SeriesMode(StrEnum):
    PARENT = "parent"
    NAME = "name"
    NONE = "none"


DEFAULT_SERIES_MODE = SeriesMode.PARENT

_LAST_NUMBER = re.compile(r"^(.*?)(\d+)(\D*)$")
_NUMBER = re.compile(r"\d+")
# A run directory named `run-41` is run 41; any other name is its own id.
_RUN_WORD = re.compile(r"(?i)^run[-_.]?(?=.)")
# Digits padded to this width order as numbers in SQLite's text order.
_ORDER_DIGITS = 20


@dataclass(frozen=True)
class RunPlace:
    series: str      # the series' key: relative to the swept DIR, as text
    run: str         # the run's id as a reason shows it (`41` for `run-41`)
    order: str       # sorts like the run directories' names, numbers as numbers


def run_order(name: str) -> str:
    """`name` with every number padded, so that text order is the names' natural order."""
    return _NUMBER.sub(lambda m: m.group().rjust(_ORDER_DIGITS, "0"), _text(name))


def run_id(name: str) -> str:
    return _RUN_WORD.sub("", _text(name))


def _text(name: str) -> str:
    """A name as text the state can hold: bytes that are not UTF-8 (a name anyone can give)
    written as escapes."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def place_of(root: str, rel: str, mode: SeriesMode) -> RunPlace | None:
    """The series a run directory (relative to the swept DIR `root`) belongs to, or None."""
    if mode == SeriesMode.NONE or not rel:
        return None
    parent, _, name = rel.rpartition("/")
    if mode == SeriesMode.PARENT:
        if not parent:
            return None
        series = parent
    else:
        numbered = _LAST_NUMBER.match(name)
        series = f"{parent}/{numbered[1]}#{numbered[3]}" if numbered else f"{parent}/{name}"
    return RunPlace(_text(f"{root}\0{series}"), run_id(name), run_order(name))
