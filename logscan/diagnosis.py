"""Findings and the diagnosis: the one object every renderer takes. Plain frozen data."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from logscan.rule_ids import UNEXPLAINED_FAILURE
from logscan.vocabulary import (FAILING_VERDICTS, LEVEL_OF_SEVERITY, SEVERITY_ORDER, ExpectationStatus, JobStatus,
                                Level, MarkStage, ProcessRole, RunStage, Severity, TimeAxis, Verdict)


@dataclass(frozen=True, slots=True)
class Where:
    """One physical line of one log file, as evidence."""

    file: str
    line: int
    text: str
    # Process context carried by the line's prefix: `[rank3]:` gives a global rank,
    # `[default1]:` (torchrun --tee) a local rank.
    rank: int | None = None
    local_rank: int | None = None
    time: datetime | None = None
    # The Slurm task id srun --label put before the line: a rank where srun started the training
    # processes itself, a node's torchrun where it started that (logscan.model.job, Worker).
    task: int | None = None

    @property
    def record(self) -> tuple[str, int, str]:
        """Which log record this is: its line, and its text among the records of a line that
        holds several glued together (a paste that lost its newlines: logscan.scan.glued). Lines
        that hold one record, nearly all, are told apart by their line alone."""
        return self.file, self.line, self.text


@dataclass(frozen=True)
class Evidence:
    file: str
    line: int
    text: str

    @classmethod
    def at(cls, where: Where) -> "Evidence":
        return cls(where.file, where.line, where.text)


# The cause class of a crash no signal explains: it names no cause, so reports leave it out.
OTHER_CAUSE = "other"


@dataclass(frozen=True)
class Location:
    """Where a report points for a finding: its first evidence line; else its Worker's first
    file; else the first file scanned; else the job's name (line 1)."""

    file: str
    line: int


@dataclass(frozen=True)
class Finding:
    """What a rule found. The rules set the first fields; the root-cause pass of
    logscan.diagnose sets the rest once (fingerprint, is_root, cascade and caused_by, hang,
    location), and every report reads them as set."""

    rule: str
    severity: Severity
    message: str
    hint: str
    stage: RunStage
    node_rank: int | None = None
    rank: int | None = None
    evidence: tuple[Evidence, ...] = ()
    cause: str | None = None
    caused_by: str | None = None    # the fingerprint of the root cause when this is its consequence
    cascade: bool = False
    worker: str | None = None       # the Worker's label when it has no node_rank
    time: datetime | None = None    # the time of the first evidence line, where it carries one
    node_ranks: tuple[int, ...] = ()  # every node_rank the finding is about, when several
    ranks: tuple[int, ...] = ()       # every global rank the finding is about, when several
    # Stable across runs and however the paths were typed (logscan.diagnose.fingerprint).
    fingerprint: str = ""
    is_root: bool = False           # the job's root cause
    hang: bool = False              # its rule leaves processes waiting (the catalogue's `hang`)
    location: Location | None = None

    @property
    def is_consequence(self) -> bool:
        """It follows from the root cause (or from another failure it repeats)."""
        return not self.is_root and (self.cascade or self.caused_by is not None)

    @property
    def level(self) -> Level:
        """How loudly a CI format shows it: a consequence of another error is a note."""
        if self.severity == Severity.ERROR and self.is_consequence:
            return Level.NOTE
        return LEVEL_OF_SEVERITY[self.severity]

    @property
    def heading(self) -> str:
        """`rule (node N, rank R) (cause: C)`: what every report calls the finding."""
        return f"{self.rule}{place_label(self.node_rank, self.rank)}{self.cause_label}"

    @property
    def title(self) -> str:
        """`rule (node N, rank R) (cause: C): message`: the finding in one line."""
        return f"{self.heading}: {self.message}"

    @property
    def cause_label(self) -> str:
        """` (cause: data-path)`, as reports say it after the finding's place; nothing when no
        cause is known."""
        return f" (cause: {self.cause})" if self.cause and self.cause != OTHER_CAUSE else ""

    @property
    def sort_key(self):
        first = self.evidence[0] if self.evidence else Evidence("", 0, "")
        return (SEVERITY_ORDER[self.severity], self.rule,
                -1 if self.node_rank is None else self.node_rank,
                -1 if self.rank is None else self.rank, first.file, first.line)


@dataclass(frozen=True)
class Mark:
    """One line that shows where a Worker or a process got: a stage of its timeline, or the last
    thing it did. `time` is the line's own time, where it carries one."""

    stage: MarkStage
    file: str
    line: int
    text: str
    time: datetime | None = None


