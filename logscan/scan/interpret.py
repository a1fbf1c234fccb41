"""Candidate lines → events: the line interpreter of one file.

A FileInterpreter is fed the candidate lines of one file in order (logscan.scan.scanner finds them),
each with its line number, and runs every native parser (logscan.scan.lineparse) and every catalogue
rule whose keyword the line holds. State that spans lines lives here: env prints split across
lines, the signals seen inside a traceback, torchrun's failure summary block. `finish` returns
the FileScan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from logscan.scan import lineparse
from logscan.catalogue import Rule
from logscan.vocabulary import RuleKind
from logscan.limits import (MAX_RULE_TIMEOUTS, PATTERN_TIMEOUT, RUNAWAY_BUDGET,
                            RUNAWAY_TIMEOUT_PAST_BUDGET)
from logscan.scan.events import (TORCHRUN_ENV, AgentShape, EnvPrint, FileScan, LaunchLine, Progress,
                                 ProcessExit, PythonException, SignalHit, Where)
from logscan.scan.prefixes import strip_prefixes

# What a traceback's launcher frames were (Context.agent_traceback): mp.spawn's parent's, not torchrun's.
SPAWN_PARENT = "spawn"

MAX_EVIDENCE = 2000  # characters of a line kept as evidence
MAX_RAW = MAX_EVIDENCE * 4  # bytes of a line that are ever looked at: enough for MAX_EVIDENCE


# Distinct line bodies whose meaning a file's interpreter keeps; past this it starts afresh, so
# memory stays bounded on a log of ever-new lines.
MEANINGS_KEPT = 4096
# mp.spawn's message begins with two newlines: its raise's line, a blank, then the quote's head.
SPAWN_QUOTE_GAP = 2
# NCCL's debug format (`host:pid:tid [dev] NCCL INFO ...`): its threads write it between any two lines.
NCCL_INFO = " NCCL INFO "
# torchrun's summary row `exitcode` comes on the line after `rank`: a log ending within this many
# lines of the rank row ends inside that entry.
CUT_ROW_GAP = 1
# The agent's frame (agent/server/api.py) that it enters once its processes all exited 0: a crash there
# came after training
EXIT_BARRIER = " in _exit_barrier"
# A Root Cause entry's rows above its rank row: `[0]:`, time, host; one more for the cut rank row itself
ROWS_BEFORE_RANK = 4
# Open MPI prints its failed process's `Exit code:` on the line after its `Process name:`.
MPI_EXIT_GAP = 2
# The rows torchrun's failed line takes where a console wraps it (rich's log handler: the line,
# the pid, the binary's path).
EXIT_REPORT_ROWS = 3
# A wrapped report's lines: a long command wraps over this many at most before its end.
WRAPPED_REPORT_LINES = 40


@dataclass(frozen=True, slots=True)
class _Meaning:
    """What one line body says, whatever line it is: the parses and the catalogue hits."""

    launch: dict | None
    env: tuple | None
    summary: object
    traceback_start: bool
    chained: bool
    agent_frame: bool
    frame_line: bool
    hits: tuple
    exception: tuple[str, str] | None
    announced: bool = False  # the exception is told ahead of its raise (THCudaCheck FAIL)
    launch_total: int | None = None  # DeepSpeed's `dist_world_size=N`, after its launch line
    rank_line: tuple | None = None   # a framework's rank line (lineparse.parse_rank_line)
    state_line: tuple | None = None  # a line of Accelerate's state (lineparse.parse_accelerate_state)
    agent_line: lineparse.AgentBlockLine | None = None  # torchrun's launch configs or rendezvous result
    spawn_quote: int | None = None  # mp.spawn's `-- Process N terminated with the following error:`
    ignored: bool = False  # Python's `Exception ignored in: ...`: the traceback after it failed nothing
    last_error_head: bool = False  # torch's `Last error:`, NCCL's message on the next line
    worker_event: tuple[int, int] | None = None  # torchelastic's status event: (pid, global rank)


# What a line that says nothing means.
_NOTHING = _Meaning(launch=None, env=None, summary=None, traceback_start=False, chained=False,
                    agent_frame=False, frame_line=False, hits=(), exception=None)


@dataclass
class _FileContext:
    """Parser state that spans lines of one file. Traceback state is per process (rank, local
    rank and pid, where prefixes give them), since several processes' tracebacks interleave in
    one log."""

    env: lineparse.EnvAssembler = field(default_factory=lineparse.EnvAssembler)
    state: lineparse.StateAssembler = field(default_factory=lineparse.StateAssembler)
    # the line number of a `Last error:` line, whose message the next line holds
    last_error_head: int | None = None
    agent_blocks: lineparse.AgentBlockAssembler = field(default_factory=lineparse.AgentBlockAssembler)
    traceback_signals: dict = field(default_factory=dict)
    headerless: set = field(default_factory=set)  # keys whose traceback began without a header
    agent_traceback: dict = field(default_factory=dict)
    chained: dict = field(default_factory=dict)
    in_root_cause: bool = False
    root_entry_due: bool = False  # inside a failure report's other failures, its Root Cause entry after them
    others_told: int = 0          # ...and how many of those it told
    others_heading: Where | None = None  # ...under this heading
    root_line: int = 0            # the line of the last Root Cause heading
    summary_entry: dict = field(default_factory=dict)
    quoting_traceback: bool = False  # inside the traceback a summary entry quotes
    # per process: the exception a line announced ahead of its raise (THCudaCheck FAIL), until the
    # process's next exception line, which is that raise when it says the same
    announced: dict = field(default_factory=dict)
    # the local rank whose traceback mp.spawn's exception quotes, until that traceback's exception
    spawn_process: int | None = None
    # per process: the header of its traceback, until that traceback's exception line
    open_tracebacks: dict = field(default_factory=dict)
    # processes whose next traceback Python printed for an exception it ignored
    ignoring: set = field(default_factory=set)
    # the exit faulthandler's last report made, until its stack shows whose process it was
    fault_dump: ProcessExit | None = None
    # (rank, line) of Open MPI's `Process name: [[j,s],rank]`, until its `Exit code:` line
    mpi_process: tuple[int, int] | None = None
    # (file, line) of the last launcher's report of a process's end: torchrun raises its
    # ChildFailedError right after logging `failed (exitcode: N) ...`, so a traceback that begins
    # on the next line (the report's wrapped rows between, EXIT_REPORT_ROWS) is torchrun's own,
    # whatever of it a paste cut away
    exit_report: tuple[str, int] | None = None
    # a launcher's report of a process's end whose line ended before its exit code (DeepSpeed's,
    # its command wrapped): the `exits with return code = N` a few lines on completes it
    cut_exit_report: ProcessExit | None = None
    # a `[rankN]:` prefix's N → the global rank the default group's own lines of it name, where
    # they differ
    prefix_ranks: dict = field(default_factory=dict)


class RuleTimeouts:
    """The rules whose patterns ran away in one scan, and what runaway patterns cost it together:
    shared by every file and every reader of lines in a scanning process, so a catastrophic
    pattern costs its budget once, not once per file, and many cost RUNAWAY_BUDGET, not many
    times MAX_RULE_TIMEOUTS timeouts."""

    def __init__(self):
        self.counts: dict[str, int] = {}   # rule id → times it ran away
        self.spent = 0.0                   # seconds lost to patterns that ran away

    def given_up(self, rule_id: str) -> bool:
        allowed = MAX_RULE_TIMEOUTS if self.spent < RUNAWAY_BUDGET else 1
        return self.counts.get(rule_id, 0) >= allowed

    def timeout(self, allowed: float = PATTERN_TIMEOUT) -> float:
        """Seconds a pattern may take now, when it may take `allowed` within the budget."""
        return allowed if self.spent < RUNAWAY_BUDGET else min(allowed, RUNAWAY_TIMEOUT_PAST_BUDGET)

    def ran_away(self, rule_id: str, seconds: float) -> None:
        self.counts[rule_id] = self.counts.get(rule_id, 0) + 1
        self.spent += seconds


class FileInterpreter:
    """The events of one file, from its candidate lines fed in order (`line`)."""

    def __init__(self, matchers: list[Rule], path: str, display: str,
                 timeouts: RuleTimeouts | None = None, local_rank: int | None = None):
        self.matchers = matchers  # the catalogue rules that have keywords
        self.harmless_ids = frozenset(r.id for r in matchers if r.kind == RuleKind.HARMLESS)
        self.signature_ids = frozenset(r.id for r in matchers if r.kind == RuleKind.SIGNATURE)
        self.timeouts = timeouts if timeouts is not None else RuleTimeouts()
        self.scan = FileScan(path=path, display=display, local_rank=local_rank)
        self.context = _FileContext()
        self._late_hits: list[SignalHit] = []
        # Lines that name their process only by a pid: (event list, index, pid); and the pids
        # torchrun's reports name, with the process each is (None once two claim one pid).
        self._pid_only: list[tuple[str, int, int]] = []
        self._pid_process: dict[int, tuple[int | None, int | None] | None] = {}
        # the global rank torchelastic's status events give each pid (None once two differ)
        self._event_ranks: dict[int, int | None] = {}
        # srun --label: whether a line of the file carries a label only srun writes (a padded
        # number, or 0), and the lines whose only tag is an unpadded `N: ` (line → N): srun's
        # labels too in such a file, where its step has fewer than ten tasks; pids elsewhere.
        self._labelled = False
        self._bare_numbers: dict[int, int] = {}
        self._meanings: dict[str, _Meaning] = {}
        self._keywords = _KeywordIndex.of(matchers)

    def line(self, raw: bytes, lineno: int) -> None:
        """Interpret one candidate line (its first MAX_RAW bytes), numbered from 1."""
        scan, context = self.scan, self.context
        where, body, pid, header_pid, bare_number = _where_and_body(scan, raw, lineno)
        if context.last_error_head == lineno - 1 and body.strip():
            body = f"{lineparse.LAST_ERROR_HEAD} {body.strip()}"  # the message it announced, as one line
        if where.rank is not None:
            if "Rank " in body and (told := lineparse.default_group_rank(body)) is not None and told != where.rank:
                # The default group's own word for its rank is the global one; a `[rankN]:` prefix
                # may be a local rank (torchrun's `--role rank --tee`: the role, then the local rank).
                context.prefix_ranks[where.rank] = told
            if context.prefix_ranks:
                where = replace(where, rank=context.prefix_ranks.get(where.rank, where.rank))
        meaning = self._meaning(body)
        context.last_error_head = lineno if meaning.last_error_head else None
        if where.task is not None:
            self._labelled = True
        elif bare_number is not None:
            self._bare_numbers[lineno] = bare_number

        if meaning.launch is not None:
            scan.launches.append(LaunchLine(where=where, **meaning.launch))
            return

        if meaning.worker_event is not None:  # (its state a rule may read too)
            pid, rank = meaning.worker_event
            self._event_ranks[pid] = rank if self._event_ranks.get(pid, rank) == rank else None

        if meaning.launch_total is not None:
            _complete_launch(scan, meaning.launch_total)
            return

        if meaning.env is not None:
            markers, pairs = meaning.env
            scan.env_markers += markers
            for first_where, record in context.env.feed(where, pairs):
                scan.envs.append(_env_print(first_where, record))
            return

        if meaning.rank_line is not None:
            kind, rank, local_rank, world_size = meaning.rank_line
            scan.envs.append(EnvPrint(where, rank, local_rank, world_size, kind))
            return

        if meaning.state_line is not None:
            for first_where, record in context.state.feed(where, *meaning.state_line):
                scan.envs.append(_env_print(first_where, record, lineparse.ACCELERATE_KIND))
            return

        if meaning.agent_line is not None:
            # No return: the rendezvous-round signal reads some of these lines too.
            for first_where, block, fields in context.agent_blocks.feed(where, header_pid, meaning.agent_line):
                scan.agent_shapes.append(_agent_shape(first_where, block, fields))

        where = self._summary(body, where, meaning)
        if meaning.spawn_quote is not None:
            context.spawn_process = meaning.spawn_quote
            raised = scan.exceptions[-1] if scan.exceptions else None
            if (raised is not None and not raised.detail and raised.where.file == where.file
                    and 0 < where.line - raised.where.line <= SPAWN_QUOTE_GAP):
                # the parent's raise this message belongs to: before 1.8 a plain `Exception:`
                scan.exceptions[-1] = replace(raised, agent=True)
            return
        quoted_by_spawn = context.spawn_process is not None and where.rank is None and where.local_rank is None
        if quoted_by_spawn:
            where = replace(where, local_rank=context.spawn_process)
        # The process the line is from, as far as its prefixes tell: interleaved tracebacks are
        # each assembled from their own process's lines.
        key = (where.rank, where.local_rank, pid if pid is not None else header_pid
               if header_pid is not None else None if where.task is None else ("task", where.task))

        if meaning.ignored:
            context.ignoring.add(key)
        if meaning.traceback_start:
            context.open_tracebacks[key] = where
            context.headerless.discard(key)
            if not context.chained.get(key):
                context.traceback_signals[key] = {}  # an ordered set: a signal once
                report = context.exit_report
                context.agent_traceback[key] = (report is not None and report[0] == where.file
                                                and 0 < where.line - report[1] <= EXIT_REPORT_ROWS)
            context.chained[key] = False
        elif meaning.chained:
            context.chained[key] = True
        elif meaning.agent_frame:
            # (mp.spawn's parent's frames, unless torchrun's came first)
            context.agent_traceback[key] = context.agent_traceback.get(key) or (
                SPAWN_PARENT if lineparse.is_spawn_parent_frame(body) else True)
            if context.fault_dump is not None and context.fault_dump.where.file == where.file:
                # faulthandler's dump of torchrun's own stack: torchrun died of the signal, not a
                # training process
                at = scan.exits.index(context.fault_dump)
                scan.exits[at] = replace(context.fault_dump, training_process=False, of_launcher=True,
                                         in_exit_barrier=EXIT_BARRIER in body)
                context.fault_dump = None
        if meaning.traceback_start or meaning.exception is not None:
            context.fault_dump = None  # another record: the dump's stack is over

        pid_only = pid is not None and where.rank is None and where.local_rank is None
        line_signals = []
        # A known-harmless line is no failure: a broader signature that also matches it (nccl-error's
        # `NCCL WARN ...`) does not read it. Signals still do (DDP's step notes mark a step taken).
        harmless_line = any(rule_id in self.harmless_ids for rule_id, _ in meaning.hits)
        for rule_id, groups in meaning.hits:
            if rule_id in self.harmless_ids:
                scan.harmless.append(SignalHit(rule_id, where, groups))
                continue
            if harmless_line and rule_id in self.signature_ids:
                continue
            if pid_only:
                self._pid_only.append(("hits", len(scan.hits), pid))
            scan.hits.append(SignalHit(rule_id, where, groups))
            line_signals.append(rule_id)
            if key not in context.traceback_signals and meaning.frame_line:
                # A traceback whose header was cut (pasted, or an excerpt): its frames still
                # tell where the exception came from, up to that exception.
                context.traceback_signals[key] = {}
                context.headerless.add(key)
            if key in context.traceback_signals:
                context.traceback_signals[key][rule_id] = None

        exc = meaning.exception
        if exc is None and context.quoting_traceback and body.startswith(lineparse.SUMMARY_INDENT):
            # the exception line of the traceback a summary entry quotes, indented two spaces more
            exc = lineparse.parse_exception(body[len(lineparse.SUMMARY_INDENT):])
        if exc is not None:
            context.open_tracebacks.pop(key, None)
            if key in context.ignoring:
                context.ignoring.discard(key)
                return  # the end of a traceback Python printed and went on from
            already = context.announced.pop(key, None) == exc
            if already and not meaning.announced:
                return  # the raise a THCudaCheck FAIL line already told
            if meaning.announced:
                context.announced[key] = exc
                if already:
                    return  # the same announcement again (a kernel's assertion, from each of its threads)
                if where.rank is None and (told := lineparse.watchdog_rank(body)) is not None:
                    where = replace(where, rank=told)
            signals = tuple(context.traceback_signals.get(key, ()))
            if key in context.headerless:
                context.headerless.discard(key)
                del context.traceback_signals[key]
            if pid_only:
                self._pid_only.append(("exceptions", len(scan.exceptions), pid))
            scan.exceptions.append(PythonException(
                where, exc[0], exc[1], signals, tuple(line_signals),
                agent=bool(context.agent_traceback.get(key, False)) or lineparse.is_agent_exception(exc[0]),
                quoted=context.quoting_traceback))
            if quoted_by_spawn:
                context.spawn_process = None  # the quoted traceback's exception ends the quote

    def _meaning(self, body: str) -> "_Meaning":
        """What a line body says, worked out once: a warning, a banner or an NCCL INFO line recurs
        thousands of times, and what it says does not depend on where it is."""
        known = self._meanings.get(body)
        if known is not None:
            return known
        launch = lineparse.parse_launch(body) if "DDP launch:" in body else None
        launch_total = None
        if launch is None and ("num_local_procs=" in body or "dist_world_size=" in body):
            deepspeed = lineparse.parse_deepspeed_launch(body)
            launch, launch_total = (deepspeed, None) if isinstance(deepspeed, dict) else (None, deepspeed)
        env = lineparse.env_tokens(body) if launch is None and launch_total is None else None
        rank_line = state_line = None
        if launch is None and launch_total is None and env is None:
            rank_line = lineparse.parse_rank_line(body)
            state_line = lineparse.parse_accelerate_state(body) if rank_line is None else None
        ran_away = False
        if launch is not None or env is not None or launch_total is not None or rank_line or state_line:
            meaning = _Meaning(launch, env, None, False, False, False, False, (), None,
                               launch_total=launch_total, rank_line=rank_line, state_line=state_line)
        else:
            hits, ran_away = self._catalogue_hits(body)
            exception = lineparse.parse_exception(body)
            announced = exception is None and (exception := lineparse.parse_announced(body)) is not None
            meaning = _Meaning(
                launch=None, env=None, summary=lineparse.parse_summary_line(body),
                traceback_start=lineparse.is_traceback_start(body), chained=lineparse.is_chained(body),
                agent_frame=lineparse.is_agent_frame(body), frame_line=lineparse.is_frame_line(body),
                hits=hits, exception=exception, announced=announced,
                agent_line=lineparse.parse_agent_block_line(body),
                spawn_quote=lineparse.parse_spawn_quote(body), ignored=lineparse.is_ignored_exception(body),
                last_error_head=lineparse.is_last_error_head(body), worker_event=lineparse.parse_worker_event(body))
        if not ran_away:  # a rule given up on may be tried on the next copy while it has budget
            if len(self._meanings) >= MEANINGS_KEPT:
                self._meanings.clear()
            self._meanings[body] = meaning
        return meaning

    def _catalogue_hits(self, body: str) -> tuple[tuple, bool]:
        """(rule id, groups) of every catalogue rule whose pattern matches the body, and whether
        one of them ran away on it."""
        hits, ran_away = [], False
        for rule in self._keywords.rules_in(body):
            if self.timeouts.given_up(rule.id):
                continue
            allowed = self.timeouts.timeout()
            try:
                groups = rule.match(body, allowed)
            except TimeoutError:
                self.scan.rule_timeouts.append(rule.id)
                self.timeouts.ran_away(rule.id, allowed)
                ran_away = True
                continue
            if groups is not None:
                hits.append((rule.id, tuple(groups.items())))
        return tuple(hits), ran_away

    def _summary(self, body: str, where: Where, meaning: "_Meaning") -> Where:
        """torchrun's failure summary: a block of `key : value` lines per failed process. Returns
        where, with the rank of the entry the line belongs to."""
        parsed = meaning.summary
        context, entry = self.context, self.context.summary_entry
        if parsed is None:
            if context.quoting_traceback and body.startswith(lineparse.SUMMARY_INDENT) and "rank" in entry:
                return replace(where, rank=entry["rank"], local_rank=entry.get("local_rank"))
            return where
        context.quoting_traceback = parsed.kind == "traceback" and meaning.traceback_start
        kind, value = parsed.kind, parsed.value
        if kind in ("root", "failures"):
            context.in_root_cause = kind == "root"
            context.root_line = where.line if kind == "root" else context.root_line
            # ChildFailedError's message (1.10 on) lists the other failures first, then its Root Cause
            # entry; 1.9's `Other Failures:` come after it
            context.root_entry_due = kind == "failures" and value == lineparse.SUMMARY_FAILURES[0]
            context.others_told = 0
            context.others_heading = where
            context.summary_entry = {}
            return where
        if kind == "failed":
            local_rank, exitcode = value
            cut = context.cut_exit_report
            context.cut_exit_report = None
            if (cut is not None and exitcode is not None and parsed.training_process and local_rank is None
                    and 0 < where.line - cut.where.line <= WRAPPED_REPORT_LINES and cut.where.file == where.file):
                # DeepSpeed's report, its long command wrapped over lines: this is its end
                at = self.scan.exits.index(cut)
                self.scan.exits[at] = replace(cut, exitcode=exitcode, exitcode_cut=False,
                                              rank=cut.rank if parsed.rank is None else parsed.rank,
                                              host=parsed.host or cut.host)
                return where
            if (cut is not None and exitcode is None and parsed.exitcode_cut and parsed.training_process
                    and local_rank is None and cut.where.file == where.file
                    and 0 < where.line - cut.where.line <= WRAPPED_REPORT_LINES):
                context.cut_exit_report = cut  # the same report told again (Open MPI's two help texts)
                return where
            self.scan.exits.append(ProcessExit(where, parsed.rank, local_rank, exitcode, host=parsed.host,
                                               tasks=parsed.tasks, training_process=parsed.training_process,
                                               exitcode_cut=parsed.exitcode_cut, silent_stops=parsed.silent_stops,
                                               of_launcher=parsed.of_launcher))
            context.fault_dump = self.scan.exits[-1] if parsed.fault_dump else None
            if parsed.exitcode_cut and parsed.training_process:
                context.cut_exit_report = self.scan.exits[-1]
            if "(exitcode: " in body:  # torchrun's, not a quote of mp.spawn's whose traceback follows
                context.exit_report = (where.file, where.line)
            self._name_pid(body, None, local_rank)
            return replace(where, local_rank=local_rank)
        if kind == "mpi-process":
            context.mpi_process = (value, where.line)
            return where
        if kind == "mpi-exit":
            named, context.mpi_process = context.mpi_process, None
            if named is not None and 0 < where.line - named[1] <= MPI_EXIT_GAP:
                told = ProcessExit(where, named[0], None, value, training_process=True)
                cut, context.cut_exit_report = context.cut_exit_report, None
                if (cut is not None and cut.local_rank is None and cut.where.file == where.file
                        and 0 < where.line - cut.where.line <= WRAPPED_REPORT_LINES):
                    # the launcher's word that a process failed, then its block naming which: one exit
                    self.scan.exits[self.scan.exits.index(cut)] = told
                else:
                    self.scan.exits.append(told)
            return where
        if kind == "time":  # the first field of an entry
            entry.clear()
            entry["time"] = value
        elif kind == "host":
            entry["host"] = value
        elif kind == "rank" and value is not None:
            entry["rank"], entry["local_rank"] = value
            entry["rank_line"] = where.line
        elif kind == "exitcode":
            entry["exit"] = True
            context.others_told += not context.in_root_cause
            self._name_pid(body, entry.get("rank"), entry.get("local_rank"))
            self.scan.exits.append(ProcessExit(
                where, entry.get("rank"), entry.get("local_rank"), value, entry.get("host"),
                entry.get("time"), context.in_root_cause, lineparse.summary_of_1_9(body)))
        if "rank" in entry:
            return replace(where, rank=entry["rank"], local_rank=entry.get("local_rank"))
        return where

    def _name_pid(self, body: str, rank: int | None, local_rank: int | None) -> None:
        """A pid torchrun's report gives a process (`(pid: 22190)`): the same process as the
        lines that name only that pid. A rank claims it over a rank-less report of it."""
        found = _REPORTED_PID.search(body)
        if found is None or local_rank is None:
            return
        pid = int(found[1])
        if pid not in self._pid_process:
            self._pid_process[pid] = (rank, local_rank)
            return
        known = self._pid_process[pid]
        if known is None:
            return
        if known[1] == local_rank and (known[0] is None or rank is None or known[0] == rank):
            self._pid_process[pid] = (rank if rank is not None else known[0], local_rank)
        else:  # two processes with one pid (two nodes in one log, or restarts): neither
            self._pid_process[pid] = None

    def _rank_exits_by_event(self) -> None:
        """torchrun's report of a process by its pid, and the lines that name only that pid, take
        the global rank its status event gives the pid."""
        scan = self.scan
        for index, exit_ in enumerate(scan.exits):
            found = _REPORTED_PID.search(exit_.where.text) if exit_.rank is None else None
            rank = self._event_ranks.get(int(found[1])) if found is not None else None
            if rank is not None:
                scan.exits[index] = replace(exit_, rank=rank)
        for pid, rank in self._event_ranks.items():
            known = self._pid_process.get(pid)
            if rank is not None and known is not None and known[0] is None:
                self._pid_process[pid] = (rank, known[1])

    def _attribute_pids(self) -> None:
        """Lines that name only a pid get the rank of the process torchrun reported with it."""
        scan = self.scan
        for kind, index, pid in self._pid_only:
            process = self._pid_process.get(pid)
            if process is None:
                continue
            events = getattr(scan, kind)
            event = events[index]
            events[index] = replace(event, where=replace(
                event.where, rank=process[0], local_rank=process[1]))

    def _label_bare_numbers(self) -> None:
        """In a file srun --label wrote, an unpadded `N: ` is task N's label, not a pid."""
        scan, labels = self.scan, self._bare_numbers
        for kind in ("hits", "exceptions", "exits", "envs", "progress"):
            events = getattr(scan, kind)
            for index, event in enumerate(events):
                task = labels.get(event.where.line)
                if task is not None and event.where.task is None:
                    events[index] = replace(event, where=replace(event.where, task=task))
        self._pid_only = [(kind, index, pid) for kind, index, pid in self._pid_only
                          if getattr(scan, kind)[index].where.line not in labels]

    def late_hit(self, rule_id: str, raw: bytes, lineno: int, groups) -> None:
        """A match of a rule without keywords, found while surveying (not fed through `line`)."""
        self._late_hits.append(SignalHit(rule_id, _where(self.scan, raw, lineno), groups))

    def progress(self, first: tuple[int, bytes], last: tuple[int, bytes]) -> None:
        """The file's first and last progress lines: (line number, raw line)."""
        scan = self.scan
        scan.progress = [Progress(_where(scan, first[1], first[0]))]
        if last[0] != first[0]:
            scan.progress.append(Progress(_where(scan, last[1], last[0])))

    def edges(self, head: bytes | None, tail: bytes | None, line_count: int,
              tail_lines=()) -> None:
        """The file's first line, its last line with text and its last lines (the last of
        them line `line_count`): when it began, what it printed last, when it ended."""
        scan = self.scan
        if head is not None:
            first = strip_prefixes(_decode(head))
            scan.first_time = first.time
            self._labelled = self._labelled or first.task is not None
        if tail is not None:
            # Blank lines after it (CRLF ones too) are counted in line_count: the last line with
            # text is above them, as the scanner's `tail` takes it.
            blank_after = 0
            for raw in reversed(tail_lines):
                if raw.strip(b"\r"):
                    break
                blank_after += 1
            scan.last_line = self._line_at_end(tail, line_count - blank_after)
            scan.last_time = scan.last_line.time
        first = line_count - len(tail_lines) + 1
        scan.tail_lines = [self._line_at_end(raw, first + i) for i, raw in enumerate(tail_lines)
                           if raw.strip()]
        if (cut := self._cut_traceback()) is not None:
            scan.exceptions.append(cut)
        if (row := self._cut_root_cause_row() or self._root_cause_entry_not_in_view()) is not None:
            scan.exits.append(row)

    def _cut_root_cause_row(self) -> ProcessExit | None:
        """torchrun's Root Cause entry the log ends inside, its rank told and its exitcode row cut off:
        that process failed first, with a code the lines do not give."""
        context, entry = self.context, self.context.summary_entry
        last = self.scan.last_line
        if not (context.in_root_cause and "exit" not in entry and last is not None):
            return None
        if "rank" not in entry:
            # cut before its rank row too (`[0]:`, time, host, then the cut): which process, the
            # lines do not say
            if not entry or last.line - context.root_line > ROWS_BEFORE_RANK:
                return None  # (with no row of it, ChildFailedError's own raise tells as much)
            host = entry.get("host") or ""
            if any(e.root_cause and e.time == entry.get("time") and (e.host or "").startswith(host)
                   for e in self.scan.exits):
                return None  # the same report printed again (two launchers' outputs in one log), cut
        elif last.line - entry["rank_line"] > CUT_ROW_GAP:
            return None
        return ProcessExit(last, entry.get("rank"), entry.get("local_rank"), None, entry.get("host"), entry.get("time"),
                           root_cause=True, exitcode_cut=True)

    def _root_cause_entry_not_in_view(self) -> ProcessExit | None:
        """torchrun's report the log ends inside its other failures, before its Root Cause entry:
        a process failed first, which and how the lines do not say."""
        context, last = self.context, self.scan.last_line
        if not context.root_entry_due or not context.others_told or last is None:
            return None  # (with none of the others told either, the report's own exception says as much)
        return ProcessExit(context.others_heading or last, None, None, None, context.summary_entry.get("host"),
                           context.summary_entry.get("time"), root_cause=True, exitcode_cut=True, root_entry_cut=True)

    def _line_at_end(self, raw: bytes, lineno: int) -> Where:
        text = _decode(raw)
        stripped = strip_prefixes(text)
        return Where(self.scan.display, lineno, text[:MAX_EVIDENCE], stripped.rank,
                     stripped.local_rank, stripped.time, stripped.task)

    def finish(self) -> FileScan:
        """The FileScan, once every line was fed: env prints still open are kept as they are."""
        scan = self.scan
        if self._labelled and self._bare_numbers:
            self._label_bare_numbers()
        if self._event_ranks:
            self._rank_exits_by_event()
        self._attribute_pids()
        if self._late_hits:  # in line order among the others, wherever pieces began
            scan.hits = sorted(scan.hits + self._late_hits, key=lambda h: h.where.line)
            self._late_hits = []
        for where, record in self.context.env.flush():
            scan.envs.append(_env_print(where, record))
        for where, record in self.context.state.flush():
            scan.envs.append(_env_print(where, record, lineparse.ACCELERATE_KIND))
        for where, block, fields in self.context.agent_blocks.flush():
            scan.agent_shapes.append(_agent_shape(where, block, fields))
        scan.agent_shapes.sort(key=lambda shape: shape.where.line)
        return scan

    def _cut_traceback(self) -> PythonException | None:
        """The traceback the log ends inside, if it does: its header came, no exception line
        after it, and the log's last line is the header, the line right after it, or a frame's
        indented line. Python prints the exception line last, so the exception was raised and the
        log (a paste, an excerpt, a process killed while writing) lost it."""
        scan, context = self.scan, self.context
        if not scan.tail_lines or scan.last_line is None:
            return None
        if not context.open_tracebacks:
            return self._cut_headerless_traceback()
        key, header = max(context.open_tracebacks.items(), key=lambda item: item[1].line)
        if key in context.ignoring:
            return None  # a traceback Python printed for an exception it ignored
        last = scan.last_line
        if header.file != last.file or header.line < scan.tail_lines[0].line or any(
                e.where.line > header.line for e in scan.exceptions if e.where.file == header.file):
            return None
        # (blank lines after its frames, as a paste or pdsh's bare `host:` leaves them, end nothing)
        last, body = next(((w, b) for w in reversed(scan.tail_lines)
                           if (b := strip_prefixes(w.text).body).strip() and not _BARE_HOST_TAG.fullmatch(b)),
                          (last, ""))
        if not (last.line - header.line <= 1 or body[:1].isspace() or _in_unindented_frame(scan.tail_lines, last)):
            return None
        # torchrun's own frames make it torchrun's exception; still a failure the lines show, whose
        # line (ChildFailedError, a rendezvous error) would have said more.
        launcher = context.agent_traceback.get(key)
        last_frame = next((b for w in reversed(scan.tail_lines) if w.line >= header.line
                           and lineparse.FRAME.match(b := strip_prefixes(w.text).body)), "")
        return PythonException(header, _cut_told(launcher, last_frame), "",
                               tuple(context.traceback_signals.get(key, ())))

    def _cut_headerless_traceback(self) -> PythonException | None:
        """A traceback whose header and exception line are both out of the lines (an excerpt cut at
        both ends): the log ends in a run of at least two of Python's frames (`  File "x.py", line
        3, in f` and their source lines) with no exception after them."""
        scan = self.scan
        run = []
        for where in reversed(scan.tail_lines):
            body = strip_prefixes(where.text).body
            if NCCL_INFO in body or _ELISION.fullmatch(body):
                # NCCL's debug lines, from its own threads, interleave with anything; a paste's `...`
                # stands for the frames its author left out
                continue
            if not body[:1].isspace():
                break
            run.append((where, body))
        frames = [where for where, body in run if lineparse.FRAME.match(body)]
        if len(frames) < 2 or any(e.where.file == frames[-1].file and e.where.line > frames[-1].line
                                  for e in scan.exceptions):
            return None
        first = frames[-1]  # the run was walked from the end
        agent = [body for _, body in run if lineparse.is_agent_frame(body)]
        last_frame = next((body for _, body in run if lineparse.FRAME.match(body)), "")  # (run is walked backward)
        launcher = (SPAWN_PARENT if all(lineparse.is_spawn_parent_frame(b) for b in agent) else True) if agent else None
        return PythonException(first, _cut_told(launcher, last_frame), "")


