"""Stragglers that no timeout line names, found by comparing the ranks with each other.

A stall the platform ended before any collective timeout leaves no error at all: every log just
stops. A rank that left training early exits 0, and torchrun reports only the processes that
failed. In both the one the others waited for is the one that differs from its peers: the rank
whose last line is neither the loop's nor the start-up's (or, of several such lines, the one far
older than the others), the one rank missing from failure reports in which every other rank lost
its peers.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta

from logscan.catalogue import Group
from logscan.diagnosis import Where
from logscan.diagnosis import format_duration
from logscan.findings.base import finding, hits, plural
from logscan.limits import STALL_RHYTHM_FACTOR, STALL_RHYTHM_FLOOR, STOP_SILENCE, STOP_SILENCE_FACTOR
from logscan.model import training
from logscan.findings.hangs import rank_by_elimination
from logscan.model.job import Job, Worker
from logscan.rule_ids import DEATH_SIGNAL_RECEIVED, SIBLING_TERMINATED, TORCHRUN_STARTED
from logscan.scan.prefixes import strip_prefixes
from logscan.vocabulary import JobStatus

# A script's own line naming its rank: `rank 3: waiting for lock`, `[Rank 3] ...`, `rank=3`.
# `local_rank 1` is not a global rank (no word boundary after the underscore).
_NAMES_RANK = re.compile(r"\brank\s*[:=#]?\s*(\d+)\b", re.IGNORECASE)

# Evidence a message quotes of a line: enough to recognise it.
QUOTED = 100
# The C++ source location torch's native errors start with (`[.../gloo/transport/tcp/pair.cc:553] `):
# left out of a quote, which has room only for the words.
_SOURCE_LOCATION = re.compile(r"\[[^\]\s]+:\d+\]\s*")

# The ranks of a DDP job log within a step of each other; a last line older than the others' by
# far more than a step, yet less than the default process-group timeout (30 min) during which
# the waiting ranks still log, is the one that went quiet first.
FAR_OLDER = timedelta(minutes=5)


def _rhythm_end(worker: Worker) -> tuple[int, int] | None:
    """Where the lines the processes print over and over (progress) or once each at start-up
    (the launch line, env prints) last appear in the Worker's log."""
    lines = ([p.where for p in worker.progress] + [e.where for e in worker.envs]
             + [launch.where for launch in worker.launches] + [h.where for h in hits(worker, TORCHRUN_STARTED)])
    return max((worker.position(where) for where in lines), default=None)


def _frame(line: Where) -> bool:
    """A row of torchrun's banner frame (`*****`) or an empty line: no process wrote it."""
    return not strip_prefixes(line.text).body.strip(" *\r\n\t")


def _stop(worker: Worker) -> Where | None:
    """The line where the Worker's torchrun says it was signalled from outside, if it was."""
    return next((h.where for h in hits(worker, DEATH_SIGNAL_RECEIVED)), None)


def _last_line_before(worker: Worker, stop: Where | None) -> Where | None:
    """The Worker's last line, or, of a torchrun stopped from outside, its last line before the
    stop: what follows is torchrun's teardown, not its processes' doing."""
    if stop is None:
        return worker.last_line
    before = [w for w in worker.tail_lines if w.file == stop.file and w.line < stop.line]
    return before[-1] if before else None


def _last_sign_of_life(job: Job, worker: Worker) -> Where | None:
    """The Worker's last line (before any stop from outside) when it is a line of its own: after
    the last progress and start-up line, and not an error (errors have rules of their own)."""
    last, end = _last_line_before(worker, _stop(worker)), _rhythm_end(worker)
    if last is None or end is None or worker.position(last) <= end or _frame(last):
        return None
    if worker.progress_fraction() == 1.0:
        return None  # its progress got to the last step: what follows is its end, not a stall
    if (last.file, last.line) in {(w.file, w.line) for w in worker.error_lines(job.catalogue)}:
        return None
    return last


def _ended_from_outside(job: Job, started: list[Worker]) -> bool:
    """The platform ended every Worker: each log just stops (no failure, no torchrun report),
    or its torchrun says it was signalled, and whatever failed there was its teardown."""
    if not started or any(not f.cascade for f in job.failures):
        return False
    if job.job_status != JobStatus.FAILED and not all(_stop(w) is not None for w in started):
        return False  # no platform status: only torchrun's own report of the signal says so
    return all(_stop(w) is not None or not (job.failures_of(w) or w.exits or _ends_on_error(job, w))
               for w in started)


