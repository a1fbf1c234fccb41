"""Where each Worker and process got, and when: the stage marks the timeline views draw
(logscan.render.timeline, the HTML report), taken from the job model's events."""

from __future__ import annotations

from logscan.diagnosis import STAGES, Mark, WorkerSummary
from logscan.model import Job
from logscan.rule_ids import SIGTERM_RECEIVED, TORCHRUN_STARTED, WAITING_EVIDENCE

RANK_WAITING = tuple(s for s in WAITING_EVIDENCE if s != SIGTERM_RECEIVED)


def mark(stage: str, where) -> Mark | None:
    if where is None:
        return None
    return Mark(stage, where.file, where.line, where.text,
                where.time.isoformat() if where.time else None)


def _position(worker, where) -> tuple[int, int]:
    order = {name: i for i, name in enumerate(worker.files)}
    return order.get(where.file, len(order)), where.line


def worker_stages(job: Job, w) -> tuple[Mark, ...]:
    """One mark per stage the Worker reached, each on the first line that shows it."""
    by_line = lambda items: sorted(items, key=lambda where: _position(w, where))  # noqa: E731
    own_envs = [e.where for e in w.own_envs]
    progress = by_line(p.where for p in w.progress)
    failures = job.failures_of(w)
    failure = min(failures, key=lambda f: (f.cascade, _position(w, f.where)), default=None)
    found = {
        "launched": w.launch.where if w.launch else None,
        "torchrun started": next(iter(by_line(h.where for h in w.hits if h.rule_id == TORCHRUN_STARTED)), None),
        "env printed": next(iter(by_line(own_envs)), None),
        "first batch": progress[0] if progress else None,
        "last progress": progress[-1] if len(progress) > 1 else None,
        "failure": failure.where if failure else None,
        "end": w.last_line,
    }
    marks = [mark(stage, found[stage]) for stage in STAGES if found[stage] is not None]
    return tuple(sorted(marks, key=lambda m: (_position(w, m), STAGES.index(m.stage))))


def _rank_lines(w, rank: int):
    """A rank's own lines: its env print, its progress, its exceptions and what it said while
    waiting on others (torchrun's report about it is torchrun's, not the rank's)."""
    yield from (e.where for e in w.envs if e.rank == rank)
    own = [p.where for p in w.progress] + [x.where for x in w.exceptions if not x.agent] + \
        [h.where for h in w.hits if h.rule_id in RANK_WAITING]
    yield from (where for where in own if w.global_rank(where) == rank)


def process_stages(w, env, failure) -> tuple[Mark, ...]:
    progress = sorted((p.where for p in w.progress if w.global_rank(p.where) == env.rank),
                      key=lambda where: _position(w, where))
    marks = [mark("env printed", env.where),
             mark("first batch", progress[0]) if progress else None,
             mark("last progress", progress[-1]) if len(progress) > 1 else None,
             mark("failure", failure.where) if failure else None]
    return tuple(sorted((m for m in marks if m), key=lambda m: _position(w, m)))


def process_last_line(w, rank: int) -> Mark | None:
    lines = list(_rank_lines(w, rank))
    return mark("last line", max(lines, key=lambda where: _position(w, where))) if lines else None


def time_axis(workers: tuple[WorkerSummary, ...]) -> str:
    """"time" when every Worker's first and last marks carry times, so Workers can be drawn
    against one clock; "order" otherwise."""
    timed = [w.stages[0].time and w.stages[-1].time for w in workers if w.stages]
    return "time" if timed and all(timed) else "order"
