"""events → per-Worker facts → the job model that rules read.

A Worker is one launch command's log stream (rotated pieces joined), split further only when one
file holds launch lines of several node_ranks (Workers that shared a log path).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import re

from logscan.catalogue import Catalogue
from logscan.files.discovery import LogFile
from logscan.scan.prefixes import clean
from logscan.scan.events import EnvPrint, EventLists, FileScan, LaunchLine, Progress, Where


@dataclass(eq=False)  # a Worker is an identity, compared and hashed as one
class Worker(EventLists):
    stream: str
    node_rank: int | None
    files: list[str] = field(default_factory=list)
    scans: list[FileScan] = field(default_factory=list)
    shared_file: bool = False
    rank_offset: int | None = None   # set by build_job

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    @property
    def label(self) -> str:
        return f"node {self.node_rank}" if self.node_rank is not None else self.stream

    @property
    def launch(self) -> LaunchLine | None:
        return self.launches[0] if self.launches else None

    @property
    def gpus(self) -> int | None:
        return self.launch.gpus_per_node if self.launch else None

    @property
    def host(self) -> str | None:
        hosts = [e.host for e in self.exits if e.host]
        return hosts[0] if hosts else None

    @property
    def ranks(self) -> range | None:
        """The global ranks of this Worker's processes, when its launch line and the launch lines
        of the lower node_ranks say them."""
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

    @property
    def last_progress(self) -> Progress | None:
        order = {name: i for i, name in enumerate(self.files)}
        return max(self.progress, key=lambda p: (order.get(p.where.file, 0), p.where.line), default=None)

    def progress_fraction(self) -> float | None:
        """How far the last progress line says training got, when it says `N/M` (tqdm, step N/M)."""
        last = self.last_progress
        if last is None:
            return None
        # What the last carriage return left on screen: a redrawn bar's last state.
        fractions = [int(n) / int(m) for n, m in _N_OF_M.findall(clean(last.where.text))
                     if int(m) > 0 and int(n) <= int(m)]
        return min(fractions) if fractions else None

    @property
    def ran_torchrun(self) -> bool:
        """The launch line was printed, or torchrun itself left traces (its own logs, a traceback
        of its own, rendezvous messages): other launch scripts print no launch line."""
        return (self.launch is not None or self.started_processes or bool(self.hits)
                or any(x.agent for x in self.exceptions))

    def error_lines(self, catalogue: Catalogue) -> list[Where]:
        """Lines of this Worker that look like errors, in line order: exception lines (with or
        without a traceback header), non-zero exit codes, and every catalogue hit that is more
        than information."""
        informational = catalogue.informational
        lines = [x.where for x in self.exceptions]
        lines += [e.where for e in self.exits if e.exitcode]
        lines += [h.where for h in self.hits if h.rule_id not in informational]
        order = {name: i for i, name in enumerate(self.files)}
        return sorted(dict.fromkeys(lines), key=lambda w: (order.get(w.file, 0), w.line))

    @property
    def started_processes(self) -> bool:
        """torchrun got past rendezvous and spawned training processes."""
        return bool(self.envs or self.progress or any(e.exitcode is not None for e in self.exits)
                    or any(x.where.rank is not None for x in self.exceptions)
                    or any(h.where.rank is not None for h in self.hits))

    @property
    def last_line(self) -> Where | None:
        lines = [s.last_line for s in self.scans if s.last_line is not None]
        return lines[-1] if lines else None

    def last_activity(self) -> datetime | None:
        """When the log last moved: its last aware timestamp, else the file's mtime."""
        times = [s.last_time for s in self.scans if s.last_time and s.last_time.tzinfo]
        if times:
            return max(times)
        mtimes = [s.mtime for s in self.scans if s.mtime]
        return datetime.fromtimestamp(max(mtimes), timezone.utc) if mtimes else None

    def global_rank(self, where: Where, groups: dict | None = None) -> int | None:
        if where.rank is not None:
            return where.rank
        groups = groups or {}
        if groups.get("rank", "").lstrip("-").isdigit():
            return int(groups["rank"])
        local = where.local_rank
        if local is None and groups.get("local_rank", "").isdigit():
            local = int(groups["local_rank"])
        if local is not None and self.rank_offset is not None:
            return self.rank_offset + local
        if self.gpus == 1 and self.rank_offset is not None:
            return self.rank_offset
        return None