@dataclass(frozen=True)
class WorkerSummary:
    label: str
    node_rank: int | None
    host: str | None
    files: tuple[str, ...]
    nnodes: int | None
    gpus_per_node: int | None
    total_procs: int | None
    master: str | None
    ranks: tuple[int, ...]
    reached_first_batch: bool
    stage: RunStage
    last_activity: datetime | None
    stages: tuple[Mark, ...] = ()      # its timeline (a stage it never got to is left out)
    last_line: Mark | None = None      # the last line of its log
    findings: tuple[str, ...] = ()     # fingerprints of the findings about this Worker
    # When its log last moved, as a report may state it: its last timed line, else its file's
    # mtime only where that can be the job's time (logscan.diagnose.clock).
    last_known: datetime | None = None
    # Nothing of its processes is in its log, yet they trained: the world it launched into did
    # (production scripts log from rank 0 only; logscan.model.build._trained_silently).
    trained_silently: bool = False


@dataclass(frozen=True)
class ProcessSummary:
    rank: int
    node_rank: int | None
    local_rank: int | None
    world_size: int | None
    stage: RunStage       # where it stopped: init or training
    failed: str | None    # what it failed with, if it did
    cascade: bool         # its failure was a consequence of another's
    role: ProcessRole = ProcessRole.NO_FAILURE
    stages: tuple[Mark, ...] = ()      # its own timeline: env printed, progress it logged, failure
    last_line: Mark | None = None      # the last line logscan attributes to this rank


@dataclass(frozen=True)
class Place:
    node_rank: int | None
    rank: int | None


@dataclass(frozen=True)
class NovelLine:
    """A line of the failing rank that its peers did not print: `why` says what sets it apart
    ("only on rank 3"), `score` how much (0 to 1: rarer and nearer the rank's end is higher)."""

    file: str
    line: int
    text: str
    score: float
    why: str
    last: bool = False   # the failing rank's last line: where it stopped


@dataclass(frozen=True)
class HarmlessNote:
    """A known-harmless warning the logs hold (the catalogue's `rules/harmless/`), named once:
    what it means, where it first appears, and how many lines of it there are."""

    rule: str
    meaning: str
    file: str
    line: int
    text: str
    count: int
    reference: str = ""


@dataclass(frozen=True)
class ExpectationResult:
    """One expectation a gate asked for, held to the logs. Not met, its finding (same rule id)
    says what the logs show instead and `why` is that finding's message; not checked, `why` says
    what the lines lack to show it."""

    rule: str
    asked: str        # as typed: `--expect-workers 2`
    status: ExpectationStatus
    why: str = ""


@dataclass(frozen=True)
class InputNote:
    path: str
    problem: str
    minor: bool = False   # nothing the diagnosis missed (files that are not logs): shown with -v