def _in_unindented_frame(tail_lines, last) -> bool:
    """The log's last line is a frame of a traceback whose lines lost their indent (Cloud Logging
    trims each entry): `File "x.py", line 3, in f`, or the source line right after one."""
    before = [w for w in tail_lines if w.line <= last.line and strip_prefixes(w.text).body.strip()][-2:]
    return any(lineparse.FRAME.match(" " + strip_prefixes(w.text).body.lstrip()) for w in before)


def _cut_told(launcher, last_frame: str) -> str:
    """What a traceback the log ends inside says was raised, by its launcher frames (None, True for
    torchrun's, SPAWN_PARENT for mp.spawn's parent's) and its last frame in view. mp.spawn's parent
    raises from join only once a process failed; with a frame past its own (multiprocessing's,
    setting up the processes) it failed before any process ran, and is no torchrun: a process's
    plain cut exception."""
    if launcher == SPAWN_PARENT:
        return (lineparse.CUT_SPAWN_EXCEPTION if lineparse.is_spawn_parent_frame(last_frame)
                else lineparse.CUT_EXCEPTION)
    return lineparse.CUT_AGENT_EXCEPTION if launcher else lineparse.CUT_EXCEPTION


# What a paste's author puts for lines left out: `...`, `[...]`, `…`
_ELISION = re.compile(r"\s*(?:\.{3,}|\[\.{3}\]|…)\s*")


