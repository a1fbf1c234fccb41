"""events → the job model: a job's file scans dealt to its Workers (a shared log split by the
launch lines of its node_ranks), rank offsets assigned, then each process's failures found."""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import replace

from logscan.catalogue import Catalogue
from logscan.files.discovery import LogFile
from logscan.model import training
from logscan.model.failures import SIGTERM, process_failures
from logscan.model.job import (ROUND_FAILURE, ROUND_MEMBERSHIP, ROUND_START, Job, LaunchShape, Round,
                               Worker, tells_a_process)
from logscan.catalogue import Group
from logscan.rule_ids import (RENDEZVOUS_ROUND, SIBLING_TERMINATED, WORKER_GROUP_RESTART,
                              WORKER_GROUP_SUCCEEDED)
from logscan.scan.clock import resolve_years
from logscan.scan.events import TORCHRUN_LINES, AgentShape, EventLists, FileScan, LaunchLine
from logscan.scan.lineparse import AGENT_CONFIGS, AGENT_RESULT
from logscan.vocabulary import JobStatus


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


_EVENT_KINDS = ("envs", "progress", "hits", "exceptions", "exits", "agent_shapes")  # launch lines apart


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


def _told(name: str, *blocks: AgentShape | None):
    """The first of the blocks that tells `name`, and what it tells."""
    return next(((block, value) for block in blocks
                 if block is not None and (value := getattr(block, name)) is not None), (None, None))


def _shape_from_torchrun(worker: Worker) -> LaunchLine | None:
    """What torchrun's own INFO lines say of the Worker's node, in a launch line's terms: its last
    launch configs and its last rendezvous result (the world it ended in; an elastic world may
    give the node another group rank each round). The result says what torchrun formed (group
    rank, local world size, first global rank, WORLD_SIZE); the configs say what it was launched
    with (max_nodes, nproc_per_node, the rendezvous endpoint, a static rendezvous's node rank), as
    a launch line would. None when neither block is in the log: torchrun's lines are never
    required."""
    configs = next((s for s in reversed(worker.agent_shapes) if s.block == AGENT_CONFIGS), None)
    result = next((s for s in reversed(worker.agent_shapes) if s.block == AGENT_RESULT), None)
    if configs is None and result is None:
        return None
    node_block, node_rank = _told("node_rank", result, configs)
    _, nnodes = _told("nnodes", configs, result)  # max_nodes, then the round's group_world_size
    _, gpus = _told("gpus_per_node", result, configs)
    master_block, addr = _told("master_addr", configs, result)
    used = [b for b in (configs, result) if b is not None]
    return LaunchLine(
        where=(node_block or used[0]).where, nnodes=nnodes, node_rank=node_rank, gpus_per_node=gpus,
        total_procs=result.total_procs if result else None, master_addr=addr,
        master_port=master_block.master_port if master_block else None,
        raw_fields=tuple(field for b in used for field in b.raw_fields),
        min_nnodes=configs.min_nnodes if configs else None, source=TORCHRUN_LINES,
        first_rank=result.first_rank if result else None)


def _fixed_nnodes(shape: LaunchLine) -> int | None:
    """The node count torchrun waited for when it could not start with fewer."""
    return shape.nnodes if shape.min_nnodes is None else None


def _declare_launch(worker: Worker) -> None:
    """The Worker's launch shape as one declaration (Worker.declared_launch). A launch line keeps
    its values: torchrun's lines only fill what it leaves out. Where the node's own torchrun
    logged another shape than the launch line claims, and the two cannot both be true (the number
    of processes it started, a fixed node count, a static rendezvous's node rank, which is
    --node_rank itself), the launch line is disputed: it did not describe the command that ran."""
    torchrun = _shape_from_torchrun(worker)
    launch = worker.launches[0] if worker.launches else None
    if launch is None:
        worker.declared_launch = torchrun
        if worker.node_rank is None and torchrun is not None:
            worker.node_rank = torchrun.node_rank
        return
    if torchrun is None:
        return
    gaps = {name: getattr(torchrun, name) for name in ("nnodes", "node_rank", "gpus_per_node", "total_procs")
            if getattr(launch, name) is None and getattr(torchrun, name) is not None}
    if launch.master_addr is None and launch.master_port is None:
        gaps.update(master_addr=torchrun.master_addr, master_port=torchrun.master_port)
    static = any(s.rdzv_backend == "static" for s in worker.agent_shapes)
    claims = [("gpus_per_node", launch.gpus_per_node, torchrun.gpus_per_node),
              ("nnodes", _fixed_nnodes(launch), _fixed_nnodes(torchrun))]
    if static:
        claims.append(("node_rank", launch.node_rank, torchrun.node_rank))
    disputed = tuple((name, said, ran) for name, said, ran in claims
                     if said is not None and ran is not None and said != ran)
    worker.declared_launch = replace(launch, **gaps, first_rank=torchrun.first_rank, disputed=disputed)
    if worker.node_rank is None:
        worker.node_rank = worker.declared_launch.node_rank


