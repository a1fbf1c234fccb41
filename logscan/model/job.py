"""events → Workers → the job model that rules read.

A Worker is one launch command's log stream (rotated pieces joined), split further only when one
file holds launch lines of several node_ranks (Workers that shared a log path).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from datetime import datetime, timedelta, timezone

import re

from logscan.catalogue import Catalogue, Group
from logscan.exit_signals import BY_DESCRIPTION
from logscan.limits import STALL_AFTER
from logscan.rule_ids import (CAUSE_OOM_KILL, DEATH_SIGNAL_RECEIVED, ERROR_LINE, PROCESS_GROUP_JOINED,
                              RENDEZVOUS_ROUND, SIBLING_TERMINATED, SLURM_STEP_TASK_FAILURE, STORE_TIMEOUT,
                              TORCHRUN_STARTED, TRAINING_LOOP_FINISHED, WORKER_GROUP_SUCCEEDED)
from logscan.model.training import StepWarnings
from logscan.scan.lineparse import NCCL_COMM_RANK, nccl_process
from logscan.scan.prefixes import clean
from logscan.diagnosis import Where
from logscan.scan.events import EnvPrint, EventLists, FileScan, LaunchLine, ProcessExit, Progress
from logscan.vocabulary import JobStatus, RunStage


_N_OF_M = re.compile(r"(?<![\d/.:-])(\d+)\s*/\s*(\d+)(?![\d/.:-])")
# A bar that counts one epoch's batches (Lightning's `Epoch 2: 100%|...| 3/3`): its N/M is the
# epoch's, not the run's (`Epoch 3/3`, the count of epochs, is the run's). So is an iteration
# within an epoch (mmcv's `Epoch [2][50/50]`, mmengine's `Epoch(train)  [2][ 50/100]`, torchvision's
# MetricLogger `Epoch: [0]  [40/1504]`, Swin's `Train: [0/300][40/5004]`).
_EPOCH_BAR = re.compile(r"(?i)\bepoch\s+\d+\s*:|\bEpoch(?:\(\w+\))?:?\s*\[\d+\](?:/\d+)?\s*\[\s*\d+/\d+\]"
                        r"|\bTrain: \[\d+/\d+\]\[\s*\d+/\d+\]"
                        # an epoch's number, no total, then its count (pytorch/examples' MNIST: `Train
                        # Epoch: {} [{}/{} ({:.0f}%)]`, and the many scripts that copy it)
                        r"|\bepoch:?\s*\d+\s*\[\s*\d+/\d+")
# Bars of evaluation loops, whose N/N is that loop's end, not the run's: Lightning's (the sanity
# check before training, validation, test, predict), YOLOv5's and ultralytics' validation after each
# epoch (its metrics' header as the bar's description: `Class     Images  Instances      Box(P ...`,
# `Labels` in YOLOv5), mmcv's ProgressBar of a test or evaluation (`[>>>>] 500/500, 25.0 task/s`).
_EVALUATION_BAR = re.compile(r"^\s*(?:Sanity Checking|Validation|Validating|Testing|Predicting)\b"
                             r"|^\s*Class\s+Images\s+(?:Instances|Labels)\b"
                             r"|^\s*\[[>\s]*\]\s*\d+/\d+, [\d.]+ task/s\b")
# A script's own end-of-run line, where progress lines give no `N/N`: `training finished: 30
# steps`, `Training complete`, `run done`.
END_MARKER = re.compile(r"(?i)\b(?:training|train|run|job)\b[\s:]+(?:is\s+)?(?:finished|complete[d]?|done)\b")
# An end line that says the run ended badly (`Job finished: FAILED`, `training done with errors`).
BAD_END = re.compile(r"(?i)\b(?:fail(?:ed|ure|s)?|errors?|cancel+ed|abort(?:ed)?|killed|unsuccessful)\b")


def gave_up_in_init_barrier(hit) -> bool:
    """A process's own timeout in init_process_group's store barrier, which names its rank (not
    torchrun's rendezvous store timing out)."""
    return hit.rule_id == STORE_TIMEOUT and hit.group(Group.RANK) is not None


def tells_a_process(hit) -> bool:
    """A line only a started training process, or torchrun about one, prints: torchrun stopping it by
    its pid (`Sending process N closing signal`), the process's word that it joined its world, or
    that it gave up waiting in init_process_group's store barrier."""
    return hit.rule_id in (SIBLING_TERMINATED, PROCESS_GROUP_JOINED) or gave_up_in_init_barrier(hit)


def store_barrier_count(world: int, joined: int) -> str:
    """What init_process_group's store barrier count says: `joined` of `world` ranks checked in."""
    said = f"{joined} of world_size={world} ranks checked in"
    if joined > world:
        said += ("; more processes checked in than the world has, so it cannot complete (two jobs on one "
                 "store, its master address and port or an init file left from an earlier run, or processes "
                 "given different WORLD_SIZE values)")
    return said


def says_run_ended(text: str) -> bool:
    """The line is a script's or launcher's word that its run ended, and not that it ended badly."""
    return END_MARKER.search(text) is not None and BAD_END.search(text) is None

# A line that begins more of the run after training ended: the Hugging Face Trainer's `*****
# Running Evaluation *****` (and Prediction), its example scripts' `*** Evaluate ***` (Predict, Test),
# detectron2's `Start inference on N batches`, Lightning's evaluation bars (_EVALUATION_BAR),
# mmengine's `Epoch(val)`/`Epoch(test)` rows. The process has not ended with training.
MORE_OF_THE_RUN = re.compile(
    r"(?i)\*{3,}\s*(?:Running\s+)?(?:Evaluat(?:e|ion)|Predict(?:ion)?|Test(?:ing)?)\s*\*{3,}"
    r"|\bStart inference on \d+ (?:batches|images)\b|\bEpoch\((?:val|test)\)")
# That phase's end: the Trainer's log_metrics(split, ...) header, `***** eval metrics *****`.
PHASE_METRICS = re.compile(r"\*{3,}\s*(?:eval|test|predict)\w* metrics\s*\*{3,}")
# How many lines a script's end-of-run line may stand above its log's end: its teardown's lines
# (a memory summary, the interpreter's exit warnings) come after it.
TEARDOWN_LINES = 5

# Why torchrun began a rendezvous round (Round.reason).
ROUND_START, ROUND_MEMBERSHIP, ROUND_FAILURE = "start", "membership", "failure"


# Lines anyone prints: their hits say nothing of whether torchrun ran.
# (the scheduler's own report of an OOM kill is Slurm's line, like its cancel)
NOT_TORCHRUN_TRACES = frozenset({ERROR_LINE, SLURM_STEP_TASK_FAILURE, CAUSE_OOM_KILL})


def _torchrun_trace(hit) -> bool:
    """A catalogue hit that could only be torchrun's or its processes': not one of anyone's
    lines, nor Slurm's stop of a job or step (a death signal whose line names no signal), nor the
    shell's report of a command a signal ended (`Terminated`: the signal in strsignal's words)."""
    if hit.rule_id in NOT_TORCHRUN_TRACES:
        return False
    return not (hit.rule_id == DEATH_SIGNAL_RECEIVED and (hit.group(Group.SIGNAL) is None
                                                          or hit.group(Group.SIGNAL) in BY_DESCRIPTION))


def names_process(exit_: ProcessExit) -> bool:
    """The exit is a training process's: torchrun's reports name the process (its rank or local
    rank), another launcher's report of one of its processes may not say which (DeepSpeed's); a
    launcher above torchrun (Slurm's srun) tells the end of what it started, often torchrun."""
    return exit_.rank is not None or exit_.local_rank is not None or exit_.training_process


@dataclass(frozen=True, slots=True)
class Round:
    """One rendezvous round of a Worker: the world torchrun's agent met the other agents in and
    the worker group it started there. A Worker has several when torchrun restarted its group:
    after a failure (`--max-restarts`), or because nodes joined or left (an elastic job,
    `--nnodes=MIN:MAX`, re-forms its world with another WORLD_SIZE). Built by build_job."""

    index: int
    opened_at: Where | None       # the first line of the round; None: the log's start
    reason: str                   # ROUND_START, ROUND_MEMBERSHIP or ROUND_FAILURE
    envs: tuple[EnvPrint, ...]    # the env prints of its processes (the Worker's own)
    started: bool                 # torchrun spawned processes in this round
    group_world_size: int | None = None   # the round's nodes, from its rendezvous result (INFO)
    global_world_size: int | None = None  # the WORLD_SIZE that result gives the processes (INFO)

    @property
    def world_size(self) -> int | None:
        """The WORLD_SIZE its processes printed (the most printed value)."""
        sizes = [e.world_size for e in self.envs if e.world_size is not None]
        return max(set(sizes), key=lambda size: (sizes.count(size), size)) if sizes else None


@dataclass(eq=False)  # a Worker is an identity, compared and hashed as one
class Worker(EventLists):
    stream: str
    node_rank: int | None
    files: list[str] = field(default_factory=list)
    scans: list[FileScan] = field(default_factory=list)
    shared_file: bool = False
    rank_offset: int | None = None   # set by build_job
    # Events of the attempts torchrun restarted from, when the last attempt went on without
    # failing: history, not the outcome (set by build_job).
    earlier_attempts: EventLists | None = None
    rounds: list[Round] = field(default_factory=list)  # set by build_job, in line order
    # Its own lines show no process, but the world it was launched into trained: collectives are
    # synchronous, so its processes took every step rank 0 logged (set by build_job).
    trained_silently: bool = False
    # Its launch shape as one declaration: its launch line with the gaps torchrun's own INFO lines
    # fill, or those lines alone where no launch line was printed (set by build_job; None there
    # when neither tells anything, and on a Worker built elsewhere, which reads `launches`).
    declared_launch: LaunchLine | None = None
    # Its lines' srun --label task ids are global ranks: srun started the training processes
    # itself, one task each, with no torchrun between (set by build_job). Where srun started a
    # torchrun per node, a task id is that node's index, and no rank.
    tasks_are_ranks: bool = False

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    @property
    def label(self) -> str:
        return f"node {self.node_rank}" if self.node_rank is not None else self.stream

    @property
    def launch(self) -> LaunchLine | None:
        """What launched it: its launch line, or torchrun's own account where it has none
        (`source` tells which)."""
        if self.declared_launch is not None:
            return self.declared_launch
        return self.launches[0] if self.launches else None

    @property
    def gpus(self) -> int | None:
        return self.launch.gpus_per_node if self.launch else None

    @property
    def host(self) -> str | None:
        # srun's reports name the task's node, and one srun's log holds every node's
        hosts = [e.host for e in self.exits if e.host and not e.tasks]
        return hosts[0] if hosts else None

    @property
    def ranks(self) -> range | None:
        """The global ranks of this Worker's processes, when its launch line and the launch lines
        of the lower node_ranks say them (or torchrun's rendezvous result does)."""
        if self.launch is None or not self.gpus or self.rank_offset is None:
            return None
        return range(self.rank_offset, self.rank_offset + self.gpus)

    @property
    def foreign_envs(self) -> list[EnvPrint]:
        """Env lines whose RANK lies outside this Worker's ranks: another Worker's process wrote
        them into this log (a shared log path)."""
        ranks = self.ranks
        if ranks is None:
            return []
        return [e for e in self.envs if e.rank is not None and e.rank not in ranks]

    @property
    def own_envs(self) -> list[EnvPrint]:
        """Env lines its own processes printed: all but the foreign ones."""
        ranks = self.ranks
        if ranks is None:
            return self.envs
        return [e for e in self.envs if e.rank is None or e.rank in ranks]

    def position(self, where: Where) -> tuple[int, int]:
        """A sort key placing this Worker's lines as they were written: its files in stream
        order (a rotated `x.log.1` before the newer `x.log`; a file not its own after them), then
        line by line."""
        order = self.__dict__.get("_file_order")
        if order is None:
            order = self.__dict__["_file_order"] = {name: i for i, name in enumerate(self.files)}
        return order.get(where.file, len(order)), where.line

    @property
    def final_round(self) -> Round:
        """The Worker's last rendezvous round: its outcome is the Worker's. A Worker whose rounds
        were never split (built outside build_job) is one round."""
        if self.rounds:
            return self.rounds[-1]
        return Round(0, None, ROUND_START, tuple(self.own_envs), self.started_processes)

    def in_final_round(self, where: Where) -> bool:
        """The line belongs to the Worker's last rendezvous round (every line does when torchrun
        never restarted the worker group)."""
        opened = self.final_round.opened_at
        return opened is None or self.position(where) >= self.position(opened)

    @property
    def last_progress(self) -> Progress | None:
        return max(self.progress, key=lambda p: self.position(p.where), default=None)

    def progress_fraction(self) -> float | None:
        """How far the last progress line says training got, when it says `N/M` (tqdm, step N/M)."""
        last = self.last_progress
        if last is None:
            return None
        # What the last carriage return left on screen: a redrawn bar's last state.
        text = clean(last.where.text)
        if _EPOCH_BAR.search(text) or _EVALUATION_BAR.match(text):
            return None
        if len(self.progress) == 1 and "%|" in text and "\r" not in last.where.text:
            # a lone bar state at its total, no redraw of it in view: as often a data-preparation bar
            # (an unnamed tqdm) as the run's
            return None
        counts = [(int(n), int(m)) for n, m in _N_OF_M.findall(text) if 0 < int(m) and int(n) <= int(m)]
        if "%|" in text and self._counted_apart(last, {m for _, m in counts}):
            return None
        return min(n / m for n, m in counts) if counts else None

    def _counted_apart(self, bar: Progress, totals: set[int]) -> bool:
        """Training's own progress lines before this bar count to other totals (an epoch's bar, or
        an evaluation's, counts its own loop): the bar is another loop's (an unnamed evaluation
        over the test set after an epoch), whatever its end says."""
        texts = [clean(p.where.text) for p in self.progress if p is not bar]
        before = {int(m) for text in texts if not (_EPOCH_BAR.search(text) or _EVALUATION_BAR.match(text))
                  for _, m in _N_OF_M.findall(text) if int(m) > 0}
        return bool(before) and not before & totals

    def finished_steps(self) -> str | None:
        """`30/30`: the last progress line's count where it is at its total."""
        last = self.last_progress
        if last is None:
            return None
        text = clean(last.where.text)
        if _EPOCH_BAR.search(text):
            return None
        done = [(n, m) for n, m in _N_OF_M.findall(text) if int(m) > 0 and n == m]
        return f"{done[-1][0]}/{done[-1][1]}" if done else None

    def end_of_run(self) -> Where | None:
        """The line showing this Worker's run ended normally, if one does: its last progress line
        at its total, a last line of the script's that says so, or a framework's word that its
        training loop ended (followed by its teardown lines, so it need not be the last)."""
        if self.progress_fraction() == 1.0:
            return self.last_progress.where
        last = self.last_line
        if last is not None and says_run_ended(last.text):
            return last
        said = self._end_marker_before_teardown()
        if said is not None:
            return said
        finished = [h.where for h in self.hits if h.rule_id == TRAINING_LOOP_FINISHED]
        last_said = max(finished, key=self.position) if finished else None
        return None if last_said is None or self._more_of_the_run_after(last_said) else last_said

    def _more_of_the_run_after(self, where: Where) -> bool:
        """A line of the log's tail after `where` begins more of the run (evaluation, prediction)
        and no line after it says that phase ended."""
        at, begun = self.position(where), False
        for line in self.tail_lines:
            if self.position(line) <= at:
                continue
            if MORE_OF_THE_RUN.search(line.text) or _EVALUATION_BAR.match(clean(line.text)):
                begun = True
            elif begun and PHASE_METRICS.search(line.text):
                begun = False
        return begun

    def _end_marker_before_teardown(self) -> Where | None:
        """A script's line that its run ended, among its last TEARDOWN_LINES lines, with nothing
        after it that tells anything (a memory summary, the interpreter's exit warnings): its
        teardown's lines, not more of the run."""
        tail = self.tail_lines[-TEARDOWN_LINES - 1:]
        marker = next((w for w in reversed(tail) if says_run_ended(w.text)), None)
        if marker is None:
            return None
        at = self.position(marker)
        later = [*(h.where for h in self.hits), *(x.where for x in self.exceptions),
                 *(e.where for e in self.exits), *(p.where for p in self.progress)]
        if any(self.position(w) > at for w in later) or self._more_of_the_run_after(marker):
            return None
        return marker

    @property
    def group_succeeded(self) -> bool:
        """torchrun's agent says every process of this Worker exited 0."""
        return any(h.rule_id == WORKER_GROUP_SUCCEEDED for h in self.hits)

    @property
    def ran_torchrun(self) -> bool:
        """The launch line was printed, or torchrun itself left traces (its own logs, a traceback
        of its own, rendezvous messages): other launch scripts print no launch line. A line that
        only looks like an error (`srun: error: ...`) is anyone's, and Slurm's word that it
        cancelled a step is Slurm's: neither is a trace of torchrun."""
        return (self.launch is not None or self.started_processes
                or any(_torchrun_trace(h) for h in self.hits)
                or any(x.agent for x in self.exceptions))

    def error_lines(self, catalogue: Catalogue) -> list[Where]:
        """Lines of this Worker that look like errors, in line order: exception lines (with or
        without a traceback header), non-zero exit codes, and every catalogue hit that is more
        than information."""
        informational = catalogue.informational
        lines = [x.where for x in self.exceptions]
        lines += [e.where for e in self.exits if e.exitcode]
        lines += [h.where for h in self.hits if h.rule_id not in informational]
        return sorted(dict.fromkeys(lines), key=self.position)

    @property
    def shows_start_up(self) -> bool:
        """The launch script's or torchrun's own word that torchrun ran here: a launch line (or the
        shape torchrun's INFO lines give), its banner, its rendezvous lines before any process
        exited."""
        if self.launch is not None or any(h.rule_id == TORCHRUN_STARTED for h in self.hits):
            return True
        # A rendezvous after a process's exit is a restart's: the run's own start is not in view.
        first_exit = min((self.position(e.where) for e in self.exits), default=None)
        return any(h.rule_id == RENDEZVOUS_ROUND and (first_exit is None or self.position(h.where) < first_exit)
                   for h in self.hits)

    @property
    def started_processes(self) -> bool:
        """torchrun got past rendezvous and spawned training processes."""
        return bool(self.trained_silently or self.envs or self.progress or self.group_succeeded
                    or any(e.exitcode is not None and names_process(e) for e in self.exits)
                    or any(x.where.rank is not None for x in self.exceptions)
                    or any(h.where.rank is not None or tells_a_process(h) for h in self.hits))

    @property
    def last_line(self) -> Where | None:
        lines = [s.last_line for s in self.scans if s.last_line is not None]
        return lines[-1] if lines else None

    @property
    def tail_lines(self) -> list[Where]:
        """The last lines of its log (of its last file that has any), last_line last."""
        return next((s.tail_lines for s in reversed(self.scans) if s.tail_lines), [])

    def last_activity(self) -> datetime | None:
        """When the log last moved: its last aware timestamp, else the file's mtime."""
        times = [s.last_time for s in self.scans if s.last_time and s.last_time.tzinfo]
        if times:
            return max(times)
        mtimes = [s.mtime for s in self.scans if s.mtime]
        return datetime.fromtimestamp(max(mtimes), timezone.utc) if mtimes else None

    @cached_property
    def nccl_world_ranks(self) -> dict[tuple[str, int], int]:
        """Each process's rank in its largest NCCL communicator (the world's: its global rank), by the
        host and pid of NCCL's debug header; a process seen with two ranks there is left out, and none
        is read where the world the lines name is larger than every communicator shown."""
        seen: dict[tuple[str, int], set[int]] = {}
        largest = 0
        formed = []
        for hit in self.hits:
            if hit.rule_id != PROCESS_GROUP_JOINED or "nranks" not in hit.where.text:
                continue
            text = clean(hit.where.text)
            comm, process = NCCL_COMM_RANK.search(text), nccl_process(text)
            if comm is not None and process is not None:
                formed.append((process, int(comm["rank"]), int(comm["nranks"])))
                largest = max(largest, int(comm["nranks"]))
        worlds = {e.world_size for e in self.envs if e.world_size is not None}
        if self.launch is not None and self.launch.total_procs is not None:
            worlds.add(self.launch.total_procs)
        if worlds and largest not in worlds:
            return {}  # only a smaller communicator's ranks (a tensor- or pipeline-parallel group's)
        for process, rank, nranks in formed:
            if nranks == largest:
                seen.setdefault(process, set()).add(rank)
        return {process: next(iter(ranks)) for process, ranks in seen.items() if len(ranks) == 1}

    def global_rank(self, where: Where, groups: dict | None = None) -> int | None:
        if where.rank is not None:
            return where.rank
        groups = groups or {}
        if groups.get(Group.RANK, "").lstrip("-").isdigit():
            return int(groups[Group.RANK])
        local = where.local_rank
        if local is None and groups.get(Group.LOCAL_RANK, "").isdigit():
            local = int(groups[Group.LOCAL_RANK])
        if local is not None and self.rank_offset is not None:
            return self.rank_offset + local
        if self.gpus == 1 and self.rank_offset is not None:
            return self.rank_offset
        if where.task is not None and self.tasks_are_ranks:
            return where.task
        if " NCCL " in where.text and self.nccl_world_ranks:
            return self.nccl_world_ranks.get(nccl_process(clean(where.text)))
        return None


@dataclass(frozen=True, slots=True)
class LaunchShape:
    """One launched Worker's node_rank and rank offset beside what its launch line says: the
    values rules compare Workers by (`Job.workers_by`)."""

    worker: Worker
    node_rank: int | None
    nnodes: int | None
    gpus_per_node: int | None
    total_procs: int | None
    master_addr: str | None
    master_port: int | None
    rank_offset: int | None

    @classmethod
    def of(cls, worker: Worker) -> "LaunchShape":
        launch = worker.launch
        return cls(worker, worker.node_rank, launch.nnodes, launch.gpus_per_node,
                   launch.total_procs, launch.master_addr, launch.master_port, worker.rank_offset)


@dataclass
class Job:
    name: str
    workers: list[Worker]
    scans: list[FileScan]
    catalogue: Catalogue
    job_status: JobStatus | None = None
    job_status_source: str | None = None
    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    stall_after: timedelta = STALL_AFTER
    # What every rule may read, computed once by build_job.
    launched: list[Worker] = field(default_factory=list)   # Workers that printed a launch line
    nnodes: int | None = None              # the node count most launch lines agree on
    uniform_gpus: int | None = None        # gpus_per_node, when every launch line says the same
    expected_processes: int | None = None  # the training processes the launch lines add up to
    progressed: bool = False               # some Worker logged progress
    # progress, or a collective numbered past start-up: positive evidence that training had
    # started everywhere (DDP steps together; logscan.model.training)
    training_started: bool = False
    prints_env: bool = False               # some process printed its torchrun env
    # The env prints name every rank the launch lines add up to, and training went on: a log
    # several Workers wrote may keep one launch line but every process's own print.
    every_rank_trained: bool = False
    # The job may form worlds of fewer processes than the launch lines add up to: it was
    # launched elastic (`--nnodes=MIN:MAX`), or its rounds show a world that re-formed or that
    # trained without a node that was launched (logscan.model.build._elastic).
    elastic: bool = False
    # elastic on evidence other than a rank line printed again with no torchrun line before it
    # (two nodes that took one node rank and write one log print that too)
    elastic_beyond_repeats: bool = False
    failures: list = field(default_factory=list)  # per-process failures (logscan.model.failures)
    _failures_by_worker: dict = field(default_factory=dict, repr=False)
    _step_warnings: dict = field(default_factory=dict, repr=False)
    launch_shapes: list[LaunchShape] = field(default_factory=list)  # one per `launched` Worker

    def failures_of(self, worker: Worker) -> list:
        """The failures of one Worker's processes, in `failures` order."""
        return self._failures_by_worker.get(id(worker), [])

    def stage_of(self, worker: Worker) -> RunStage:
        """Where a Worker stopped: launch → rendezvous → init (processes spawned) → training."""
        if not worker.ran_torchrun:
            return RunStage.LAUNCH
        # The last round decides: a re-formed world that never started is still in rendezvous.
        if not worker.started_processes or not worker.final_round.started:
            return RunStage.RENDEZVOUS
        if not self.reached_first_batch(worker):
            return RunStage.INIT
        return RunStage.TRAINING

    def formed_world(self, size: int | None, most: int | None) -> bool:
        """A world of `size` processes that torchrun could have formed: no bigger than the launch
        lines allow, and every process that saw it has a rank inside it (a leaked WORLD_SIZE
        leaves the other nodes' ranks outside)."""
        if size is None or size < 1 or (most is not None and size > most):
            return False
        return self._ranks_inside.get(size, False)

    @cached_property
    def _ranks_inside(self) -> dict[int, bool]:
        """WORLD_SIZE printed → whether every process that printed it has a rank inside it:
        one pass over the env prints, however many rounds ask."""
        inside: dict[int, bool] = {}
        for worker in self.workers:
            for env in worker.own_envs:
                if env.world_size is not None:
                    ok = env.rank is not None and 0 <= env.rank < env.world_size
                    inside[env.world_size] = inside.get(env.world_size, True) and ok
        return inside

    def reached_first_batch(self, worker: Worker) -> bool:
        """The Worker's processes got past their first batch, on the evidence the failure pass
        reads too (logscan.model.training): its own progress or end, the job's (ranks usually log
        progress on rank 0 only, and DDP steps together), or each of its processes' own: a
        warning of a training step, or a failure placed after training had started."""
        if worker.progress or worker.group_succeeded or worker.end_of_run() is not None:
            return True
        if self.training_started and worker.started_processes:
            return True
        ranks = set(worker.ranks or ()) or {e.rank for e in worker.own_envs if e.rank is not None}
        if not ranks:
            return False
        trained = {f.rank for f in self.failures_of(worker) if f.after_progress and f.rank is not None}
        return ranks <= trained or self.step_warnings(worker).placed(ranks - trained)

    def step_warnings(self, worker: Worker) -> StepWarnings:
        """The Worker's warnings of a training step (computed once per Worker)."""
        known = self._step_warnings.get(id(worker))
        if known is None:
            steps = self.catalogue.reached(RunStage.TRAINING)
            known = self._step_warnings[id(worker)] = StepWarnings(worker, steps)
        return known

    @cached_property
    def shows_start_up(self) -> bool:
        """Some line shows the job starting (a launch line, torchrun's banner or rendezvous, an env
        print): only then does the lack of progress place anything before the first batch. A
        paste of the failure alone shows neither; a process's timeout in init_process_group's store
        barrier (naming its rank) is itself one: it waited there, before any batch."""
        return any(w.shows_start_up or w.envs for w in self.workers) or any(
            gave_up_in_init_barrier(h) for w in self.workers for h in w.hits)

    @property
    def reached_first_batch_anywhere(self) -> bool:
        """Training had started: job-wide evidence, or every Worker that started processes got
        past its first batch."""
        started = [w for w in self.workers if w.started_processes]
        return self.training_started or (bool(started) and all(self.reached_first_batch(w) for w in started))

    def workers_by(self, *fields: str) -> dict:
        """Launched Workers grouped by some LaunchShape fields, in the order each value first
        appears (Workers lacking one of the values are left out): one field's value is the key,
        several fields' values make a tuple."""
        groups: dict = {}
        for shape in self.launch_shapes:
            values = tuple(getattr(shape, name) for name in fields)
            if any(value is None for value in values):
                continue
            groups.setdefault(values if len(fields) > 1 else values[0], []).append(shape.worker)
        return groups

    def home_node(self, env: EnvPrint) -> int | None:
        """The node_rank whose process printed this env line, judged by its own RANK/LOCAL_RANK."""
        gpus = self.uniform_gpus
        if not gpus or env.rank is None or env.local_rank is None or env.local_rank >= gpus:
            return None
        base = env.rank - env.local_rank
        return base // gpus if base >= 0 and base % gpus == 0 else None

    def node_of_rank(self, rank: int) -> int | None:
        return next((w.node_rank for w in self.launched if w.ranks is not None and rank in w.ranks),
                    None)
