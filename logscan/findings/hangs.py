"""Hangs: a Worker stuck in rendezvous, processes that never reached their first batch, and a
collective that timed out once training had started. Each names the straggler where the logs do."""

from __future__ import annotations

import re

from logscan.catalogue import Group
from logscan.diagnosis import format_duration
from logscan.exit_signals import SIGNAL_EXCEPTION
from logscan.findings.base import finding, hits, plural
from logscan.findings.rank_lines import last_own_line
from logscan.limits import RENDEZVOUS_GIVES_UP
from logscan.model.failures import SIGTERM, Failure, awaited_ranks, is_stale
from logscan.model.job import Job, store_barrier_count
from logscan.scan.lineparse import RDZV_KEEP_ALIVE, RDZV_SHUTDOWN
from logscan.rule_ids import (COLLECTIVE_TIMEOUT_LINE, CONNECT_FAILED, SIBLING_TERMINATED, DEATH_SIGNAL_RECEIVED,
                              RENDEZVOUS_ROUND, STORE_TIMEOUT, TORCHRUN_STARTED, WAITING_EVIDENCE)
from logscan.vocabulary import JobStatus, RunStage


# The nodes met in the round, so it is not a missing one: what one side never wrote is the story.
RE_FORMED_ROUND_HINT = (
    "These nodes reached the new round and waited for each other: read the store keys each timeout names "
    "(`/torch.rendezvous.<run_id>.<round>/...`) for what the other side never wrote. torch 2.13's "
    "shared rendezvous store does this when the node that stays rank 0 does not publish the new "
    "round's MASTER_ADDR; TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 avoids it.")


# How many collectives one process group's ranks can be apart: a rank enqueues a few works ahead
# of the one NCCL runs (its watchdog reports the oldest unfinished). Numbers further apart than
# this count in different groups.
WORKS_IN_FLIGHT = 16


def _silence_counts(job: Job) -> bool:
    """A log's silence says the job hangs only while the platform says it runs: with no status, a
    log that stops may as well be a job that ended, or a copy (a paste, an archive) read long
    after; its age then tells nothing."""
    return job.job_status == JobStatus.RUNNING


def _whole_world_quiet(job: Job) -> list:
    """Every node_rank of nnodes launched with one master, a fixed node count, and no Worker
    waited, failed or printed anything of its processes; every log has been quiet since
    start-up for longer than --stall-after. A static rendezvous gives up long before that (15 min
    at most), so these Workers met: their processes started and stalled before the first batch,
    printing nothing (production scripts print nothing before it). Those Workers, or none."""
    launched = job.launched
    if job.elastic or not job.nnodes or len(job.workers) != len(launched) or job.training_started:
        return []
    if sorted(w.node_rank for w in launched) != list(range(job.nnodes)):
        return []
    if len(job.workers_by("master_addr", "master_port")) != 1:
        return []
    if any(w.started_processes or w.error_lines(job.catalogue) or hits(w, *job.catalogue.rendezvous_waits)
           for w in launched):
        return []
    if not _silence_counts(job):
        return []
    quiet_for = max(job.stall_after, RENDEZVOUS_GIVES_UP)
    for worker in launched:
        last = worker.last_activity()
        if last is None or job.now - last <= quiet_for:
            return []
    return launched