def _ranks_from_torchrun_reports(workers: list[Worker]) -> None:
    """Where no launch line numbers the Workers, torchrun's failure reports and the processes' own
    rank lines still place them: an entry's rank less its local rank is the Worker's first global
    rank, and a Worker whose process says it is global rank 0 starts at 0. torchrun gives node_rank
    n the ranks from n x nproc_per_node, so the Worker whose first rank is 0 is node 0; when every
    Worker's first rank is known, their order numbers them all."""
    unnumbered = [w for w in workers if not w.launches and w.node_rank is None]
    offsets = {}
    for worker in unnumbered:
        firsts = {e.rank - e.local_rank for e in (*worker.exits, *worker.envs)
                  if e.rank is not None and e.local_rank is not None and e.rank >= e.local_rank}
        if not firsts and any(e.rank == 0 for e in worker.envs):
            # A rank line naming global rank 0 and no local rank (Lightning's): rank 0 is the
            # first rank of node 0 whatever the local ranks.
            firsts = {0}
        if len(firsts) == 1:
            offsets[id(worker)] = firsts.pop()
    for worker in unnumbered:
        if id(worker) in offsets:
            worker.rank_offset = offsets[id(worker)]
    if len(unnumbered) == len(workers) and len(offsets) == len(workers) \
            and len(set(offsets.values())) == len(workers) and min(offsets.values()) == 0:
        for node_rank, worker in enumerate(sorted(workers, key=lambda w: offsets[id(w)])):
            worker.node_rank = node_rank
        return
    for worker in unnumbered:
        if offsets.get(id(worker)) == 0 and not any(w.node_rank == 0 for w in workers):
            worker.node_rank = 0


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
    for worker in workers:
        # torchrun's rendezvous result names the node's first global rank: what it gave its
        # processes, on a Worker no launch line places (a launch line's arithmetic stands).
        first = worker.launch.first_rank if worker.launch is not None else None
        if first is not None and (not worker.launches or worker.rank_offset is None):
            worker.rank_offset = first


def build_job(name: str, logs: list[LogFile], scans: list[FileScan], catalogue: Catalogue,
              **settings) -> Job:
    scans = resolve_years(scans)
    by_stream: dict[str, list[FileScan]] = {}
    for log, scan in zip(logs, scans):
        by_stream.setdefault(log.stream, []).append(scan)
    workers = [w for stream, group in by_stream.items() for w in _split_by_launch(stream, group)]
    for worker in workers:
        _declare_launch(worker)
        worker.tasks_are_ranks = _tasks_are_ranks(worker)
    _ranks_from_torchrun_reports(workers)
    workers.sort(key=lambda w: (w.node_rank is None, w.node_rank or 0, w.stream))
    _assign_rank_offsets(workers)
    waits = catalogue.rendezvous_waits
    for worker in workers:
        # Before earlier attempts are set aside: every round's lines tell where rounds begin.
        worker.rounds = _split_rounds(worker, waits)
    _restarted_silently(workers)
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
    job.training_started = training.job_wide(workers)
    job.prints_env = any(w.envs for w in workers)
    job.every_rank_trained = _every_rank_trained(job)
    job.elastic = _elastic(job)
    job.elastic_beyond_repeats = job.elastic and _elastic(job, repeats_re_form=False)
    for worker in workers:
        if _trained_silently(job, worker):
            worker.trained_silently = True
            worker.rounds[-1] = replace(worker.rounds[-1], started=True)

    job.failures = process_failures(job)
    for failure in job.failures:
        job._failures_by_worker.setdefault(id(failure.worker), []).append(failure)
    return job


