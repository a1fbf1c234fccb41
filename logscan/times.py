"""The one value type of a time in logscan: a `datetime`, or a YearlessTime where the line's
header gave no year (logscan.scan.clock reads them, and gives them the job's year where a full
timestamp elsewhere in the job tells it). Every stage and every report reads times as these
values; text is made of them only where a report writes them."""

from __future__ import annotations

from datetime import datetime


class YearlessTime(datetime):
    """A time whose year nobody printed: the year it holds only orders it among the job's other
    year-less times, and is never shown."""

    def isoformat(self, sep: str = "T", timespec: str = "auto") -> str:
        return "--" + super().isoformat(sep, timespec)[5:]

    def __str__(self) -> str:
        return self.isoformat(" ")

    def __repr__(self) -> str:
        return f"YearlessTime({self.isoformat()!r})"

    def strftime(self, fmt: str) -> str:
        return super().strftime(fmt.replace("%Y-", "--").replace("%Y", ""))