def hang_in_rendezvous(job: Job, rule):
    hung = []  # (Worker, why it is taken for waiting, evidence)
    launch_failures, rendezvous_signals = job.catalogue.launch_failures, job.catalogue.rendezvous_waits
    if _whole_world_quiet(job):
        return []  # hang-before-first-batch: they met
    for worker in job.workers:
        # The last rendezvous round decides: a world that re-formed and never started hangs.
        started = worker.started_processes and worker.final_round.started
        if not worker.ran_torchrun or started or hits(worker, *launch_failures):
            continue
        # a keep-alive is sent only by a node that joined its round: its failure is no wait to join
        waits = [h for h in hits(worker, *rendezvous_signals)
                 if worker.in_final_round(h.where) and RDZV_KEEP_ALIVE not in h.where.text
                 and RDZV_SHUTDOWN not in h.where.text]
        terminated = hits(worker, DEATH_SIGNAL_RECEIVED)
        # A client that never reached the store says so (connect-failed), or says whom it timed out
        # connecting to (store-timeout's client line names the host).
        unreachable = [h for h in waits if h.rule_id == CONNECT_FAILED or h.group(Group.HOST)]
        if unreachable:
            reason = _unreachable(unreachable)
            evidence = [h.where for h in unreachable]
        elif waits:
            reason = "its rendezvous timed out waiting for the other Workers"
            evidence = [h.where for h in waits]
        elif terminated and not _past_rendezvous(job, worker):
            reason = "it was terminated while waiting in rendezvous"
            evidence = [h.where for h in terminated]
        elif is_stale(job, worker) and _silence_counts(job) \
                and worker.launch is not None and (worker.launch.nnodes or 0) > 1:
            # Only a launch line of several nodes says there were others to wait for: torchrun's
            # banner alone, read long after, says it started and nothing more.
            reason = f"its log has been quiet for more than {format_duration(job.stall_after)} before any process started"
            evidence = [worker.last_line]
        elif job.job_status in (JobStatus.FAILED, JobStatus.SUCCEEDED) and worker.launch is not None \
                and not worker.error_lines(job.catalogue):
            # Only a launch line says the Worker was waiting for others (nnodes > 1).
            reason = "its log stops there with no error of its own: it was still waiting when the job ended"
            evidence = [worker.last_line]
        else:
            continue
        hung.append((worker, reason, evidence))
    re_formed = [worker for worker, _, _ in hung if worker.final_round.index]
    if re_formed and len(hung) > 1:
        return [_re_formed_round_hang(rule, hung, re_formed)]
    out = []
    for worker, reason, evidence in hung:
        if worker.final_round.index:
            message = (f"{worker.label} stopped its processes for a new rendezvous round, which never "
                       f"completed: {reason}")
        elif worker.launch is not None or hits(worker, TORCHRUN_STARTED, RENDEZVOUS_ROUND):
            message = f"{worker.label} launched but torchrun never started its processes: {reason}"
        else:  # a process's own store client (init_process_group's), torchrun's lines out of view
            message = f"{worker.label} never got past the rendezvous store: {reason}"
        out.append(finding(rule, message, [worker.launch.where if worker.launch else None, *evidence],
                           node_rank=worker.node_rank, worker=worker.label))
    return out


def _past_rendezvous(job: Job, worker) -> bool:
    """A process's own traceback (unprefixed though it may be) that its frames do not place in
    init_process_group or its rendezvous: the Worker's processes had started and gone past it."""
    at_init = job.catalogue.signals_at(RunStage.INIT)
    own = [x for x in worker.exceptions if not x.agent]
    return bool(own) and not any(at_init & set(x.traceback_signals) for x in own)


def _unreachable(connects) -> str:
    """Why a Worker that never reached the rendezvous store waited: it is the one cut off."""
    groups = dict(connects[-1].groups)
    host, port = groups.get(Group.HOST), groups.get(Group.PORT)
    at = f" at {host}:{port}" if host and port else ""
    return (f"it could not connect to the rendezvous store{at}: nothing listened there in time (the master "
            f"Worker not started, crashed or on another port) or the address is wrong or unreachable from "
            f"this Worker")


def _re_formed_round_hang(rule, hung: list, re_formed: list):
    """Workers left in rendezvous once a world re-formed all wait in that one round (a
    rendezvous has one open round at a time): one finding for the job, not one per Worker."""
    nodes = sorted(worker.node_rank for worker, _, _ in hung if worker.node_rank is not None)
    who = plural(nodes, "node", "nodes") if len(nodes) == len(hung) else f"{len(hung)} Workers"
    stopped = ", ".join(worker.label for worker in re_formed)
    message = (f"the world re-formed ({stopped} stopped {'its' if len(re_formed) == 1 else 'their'} "
               f"processes for a new rendezvous round) and that round never completed: {who} "
               f"waited in it until {'it' if len(hung) == 1 else 'they'} gave up")
    evidence = [where for _, _, lines in hung for where in lines[:1]]
    return finding(rule, message, evidence, node_ranks=tuple(nodes), hint=RE_FORMED_ROUND_HINT)