def _tasks_are_ranks(worker: Worker) -> bool:
    """srun --label tagged its lines and nothing shows a torchrun between srun and the training
    processes: srun started them itself, one task a process, and its task id is the global rank.
    torchrun shows by its own lines (its launch, banner, rendezvous, its exception, its stop of a
    process), its reports naming a process, or the `[rankN]:`/`[defaultN]:` tags it puts on its
    children's lines; a training process's own error line shows nothing of it."""
    lines = [e.where for kind in (worker.hits, worker.exceptions, worker.envs) for e in kind]
    if not any(w.task is not None for w in lines):
        return False
    return not (worker.shows_start_up or any(x.agent for x in worker.exceptions)
                or any(e.rank is not None or e.local_rank is not None for e in worker.exits)
                or any(h.rule_id in (SIBLING_TERMINATED, WORKER_GROUP_RESTART) for h in worker.hits)
                or any(w.rank is not None or w.local_rank is not None for w in lines))


def _trained_silently(job: Job, worker: Worker) -> bool:
    """A Worker whose log shows torchrun but no process of its own (production scripts print
    progress from rank 0 only, and no env line), in a job that trained. A fixed world starts no
    process before every node has joined, and DDP steps together: the progress of any rank says
    that every process of the world took that step. So the Worker trained, unless its own lines
    tell another story of torchrun's: a wait in rendezvous, a launch that failed, torchrun's own
    exception (a process's exception, even a handled one, says processes ran). A world that may
    form without it (elastic) needs the platform's word that every launch command succeeded."""
    if not job.training_started or worker.final_round.started:
        return False
    # torchrun's own word that it ran there: any other line (a traceback) may be from before it.
    if not worker.shows_start_up:
        return False
    catalogue = job.catalogue
    if any(h.rule_id in catalogue.rendezvous_waits or h.rule_id in catalogue.launch_failures
           for h in worker.hits) or any(x.agent for x in worker.exceptions):
        return False
    return not job.elastic or job.job_status == JobStatus.SUCCEEDED or _re_formed_and_trained(job)


def _progressed_in_last_round(worker: Worker) -> bool:
    """The Worker ran more than one round and logged progress after its last one opened: the
    last attempt went on."""
    start, progress = _last_attempt_start(worker), worker.last_progress
    return start is not None and progress is not None and worker.position(progress.where) >= start


def _re_formed_and_trained(job: Job) -> bool:
    """Some Worker's world re-formed because nodes joined (a membership round, not a failure's)
    and trained on: the nodes that joined are among those that show no wait of their own."""
    return any(w.rounds[-1].reason == ROUND_MEMBERSHIP and _progressed_in_last_round(w) for w in job.workers)


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
    """Where the last round torchrun ran this Worker's group in began, when it ran more than one
    (a restart after a failure, or a world re-formed)."""
    last = worker.rounds[-1] if worker.rounds else None
    if last is None or last.index == 0 or last.opened_at is None:
        return None
    return worker.position(last.opened_at)


def _restarted_silently(workers: list[Worker]) -> None:
    """A Worker whose group torchrun stopped after a failure, and whose log then says nothing,
    while another Worker's group restarted after a failure and trained on: a restarted world
    forms only with every node, so this one restarted too, printing nothing (production scripts
    log from rank 0 only). Its log gets that silent round, opened after its last stop line."""
    if not any(w.rounds[-1].reason == ROUND_FAILURE and _progressed_in_last_round(w) for w in workers):
        return
    for worker in workers:
        if len(worker.rounds) != 1:
            continue
        stops = [h.where for h in worker.hits
                 if h.rule_id == SIBLING_TERMINATED and h.group(Group.SIGNAL) is not None]
        failed = [x.where for x in worker.exceptions if not x.agent] + \
            [e.where for e in worker.exits if e.exitcode not in (None, 0, SIGTERM)]
        if not stops or not failed:
            continue
        last_stop = max(stops, key=worker.position)
        if max(worker.position(w) for w in failed) < worker.position(last_stop):
            worker.rounds.append(Round(1, last_stop, ROUND_FAILURE, (), False))