@dataclass(frozen=True, slots=True)
class LaunchFacts:
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
    def of(cls, worker: Worker) -> "LaunchFacts":
        launch = worker.launch
        return cls(worker, worker.node_rank, launch.nnodes, launch.gpus_per_node,
                   launch.total_procs, launch.master_addr, launch.master_port, worker.rank_offset)


@dataclass
class Job:
    name: str
    workers: list[Worker]
    scans: list[FileScan]
    catalogue: Catalogue
    job_status: str | None = None
    job_status_source: str | None = None
    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    stall_after: timedelta = timedelta(minutes=30)
    # Facts every rule may read, computed once by build_job.
    launched: list[Worker] = field(default_factory=list)   # Workers that printed a launch line
    nnodes: int | None = None              # the node count most launch lines agree on
    uniform_gpus: int | None = None        # gpus_per_node, when every launch line says the same
    expected_processes: int | None = None  # the training processes the launch lines add up to
    progressed: bool = False               # some Worker logged progress
    prints_env: bool = False               # some process printed its torchrun env
    # The env prints name every rank the launch lines add up to, and training went on: a log
    # several Workers wrote may keep one launch line but every process's own print.
    every_rank_trained: bool = False
    failures: list = field(default_factory=list)  # per-process failures (logscan.model.failures)
    _failures_by_worker: dict = field(default_factory=dict, repr=False)
    launch_facts: list[LaunchFacts] = field(default_factory=list)  # one per `launched` Worker

    def failures_of(self, worker: Worker) -> list:
        """The failures of one Worker's processes, in `failures` order."""
        return self._failures_by_worker.get(id(worker), [])

    def stage_of(self, worker: Worker) -> str:
        """Where a Worker stopped: launch → rendezvous → init (processes spawned) → training."""
        if not worker.ran_torchrun:
            return "launch"
        if not worker.started_processes:
            return "rendezvous"
        if not self.reached_first_batch(worker):
            return "init"
        return "training"

    def reached_first_batch(self, worker: Worker) -> bool:
        # Ranks usually log progress on rank 0 only; DDP synchronises every step, so progress
        # anywhere means every process that had started passed its first batch.
        return bool(worker.progress) or (self.progressed and worker.started_processes)

    def workers_by(self, *fields: str) -> dict:
        """Launched Workers grouped by some LaunchFacts fields, in the order each value first
        appears (Workers lacking one of the values are left out): one field's value is the key,
        several fields' values make a tuple."""
        groups: dict = {}
        for facts in self.launch_facts:
            values = tuple(getattr(facts, name) for name in fields)
            if any(value is None for value in values):
                continue
            groups.setdefault(values if len(fields) > 1 else values[0], []).append(facts.worker)
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


def _split_by_launch(stream: str, scans: list[FileScan]) -> list[Worker]:
    """One Worker per node_rank the stream's launch lines claim (one, unless the log was shared)."""
    node_ranks = list(dict.fromkeys(l.node_rank for s in scans for l in s.launches))
    if len(node_ranks) <= 1:
        worker = Worker(stream, node_ranks[0] if node_ranks else None)
        for scan in scans:
            _absorb(worker, scan)
        return [worker]
    workers = {node_rank: Worker(stream, node_rank, shared_file=True) for node_rank in node_ranks}
    node_of_rank = _rank_ranges(scans)
    for scan in scans:
        # A line that names its process's rank (an env print, a `[rank3]:` prefix, a summary
        # entry) belongs to that rank's node: Workers appending to one log interleave. Other
        # lines belong to the node_rank of the launch line above them (the first one's, above
        # it): one binary search per event.
        marks = sorted((l.where.line, l.node_rank) for l in scan.launches)
        lines = [line for line, _ in marks]
        def owner(event, marks=marks, lines=lines) -> int | None:
            rank = getattr(event, "rank", None)
            if rank is None:
                rank = event.where.rank
            if rank is not None and (node := node_of_rank(rank)) is not None:
                return node
            if not marks:
                return None
            return marks[max(bisect_right(lines, event.where.line) - 1, 0)][1]
        _deal(workers, scan, owner)
    return list(workers.values())


def _rank_starts(gpus: dict[int, int]) -> list[int]:
    """starts[n]: the global rank of node_rank n's local rank 0 (the GPUs of node_ranks 0..n-1),
    for as long as every node_rank below has a GPU count; the last entry ends the last range."""
    starts = [0]
    while len(starts) - 1 in gpus:
        starts.append(starts[-1] + gpus[len(starts) - 1])
    return starts