def _straggler(job: Job, failures: list[Failure]) -> tuple[int | None, int | None, list]:
    """(node_rank, rank, evidence) of the one process the others waited for, if the logs say.
    The evidence starts with the straggler's own last line, where it wrote one: what it did last
    tells more than torchrun's report that it SIGTERMed it afterwards."""
    node_rank, rank, proof = _found_straggler(job, failures)
    own = last_own_line(job, rank) if rank is not None else None
    if own is None:
        return node_rank, rank, proof
    terminated = _terminated_straggler(failures)
    if terminated is not None and terminated.rank == rank:
        proof = [where for where in proof if where != terminated.where]
    return node_rank, rank, [own, *proof]


def _found_straggler(job: Job, failures: list[Failure]) -> tuple[int | None, int | None, list]:
    awaited = awaited_ranks(job)
    if len(awaited) == 1:
        rank = awaited.pop()
        evidence = [h.where for w in job.workers for h in w.hits if h.group(Group.PEER_RANK) == str(rank)]
        return job.node_of_rank(rank), rank, evidence[:2]
    behind = _behind_in_sequence(job)
    if behind is not None:
        return behind
    killed = _terminated_straggler(failures)
    if killed is not None:
        return killed.node_rank, killed.rank, [killed.where]
    return rank_by_elimination(job, failures)


def _behind_in_sequence(job: Job) -> tuple[int | None, int, list] | None:
    """NCCL's watchdog names the collective each rank timed out in (SeqNum): the others wait in
    collective N for the one rank that is still at an earlier one. SeqNum counts per process
    group, and the lines do not always say which group: a rank that timed out at several numbers
    (works of several groups, or several in flight), or numbers further apart than the works one
    group keeps in flight, are counts of different groups, and order nothing."""
    at: dict[int, dict[int, object]] = {}
    for rank, works in _timed_out_works(job).items():
        for (seq, _), where in works.items():
            at.setdefault(rank, {}).setdefault(seq, where)
    if len(at) < 2 or any(len(seqs) > 1 for seqs in at.values()):
        return None
    seq_of = {rank: next(iter(seqs)) for rank, seqs in at.items()}
    lowest, highest = min(seq_of.values()), max(seq_of.values())
    behind = [rank for rank, seq in seq_of.items() if seq == lowest]
    if len(behind) != 1 or lowest == highest or highest - lowest > WORKS_IN_FLIGHT:
        return None
    rank = behind[0]
    ahead = next(at[r][seq] for r, seq in seq_of.items() if seq != lowest)
    return job.node_of_rank(rank), rank, [at[rank][lowest], ahead]


WATCHDOG_OP_END = re.compile(r"OpType=\w+[,)]")
DESYNC_HINT = ("Find where that rank issues a collective its peers do not, or in another order (a branch on the "
               "rank: evaluating, saving or logging through a collective on one rank only; an uneven number of "
               "batches); rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL, which names the mismatched collectives.")


def _timed_out_works(job: Job) -> dict[int, dict[tuple[int, str | None], object]]:
    """Each rank's works NCCL's watchdog timed out in, in line order: (SeqNum, OpType, None where the
    line's end cut it: `OpType=ALLR` is no kind of its own) → the first line that told it."""
    works: dict[int, dict[tuple[int, str | None], object]] = {}
    for worker in job.workers:
        for hit in hits(worker, COLLECTIVE_TIMEOUT_LINE):
            seq, op = hit.group(Group.SEQ), hit.group(Group.OP)
            rank = worker.global_rank(hit.where, dict(hit.groups))
            if seq is not None and seq.isdigit() and rank is not None:
                whole = op if op and WATCHDOG_OP_END.search(hit.where.text) else None
                works.setdefault(rank, {}).setdefault((int(seq), whole), hit.where)
    return works