def _set_aside_recovered_attempts(workers: list[Worker]) -> None:
    """A restart that recovered: the last attempt went on (progress after its start, on this
    Worker or, as DDP steps together, on another one that restarted) and nothing in it failed.
    Then the earlier attempts' failures are history: they move to `earlier_attempts`, and the
    outcome is the last attempt's."""
    starts = {id(w): start for w in workers if (start := _last_attempt_start(w)) is not None}
    job_went_on = any(_progressed_in_last_round(w) for w in workers)
    for worker in workers:
        start = starts.get(id(worker))
        if start is None or not (job_went_on or _progressed_in_last_round(worker)):
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


class _RoundBuilder:
    """A round while the Worker's lines are read: what it holds so far and how it stands."""

    def __init__(self, index: int, opened_at, reason: str):
        self.index, self.opened_at, self.reason = index, opened_at, reason
        self.envs: list = []
        self.local_ranks: set = set()
        self.started = False   # processes were spawned (Worker.started_processes, in the round)
        self.failed = False    # a process failed, or torchrun said the group failed
        self.stopped = False   # torchrun stopped the group
        self.group_world_size = self.global_world_size = None

    def opened_by(self, kind: str, event, groups: dict, waits: frozenset[str]) -> bool:
        """Does this line begin the next round?"""
        if kind == "env":
            # A second process of one local rank, or new processes after a stop. torchrun --tee
            # (`[default1]:` prefixes) copies each process's stdout by a thread of its own, so
            # there a print may come after the stop of its own round: only a repeat tells.
            teed = event.where.local_rank is not None
            return event.process_key in self.local_ranks or (self.stopped and not teed)
        if kind == "progress":
            # Progress after torchrun stopped the group is a restarted group's (--tee's copy
            # threads excepted, as above): production scripts print no env line to tell it.
            return self.stopped and event.where.local_rank is None
        if kind != "hit":
            return False
        if event.rule_id == RENDEZVOUS_ROUND:
            if Group.ROUND_OPENS in groups:  # every round's first line, the first round's too
                return self.stopped or self.started
            return self.stopped and (Group.GROUP_WORLD_SIZE in groups or Group.GLOBAL_WORLD_SIZE in groups)
        # After a healthy group's stop torchrun's next step is the rendezvous; after a failure
        # it may as well be tearing down, so there only new processes tell a restart.
        return event.rule_id in waits and self.stopped and not self.failed

    def read(self, kind: str, event, groups: dict) -> None:
        # As Worker.started_processes: a line a process wrote under its `[rankN]:` prefix too.
        self.started = self.started or event.where.rank is not None or (kind == "hit" and tells_a_process(event))
        if kind == "env":
            self.envs.append(event)
            self.local_ranks.add(event.process_key)
            self.started = True
        elif kind == "progress" or (kind == "hit" and event.rule_id == WORKER_GROUP_SUCCEEDED):
            self.started = True
        elif kind == "raised":
            self.failed = True
        elif kind == "exit":
            self.started = self.started or event.exitcode is not None
            self.failed = self.failed or event.exitcode not in (None, 0, SIGTERM)
        elif event.rule_id == SIBLING_TERMINATED and Group.SIGNAL in groups:
            self.stopped = True  # `Sending process N closing signal SIGTERM`
        elif event.rule_id == WORKER_GROUP_RESTART and Group.ATTEMPTS_LEFT in groups:
            self.failed = self.stopped = True  # `... FAILED. 2/3 attempts left; will restart`
        elif event.rule_id == RENDEZVOUS_ROUND:
            self.stopped = self.stopped or Group.GROUP_STOPPING in groups or Group.NEW_NODES in groups
            if Group.GROUP_WORLD_SIZE in groups:
                self.group_world_size = int(groups[Group.GROUP_WORLD_SIZE])
            if Group.GLOBAL_WORLD_SIZE in groups:
                self.global_world_size = int(groups[Group.GLOBAL_WORLD_SIZE])

    def build(self) -> Round:
        return Round(self.index, self.opened_at, self.reason, tuple(self.envs), self.started,
                     self.group_world_size, self.global_world_size)