# pdsh's tag on an empty remote line (`node2:`): a host name, which has a digit (a heading such as
# torchrun's `Failures:` has none)
_BARE_HOST_TAG = re.compile(r"[A-Za-z][\w.-]{0,40}\d[\w.-]{0,40}:")


# The pid torchrun reports for a process: `failed (exitcode: 1) local_rank: 1 (pid: 22190)`,
# `exitcode  : 1 (pid: 22190)`
_REPORTED_PID = re.compile(r"\(pid: ?(\d+)\)")


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _where(scan: FileScan, raw: bytes, lineno: int) -> Where:
    return _where_and_body(scan, raw, lineno)[0]


def _where_and_body(scan: FileScan, raw: bytes, lineno: int) -> tuple[Where, str, int | None,
                                                                      int | None, int | None]:
    """The line as evidence, its body without its prefixes (stripped once, for both), the
    process id a prefix names and the one torch's header gives, and an unpadded `N: ` tag (a pid
    or srun's label)."""
    text = _evidence_text(raw)
    stripped = strip_prefixes(text)
    # A line with no prefix of its own, in one process's own file, is that process's.
    local_rank = stripped.local_rank if stripped.local_rank is not None else scan.local_rank
    return (Where(scan.display, lineno, text, stripped.rank, local_rank, stripped.time, stripped.task),
            stripped.body, stripped.pid, stripped.header_pid, stripped.bare_number)


