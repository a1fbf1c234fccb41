"""Per-process failures: who failed, how, when, and whether it was only a consequence.

A failure is a cascade when a process suffered it because another one failed first: it lost a
peer, waited on a collective or the store until a timeout, or was SIGTERMed by torchrun or the
platform. Catalogue signals flagged `cascade = true` say which lines mean that; signals with a
`cause` name a crash's cause class, and signals with a `traceback_stage` place a traceback.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from logscan.catalogue import Group
from logscan.diagnosis import OTHER_CAUSE, Where
from logscan.exit_signals import BY_NAME, STOPPED_BY_SIGNAL, signal_name, signal_of_exit
from logscan.scan.events import PythonException
from logscan.scan.lineparse import (CUT_AGENT_EXCEPTION, CUT_EXCEPTION, CUT_SPAWN_EXCEPTION, GLOO_LOGGED, HYDRA_RAISED,
                                    RAY_ACTOR_DIED, SPAWN_TERMINATING, TRAINER_RAISED)
from logscan.model.job import Job, Worker, names_process
from logscan.model.training import StepWarnings
from logscan.rule_ids import (COLLECTIVE_TIMEOUT_LINE, DEATH_SIGNAL_RECEIVED, SIBLING_TERMINATED, SLURM_STEP_TASK_FAILURE,
                              TORCHRUN_STARTED, TRAINING_LOOP_FINISHED, WORKER_GROUP_RESTART)
from logscan.vocabulary import JobStatus, RunStage

# The exit codes (Python's -N) of the signals the failure pass reads by name.
SIGTERM = -BY_NAME["SIGTERM"].number
SIGKILL = -BY_NAME["SIGKILL"].number
SIGABRT = -BY_NAME["SIGABRT"].number  # NCCL's watchdog takes a process down this way after a timeout


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
    # The local rank a launcher's report of the exit names (torchrun's `failed (exitcode: N)
    # local_rank: L`, DeepSpeed's `--local_rank=L`, mp.spawn's process index) where no global rank
    # is known: a paste without the launch shape still says which process of its node it was.
    local_rank: int | None = None
    # The Slurm task ids srun's report names for this end (`task 58`, `tasks 0-57,59-63`), and
    # the host it names: srun's tasks, not ranks (a task may be a node's torchrun).
    tasks: tuple[int, ...] = ()
    host: str | None = None
    # Inferred, not told: Slurm cancelled the step due to a task's failure and these are the
    # tasks srun did not have to terminate, so likely the one that failed first.
    likely: bool = False
    stopped_tasks: tuple[int, ...] = ()  # the tasks srun terminated, where `likely`
    code_cut: bool = False  # an exit its launcher reported, the report cut off before its code
    in_launcher: bool = False  # raised in torchrun itself (its own traceback), not in a process of its
    after_group_ended: bool = False  # ...once every process of its group had exited 0
    # The pid of the one process torchrun's SIGTERMs left out (a gap in their pids), where nothing
    # else names the failed process
    left_out_pid: int | None = None

    @property
    def node_rank(self) -> int | None:
        return self.worker.node_rank

    @property
    def error_shape(self) -> str:
        """The summary without its numbers: one error told by several processes has one shape."""
        return re.sub(r"\d+", "#", self.summary)

    @property
    def killed_by(self) -> int | None:
        """The signal that ended the process, when its exit status names one (-N, or a shell's 128 + N)."""
        return signal_of_exit(self.exitcode)


def exit_summary(exitcode: int) -> str:
    """`exit code 1`; an exit by signal says which: `SIGSEGV (exit code -11)`."""
    number = signal_of_exit(exitcode)
    return f"exit code {exitcode}" if number is None else f"{signal_name(number)} (exit code {exitcode})"


class _JobLookups:
    """What the failure pass looks up for every exception, worked out once per job: the
    catalogue's signal sets (each catalogue call walks every signal)."""

    def __init__(self, job: Job):
        catalogue = job.catalogue
        self.causes = catalogue.signals_with_cause()
        self.cause_order = catalogue.cause_order
        self.waiting = catalogue.cascade_signals
        # A process's own word that it waited and gave up (a store or collective timeout, a lost
        # peer), not torchrun's account of the end (a signal it got or sent, its exit barrier).
        self.gave_up = frozenset(s for s in self.waiting if catalogue.signals[s].stage != RunStage.EXIT)
        self.at_init = catalogue.signals_at(RunStage.INIT)
        self.at_training = catalogue.signals_at(RunStage.TRAINING)
        self.in_training = catalogue.reached(RunStage.TRAINING)
        # Lines that say why a process was killed (Slurm's OOM-kill reports): signals of the exit
        # stage with a cause. A kill leaves no traceback to carry one.
        self.kill_causes = frozenset(s.id for s in catalogue.signals.values()
                                     if s.cause and s.stage == RunStage.EXIT)
        self.training_started = job.training_started
        # The run reached its last step (`30/30`) and the platform does not say it failed: DDP
        # steps together, so a process that died before then would have stopped every rank.
        self.run_finished = job.job_status != JobStatus.FAILED and any(
            w.progress_fraction() == 1.0 for w in job.workers)
        self.job_status, self.now = job.job_status, job.now
        self.one_worker = len(job.workers) == 1
        self.informational = catalogue.informational
        # What stops torchrun itself before or in rendezvous: its own traceback then reports that
        self.agent_stops = catalogue.rendezvous_waits | catalogue.launch_failures

    def cause(self, signals, default: str | None = OTHER_CAUSE) -> str | None:
        found = {self.causes[s] for s in signals if s in self.causes}
        return next((c for c in self.cause_order if c in found), default)


class _WorkerIndex:
    """One Worker's progress lines by file and its exits' times by rank, for lookups in O(1)."""

    def __init__(self, worker: Worker, in_training: frozenset[str] = frozenset()):
        self.first_progress: dict[str, int] = {}  # file → its first progress line
        self.last_progress: dict[str, int] = {}   # file → its last progress line
        for p in worker.progress:
            file, line = p.where.file, p.where.line
            self.first_progress[file] = min(line, self.first_progress.get(file, line))
            self.last_progress[file] = max(line, self.last_progress.get(file, line))
        self.exit_times: dict = {}  # rank → the time of its first exit entry that has one
        for e in worker.exits:
            if e.time and e.rank not in self.exit_times:
                self.exit_times[e.rank] = e.time
        self.step_warnings = StepWarnings(worker, in_training)
        # file → the first line where a framework said its training loop ended (Lightning's
        # `Trainer.fit` stopped: ..., the Trainer's `Training completed`): training had run
        self.loop_finished: dict[str, int] = {}
        for h in worker.hits:
            if h.rule_id == TRAINING_LOOP_FINISHED:
                file, line = h.where.file, h.where.line
                self.loop_finished[file] = min(line, self.loop_finished.get(file, line))


def _loose_cause(lookups: _JobLookups, worker: Worker) -> str:
    """The cause class of an exit no traceback tells: what the Worker's own lines say (argparse
    rejecting an argument prints no traceback)."""
    return lookups.cause(h.rule_id for h in worker.hits)


def _kill_cause(lookups: _JobLookups, worker: Worker, exitcode: int) -> str | None:
    """Why a process killed by SIGKILL was killed, when the Worker's lines say (the scheduler's
    OOM-kill report); None for other signals and for a kill nothing explains."""
    if exitcode != SIGKILL:
        return None
    return lookups.cause((h.rule_id for h in worker.hits if h.rule_id in lookups.kill_causes), None)


def _merge(lookups: _JobLookups, failure: Failure, further: list[PythonException]) -> Failure:
    """Fold the further exception lines of the same process into its failure, all at once.

    The last line names what finally killed the process; causes seen anywhere count.
    """
    if failure.cascade or not further:
        return failure
    signals = [*failure.signals]
    for exc in further:
        signals += (*exc.line_signals, *exc.traceback_signals)
    last = further[-1]
    summary = f"{last.exc_type}: {last.detail}" if last.detail else last.exc_type
    return replace(failure, summary=summary, cause=lookups.cause(signals, failure.cause),
                   more=(*failure.more, *(exc.where for exc in further)),
                   signals=tuple(dict.fromkeys(signals)))


def _progress_after(seen: _WorkerIndex, where: Where) -> bool:
    return seen.last_progress.get(where.file, -1) > where.line


def _after_last_progress(seen: _WorkerIndex, where: Where) -> bool:
    """The line comes after its file's last progress line: after the run's end, not during it."""
    return seen.last_progress.get(where.file, where.line) < where.line


def _after_progress(lookups: _JobLookups, seen: _WorkerIndex, where: Where, signals=(),
                    rank: int | None = None) -> bool:
    """Did this line (of this rank's failure) come after training had started?"""
    if lookups.at_init & set(signals):
        return False  # raised while joining the process group or building DDP
    if lookups.at_training & set(signals):
        return True  # raised in the backward pass or an optimizer step
    if seen.step_warnings.before(where, rank):
        return True  # its own process had printed a warning of a training step
    if seen.loop_finished.get(where.file, where.line) < where.line:
        return True  # after its framework's word that the training loop ended
    first = seen.first_progress.get(where.file)
    # torchrun --tee (`[default1]:` prefixes) copies each process's stdout and stderr by
    # separate threads, so line order says nothing of which came first.
    if first is not None and where.local_rank is None:
        # (on one line, the progress is a bar the failure's record was glued behind: an error line
        # is never taken for progress)
        return first <= where.line
    # DDP synchronises every step: once any rank logged progress, every process had passed
    # its first batch; a later failure elsewhere is a failure during training.
    return lookups.training_started


# How much of an exception's detail a copy cut short must keep to be told as the whole one's copy.
CUT_COPY_KEPT = 12


def _whole_copy(exc: PythonException, excs, ends: set[tuple[str, int]]) -> PythonException:
    """An exception line cut short (the last line of its file, `ends`: a paste's end) whose text
    begins another exception line of the same log, told whole: ranks that failed alike print the
    same line, so it is that error, with what its whole line says (a lost peer, a timeout)."""
    if (exc.where.file, exc.where.line) not in ends or len(exc.detail) < CUT_COPY_KEPT:
        return exc
    whole = next((x for x in excs if x.exc_type == exc.exc_type and len(x.detail) > len(exc.detail)
                  and x.detail.startswith(exc.detail) and x.agent == exc.agent), None)
    return exc if whole is None else replace(exc, detail=whole.detail, line_signals=whole.line_signals)


def _exit_rank(worker: Worker, exit_) -> int | None:
    if exit_.rank is not None:
        return exit_.rank
    if len(exit_.tasks) == 1 and worker.tasks_are_ranks:
        return exit_.tasks[0]  # srun started this process itself: its task id is its rank
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


def process_failures(job: Job) -> list[Failure]:
    """Computed once, by build_job (`Job.failures`); rules read that."""
    lookups = _JobLookups(job)
    out: list[Failure] = []
    for worker in job.workers:
        out += _worker_failures(lookups, worker)
    return out


def earlier_attempt_failures(job: Job, worker: Worker) -> list[Failure]:
    """The failures of the attempts torchrun restarted this Worker's group from (history)."""
    if worker.earlier_attempts is None:
        return []
    earlier = copy.copy(worker)
    for kind in ("hits", "exceptions", "exits"):
        setattr(earlier, kind, getattr(worker.earlier_attempts, kind))
    return _worker_failures(_JobLookups(job), earlier)


# tracebacks the log ends inside
CUT_TRACEBACKS = (CUT_EXCEPTION, CUT_AGENT_EXCEPTION, CUT_SPAWN_EXCEPTION)
# exceptions the lines say were raised without their own line: they give way to one that has it
CUT_EXCEPTIONS = (*CUT_TRACEBACKS, HYDRA_RAISED, TRAINER_RAISED, GLOO_LOGGED)
CHILD_FAILED = "ChildFailedError"
SPAWN_FAILED = ("an error torch.multiprocessing.spawn saw in one of its processes (it terminated the others; "
                "which one failed, the lines do not say)")
EXIT_CODE_CUT = "an error exit (its launcher's report of it is cut off before the exit code)"
ROOT_ENTRY_CUT = ("an error exit (torchrun's report of its first failure, the Root Cause entry after the other "
                  "failures it lists, is cut off: which process, and how, these lines do not say)")
RAY_TASK_ERROR = "ray.exceptions.RayTaskError("
REPORT_CUT = "an error torchrun reported as ChildFailedError (its report of which process is cut off)"
SPAWN_REPORT_CUT = ("an error torch.multiprocessing.spawn reported from one of its processes (its quote of which "
                    "process, and of its traceback, is cut off)")
# The exceptions a launcher raises from its own frames when a process of its failed: torchrun's
# agent, and mp.spawn's parent in ProcessContext.join (`ProcessRaisedException` from 1.8, a plain
# `Exception` with the same message before), each quoting that process's failure below it.
_LAUNCHER_REPORTS = {CHILD_FAILED: REPORT_CUT, "ProcessRaisedException": SPAWN_REPORT_CUT, "Exception": SPAWN_REPORT_CUT}


# How recently a log moved for a traceback at its end to be one still being written, where no
# platform status says the job ended: a process writes its traceback at once, so seconds apart
# is a write in progress, and a minute is far beyond one.
STILL_WRITING = timedelta(minutes=1)


def _may_still_be_writing(lookups: _JobLookups, worker: Worker) -> bool:
    """The Worker's log may be in the middle of a write: the job runs, or no status says it ended
    and its last line's own time is within STILL_WRITING of now (a live job read by a sweep or a
    watch). A file's modification time is not asked: a paste saved a moment ago is not live."""
    if lookups.job_status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
        return False
    if lookups.job_status == JobStatus.RUNNING:
        return True
    times = [scan.last_time for scan in worker.scans if scan.last_time is not None and scan.last_time.tzinfo]
    return bool(times) and lookups.now - max(times) < STILL_WRITING


# How many lines above a traceback's header c10d's own log of the error it raises may stand.
LOGGED_BEFORE_RAISE = 2


def _raised_for_logged_wait(lookups: _JobLookups, worker: Worker, header: Where) -> bool:
    """A traceback the log ends inside, right under c10d's own log of a wait that gave up (its C++
    logs `[E socket.cpp:860] ... has timed out after 1800s while trying to connect to (host, port)`,
    then throws): the line above says what the cut one would have."""
    return any(h.rule_id in lookups.gave_up and h.where.file == header.file
               and 0 < header.line - h.where.line <= LOGGED_BEFORE_RAISE for h in worker.hits)


# How far below a Python exception line std::terminate's `what():` may stand and be the same
# process's end: `terminate called after throwing an instance of '...'` comes between.
TERMINATE_AFTER = 3


def _terminate_after(previous: Failure, exc, rank: int | None) -> bool:
    """`exc` is std::terminate's `what():` line just below the exception `previous` told, of the
    same process as far as the lines tell."""
    where = exc.where
    return (previous.exitcode is None and previous.rank == rank and previous.where.file == where.file
            and 0 < where.line - previous.where.line <= TERMINATE_AFTER
            and "what():" in where.text)


# A Ray worker's death as its raylet, its actor's caller and the actor's death cause tell it.
RAY_DEATHS = frozenset({RAY_ACTOR_DIED, "ray.exceptions.WorkerCrashedError"})


def _ray_reraise(previous: Failure, exc, rank: int | None) -> bool:
    """Ray re-raises a task's error in its caller as `RayTaskError(Cause)` again (a trainer actor
    around its workers, the driver around the trainer): the same cause class right after is one
    failure told at each hop; the last hop printed is the task where it was raised. A worker's
    death told by the raylet, by the actor's ActorDiedError and by its cause on a line of its own
    is one failure too."""
    if previous.rank != rank or previous.exitcode is not None or previous.where.file != exc.where.file:
        return False
    told = previous.summary.split(":", 1)[0]
    return (exc.exc_type.startswith(RAY_TASK_ERROR) and told == exc.exc_type) or (
        exc.exc_type in RAY_DEATHS and told in RAY_DEATHS)


def _signalled_before(worker: Worker, where: Where) -> bool:
    """torchrun or the scheduler got a signal from outside before this line."""
    at = worker.position(where)
    return any(h.rule_id == DEATH_SIGNAL_RECEIVED and worker.position(h.where) < at for h in worker.hits)


def _distinct_exits(worker: Worker):
    """The Worker's process exits, each process once: torchrun's `failed (exitcode: N)
    local_rank: L` line and its summary's row for the same process are one exit, told by the
    line that came first with the global rank the row names."""
    # An exit that names no process, beside torchrun's reports of its own processes or from a
    # torchrun that never started any, is a launcher above torchrun (Slurm's srun) telling
    # torchrun's own end: not one more process.
    exits = worker.exits
    # (torchrun's Root Cause entry cut off before it names its process is still torchrun's own)
    named = [e for e in exits if names_process(e) or (e.root_cause and e.exitcode_cut) or e.of_launcher]
    if named or (worker.ran_torchrun and not worker.started_processes):
        exits = named
    # A process's own report of its death by a signal (faulthandler's, a native signal handler's)
    # names no process; its launcher's report of the same exit code names it: one exit, told twice.
    launcher_told = {e.exitcode for e in exits if e.rank is not None or e.local_rank is not None}
    # torchrun's own death told twice (its faulthandler stack, the shell's report of its command): once
    own_ends = [e for e in exits if e.of_launcher]
    exits = [e for e in exits if not e.of_launcher or e is next(o for o in own_ends if o.exitcode == e.exitcode)]
    exits = [e for e in exits if not (e.rank is None and e.local_rank is None and e.training_process
                                      and not e.tasks and e.exitcode in launcher_told)]
    rows = {}
    for e in exits:
        if e.rank is not None:
            rows.setdefault((e.local_rank, e.exitcode), e)
    told = {(e.local_rank, e.exitcode) for e in exits if e.rank is None} & rows.keys()
    out = []
    for e in exits:
        key = (e.local_rank, e.exitcode)
        if key not in told:
            out.append(e)
        elif e.rank is None:
            row = rows[key]
            out.append(replace(e, rank=row.rank, host=e.host or row.host, time=e.time or row.time,
                               root_cause=e.root_cause or row.root_cause))
        elif e is not rows[key]:
            out.append(e)  # a further row for the same local rank (another attempt's)
    return out


def _worker_failures(lookups: _JobLookups, worker: Worker) -> list[Failure]:
    """One Worker's failures: every cost here is linear in its events."""
    exits = _distinct_exits(worker)
    waiting = lookups.waiting
    seen_lines = _WorkerIndex(worker, lookups.in_training)
    out: list[Failure] = []
    # torchrun's "first observed failure" on this node: unprefixed tracebacks carry no rank,
    # and the first one printed is the likeliest to be that process's.
    root_exit = _first_observed(worker)
    crashed = {_exit_rank(worker, e) for e in exits if (e.exitcode or 0) > 0}
    unranked_claimed = False
    index_of: dict[int | None, int] = {}     # rank → its failure's index in `out`
    further: dict[int, list[PythonException]] = {}  # index → later lines of the same failure
    exited_badly = any((e.exitcode or 0) > 0 for e in exits)
    # A launcher's report of a process's end raised as an exception (mp.spawn's
    # ProcessExitedException, DeepSpeed's CalledProcessError) is that exit, not code that raised.
    exit_lines = {(e.where.file, e.where.line) for e in worker.exits}
    # A process's own traceback tells its failure; the summary's quote of it only adds to it.
    ends = {(s.last_line.file, s.last_line.line) for s in worker.scans if s.last_line is not None}
    for exc in sorted(worker.exceptions, key=lambda x: x.quoted):
        exc = _whole_copy(exc, worker.exceptions, ends)
        reported = _LAUNCHER_REPORTS.get(exc.exc_type.rsplit(".", 1)[-1]) if exc.agent else None
        if reported is not None and not exits and not any(not x.agent for x in worker.exceptions):
            # a launcher's report that a process failed, with the quote of that process's own
            # failure cut off: a failure the lines show, whose process and exit they do not
            out.append(Failure(worker, None, exc.where, reported, False, OTHER_CAUSE, None, exc.where.time,
                               _after_progress(lookups, seen_lines, exc.where)))
            continue
        if exc.agent or (exc.where.file, exc.where.line) in exit_lines:
            continue
        if exc.exc_type in (CUT_AGENT_EXCEPTION, CUT_SPAWN_EXCEPTION) and (
                any(e.exitcode not in (None, 0) for e in exits)
                or any(h.rule_id in lookups.agent_stops for h in worker.hits) or _spawn_terminated(worker)):
            continue  # a launcher's own traceback after a process of its failed, or after its rendezvous
            # failed: its report of that
        if exc.exc_type in CUT_EXCEPTIONS and (_may_still_be_writing(lookups, worker) or any(
                x.exc_type not in CUT_EXCEPTIONS and not x.agent for x in worker.exceptions)
                or (exc.exc_type in CUT_TRACEBACKS and _raised_for_logged_wait(lookups, worker, exc.where))):
            continue  # a traceback being written, or one beside exceptions whose lines say what they were
        prefixed = (exc.where.rank is not None or exc.where.local_rank is not None
                    or (exc.where.task is not None and worker.tasks_are_ranks))
        if not prefixed and not exited_badly and (
                _progress_after(seen_lines, exc.where)
                or lookups.run_finished and not _after_last_progress(seen_lines, exc.where)):
            continue  # logged and survived: training went on after it
        rank = worker.global_rank(exc.where)
        # an unprefixed traceback's frames may be another process's, interleaved; its set-up frames
        # (init_process_group, DDP's constructor) still place when it was raised
        signals = (*exc.line_signals, *(exc.traceback_signals if prefixed else
                                        (s for s in exc.traceback_signals if s in lookups.at_init)))
        cascade = (any(s in waiting for s in signals)
                   or exc.exc_type.rsplit(".", 1)[-1] in STOPPED_BY_SIGNAL
                   # a traceback the log ends inside, after a signal from outside reached torchrun:
                   # what it would have named is most likely that signal's (KeyboardInterrupt)
                   or (exc.exc_type in CUT_EXCEPTIONS and _signalled_before(worker, exc.where)))
        if rank is None and not prefixed and not cascade and not unranked_claimed:
            if root_exit is not None:
                rank = _exit_rank(worker, root_exit)
            elif len(crashed) == 1:
                rank = next(iter(crashed))
            unranked_claimed = rank is not None
        if out and (_terminate_after(out[-1], exc, rank) or _ray_reraise(out[-1], exc, rank)):
            # std::terminate's `what():` right after a Python exception of the same process: a C++
            # destructor failing while that exception unwound it, one failure told twice
            further.setdefault(len(out) - 1, []).append(exc)
            continue
        if rank is not None and rank in index_of:
            # One process, one failure: a later line of the same rank is the same error
            # told again (a chained exception, a DataLoader worker's original traceback).
            further.setdefault(index_of[rank], []).append(exc)
            continue
        index_of.setdefault(rank, len(out))
        out.append(Failure(
            worker, rank, exc.where, f"{exc.exc_type}: {exc.detail}" if exc.detail else exc.exc_type,
            cascade, None if cascade else lookups.cause((*exc.line_signals, *exc.traceback_signals)),
            None, exc.where.time or seen_lines.exit_times.get(rank),
            _after_progress(lookups, seen_lines, exc.where, exc.traceback_signals, rank),
            tuple(dict.fromkeys(signals)), local_rank=exc.where.local_rank if rank is None else None,
            in_launcher=exc.exc_type == CUT_AGENT_EXCEPTION))
    for index, excs in further.items():
        out[index] = _merge(lookups, out[index], excs)
    explained = {f.rank for f in out if f.rank is not None}
    unranked = [i for i, f in enumerate(out) if f.rank is None]
    failed_exits = list(dict.fromkeys(
        _exit_rank(worker, e) for e in exits if (e.exitcode or 0) > 0))
    failed_exits = [r for r in failed_exits if r not in explained]
    if len(unranked) == 1 and len(failed_exits) == 1 and failed_exits[0] is not None:
        # One traceback without a rank, one process that exited with an error: the same.
        out[unranked[0]] = replace(out[unranked[0]], rank=failed_exits[0])
    elif len(unranked) == 1 and failed_exits == [None] and out[unranked[0]].local_rank is None:
        # ...its global rank unknown (no launch shape), its local rank told by its launcher
        local = {e.local_rank for e in exits if (e.exitcode or 0) > 0 and _exit_rank(worker, e) is None}
        if len(local) == 1 and None not in local:
            out[unranked[0]] = replace(out[unranked[0]], local_rank=local.pop())
    elif (len(unranked) == len(failed_exits) > 1 and None not in failed_exits
          and all(out[i].cascade for i in unranked)):
        # As many rank-less tracebacks as failed processes, every one of them a wait that gave
        # up: which is whose does not matter, that each of these ranks waited does.
        for i, rank in zip(unranked, sorted(failed_exits)):
            out[i] = replace(out[i], rank=rank)
    elif unranked and len(out) > 1 and len({f.error_shape for f in out}) == 1:
        # Every process of the Worker told one error (argparse's exit, a store wait that gave up),
        # and its launcher reported as many processes not yet told that failed or that it
        # terminated as they failed: which is whose does not matter, that each of them failed so does.
        # (A process killed by another signal told nothing.)
        rest = sorted({_exit_rank(worker, e) for e in exits
                       if (e.exitcode or 0) > 0 or e.exitcode == SIGTERM} - explained - {None})
        if len(rest) == len(unranked):
            for i, rank in zip(unranked, rest):
                out[i] = replace(out[i], rank=rank)
            explained |= set(rest)
            failed_exits = []
    if len(unranked) >= len(failed_exits):
        explained |= set(failed_exits)  # the tracebacks already tell these failures
    told = len(out)
    # Ranks whose own lines say they were waiting on others (a watchdog timeout, a lost
    # peer): the abort that ends them (-6 after NCCL's watchdog) is a consequence too.
    waits = [h for h in worker.hits if h.rule_id in waiting]
    waited = {worker.global_rank(h.where, dict(h.groups)) for h in waits} - {None}
    # No traceback of this Worker could be read (its processes' tracebacks interleaved into one
    # another) and its only error lines say its processes waited and gave up: its failed exits are
    # those waits, whichever rank each line was.
    only_waits = not told and any(h.rule_id in lookups.gave_up for h in waits) and not any(
        h.rule_id in lookups.causes for h in worker.hits)
    # A rank-less abort on a Worker where a collective timed out: the watchdog's abort, whose rank
    # the logs do not tie to it (a pasted excerpt has no launch line to count ranks from).
    watchdog_fired = any(h.rule_id == COLLECTIVE_TIMEOUT_LINE for h in worker.hits)
    # Where the scheduler stopped the job (Slurm's `*** JOB … CANCELLED AT … ***`, a time limit, a
    # requeue, a user's cancel): the ends srun reports after it are the tasks that stop brought.
    scheduler_stop = min((worker.position(h.where) for h in worker.hits
                          if h.rule_id == DEATH_SIGNAL_RECEIVED and h.group(Group.SIGNAL) is None), default=None)
    # torchrun's Root Cause entry cut off: the failures it lists beside it are the others
    root_cut = any(e.root_cause and e.exitcode_cut for e in exits)
    for exit_ in exits:
        rank = _exit_rank(worker, exit_)
        # srun's reports name no process but do name their tasks: each set of tasks is one end
        process = ("tasks", exit_.tasks) if rank is None and exit_.tasks else rank
        if exit_.exitcode_cut and process not in explained and not told:
            # a launcher's word that a process failed, its exit code cut off: a failure, not a kill
            explained.add(process)
            out.append(Failure(worker, rank, exit_.where, ROOT_ENTRY_CUT if exit_.root_entry_cut else EXIT_CODE_CUT,
                               False, _loose_cause(lookups, worker),
                               None, exit_.time, _after_progress(lookups, seen_lines, exit_.where, rank=rank),
                               local_rank=exit_.local_rank if rank is None else None, code_cut=True))
            continue
        if exit_.exitcode in (None, 0) or process in explained:
            continue
        if rank is None and (exit_.exitcode or 0) > 0 and told >= len(failed_exits):
            continue  # as many tracebacks as failed exits: they tell these failures
        explained.add(process)
        out.append(Failure(
            worker, rank, exit_.where,
            exit_summary(exit_.exitcode),
            exit_.exitcode == SIGTERM or rank in waited or (only_waits and (exit_.exitcode or 0) > 0)
            or (root_cut and not exit_.root_cause)
            or (exit_.exitcode == SIGABRT and rank is None and watchdog_fired)
            or (bool(exit_.tasks) and scheduler_stop is not None and worker.position(exit_.where) > scheduler_stop),
            _kill_cause(lookups, worker, exit_.exitcode) if exit_.exitcode < 0 else _loose_cause(lookups, worker),
            exit_.exitcode,
            exit_.time, exit_.in_exit_barrier or _after_progress(lookups, seen_lines, exit_.where, rank=rank),
            local_rank=exit_.local_rank if rank is None else None,
            tasks=exit_.tasks if rank is None else (), host=exit_.host if exit_.tasks else None,
            in_launcher=exit_.of_launcher, after_group_ended=exit_.in_exit_barrier))
    inferred = (_failed_task(lookups, worker, exits, out, seen_lines) or _spawn_failure(lookups, worker, out, seen_lines)
                or _stopped_after_a_failure(lookups, worker, exits, out, seen_lines))
    out = _name_the_left_out_process(worker, out)
    return out if inferred is None else [*out, inferred]


def _name_the_left_out_process(worker: Worker, out: list[Failure]) -> list[Failure]:
    """The Worker's one failure that names no process, beside torchrun's SIGTERMs that left one
    process out: that process is the failed one."""
    unnamed = [f for f in out if not f.cascade and f.rank is None and f.local_rank is None and not f.tasks
               and not f.in_launcher]
    if len(unnamed) != 1:
        return out
    pid = left_out_pid(_closed_pids(_torchrun_closing(worker)))
    return out if pid is None else [replace(f, left_out_pid=pid) if f is unnamed[0] else f for f in out]


def _spawn_terminated(worker: Worker) -> Where | None:
    """mp.spawn's clean-up line, `Terminating process N via signal SIGTERM`, where it logged one."""
    return next((h.where for h in worker.hits if h.rule_id == SIBLING_TERMINATED
                 and SPAWN_TERMINATING.search(h.where.text)), None)


def _spawn_failure(lookups: _JobLookups, worker: Worker, out: list[Failure], seen: _WorkerIndex) -> Failure | None:
    """The failure mp.spawn's clean-up tells where no line of the Worker tells one by itself: it
    terminates the processes still alive only after one of them exited with an error."""
    if any(not f.cascade for f in out):
        return None
    told = _spawn_terminated(worker)
    if told is None:
        return None
    return Failure(worker, None, told, SPAWN_FAILED, False, OTHER_CAUSE, None, told.time,
                   _after_progress(lookups, seen, told))


# torchrun's agent stopping its processes (elastic/multiprocessing/api.py, close: `Sending process
# %s closing signal %s`; `Closing process %s via signal %s` for processes multiprocessing started) with
# the default SIGTERM: after one of them failed, or when a SIGTERM
# reached torchrun itself, which it logs first (agent/server/api.py, run: `Received %s death signal,
# shutting down workers`, 1.9 on) and passes on.
TORCHRUN_CLOSING = ("Sending process ", "Closing process ")
STOPPED_AFTER_A_FAILURE = ("an error (torchrun stopped the other processes after it, and no signal had reached "
                           "torchrun; the failed process's own lines are not here)")


def _stopped_after_a_failure(lookups: _JobLookups, worker: Worker, exits, out: list[Failure],
                             seen: _WorkerIndex) -> Failure | None:
    """The failure torchrun's SIGTERMs tell where no line of the Worker tells a failure (a process's
    own, or a peer's loss) and no exit is reported: they left out a process that had exited, or
    nothing of the run follows them, and the log is in view before them (torchrun's start, or any
    line above the first SIGTERM or output it is glued behind: a signal that had reached torchrun
    is logged right before it passes it on), with no signal there."""
    if out or exits or len(worker.rounds) > 1:
        return None  # (an elastic agent also stops a healthy group for a new round: its rounds say so)
    burst = _torchrun_closing(worker)
    if not burst:
        return None
    closing = burst[0].where
    at = worker.position(closing)
    before = [h for h in worker.hits if worker.position(h.where) < at]
    # With every process stopped, only a stop that nothing explains tells a failure: nothing but
    # information before it (not the agent's own loss of the rendezvous store, say), nothing of the
    # run after it, and no other Worker's log (a stop from outside, or a node joining an elastic
    # world, would show there).
    unexplained = (lookups.one_worker and all(h.rule_id in lookups.informational for h in before)
                   and _ends_the_run(worker, burst))
    pids = _closed_pids(burst)
    if not (_one_was_gone(worker, pids) or unexplained):
        return None
    in_view = (worker.position(closing) > (0, 1) or any(h.rule_id == TORCHRUN_STARTED for h in before)
               or _glued_behind_output(worker, closing))
    if not in_view or any(h.rule_id in (DEATH_SIGNAL_RECEIVED, WORKER_GROUP_RESTART) for h in before):
        return None
    return Failure(worker, None, closing, STOPPED_AFTER_A_FAILURE, False, OTHER_CAUSE, None, closing.time,
                   _after_progress(lookups, seen, closing), left_out_pid=left_out_pid(pids))


def _glued_behind_output(worker: Worker, where: Where) -> bool:
    """`where` is a record read out of a line that began with output before it (a bar never ended
    by a newline, logscan.scan.glued): that line's first piece is another."""
    pieces = [t for t in worker.tail_lines if t.file == where.file and t.line == where.line]
    return bool(pieces) and pieces[0].text != where.text


def _torchrun_closing(worker: Worker) -> list:
    """torchrun's stop of its processes: its SIGTERM lines (cut ones too), in the Worker's order."""
    return [h for h in worker.hits if h.rule_id == SIBLING_TERMINATED and h.group(Group.SIGNAL) in (None, "SIGTERM")
            and any(said in h.where.text for said in TORCHRUN_CLOSING)]


def _closed_pids(burst) -> list[int]:
    return sorted({int(pid) for h in burst if (pid := h.group(Group.PID))})


def left_out_pid(pids: list[int]) -> int | None:
    """The one pid inside the span of the (ascending) pids torchrun SIGTERMed that it did not:
    torchrun starts its processes one after another, so their pids run on, and the process it had
    no need to stop had exited already. None where no pid, or more than one, is missing."""
    gaps = [(low, high) for low, high in zip(pids, pids[1:]) if high - low > 1]
    return gaps[0][0] + 1 if len(gaps) == 1 and gaps[0][1] - gaps[0][0] == 2 else None


def _ends_the_run(worker: Worker, burst) -> bool:
    """No progress after torchrun's SIGTERMs: an elastic agent stopping a healthy group for a new
    round goes on training after them, so a stop with nothing of the run after it is one that
    followed a failure (a signal that reached torchrun is told before it, and checked for apart)."""
    last = worker.last_progress
    return last is None or worker.position(last.where) <= worker.position(burst[-1].where)


def _one_was_gone(worker: Worker, pids: list[int]) -> bool:
    """Torchrun's SIGTERMs left a process of the Worker out: it had exited already. An elastic
    agent stopping a healthy group for a new round SIGTERMs every process. Without the Worker's
    process count, a gap in the pids it SIGTERMed says so (torchrun starts its processes one
    after another, so their pids run on)."""
    if not pids:
        return False
    if worker.gpus:
        return len(pids) < worker.gpus
    return pids[-1] - pids[0] + 1 > len(pids)


def _failed_task(lookups: _JobLookups, worker: Worker, exits, out: list[Failure],
                 seen: _WorkerIndex) -> Failure | None:
    """The failure Slurm's `*** STEP … CANCELLED AT … DUE TO TASK FAILURE ***` tells, where no
    line of the Worker tells one by itself: a task failed on its own and srun had Slurm stop the
    others. The tasks srun reports as Terminated are those it stopped; the ones inside their span
    that it does not name are those it did not have to stop, likely the failed one. A task past the
    span's end cannot be told from one the step never had, so the span's top is as far as it goes."""
    cancels = [h for h in worker.hits if h.rule_id == SLURM_STEP_TASK_FAILURE]
    if not cancels or any(not f.cascade for f in out):
        return None
    stopped = [e for e in exits if e.exitcode == SIGTERM and e.tasks and not names_process(e)]
    terminated = set().union(*(e.tasks for e in stopped))
    missing = tuple(sorted(set(range(max(terminated) + 1)) - terminated)) if terminated else ()
    cancel = cancels[0].where
    return Failure(worker, None, cancel, "a failure Slurm cancelled the step for", False,
                   time=cancel.time, after_progress=_after_progress(lookups, seen, cancel),
                   more=tuple(e.where for e in stopped), tasks=missing, likely=True,
                   stopped_tasks=tuple(sorted(terminated)))


def is_stale(job: Job, worker: Worker) -> bool:
    last = worker.last_activity()
    return last is not None and job.now - last > job.stall_after


def job_ended(job: Job, worker: Worker) -> bool:
    """Something says this Worker's run is over: a platform status or torchrun's summary."""
    return job.job_status in (JobStatus.SUCCEEDED, JobStatus.FAILED) or bool(worker.exits)


def awaited_ranks(job: Job) -> set[int]:
    """Ranks that others reported waiting for (a store key or a barrier naming them)."""
    ranks = set()
    for worker in job.workers:
        for hit in worker.hits:
            peer = hit.group(Group.PEER_RANK)
            if peer is not None and peer.isdigit():
                ranks.add(int(peer))
    return ranks
