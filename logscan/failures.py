"""Per-process failure facts: who failed, how, when, and whether it was only a consequence.

A failure is a cascade when a process suffered it because another one failed first: it lost a
peer, waited on a collective or the store until a timeout, or was SIGTERMed by torchrun or the
platform. Catalogue signals flagged `cascade = true` say which lines mean that; signals with a
`cause` name a crash's cause class, and signals with a `traceback_stage` place a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from logscan.events import PythonException, Where
from logscan.model import Job, Worker

SIGTERM = -15
SIGKILL = -9


@dataclass(frozen=True)
class Failure:
    worker: Worker
    rank: int | None
    where: Where
    summary: str            # `ExcType: detail`, or `exit code N`
    cascade: bool
    cause: str | None = None
    exitcode: int | None = None
    time: datetime | None = None
    after_progress: bool = False
    signals: tuple[str, ...] = ()
    more: tuple[Where, ...] = ()   # further lines telling the same failure

    @property
    def node_rank(self) -> int | None:
        return self.worker.node_rank


def _cause(job: Job, exc: PythonException) -> str:
    causes = job.catalogue.signals_with_cause()
    found = {causes[s] for s in (*exc.line_signals, *exc.traceback_signals) if s in causes}
    return next((c for c in job.catalogue.cause_order if c in found), "other")


def _loose_cause(job: Job, worker: Worker) -> str:
    """The cause class of an exit no traceback tells: what the Worker's own lines say (argparse
    rejecting an argument prints no traceback)."""
    causes = job.catalogue.signals_with_cause()
    found = {causes[h.rule_id] for h in worker.hits if h.rule_id in causes}
    return next((c for c in job.catalogue.cause_order if c in found), "other")


def _merge(job: Job, failure: Failure, exc: PythonException) -> Failure:
    """Fold a further exception line of the same process into its failure.

    The last line names what finally killed the process; causes seen anywhere count.
    """
    if failure.cascade:
        return failure
    causes = job.catalogue.signals_with_cause()
    signals = (*failure.signals, *exc.line_signals, *exc.traceback_signals)
    found = {causes[s] for s in signals if s in causes}
    cause = next((c for c in job.catalogue.cause_order if c in found), failure.cause)
    summary = f"{exc.exc_type}: {exc.detail}" if exc.detail else exc.exc_type
    return replace(failure, summary=summary, cause=cause, more=(*failure.more, exc.where),
                   signals=tuple(dict.fromkeys(signals)))


def _progress_after(worker: Worker, where: Where) -> bool:
    return any(p.where.file == where.file and p.where.line > where.line for p in worker.progress)


def _exit_time(worker: Worker, rank: int | None) -> datetime | None:
    return next((e.time for e in worker.exits if e.rank == rank and e.time), None)


def _after_progress(job: Job, worker: Worker, where: Where, signals=()) -> bool:
    """Did this line come after training had started?"""
    if job.catalogue.signals_at("init") & set(signals):
        return False  # raised while joining the process group or building DDP
    if job.catalogue.signals_at("training") & set(signals):
        return True  # raised in the backward pass or an optimizer step
    own = [p.where for p in worker.progress if p.where.file == where.file]
    # torchrun --tee (`[default1]:` prefixes) copies each process's stdout and stderr by
    # separate threads, so line order says nothing of which came first.
    if own and where.local_rank is None:
        return min(p.line for p in own) < where.line
    # DDP synchronises every step: once any rank logged progress, every process had passed
    # its first batch; a later failure elsewhere is a failure during training.
    return any(w.progress for w in job.workers)


def process_failures(job: Job) -> list[Failure]:
    """Computed once, by build_job (`Job.failures`); rules read that."""
    return _process_failures(job)


def _exit_rank(worker: Worker, exit_) -> int | None:
    if exit_.rank is not None:
        return exit_.rank
    if exit_.local_rank is not None and worker.rank_offset is not None:
        return worker.rank_offset + exit_.local_rank
    return worker.global_rank(exit_.where)


def _first_observed(worker: Worker):
    """torchrun's "first observed failure" of this node, when it really came first. torchrun
    polls its processes (every 5 s in older releases): processes found dead at one poll share a
    time, and then the one it names is only the lowest local rank, often a victim."""
    failed = [e for e in worker.exits if (e.exitcode or 0) > 0]
    named = next((e for e in failed if e.root_cause), None)
    if named is None or len({e.local_rank if e.rank is None else e.rank for e in failed}) == 1:
        return named
    others = [e for e in failed if (e.rank, e.local_rank) != (named.rank, named.local_rank)]
    if named.time is not None and all(e.time is not None and e.time > named.time for e in others):
        return named
    return None


def _process_failures(job: Job) -> list[Failure]:
    waiting = job.catalogue.cascade_signals
    out: list[Failure] = []
    for worker in job.workers:
        # torchrun's "first observed failure" on this node: unprefixed tracebacks carry no rank,
        # and the first one printed is the likeliest to be that process's.
        root_exit = _first_observed(worker)
        crashed = {_exit_rank(worker, e) for e in worker.exits if (e.exitcode or 0) > 0}
        unranked_claimed = False
        seen: set = set()
        exited_badly = any((e.exitcode or 0) > 0 for e in worker.exits)
        for exc in worker.exceptions:
            if exc.agent:
                continue
            prefixed = exc.where.rank is not None or exc.where.local_rank is not None
            if not prefixed and not exited_badly and _progress_after(worker, exc.where):
                continue  # logged and survived: training went on after it
            rank = worker.global_rank(exc.where)
            signals = (*exc.line_signals, *(exc.traceback_signals if prefixed else ()))
            cascade = (any(s in waiting for s in signals)
                       or exc.exc_type.rsplit(".", 1)[-1] in ("SignalException", "KeyboardInterrupt"))
            if rank is None and not prefixed and not cascade and not unranked_claimed:
                if root_exit is not None:
                    rank = _exit_rank(worker, root_exit)
                elif len(crashed) == 1:
                    rank = next(iter(crashed))
                unranked_claimed = rank is not None
            if rank is not None and rank in seen:
                # One process, one failure: a later line of the same rank is the same error
                # told again (a chained exception, a DataLoader worker's original traceback).
                index = next(i for i, f in enumerate(out) if f.worker is worker and f.rank == rank)
                out[index] = _merge(job, out[index], exc)
                continue
            seen.add(rank)
            out.append(Failure(
                worker, rank, exc.where, f"{exc.exc_type}: {exc.detail}" if exc.detail else exc.exc_type,
                cascade, None if cascade else _cause(job, exc), None,
                exc.where.time or _exit_time(worker, rank),
                _after_progress(job, worker, exc.where, exc.traceback_signals),
                tuple(dict.fromkeys(signals))))
        explained = {f.rank for f in out if f.worker is worker and f.rank is not None}
        unranked = [i for i, f in enumerate(out) if f.worker is worker and f.rank is None]
        failed_exits = list(dict.fromkeys(
            _exit_rank(worker, e) for e in worker.exits if (e.exitcode or 0) > 0))
        failed_exits = [r for r in failed_exits if r not in explained]
        if len(unranked) == 1 and len(failed_exits) == 1 and failed_exits[0] is not None:
            # One traceback without a rank, one process that exited with an error: the same.
            out[unranked[0]] = replace(out[unranked[0]], rank=failed_exits[0])
        if len(unranked) >= len(failed_exits):
            explained |= set(failed_exits)  # the tracebacks already tell these failures
        told = sum(1 for f in out if f.worker is worker)
        # Ranks whose own lines say they were waiting on others (a watchdog timeout, a lost
        # peer): the abort that ends them (-6 after NCCL's watchdog) is a consequence too.
        waited = {worker.global_rank(h.where, dict(h.groups)) for h in worker.hits
                  if h.rule_id in waiting} - {None}
        for exit_ in worker.exits:
            rank = _exit_rank(worker, exit_)
            if exit_.exitcode in (None, 0) or rank in explained:
                continue
            if rank is None and (exit_.exitcode or 0) > 0 and told >= len(failed_exits):
                continue  # as many tracebacks as failed exits: they tell these failures
            explained.add(rank)
            out.append(Failure(
                worker, rank, exit_.where, f"exit code {exit_.exitcode}",
                exit_.exitcode == SIGTERM or rank in waited,
                None if exit_.exitcode < 0 else _loose_cause(job, worker),
                exit_.exitcode,
                exit_.time, _after_progress(job, worker, exit_.where)))
    return out


def is_stale(job: Job, worker: Worker) -> bool:
    last = worker.last_activity()
    return last is not None and job.now - last > job.stall_after


def job_ended(job: Job, worker: Worker) -> bool:
    """Something says this Worker's run is over: a platform status or torchrun's summary."""
    return job.job_status in ("succeeded", "failed") or bool(worker.exits)


def awaited_ranks(job: Job) -> set[int]:
    """Ranks that others reported waiting for (a store key or a barrier naming them)."""
    ranks = set()
    for worker in job.workers:
        for hit in worker.hits:
            peer = hit.group("peer_rank")
            if peer is not None and peer.isdigit():
                ranks.add(int(peer))
    return ranks