class _KeywordIndex:
    """The rules whose keyword a body holds, in catalogue order: one Hyperscan pass over the body
    where Hyperscan is installed (5 µs for a step line, where asking each rule took 50), else
    each distinct keyword looked for once."""

    _built: dict[int, tuple] = {}

    def __init__(self, matchers: list[Rule]):
        self._matchers = list(matchers)
        self._keywords = sorted({kw for rule in matchers for kw in rule.keywords})
        rules_of: dict[str, set[int]] = {}
        for n, rule in enumerate(matchers):
            for kw in rule.keywords:
                rules_of.setdefault(kw, set()).add(n)
        self._rules = [frozenset(rules_of[kw]) for kw in self._keywords]
        self._database = None  # built on first use: most bodies are judged from memory

    @classmethod
    def of(cls, matchers: list[Rule]) -> "_KeywordIndex":
        """One index per list of rules: every file's interpreter of a scan shares it."""
        known = cls._built.get(id(matchers))
        if known is None or known[0] is not matchers:
            if len(cls._built) > 8:
                cls._built.clear()
            known = cls._built[id(matchers)] = (matchers, cls(matchers))
        return known[1]

    def rules_in(self, body: str) -> list[Rule]:
        if self._database is None:
            self._database = _keyword_database(self._keywords) or False
        found: set[int] = set()
        if self._database:
            def on_match(index, _start, _end, _flags, _context):
                found.update(self._rules[index])

            self._database.scan(body.encode("utf-8", "surrogatepass"), match_event_handler=on_match)
        else:
            for index, keyword in enumerate(self._keywords):
                if keyword in body:
                    found.update(self._rules[index])
        return [self._matchers[n] for n in sorted(found)]