def _split_rounds(worker: Worker, waits: frozenset[str]) -> list[Round]:
    """A Worker's lines cut into rendezvous rounds, in reading order.

    A round ends where torchrun stopped its worker group (its `closing signal` lines, the agent's
    `Stopping worker group`, `Detected N new nodes`, `... attempts left; will restart`), and the
    next one begins with the first sign of a new rendezvous after that stop: new env prints, the
    agent's `Rendezvous'ing worker group` or round result, or (after a healthy group's stop) a
    rendezvous that timed out. An env print of a local rank the round already printed is a new
    process, so a new round too: that holds when the stop lines are missing from the log. A stop
    with nothing after it (the group failed for good, or was stopped from outside) ends the log.
    """
    events = [(worker.position(e.where), "env", e) for e in worker.own_envs]
    events += [(worker.position(h.where), "hit", h) for h in worker.hits]
    events += [(worker.position(e.where), "exit", e) for e in worker.exits]
    events += [(worker.position(p.where), "progress", p) for p in worker.progress]
    # A training process that raised ended its group as a failure, whatever torchrun printed.
    events += [(worker.position(x.where), "raised", x) for x in worker.exceptions if not x.agent]
    # A line glued behind a bar (a record written after the bar's last redraw, before its newline)
    # came after the bar: on one line, progress is read first.
    events.sort(key=lambda item: (item[0], item[1] != "progress"))
    rounds = [_RoundBuilder(0, None, ROUND_START)]
    for _, kind, event in events:
        groups = dict(event.groups) if kind == "hit" else {}
        if rounds[-1].opened_by(kind, event, groups, waits):
            # torchrun stops a healthy group only to re-form the world: nodes joined or left,
            # or another node's restart called every agent back to the rendezvous.
            ended = rounds[-1]
            rounds.append(_RoundBuilder(ended.index + 1, event.where,
                                        ROUND_FAILURE if ended.failed else ROUND_MEMBERSHIP))
        rounds[-1].read(kind, event, groups)
    return [r.build() for r in rounds]


def _opened_by_repeat(round_: Round) -> bool:
    """The round's first line is a rank line (a process printed it again): no torchrun line
    opened it."""
    return bool(round_.envs) and round_.envs[0].where == round_.opened_at


def _elastic(job: Job, repeats_re_form: bool = True) -> bool:
    """Launched with a node range (the launch line's `nnodes=MIN:MAX`, the launch configs'
    min_nodes < max_nodes), the world re-formed around nodes that came or went, a smaller world
    trained without a node that was launched, or some Worker's rounds were given worlds of
    different sizes: torchrun itself set a smaller WORLD_SIZE then (a leaked platform value is
    the same in every round, and leaves the other nodes' ranks outside the world).
    `repeats_re_form=False`: a round that a rank line printed again opened, with no stop line
    before it, is no re-formed world (two nodes sharing one node rank and one log print that too)."""
    if any(w.launch.min_nnodes is not None and w.launch.min_nnodes < (w.launch.nnodes or 0)
           for w in job.launched):
        return True
    rounds = [r for w in job.workers for r in w.rounds]
    re_formed = [r for r in rounds if r.reason == ROUND_MEMBERSHIP and (repeats_re_form or not _opened_by_repeat(r))]
    if re_formed and not any(r.reason == ROUND_FAILURE for r in rounds):
        # A running group stopped for a new rendezvous while no group anywhere had failed: nodes
        # joined or left. A fixed node count starts no process before every node is there.
        return True
    if any(w.ran_torchrun and not w.started_processes for w in job.launched) and any(
            round_.started and shape.total_procs is not None
            and job.formed_world(round_.world_size, most=shape.total_procs - 1)  # a smaller world
            for shape in job.launch_shapes for round_ in shape.worker.rounds):
        # For the same reason: a smaller world trained while another Worker's torchrun never
        # started a process (a node that came late, or after the job had finished).
        return True
    for worker in job.workers:
        lines = worker.hits + (worker.earlier_attempts.hits if worker.earlier_attempts else [])
        told = {name: int(value) for h in lines if h.rule_id == RENDEZVOUS_ROUND
                for name, value in h.groups if name in (Group.MIN_NODES, Group.MAX_NODES)}
        if Group.MIN_NODES in told and told[Group.MIN_NODES] < told.get(Group.MAX_NODES, 0):
            return True
        printed = {r.world_size for r in worker.rounds} - {None}
        formed = {r.group_world_size for r in worker.rounds} - {None}
        if len(printed) > 1 or len(formed) > 1:
            return True
    return False