def _desynced(job: Job) -> tuple[int | None, int, list, str] | None:
    """NCCL's watchdog names the collective each rank timed out in (SeqNum) and its kind (OpType):
    ranks of one group at the same number in different kinds of collective issued them in different
    orders (a rank on another code path: an evaluation, a save, a skipped batch), and each waits for
    a partner that never comes. The kind fewest ranks were in, held by one rank, names it."""
    at: dict[int, set[tuple[int, str]]] = {}
    where: dict[int, object] = {}
    for rank, works in _timed_out_works(job).items():
        for (seq, op), line in works.items():
            if op is not None:
                at.setdefault(rank, set()).add((seq, op))
                where.setdefault(rank, line)
    if len(at) < 2 or any(len(works) > 1 for works in at.values()):
        return None
    work_of = {rank: next(iter(works)) for rank, works in at.items()}
    if len({seq for seq, _ in work_of.values()}) != 1:
        return None
    by_op: dict[str, list[int]] = {}
    for rank, (_, op) in sorted(work_of.items()):
        by_op.setdefault(op, []).append(rank)
    if len(by_op) < 2:
        return None
    fewest = min(len(ranks) for ranks in by_op.values())
    odd = [op for op, ranks in by_op.items() if len(ranks) == fewest]
    if len(odd) != 1 or fewest != 1:
        return None
    (rank,) = by_op[odd[0]]
    others = sorted(r for r in work_of if r != rank)
    seq = work_of[rank][0]
    kinds = " and ".join(sorted({op for op in by_op if op != odd[0]}))
    said = (f"; rank {rank} was in {odd[0]} while {plural(others, 'rank', 'ranks')} "
            f"{'was' if len(others) == 1 else 'were'} in {kinds} at the same collective (SeqNum {seq}): "
            f"the ranks issued their collectives in different orders, rank {rank} on another code path")
    return job.node_of_rank(rank), rank, [where[rank], where[others[0]]], said


def rank_by_elimination(job: Job, failures: list[Failure]) -> tuple[int | None, int | None, list]:
    """Every rank but one gave up waiting and that one reported nothing (torch < 2.2 leaves
    the ranks it SIGTERMed out of its summary): by elimination, the others waited for it."""
    if job.expected_processes is None:
        return None, None, []
    waited = {f.rank for f in failures if f.cascade and f.rank is not None}
    failed = {f.rank for f in failures if f.rank is not None}
    silent = set(range(job.expected_processes)) - failed
    if len(silent) != 1 or len(waited) != job.expected_processes - 1:
        return None, None, []
    rank = silent.pop()
    node_rank = job.node_of_rank(rank)
    stopped = [h.where for w in job.workers if w.node_rank == node_rank
               for h in hits(w, SIBLING_TERMINATED)]
    return node_rank, rank, stopped[:1] + [f.where for f in failures if f.cascade][:1]


def _terminated_straggler(failures: list[Failure]) -> Failure | None:
    """The one process torchrun had to SIGTERM while every other one gave up waiting."""
    killed = [f for f in failures if f.exitcode == SIGTERM or SIGNAL_EXCEPTION in f.summary]
    killed_ranks = {f.rank for f in killed if f.rank is not None}
    killed_ids = set(map(id, killed))  # a set: a list's `in` made this quadratic in failures
    waited = [f for f in failures if f.cascade and id(f) not in killed_ids]
    if len(killed_ranks) == 1 and waited:
        return next(f for f in killed if f.rank in killed_ranks)
    return None


def _waiting_evidence(job: Job, failures: list[Failure]):
    waited = [f for f in failures if f.cascade]
    hits = [h for w in job.workers for h in w.hits
            if h.rule_id in WAITING_EVIDENCE]
    return waited, hits