def _keyword_database(keywords: list[str]):
    """Keywords as one Hyperscan database, each reported once a scan; None without Hyperscan."""
    if not keywords:
        return None
    try:
        import hyperscan

        from logscan.scan.hyperscan_matcher import compiled, keyword_expression
    except ImportError:
        return None
    try:
        return compiled([keyword_expression(kw.encode("utf-8", "surrogatepass")) for kw in keywords],
                        hyperscan.HS_FLAG_SINGLEMATCH)
    except hyperscan.error:
        return None


def _evidence_text(raw: bytes) -> str:
    text = _decode(raw[:MAX_RAW]).rstrip("\r\n")
    if len(text) > MAX_EVIDENCE and "\r" in text:
        # Head and tail: the prefixes are at the start, a \r-redrawn bar's last state at the end.
        half = (MAX_EVIDENCE - 1) // 2  # the \r included: the cut below keeps the tail whole
        text = text[:half] + "\r" + text[-half:]
    return text[:MAX_EVIDENCE]


_DIGITS = re.compile(r"\d+")


class LineJudge:
    """Whether a line the finder gave can tell the interpreter anything, judged on the line
    alone, as FileInterpreter.line would read it: only then is it kept until the merge.

    A line only a rule's cover or keyword found (not native) tells something when a rule
    matches its body: one that merely holds a keyword (`backward=0.05s`, a warning quoting
    `optimizer.step()`) does not. A line a native pattern matched tells something when it parses
    as anything (launch line, env print, summary line, traceback marks, exception line) or a rule
    matches it, or when it may be the exception line of a traceback a failure summary quotes
    (indented two spaces more: only the context knows). Everything else changes nothing in the
    interpreter, so what is kept per file grows with what the log says, not with its lines.
    A body is judged once (bounded, as meanings are); a rule that runs away keeps the line, and
    the interpreter decides and notes it."""

    def __init__(self, matchers: list[Rule], timeouts: RuleTimeouts | None = None):
        self._probe = FileInterpreter(matchers, "", "", timeouts, None)
        # (body, native) → (whether it tells, what it tells by rules alone: its hits)
        self._known: dict[tuple[str, bool], tuple[bool, object]] = {}
        self._by_raw: dict[tuple[bytes, bool], tuple[bool, tuple | None]] = {}

    def tells(self, raw: bytes, native: bool) -> bool:
        return self.judge(raw, native)[0]

    def ran_away(self) -> list[str]:
        """The rules that ran away on the lines judged since the last call: the scan notes them,
        as it notes those that run away in the interpreter (they share one budget)."""
        ids = self._probe.scan.rule_timeouts[:]
        self._probe.scan.rule_timeouts.clear()
        return ids

    def judge(self, raw: bytes, native: bool) -> tuple[bool, tuple | None]:
        """(whether the line tells anything, what makes a line the same as it when it does
        only by rules, or is an exception line and nothing else: its body but for its numbers,
        the rules' hits on it (and the exception's class) and the process its prefixes name;
        None for another native line). A line printed every step with the step's number in it,
        that a rule matches each time, is the same line to the interpreter: the same words,
        the same hits, from the same process (scanner._RepeatRuns)."""
        judged = self._by_raw.get((raw, native))
        if judged is not None:
            return judged
        stripped = strip_prefixes(_evidence_text(raw))
        body = stripped.body
        known = self._known.get((body, native))
        if known is None:
            known = self._tells(body, native)
            if len(self._known) >= MEANINGS_KEPT:
                self._known.clear()
            self._known[body, native] = known
        tells, told = known
        same = None if native and told is None else (
            _DIGITS.sub("0", body), told, stripped.rank, stripped.local_rank, stripped.pid,
            stripped.header_pid, stripped.task)
        if len(self._by_raw) >= MEANINGS_KEPT:
            self._by_raw.clear()
        self._by_raw[raw, native] = judged = (tells, same)
        return judged

    def _tells(self, body: str, native: bool) -> tuple[bool, object]:
        """(whether the body tells anything, what a rules-only line tells: its hits, or the
        body itself when a rule ran away on it and the interpreter must decide again)."""
        probe = self._probe
        timeouts = len(probe.scan.rule_timeouts)
        if not native:
            hits, ran_away = probe._catalogue_hits(body)
            return bool(hits) or ran_away, (body if ran_away else hits)
        meaning = probe._meaning(body)
        if len(probe.scan.rule_timeouts) > timeouts:
            return True, None
        if meaning.exception is not None and _only_an_exception(meaning):
            # an exception line that says nothing else: its class and hits make its copies
            return True, ("exception", meaning.exception[0], meaning.hits)
        return (meaning != _NOTHING or (body.startswith(lineparse.SUMMARY_INDENT)
                and lineparse.parse_exception(body[len(lineparse.SUMMARY_INDENT):]) is not None)), None