def _ends_on_error(job: Job, worker: Worker) -> bool:
    """After the Worker's last progress or start-up line comes an error of its own (torchrun's crash,
    a shell's report of one): its log did not just stop."""
    end = _rhythm_end(worker)
    return any(end is None or worker.position(line) > end for line in worker.error_lines(job.catalogue))


def _far_older(odd: list[tuple[Worker, Where]]) -> tuple[Worker, Where] | None:
    """Of several Workers ending on lines of their own, the one whose last line is older than
    every other one's by far: the others went on logging (waiting, warning) after it went quiet.
    Only when every one of these lines carries a time of the same kind."""
    times = [line.time for _, line in odd]
    if None in times or len({t.tzinfo is None for t in times}) > 1:
        return None
    ordered = sorted(odd, key=lambda pair: pair[1].time)
    oldest, next_oldest = ordered[0][1].time, ordered[1][1].time
    return ordered[0] if next_oldest - oldest > FAR_OLDER else None


def _rank_of_line(worker: Worker, line: Where) -> int | None:
    """The rank a line is from: its prefix, the Worker's only process, or the one rank of the
    Worker that the line's own text names."""
    rank = worker.global_rank(line)
    if rank is not None:
        return rank
    named = {int(n) for n in _NAMES_RANK.findall(strip_prefixes(line.text).body)}
    if len(named) != 1:
        return None
    rank = named.pop()
    own = worker.ranks
    return rank if own is None or rank in own or worker.shared_file else None


def _quote(line: Where) -> str:
    return _quote_text(strip_prefixes(line.text).body)


def _quote_text(text: str) -> str:
    text = text.strip()
    return text if len(text) <= QUOTED else text[:QUOTED - 3].rstrip() + "..."


def hang_ended_from_outside(job: Job, rule):
    started = [w for w in job.workers if w.started_processes]
    if not _ended_from_outside(job, started):
        return []
    odd = [(w, line) for w in started if (line := _last_sign_of_life(job, w)) is not None]
    if len(odd) == 1 and (len(started) < 2 or _stopped_soon_after(odd[0][1], started)):
        return []  # no peer to differ from, or the stop came while it still worked: stopped-from-outside
    if len(odd) == 1:
        worker, line = odd[0]
        how = (f"its last line `{_quote(line)}` ({line.file}:{line.line}) is its last sign of life, "
               f"while the other Workers' logs stop in the loop's progress or their start-up lines, "
               f"waiting for it")
    elif len(odd) > 1 and (first := _far_older(odd)) is not None:
        worker, line = first
        how = (f"its last line `{_quote(line)}` ({line.file}:{line.line}) is older by far than the "
               f"other Workers' last lines: it went quiet first, and the others went on logging while "
               f"they waited for it")
    elif not odd:
        return _silence_ended_from_outside(job, rule, started)
    else:
        return []  # several Workers alike end on lines of their own: none stands out
    rank = _rank_of_line(worker, line)
    node_rank = job.node_of_rank(rank) if rank is not None else None
    if node_rank is None:
        node_rank = worker.node_rank
    who = f"rank {rank}" if rank is not None else f"a process on {worker.label}"
    when = "after training had started" if job.training_started else "before the first batch"
    others = [_last_line_before(w, _stop(w)) for w in started if w is not worker]
    stops = [stop for w in started if (stop := _stop(w)) is not None]
    told = " (its torchruns report the signal that ended them)" if stops else ""
    found = finding(rule, f"{who} stalled {when} and the platform ended the job before any "
                          f"timeout{told}: {how}",
                    [line, *others, *stops], node_rank=node_rank, rank=rank, worker=worker.label)
    # The stall came first, the stop only ended the wait: the finding is as old as the
    # straggler's own line, not as the stop lines cited after it.
    return [replace(found, time=line.time)]


# No line names the straggler: what would have named it.
SILENT_STALL_HINT = (
    "No line names the rank the others waited for: on the next run, dump every rank's stack when steps stop "
    "(py-spy dump --pid), or set a shorter process-group timeout, torch.distributed.monitored_barrier (gloo) "
    "or NCCL's flight recorder, so the stall names its rank before the platform's limit ends it.")