def hang_before_first_batch(job: Job, rule):
    if not job.shows_start_up:
        return []  # nothing shows the start, so nothing places a wait before the first batch
    started = [w for w in job.workers if w.started_processes]
    if not started and (met := _whole_world_quiet(job)):
        message = (f"every node of nnodes={job.nnodes} launched with one master and none waited or failed, "
                   f"yet nothing has come from their processes for more than "
                   f"{format_duration(max(job.stall_after, RENDEZVOUS_GIVES_UP))} since torchrun's start-up: the rendezvous would have "
                   f"given up long before, so the processes started and stalled before the first batch")
        return [finding(rule, message, [w.last_line for w in met])]
    if not started or job.training_started:
        return []
    failures = job.failures
    if any(not f.cascade for f in failures):
        return []  # something crashed by itself: that is the story, not a hang
    waited, hits = _waiting_evidence(job, failures)
    stale = [w for w in started if is_stale(job, w) and _silence_counts(job)]
    if not (waited or hits or stale):
        return []
    # init_process_group's own count of who checked in: with as many as the world or more, no rank
    # was missing, and what kept the barrier from completing is that count
    barrier = next((h for h in hits if h.rule_id == STORE_TIMEOUT and h.group(Group.JOINED) is not None), None)
    full = barrier is not None and int(barrier.group(Group.JOINED)) >= int(barrier.group(Group.WORLD_SIZE))
    node_rank, rank, proof = _straggler(job, failures) if not full else (None, None, [])
    if rank is not None:
        message = (f"processes started but none reached the first batch; rank {rank} "
                   f"never arrived and the others gave up waiting for it")
        evidence = proof + [f.where for f in waited[:2]]
        return [finding(rule, message, evidence, node_rank=node_rank, rank=rank)]
    if barrier is not None:
        message = (f"processes started but none reached the first batch: init_process_group's store barrier "
                   f"timed out on rank {barrier.group(Group.RANK)} with "
                   f"{store_barrier_count(int(barrier.group(Group.WORLD_SIZE)), int(barrier.group(Group.JOINED)))}")
        evidence = [barrier.where] + [f.where for f in waited[:2]]
    elif waited or hits:
        message = "processes started but none reached the first batch: they timed out waiting"
        evidence = [f.where for f in waited[:3]] + [h.where for h in hits[:2]]
    else:
        message = (f"processes started but none reached the first batch; the logs have been "
                   f"quiet for more than {format_duration(job.stall_after)}")
        evidence = [w.last_line for w in stale]
    return [finding(rule, message, evidence)]


# ProcessGroupNCCL's heartbeat monitor, which ends a process whose watchdog thread stopped moving:
# `Heartbeat monitor timed out!` (2.2, 2.3), `... watchdog got stuck for N seconds` (2.4 on)
WATCHDOG_STUCK = ("Heartbeat monitor timed out", "watchdog got stuck for")


def collective_timeout(job: Job, rule):
    # Started processes that never reached their first batch are hang-before-first-batch's. Lines
    # with no launch context at all (a pasted excerpt, `[rank2]:` prefixes or not) do not say when:
    # the timeout is still one.
    started = job.shows_start_up and any(w.started_processes for w in job.workers)
    if not job.training_started and started:
        return []
    failures = [f for f in job.failures if f.after_progress or not started]
    timed_out = [f for f in failures if COLLECTIVE_TIMEOUT_LINE in f.signals]
    hits = [h for w in job.workers for h in w.hits if h.rule_id == COLLECTIVE_TIMEOUT_LINE]
    if not (timed_out or hits):
        return []
    desync = _desynced(job)
    node_rank, rank, proof = desync[:3] if desync else _straggler(job, failures)
    ranks = sorted({f.rank for f in timed_out if f.rank is not None} or {
        r for w in job.workers for h in w.hits if h.rule_id == COLLECTIVE_TIMEOUT_LINE
        and (r := w.global_rank(h.where, dict(h.groups))) is not None})
    when = " after training had started" if job.training_started else ""
    if hits and all(any(words in h.where.text for words in WATCHDOG_STUCK) for h in hits):
        # the heartbeat monitor's word alone: the watchdog thread itself stopped moving (a collective
        # stuck in NCCL or CUDA that it could not even abort), and the monitor took the process down
        message = (f"NCCL's watchdog got stuck{when}: its heartbeat monitor timed out and terminated the "
                   f"process" + (f" ({plural(ranks, 'rank', 'ranks')})" if ranks else ""))
    else:
        message = f"a collective timed out{when} ({plural(ranks, 'rank', 'ranks')} waited)" \
            if ranks else f"a collective timed out{when}"
    detectors = sorted({int(found) for h in hits if (found := h.group(Group.DETECTED_BY))} - set(ranks))
    if detectors:
        message += f"; {plural(detectors, 'rank', 'ranks')}' watchdog caught it" if len(detectors) > 1 \
            else f"; rank {detectors[0]}'s watchdog caught it"
    if rank is not None:
        message += desync[3] if desync else f"; rank {rank} never arrived"
        return [finding(rule, message, proof + [f.where for f in timed_out[:3]],
                        node_rank=node_rank, rank=rank, ranks=tuple(ranks), hint=DESYNC_HINT if desync else None)]
    evidence = [f.where for f in timed_out[:3]] or [h.where for h in hits[:3]]
    return [finding(rule, message, evidence, ranks=tuple(ranks))]
