"""Stops from outside: torchrun was signalled before anything in the job failed by itself."""

from __future__ import annotations

from logscan.catalogue import Group
from logscan.exit_signals import BY_DESCRIPTION, BY_NAME, INTERRUPTED, SIGNALS, parse_signal, signal_name
from logscan.findings.base import finding, hits, plural, when_in_training
from logscan.model.job import Job
from logscan.rule_ids import DEATH_SIGNAL_RECEIVED

SIGTERM = BY_NAME["SIGTERM"].number


def stopped_from_outside(job: Job, rule):
    if any(not f.cascade for f in job.failures):
        return []  # a process failed by itself: the signals are the platform's teardown of that
    stops = []  # (worker, signal, the line that says so), the first of each Worker
    scheduled = {}  # Worker label → why its scheduler stopped it, where a scheduler's line says so
    by_shell = set()  # Worker labels whose stop is the shell's report of its command's end (`Terminated`)
    interrupted = set()  # Worker labels whose stop is a process's KeyboardInterrupt (SIGINT)
    for worker in job.workers:
        told = hits(worker, DEATH_SIGNAL_RECEIVED)
        for hit in told:
            number = parse_signal(hit.group(Group.SIGNAL))
            if number is None and hit.group(Group.SIGNAL) is None:
                number = SIGTERM  # a scheduler's own stop (Slurm's `*** JOB … CANCELLED AT …`) sends it
                # Slurm tells one stop on several lines (the job's, each step's), not all with its reason
                why = next((h.group(Group.STOPPED_BY) for h in told if h.group(Group.SIGNAL) is None
                            and h.group(Group.STOPPED_BY)), None)
                scheduled[worker.label] = (why or "a cancel").lower()
            if number is not None:
                stops.append((worker, number, hit.where))
                if hit.group(Group.SIGNAL) in BY_DESCRIPTION:
                    by_shell.add(worker.label)
                elif hit.group(Group.SIGNAL) == INTERRUPTED:
                    interrupted.add(worker.label)
                break
    if not stops:
        return []
    worker, number, where = _first_stop(stops)
    known = SIGNALS.get(number)
    when = when_in_training(job, job.reached_first_batch(worker))
    others = [w for w, _, _ in stops if w is not worker]
    rest = [w for w in job.workers if w is not worker and w.started_processes]
    consequence = (f"; {plural([w.label for w in others], 'Worker', 'Workers')} "
                   f"{'was' if len(others) == 1 else 'were'} stopped too" if others else
                   "; the other Workers lost their peers" if rest else "")
    meaning = f": {known.meaning}" if known else ""
    if worker.label in scheduled:
        said = (f"{worker.label} was stopped by its scheduler ({scheduled[worker.label]}) {when}; "
                f"it sends {signal_name(number)}, then SIGKILL{consequence}")
    elif worker.label in interrupted:
        said = (f"a process on {worker.label} was interrupted (KeyboardInterrupt: SIGINT, as Ctrl-C sends) "
                f"{when}{meaning}{consequence}")
    else:
        # the shell tells how the command it ran ended, not what that command did
        said = (f"{worker.label}'s launch command was ended by {signal_name(number)} (signal {number}) "
                f"{when}{meaning}{consequence}" if worker.label in by_shell else
                f"{worker.label}'s torchrun received {signal_name(number)} (signal {number}) "
                f"{when}{meaning}; it stopped its processes{consequence}")
    return [finding(rule, said,
                    [where, *(w for _, _, w in stops if w is not where)],
                    node_rank=worker.node_rank, node_ranks=tuple(
                        w.node_rank for w, _, _ in stops if w.node_rank is not None),
                    worker=worker.label, hint=known.hint if known else None)]


def _first_stop(stops):
    """The stop that came first: by the lines' times when each has one; else a signal other
    than SIGTERM (which the platform also sends to tear a job down), then the lowest node."""
    if all(where.time is not None for _, _, where in stops):
        return min(stops, key=lambda stop: stop[2].time)
    return min(stops, key=lambda stop: (stop[1] == SIGTERM, stop[0].node_rank is None,
                                        stop[0].node_rank or 0))
