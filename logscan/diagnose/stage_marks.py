"""Where each Worker and process got, and when: the stage marks the timeline views draw
(logscan.render.timeline, the HTML report), taken from the job model's events."""

from __future__ import annotations

from logscan.diagnosis import Mark, WorkerSummary
from logscan.model.job import Job
from logscan.findings.rank_lines import RankLines
from logscan.rule_ids import TORCHRUN_STARTED
from logscan.vocabulary import TIMELINE, MarkStage, TimeAxis


def mark(stage: MarkStage, where) -> Mark | None:
    if where is None:
        return None
    return Mark(stage, where.file, where.line, where.text, where.time)


def worker_stages(job: Job, w) -> tuple[Mark, ...]:
    """One mark per stage the Worker reached, each on the first line that shows it."""
    position = w.position
    by_line = lambda items: sorted(items, key=position)  # noqa: E731
    own_envs = [e.where for e in w.own_envs]
    progress = by_line(p.where for p in w.progress)
    failures = job.failures_of(w)
    failure = min(failures, key=lambda f: (f.cascade, position(f.where)), default=None)
    found = {
        MarkStage.LAUNCHED: w.launch.where if w.launch else None,
        MarkStage.TORCHRUN_STARTED: next(iter(by_line(h.where for h in w.hits if h.rule_id == TORCHRUN_STARTED)),
                                         None),
        MarkStage.ENV_PRINTED: next(iter(by_line(own_envs)), None),
        MarkStage.FIRST_BATCH: progress[0] if progress else _first_step_warning(job, w),
        MarkStage.LAST_PROGRESS: progress[-1] if len(progress) > 1 else None,
        MarkStage.FAILURE: failure.where if failure else None,
        MarkStage.END: w.last_line,
    }
    marks = [mark(stage, found[stage]) for stage in TIMELINE if found[stage] is not None]
    return tuple(sorted(marks, key=lambda m: (position(m), TIMELINE.index(m.stage))))


def _first_step_warning(job: Job, w):
    """Without a progress line, the first warning of a training step of a Worker whose processes
    all got past their first batch: the line that shows it (logscan.model.training)."""
    return job.step_warnings(w).first if job.reached_first_batch(w) else None


class RankMarks(RankLines):
    """A Worker's ranks as the timeline draws them: each rank's stages and its last own line."""

    def stages(self, env, failure) -> tuple[Mark, ...]:
        progress = sorted(self.progress.get(env.rank, ()), key=self.position)
        marks = [mark(MarkStage.ENV_PRINTED, env.where),
                 mark(MarkStage.FIRST_BATCH, progress[0]) if progress else None,
                 mark(MarkStage.LAST_PROGRESS, progress[-1]) if len(progress) > 1 else None,
                 mark(MarkStage.FAILURE, failure.where) if failure else None]
        return tuple(sorted((m for m in marks if m), key=self.position))

    def last_line(self, rank: int) -> Mark | None:
        return mark(MarkStage.LAST_LINE, self.last_own_line(rank))


def time_axis(workers: tuple[WorkerSummary, ...]) -> TimeAxis:
    """TIME when every Worker's first and last marks carry times, so Workers can be drawn
    against one clock; ORDER otherwise."""
    timed = [w.stages[0].time and w.stages[-1].time for w in workers if w.stages]
    return TimeAxis.TIME if timed and all(timed) else TimeAxis.ORDER