def _only_an_exception(meaning: _Meaning) -> bool:
    """The line is an exception line (perhaps hit by rules) and nothing else."""
    return not (meaning.announced or meaning.traceback_start or meaning.chained or meaning.ignored
                or meaning.agent_frame or meaning.frame_line) and (
        meaning.launch is meaning.env is meaning.summary is meaning.launch_total
        is meaning.rank_line is meaning.state_line is meaning.agent_line is None)


def _env_print(where: Where, record: dict, source: str = TORCHRUN_ENV) -> EnvPrint:
    return EnvPrint(where, record.get("RANK"), record.get("LOCAL_RANK"), record.get("WORLD_SIZE"), source)


def _agent_shape(where: Where, block: str, fields: dict[str, str]) -> AgentShape:
    return AgentShape(where, block, **lineparse.agent_block_facts(block, fields), raw_fields=tuple(fields.items()))


def _complete_launch(scan: FileScan, total_procs: int) -> None:
    """DeepSpeed's launcher logs its world size (`dist_world_size=N`) a line after the node's launch
    line: it is that launch line's total_procs."""
    last = scan.launches[-1] if scan.launches else None
    if last is None or last.total_procs is not None or "num_local_procs" not in dict(last.raw_fields):
        return
    if total_procs <= lineparse.LAUNCH_LIMITS["total_procs"]:
        scan.launches[-1] = replace(last, total_procs=total_procs)