def _stopped_soon_after(line: Where, started: list[Worker]) -> bool:
    """The stop came within STOP_SILENCE of the line, by times of one kind on both: it landed
    while the process was still at work, not on a stall."""
    stops = [stop for w in started if (stop := _stop(w)) is not None and stop.time is not None]
    if line.time is None or not stops:
        return False
    first = min(stops, key=lambda stop: stop.time)
    if (first.time.tzinfo is None) != (line.time.tzinfo is None):
        return False
    return first.time - line.time <= STOP_SILENCE


def _silence_ended_from_outside(job: Job, rule, started: list[Worker]) -> list:
    """No straggler's line, but the lines say the stall came first: every torchrun reports the
    signal, and before the first of those nothing had come from any process for far longer than
    the job's own rhythm (twenty logged steps, STOP_SILENCE at least) or, before any first batch,
    for STOP_SILENCE since torchrun's start-up. The stop ended a stall; it did not cause one."""
    stops = [stop for w in started if (stop := _stop(w)) is not None]
    if len(stops) != len(started) or any(stop.time is None for stop in stops):
        return []
    first_stop = min(stops, key=lambda stop: stop.time)
    if job.training_started:
        last_step = _last_step(job)
        interval = training.step_interval(job.workers)
        if last_step is None or last_step.time is None or interval is None:
            return []
        quiet_from, allowed = last_step, max(STOP_SILENCE_FACTOR * interval, STOP_SILENCE)
        what = (f"training stalled after `{_quote(last_step)}` ({last_step.file}:{last_step.line}): steps "
                f"came {format_duration(interval)} apart")
    else:
        lines = [line for w in started if (line := _last_line_before(w, _stop(w))) is not None]
        if not lines or any(line.time is None for line in lines) or any(
                w.progress or w.envs or any(not x.agent for x in w.exceptions) for w in started):
            return []
        quiet_from, allowed = max(lines, key=lambda line: line.time), STOP_SILENCE
        what = "no process printed anything after torchrun's start-up: they stalled before the first batch"
    if (quiet_from.time.tzinfo is None) != (first_stop.time.tzinfo is None):
        return []
    silence = first_stop.time - quiet_from.time
    if silence <= allowed:
        return []
    found = finding(rule, f"{what}, then nothing for {format_duration(silence)} until the platform ended the "
                          f"job (its torchruns report the signal): the stop ended a stall; no line names the "
                          f"rank the others waited for", [quiet_from, *stops], hint=SILENT_STALL_HINT)
    return [replace(found, time=quiet_from.time)]


def _terminated_unreported(worker: Worker) -> bool:
    """torchrun sent a closing signal to a process its failure report does not list (some
    releases leave the processes they stopped out of it): that process may not have exited by
    itself. The sending lines name the signal; the report's lines only the pid."""
    sent, reported = set(), set()
    for hit in hits(worker, SIBLING_TERMINATED):
        (sent if hit.group(Group.SIGNAL) else reported).add(hit.group(Group.PID))
    return bool(sent - reported)


def _last_step(job: Job) -> Where | None:
    """The job's last progress line: the latest by time where every Worker's carries one, else
    the one that got furthest."""
    lines = [(w.last_progress.where, w.progress_fraction()) for w in job.workers if w.last_progress]
    if not lines:
        return None
    if all(where.time is not None for where, _ in lines) and len({w.time.tzinfo is None for w, _ in lines}) == 1:
        return max(lines, key=lambda line: line[0].time)[0]
    return max(lines, key=lambda line: line[1] or 0.0)[0]


