"""events → the job model: a job's file scans dealt to its Workers (a shared log split by the
launch lines of its node_ranks), rank offsets assigned, then each process's failures found."""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter

from logscan.catalogue import Catalogue
from logscan.files.discovery import LogFile
from logscan.model.failures import process_failures
from logscan.model.job import Job, LaunchShape, Worker
from logscan.catalogue import Group
from logscan.limits import COLLECTIVES_AT_STARTUP
from logscan.rule_ids import COLLECTIVE_TIMEOUT_LINE, WORKER_GROUP_RESTART
from logscan.scan.events import EventLists, FileScan


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
    _set_aside_recovered_attempts(workers)
    job = Job(name=name, workers=workers, scans=scans, catalogue=catalogue, **settings)
    job.launched = [w for w in workers if w.launch is not None]
    job.launch_shapes = [LaunchShape.of(w) for w in job.launched]
    job.nnodes = _agreed_nnodes(job.launched)
    gpu_counts = {w.launch.gpus_per_node for w in job.launched}
    job.uniform_gpus = gpu_counts.pop() if len(gpu_counts) == 1 else None
    if job.launched and job.nnodes == len(job.launched):
        job.expected_processes = sum(w.gpus or 0 for w in job.launched) or None
    job.progressed = any(w.progress for w in workers)
    job.training_started = job.progressed or _training_evidence(workers)
    job.prints_env = any(w.envs for w in workers)
    job.every_rank_trained = _every_rank_trained(job)

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


def _last_attempt_start(worker: Worker) -> tuple[int, int] | None:
    """Where torchrun's last attempt at running this Worker's group began, when it restarted
    it: the first env print of the last block that prints a process's env again (what the
    default log level shows), else its last `will restart worker group` line (LOGLEVEL=INFO)."""
    start, seen = None, set()
    for env in sorted(worker.envs, key=lambda e: worker.position(e.where)):
        key = (env.rank, env.local_rank)
        if key in seen:
            start, seen = worker.position(env.where), set()
        seen.add(key)
    restarts = [worker.position(h.where) for h in worker.hits if h.rule_id == WORKER_GROUP_RESTART]
    if start is None and restarts:
        start = max(restarts)
    return start


def _set_aside_recovered_attempts(workers: list[Worker]) -> None:
    """A restart that recovered: the last attempt went on (progress after its start, on this
    Worker or, as DDP steps together, on another one that restarted) and nothing in it failed.
    Then the earlier attempts' failures are history: they move to `earlier_attempts`, and the
    outcome is the last attempt's."""
    starts = {id(w): start for w in workers if (start := _last_attempt_start(w)) is not None}

    def went_on(worker: Worker) -> bool:
        last = worker.last_progress
        return last is not None and worker.position(last.where) >= starts[id(worker)]

    job_went_on = any(went_on(w) for w in workers if id(w) in starts)
    for worker in workers:
        start = starts.get(id(worker))
        if start is None or not (job_went_on or went_on(worker)):
            continue

        def later(where, start=start, worker=worker) -> bool:
            return worker.position(where) >= start

        if any(later(e.where) for e in worker.exits if e.exitcode) or \
                any(later(x.where) for x in worker.exceptions if not x.agent):
            continue  # the last attempt failed too: restart-loop tells it
        worker.earlier_attempts = EventLists(
            hits=[h for h in worker.hits if not later(h.where)],
            exceptions=[x for x in worker.exceptions if not later(x.where)],
            exits=[e for e in worker.exits if not later(e.where)])
        worker.hits = [h for h in worker.hits if later(h.where)]
        worker.exceptions = [x for x in worker.exceptions if later(x.where)]
        worker.exits = [e for e in worker.exits if later(e.where)]


def _training_evidence(workers: list[Worker]) -> bool:
    """A line that says training had started, without a progress line: a collective numbered
    past start-up. (A frame in backward says only that its rank got to its first backward pass,
    where every rank waits for the slowest one's first batch.)"""
    for worker in workers:
        for hit in worker.hits:
            if hit.rule_id == COLLECTIVE_TIMEOUT_LINE:
                seq = hit.group(Group.SEQ)
                if seq is not None and seq.isdigit() and int(seq) > COLLECTIVES_AT_STARTUP:
                    return True
    return False
