"""Times a line's header gives without a year, and the year the job gives them.

glog's header, which torch's Python formatter copies since 2.3 (`W1201 19:58:00.519000 4715
torch/distributed/run.py:779] `) and torch's C++ logger prints (c10d, ProcessGroup*: `[W1129
17:56:21.458368607 socket.cpp:207] `), has a month, a day and a time, and no year. Such a time is
a YearlessTime: it orders against the job's other year-less times and is shown without a year
(ISO 8601's truncated `--MM-DD`). Once a job's files are scanned, resolve_years gives each one the
year of a full timestamp elsewhere in the job (Python logging, kubectl, a container runtime,
torchrun's failure summary), the year that puts it nearest that timestamp, so a job running over
New Year keeps its order; with none, the times stay year-less, ordered among themselves the same
way (nearest one of them).
"""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import datetime

from logscan.scan.events import EventLists
from logscan.times import YearlessTime

# A leap year: 29 February is a date in it.
PLACEHOLDER_YEAR = 2000


def yearless_time(month_day: str, clock: str, fraction: str | None = None) -> YearlessTime | None:
    """`1201`, `19:58:00`, `519000` → that time; `105` is 5 January (torch's C++ logger does not
    pad the month). None for a date no calendar has."""
    if len(month_day) not in (3, 4):
        return None
    month, day = int(month_day[:-2]), int(month_day[-2:])
    hour, minute, second = (int(part) for part in clock.split(":"))
    micro = int(fraction[:6].ljust(6, "0")) if fraction else 0
    try:
        return YearlessTime(PLACEHOLDER_YEAR, month, day, hour, minute, second, micro)
    except ValueError:
        return None


def _yearless(stamp: datetime) -> YearlessTime:
    return YearlessTime(stamp.year, stamp.month, stamp.day, stamp.hour, stamp.minute,
                        stamp.second, stamp.microsecond)


def read_time(text: str) -> datetime:
    """A time as Finding and Mark carry it (isoformat): a full one, or a YearlessTime's `--MM-DD...`."""
    if text.startswith("--"):
        return _yearless(datetime.fromisoformat(f"{PLACEHOLDER_YEAR}{text[1:]}"))
    return datetime.fromisoformat(text)


def nearest_year(stamp: YearlessTime, anchor: datetime) -> datetime | None:
    """The month, day and time of `stamp` in the year (the anchor's, or one either side) that
    puts it nearest the anchor; None when 29 February falls in none of them."""
    plain = anchor.replace(tzinfo=None)
    placed = []
    for year in (anchor.year - 1, anchor.year, anchor.year + 1):
        try:
            placed.append(datetime(year, stamp.month, stamp.day, stamp.hour, stamp.minute,
                                   stamp.second, stamp.microsecond))
        except ValueError:
            continue
    if not placed:
        return None
    return min(placed, key=lambda when: abs(when - plain))


def aligned(stamps: list[datetime]) -> list[datetime]:
    """Year-less times read back from text (each in the placeholder year) placed in the years
    nearest the first of them, so that 31 December comes before the 1 January after it."""
    anchor = next((s for s in stamps if isinstance(s, YearlessTime)), None)
    if anchor is None:
        return stamps
    out = []
    for stamp in stamps:
        if isinstance(stamp, YearlessTime):
            near = nearest_year(stamp, anchor)
            stamp = _yearless(near) if near is not None else stamp
        out.append(stamp)
    return out


# Every kind of event a scan lists (each has a `where`), read from the record so a kind added
# there has its times resolved too.
_EVENT_LISTS = tuple(f.name for f in fields(EventLists) if f.default_factory is list)


def _event_wheres(scan):
    for kind in _EVENT_LISTS:
        for event in getattr(scan, kind):
            yield event.where
    yield from scan.tail_lines
    if scan.last_line is not None:
        yield scan.last_line


def _anchor(scans) -> tuple[datetime | None, YearlessTime | None, object]:
    """(the job's first full time, preferring one of the local clock as glog's headers are;
    its first year-less time; the zone of its aware times, if it has any)."""
    aware = naive = yearless = None
    for scan in scans:
        stamps = [scan.first_time, *(where.time for where in _event_wheres(scan)),
                  *(exit_.time for exit_ in scan.exits)]
        for stamp in stamps:
            if stamp is None:
                continue
            if isinstance(stamp, YearlessTime):
                yearless = yearless or stamp
            elif stamp.tzinfo is None:
                naive = naive or stamp
            else:
                aware = aware or stamp
        if naive is not None and aware is not None and yearless is not None:
            break
    return naive or aware, yearless, aware.tzinfo if aware is not None else None


def resolve_years(scans: list) -> list:
    """The scans of one job with every year-less time given the job's year (see the module's
    docstring); scans without one are passed through as they are."""
    if not any(isinstance(scan.first_time, YearlessTime)
               or any(isinstance(where.time, YearlessTime) for where in _event_wheres(scan))
               for scan in scans):
        return scans
    full, first_yearless, zone = _anchor(scans)
    anchor = full or first_yearless

    def placed(stamp):
        if not isinstance(stamp, YearlessTime):
            return stamp
        near = nearest_year(stamp, anchor)
        if near is None:
            return None
        if full is None:
            return _yearless(near)
        # glog prints the local clock, unzoned; in a job whose other lines carry a zone (kubectl,
        # a container runtime: UTC) it is read in that zone, so that the job's times compare.
        return near.replace(tzinfo=zone)

    def moved(where):
        if where is None or not isinstance(where.time, YearlessTime):
            return where
        return replace(where, time=placed(where.time))

    def events(items):
        return [replace(e, where=moved(e.where)) if isinstance(e.where.time, YearlessTime) else e
                for e in items]

    out = []
    for scan in scans:
        changes = {kind: events(getattr(scan, kind)) for kind in _EVENT_LISTS}
        out.append(replace(scan, **changes, first_time=placed(scan.first_time),
                           last_time=placed(scan.last_time), last_line=moved(scan.last_line),
                           tail_lines=[moved(w) for w in scan.tail_lines]))
    return out