def rank_left_early(job: Job, rule):
    failures = job.failures
    if not failures or any(not f.cascade or f.rank is None for f in failures):
        return []  # a process failed by itself, or a failure whose rank is unknown
    node_rank, rank, _ = rank_by_elimination(job, failures)
    if rank is None:
        return []
    worker = next((w for w in job.launched if w.ranks is not None and rank in w.ranks), None)
    # Its own torchrun outlived it and reported on its other processes without naming it, and
    # stopped none it left unnamed: it exited 0 by itself. A torchrun that logs no stop at all
    # (torch 1.9) may have stopped it unseen.
    if (worker is None or not worker.exits or _terminated_unreported(worker)
            or any(e.silent_stops for e in worker.exits)):
        return []
    # The lost peer a process raised tells more than torchrun stopping it.
    lost = next((f for f in failures if f.exitcode is None), failures[0])
    last_step = _last_step(job)
    when = (f"after the last step the logs show (`{_quote(last_step)}`)" if last_step is not None
            else "before the first batch")
    others = sorted({f.rank for f in failures})
    report = next((e.where for e in worker.exits if e.root_cause), worker.exits[0].where)
    env = next((e.where for e in worker.envs if e.rank == rank), None)
    return [finding(rule, f"rank {rank} left training early: {worker.label}'s torchrun reports the failures "
                          f"of its other processes but not rank {rank}'s, and stopped no process it leaves "
                          f"out, so rank {rank} exited 0 {when}; then {plural(others, 'rank', 'ranks')}, "
                          f"every other one, lost {'its peer' if len(others) == 1 else 'their peers'} in "
                          f"the next collective ({_quote_text(_SOURCE_LOCATION.sub('', lost.summary))})",
                    [report, lost.where, last_step, env], node_rank=node_rank, rank=rank,
                    worker=worker.label)]


def _stall_threshold(job: Job) -> timedelta:
    """How long a job that trained may be quiet: --stall-after, or sooner where its lines carry
    times, a hundred of its own steps (at least STALL_RHYTHM_FLOOR)."""
    interval = training.step_interval(job.workers)
    if interval is None:
        return job.stall_after
    return min(job.stall_after, max(STALL_RHYTHM_FACTOR * interval, STALL_RHYTHM_FLOOR))


def stall_during_training(job: Job, rule):
    """Training went on, then every log went quiet while the job was not over: nothing failed, no
    torchrun reported an end or a signal, no platform status says it ended."""
    # Only the platform's word that the job runs makes silence a stall: without it a log that stops
    # may be a job that ended, or a copy read long after (logscan.findings.hangs._silence_counts).
    if not job.training_started or job.failures or job.job_status != JobStatus.RUNNING:
        return []
    started = [w for w in job.workers if w.started_processes]
    if not started or any(_stop(w) is not None or w.exits or w.group_succeeded or w.end_of_run() or w.error_lines(job.catalogue)
                          for w in started):
        return []  # ended, or something to explain: the rules of failures and timeouts tell it
    if any(scan.truncated or scan.read_error for w in job.workers for scan in w.scans):
        return []  # a log that ends early was cut, not quiet
    moved = [t for w in started if (t := w.last_activity()) is not None]
    if not moved:
        return []
    quiet, threshold = job.now - max(moved), _stall_threshold(job)
    if quiet <= threshold:
        return []
    last_step = _last_step(job)
    since = f" since `{_quote(last_step)}` ({last_step.file}:{last_step.line})" if last_step is not None else ""
    odd = [(w, line) for w in started if (line := _last_sign_of_life(job, w)) is not None]
    rank = node_rank = None
    evidence = [last_step]
    straggler = ""
    if len(odd) == 1:
        worker, line = odd[0]
        rank = _rank_of_line(worker, line)
        node_rank = job.node_of_rank(rank) if rank is not None else worker.node_rank
        who = f"rank {rank}" if rank is not None else f"a process on {worker.label}"
        straggler = (f"; {who} is the straggler: its last line `{_quote(line)}` ({line.file}:{line.line}) comes "
                     f"after the loop's, and the others wait for it in the next collective")
        evidence = [line, last_step]
    # Only the lines' own times give the silence a report may state: a file's mtime moves with
    # every copy of the log.
    timed = all(s.last_time is not None and s.last_time.tzinfo is not None for w in started for s in w.scans)
    silence = f"no line for {format_duration(quiet)}" if timed else f"no line for more than {format_duration(threshold)}"
    found = finding(rule, f"training stopped: {silence}{since}"
                          + (f", longer than {format_duration(threshold)}" if timed else "")
                          + f" with nothing failed and the job not over{straggler}",
                    evidence, node_rank=node_rank, rank=rank)
    first = evidence[0]
    return [replace(found, time=first.time if first is not None else None)]