def _rank_ranges(scans: list[FileScan]):
    """rank → node_rank, from the launch lines of a shared log, when they give every node_rank
    below the highest one its GPU count; else a lookup that knows nothing."""
    gpus: dict[int, int] = {}
    for scan in scans:
        for launch in scan.launches:
            if launch.node_rank is not None and launch.gpus_per_node:
                gpus.setdefault(launch.node_rank, launch.gpus_per_node)
    starts = _rank_starts(gpus)
    if not gpus or len(starts) - 1 != len(gpus):
        return lambda rank: None

    def node_of(rank: int) -> int | None:
        if not 0 <= rank < starts[-1]:
            return None
        return bisect_right(starts, rank) - 1

    return node_of


_EVENT_KINDS = ("envs", "progress", "hits", "exceptions", "exits")  # launch lines apart


def _deal(workers: dict, scan: FileScan, owner) -> None:
    """Each event of a shared file to the Worker of its node_rank, in one pass over the events."""
    for worker in workers.values():
        _add_file(worker, scan)
    for kind in _EVENT_KINDS:
        for event in getattr(scan, kind):
            worker = workers.get(owner(event))
            if worker is not None:
                getattr(worker, kind).append(event)
    for launch in scan.launches:
        worker = workers.get(launch.node_rank)
        if worker is not None and owner(launch) == launch.node_rank:
            worker.launches.append(launch)


_N_OF_M = re.compile(r"(?<![\d/.:-])(\d+)\s*/\s*(\d+)(?![\d/.:-])")


def _add_file(worker: Worker, scan: FileScan) -> None:
    if scan.display not in worker.files:
        worker.files.append(scan.display)
        worker.scans.append(scan)


def _absorb(worker: Worker, scan: FileScan) -> None:
    """Every event of a file to its one Worker."""
    _add_file(worker, scan)
    for kind in _EVENT_KINDS:
        getattr(worker, kind).extend(getattr(scan, kind))
    worker.launches += scan.launches


def _assign_rank_offsets(workers: list[Worker]) -> None:
    """Global rank of local rank 0 per Worker: the sum of the GPUs of lower node_ranks."""
    below = _rank_starts({w.node_rank: w.gpus for w in workers if w.node_rank is not None and w.gpus})
    for worker in workers:
        if worker.node_rank is None or not worker.gpus:
            continue
        if worker.node_rank < len(below):
            worker.rank_offset = below[max(worker.node_rank, 0)]
        else:
            worker.rank_offset = worker.node_rank * worker.gpus


def build_job(name: str, logs: list[LogFile], scans: list[FileScan], catalogue: Catalogue,
              **settings) -> Job:
    by_stream: dict[str, list[FileScan]] = {}
    for log, scan in zip(logs, scans):
        by_stream.setdefault(log.stream, []).append(scan)
    workers = [w for stream, group in by_stream.items() for w in _split_by_launch(stream, group)]
    workers.sort(key=lambda w: (w.node_rank is None, w.node_rank or 0, w.stream))
    _assign_rank_offsets(workers)
    job = Job(name=name, workers=workers, scans=scans, catalogue=catalogue, **settings)
    job.launched = [w for w in workers if w.launch is not None]
    job.launch_facts = [LaunchFacts.of(w) for w in job.launched]
    job.nnodes = _agreed_nnodes(job.launched)
    gpu_counts = {w.launch.gpus_per_node for w in job.launched}
    job.uniform_gpus = gpu_counts.pop() if len(gpu_counts) == 1 else None
    if job.launched and job.nnodes == len(job.launched):
        job.expected_processes = sum(w.gpus or 0 for w in job.launched) or None
    job.progressed = any(w.progress for w in workers)
    job.prints_env = any(w.envs for w in workers)
    job.every_rank_trained = _every_rank_trained(job)
    from logscan.model.failures import process_failures  # they read the facts above

    job.failures = process_failures(job)
    for failure in job.failures:
        job._failures_by_worker.setdefault(id(failure.worker), []).append(failure)
    return job


def _every_rank_trained(job: Job) -> bool:
    totals = {w.launch.total_procs for w in job.launched if w.launch.total_procs}
    if len(totals) != 1 or not job.progressed:
        return False
    total = totals.pop()
    seen = {e.rank for w in job.workers for e in w.envs if e.rank is not None and 0 <= e.rank < total}
    return len(seen) == max(total, 0)


def _agreed_nnodes(launched: list[Worker]) -> int | None:
    """The node count most launch lines agree on (ties: the larger)."""
    counts = Counter(w.launch.nnodes for w in launched if w.launch.nnodes is not None)
    if not counts:
        return None
    return max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0]