@dataclass(frozen=True)
class Diagnosis:
    job: str
    workers: tuple[WorkerSummary, ...]
    processes: tuple[ProcessSummary, ...]
    findings: tuple[Finding, ...]
    root_cause: Finding | None       # the one of `findings` that explains the job
    first_failure: Place | None
    reached_first_batch: bool
    missing_node_ranks: tuple[int, ...]
    missing_ranks: tuple[int, ...]
    verdict: Verdict = Verdict.INCONCLUSIVE
    verdict_reason: str = ""
    # What a CI report tracks for a failing verdict with no error finding to name.
    verdict_fingerprint: str = ""
    job_status: JobStatus | None = None
    config_file: str | None = None   # the settings file this run read, if any
    inputs: tuple[InputNote, ...] = ()
    skipped: tuple[str, ...] = ()
    files_scanned: int = 0
    bytes_scanned: int = 0
    lines_scanned: int = 0
    time_axis: TimeAxis = TimeAxis.ORDER
    # Where a hang left processes (or Workers, rank None) waiting: the report shows each one's
    # last line.
    stuck: tuple[Place, ...] = ()
    # The failing rank's lines that set it apart from its peers, most telling first; none for a
    # healthy or still running job.
    novel_lines: tuple[NovelLine, ...] = ()
    # What the report says once about its times: a file's time shown, or none known.
    clock_note: str = ""
    finished: str | None = None     # how the logs say the run ended (`30/30 steps`), if they do
    # Known-harmless warnings found, each once, when nothing failed (none for a failed job: its
    # failure is the news).
    harmless: tuple[HarmlessNote, ...] = ()
    # Not one line of the logs says anything failed: no error finding, no error-like line.
    no_failure_seen: bool = False
    # What a gate (`logscan check`) asked the logs to show, each with what it found: the gate's
    # result, apart from the verdict and root cause, which are the job's.
    expectations: tuple[ExpectationResult, ...] = ()

    @property
    def healthy(self) -> bool:
        return self.verdict == Verdict.HEALTHY

    @property
    def fails(self) -> bool:
        """A gate does not pass it: the job FAILED, or the logs show nothing to judge."""
        return self.verdict in FAILING_VERDICTS

    @property
    def unexplained(self) -> bool:
        """No rule names what failed: the job is inconclusive or its root is unexplained-failure.
        Its novel lines are then what a reader has to go on, and reports lead with them."""
        root = self.root_cause
        return self.verdict == Verdict.INCONCLUSIVE or (root is not None and root.rule == UNEXPLAINED_FAILURE)

    @property
    def unmet(self) -> tuple[ExpectationResult, ...]:
        """The expectations not met: each fails the gate whatever the verdict."""
        return tuple(e for e in self.expectations if e.status == ExpectationStatus.NOT_MET)

    def is_expectation(self, f: Finding) -> bool:
        """`f` is an unmet expectation's finding: the gate's result, not the job's."""
        return any(e.rule == f.rule for e in self.unmet)

    def consequences_of(self, f: Finding) -> list[Finding]:
        """The findings that follow from `f` (the root cause's cascades)."""
        return [c for c in self.findings if f.fingerprint and c.caused_by == f.fingerprint]

    def summary(self) -> str:
        """The one-line verdict: what every renderer leads with."""
        if self.verdict == Verdict.RUNNING:
            progress = "past the first batch" if self.reached_first_batch else "not past the first batch yet"
            warnings = sum(f.severity == Severity.WARNING for f in self.findings)
            return (f"{self.verdict} {self.job}: {len(self.workers)} Worker(s), {progress}, no failure so far"
                    + (f", {warnings} warning(s)" if warnings else ""))
        if self.verdict == Verdict.HEALTHY:
            warnings = sum(f.severity == Severity.WARNING for f in self.findings)
            got = f"finished ({self.finished})" if self.finished else "reached the first batch"
            return (f"{self.verdict} {self.job}: {len(self.workers)} Worker(s), {got}"
                    + (f", {warnings} warning(s)" if warnings else ""))
        if self.verdict == Verdict.INCONCLUSIVE:
            said = "no failure in these lines; " if self.no_failure_seen else ""
            return f"{self.verdict} {self.job}: {said}{self.verdict_reason}"
        root = self.root_cause
        if root is None:
            return f"{self.verdict} {self.job}"
        return f"{self.verdict} {self.job}: {root.title}"

    def worst_severity(self) -> Severity | None:
        if not self.findings:
            return None
        return min((f.severity for f in self.findings), key=SEVERITY_ORDER.__getitem__)


def number_ranges(items, sep: str = ", ") -> str:
    """`0-511, 600` for a long run of ints, so a large world still reads in one line."""
    return sep.join(text for text, _ in range_pieces(items))


def range_pieces(items) -> list[tuple[str, int]]:
    """(text, how many items it stands for): `a-b` for a run of three or more ints, each other
    item alone (ints sorted; anything else as given)."""
    items = list(items)
    if not all(isinstance(i, int) for i in items):
        return [(str(i), 1) for i in items]
    ordered, pieces, start = sorted(items), [], 0
    for i in range(1, len(ordered) + 1):
        if i == len(ordered) or ordered[i] != ordered[i - 1] + 1:
            run = ordered[start:i]
            pieces += [(f"{run[0]}-{run[-1]}", len(run))] if len(run) > 2 else [(str(n), 1) for n in run]
            start = i
    return pieces


def format_duration(value: timedelta) -> str:
    """A duration as reports and messages say it, to the second: `30 min`, `7 min 12 s`, `1 h`."""
    seconds = round(value.total_seconds())
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if seconds >= size:
            parts.append(f"{seconds // size} {unit}")
            seconds %= size
    return " ".join(parts) or "0 s"


def place_label(node_rank: int | None, rank: int | None) -> str:
    parts = []
    if node_rank is not None:
        parts.append(f"node {node_rank}")
    if rank is not None:
        parts.append(f"rank {rank}")
    return f" ({', '.join(parts)})" if parts else ""
