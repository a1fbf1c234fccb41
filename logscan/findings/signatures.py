"""Signature rules: a catalogue pattern hit is the finding. One per rule, Worker and rank.

When a rule's groups say what two ranks were doing (`rank`/`op` and `other_rank`/`other_op`, as
in a collective mismatch), every rank reports the disagreement; the rank whose `op` the fewest
ranks share is the odd one out (between two, the one not running the training loop's usual
collective), and the other reports are cascades of it.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import replace

from logscan.catalogue import Group
from logscan.findings.base import cause_hint, few, finding
from logscan.model.job import Job
from logscan.rule_ids import DEATH_SIGNAL_RECEIVED, SIBLING_TERMINATED, WORKER_GROUP_RESTART

# Lines that end an attempt of the run: what comes after them is another attempt's.
ENDS_AN_ATTEMPT = frozenset({SIBLING_TERMINATED, WORKER_GROUP_RESTART, DEATH_SIGNAL_RECEIVED})

# What a training loop runs every step (DDP's gradient reduction): in a two-rank disagreement, the
# rank running something else is the one that left the loop's usual path.
USUAL_COLLECTIVES = ("ALLREDUCE",)


def _odd_ones_out(reports: list[dict]) -> set[int]:
    did: dict[int, str] = {}
    for groups in reports:
        for rank_key, op_key in ((Group.RANK, Group.OP), (Group.OTHER_RANK, Group.OTHER_OP)):
            rank, op = groups.get(rank_key), groups.get(op_key)
            if rank and rank.isdigit() and op:
                did.setdefault(int(rank), op)
    if len(set(did.values())) < 2:
        return set()
    counts = Counter(did.values())
    fewest = min(counts.values())
    minorities = [op for op, n in counts.items() if n == fewest]
    if len(minorities) > 1:
        unusual = [op for op in minorities if op not in USUAL_COLLECTIVES]
        if len(unusual) != 1:
            return set()  # no single minority: the logs do not say who diverged
        minorities = unusual
    minority = minorities[0]
    return {rank for rank, op in did.items() if op == minority}


def _stopped_on_purpose(worker) -> set[str]:
    """The pids torchrun itself signalled to stop (a failed sibling's group being torn down):
    whatever their exit, it is a consequence."""
    return {pid for h in worker.hits if h.rule_id == SIBLING_TERMINATED
            and (pid := h.group(Group.PID)) is not None}


# A report's own explanation follows it closely: NCCL's `Last error:` line comes right after torch's
# `ncclSystemError: ...` line, a DataLoader's reason right after its exception line.
CAUSE_WINDOW = 3


def _near(wheres) -> set[tuple[str, int]]:
    return {(w.file, w.line + d) for w in wheres for d in range(CAUSE_WINDOW + 1)}


def _cause_near(job: Job, worker, wheres) -> str | None:
    """The crash-cause class a cause signal gives on one of these lines or just after them."""
    causes = job.catalogue.signals_with_cause()
    near = _near(wheres)
    found = {causes[h.rule_id] for h in worker.hits
             if h.rule_id in causes and (h.where.file, h.where.line) in near}
    return next((c for c in job.catalogue.cause_order if c in found), None)


def _with_cause(job: Job, worker, found, wheres):
    cause = _cause_near(job, worker, wheres)
    if cause is None:
        return found
    return replace(found, cause=cause,
                   hint=cause_hint(job, cause, worker, _near(wheres)) or found.hint)


def _told_by_waiting(job: Job, workers, wheres) -> bool:
    """Every line of the finding is also a line of a process that lost a peer or waited on it
    (a cascade signal: NCCL's remote error is peer-lost's too). Records glued into one line are
    each a line of their own here: a SIGTERM torchrun sent beside a kill it reports is no
    cascade of that kill."""
    waiting = job.catalogue.cascade_signals
    records = {h.where.record for w in workers for h in w.hits if h.rule_id in waiting}
    return bool(wheres) and all(w.record in records for w in wheres)


def _another_failed(job: Job) -> bool:
    """A process failed by itself somewhere: what the others' lost peers are a consequence of."""
    return any(not f.cascade for f in job.failures)


class _Survivals:
    """One Worker's lines that end an attempt (exceptions, exits, torchrun's stops and restarts) and
    its progress lines, by file and in line order, for lookups in O(log n) per line."""

    def __init__(self, worker):
        self.ended: dict[str, list[int]] = {}
        self.progress: dict[str, list[int]] = {}
        for where in (*(x.where for x in worker.exceptions), *(e.where for e in worker.exits),
                      *(h.where for h in worker.hits if h.rule_id in ENDS_AN_ATTEMPT)):
            self.ended.setdefault(where.file, []).append(where.line)
        for p in worker.progress:
            self.progress.setdefault(p.where.file, []).append(p.where.line)
        for lines in (*self.ended.values(), *self.progress.values()):
            lines.sort()

    def logged_and_survived(self, hit) -> bool:
        """A log line of the error (NCCL's WARN from a helper thread, a library's message), not an
        exception or an exit, after which the same log shows training going on with no exception,
        exit or restart between: the process logged it and went on; it failed nothing."""
        file, line = hit.where.file, hit.where.line
        progress = self.progress.get(file, ())
        following = bisect_right(progress, line)
        if following == len(progress):
            return False
        ended = self.ended.get(file, ())
        # an ending on the line itself or before the next progress line
        return bisect_left(ended, line) == bisect_left(ended, progress[following])


def _fold_rankless(by_key: dict) -> None:
    """A Worker's lines of this rule that name no rank, beside lines of one rank alone: one report
    (NCCL's WARN lines, unprefixed, before the rank's own error line), not a second error."""
    for label in {key[0] for key in by_key}:
        ranked = [key for key in by_key if key[0] == label and key[1] is not None]
        loose = (label, None)
        if len(ranked) != 1 or loose not in by_key:
            continue
        worker, rank, groups, wheres = by_key[ranked[0]]
        _, _, loose_groups, loose_wheres = by_key.pop(loose)
        for name, value in loose_groups.items():
            groups.setdefault(name, value)
        wheres[:0] = [w for w in loose_wheres if worker.position(w) < worker.position(wheres[0])]
        wheres.extend(w for w in loose_wheres if worker.position(w) >= worker.position(wheres[0]))


def signature_findings(job: Job, rule):
    by_key: dict = {}
    for worker in job.workers:
        stopped = None
        mine = [h for h in worker.hits if h.rule_id == rule.id]
        if mine and worker.progress:
            survivals = _Survivals(worker)
            mine = [h for h in mine if not survivals.logged_and_survived(h)]
        # One process told by several lines (torchrun's `failed (exitcode: -9) ... (pid: P)` and
        # its summary's row for pid P): the rank one of them names is every one's.
        rank_of_pid = {}
        for hit in mine:
            groups = dict(hit.groups)
            rank = worker.global_rank(hit.where, groups)
            if rank is not None and groups.get(Group.PID) is not None:
                rank_of_pid.setdefault(groups[Group.PID], rank)
        # A line that is also a failure's own (its exception line) is that failure's process: the
        # rank its launcher's report gave it (one traceback, one failed exit of the Worker), or,
        # where no global rank is known, the local rank (mp.spawn's process index, torchrun's
        # `local_rank: L` on a Worker of unknown shape).
        own_failure = {(w.file, w.line): f for f in job.failures_of(worker)
                       for w in (f.where, *f.more)} if mine else {}
        for hit in mine:
            groups = dict(hit.groups)
            if Group.PID in groups:
                stopped = _stopped_on_purpose(worker) if stopped is None else stopped
                if groups[Group.PID] in stopped:
                    continue  # torchrun's own SIGTERM or SIGKILL of a sibling, not this rule's cause
            rank = worker.global_rank(hit.where, groups)
            failure = own_failure.get((hit.where.file, hit.where.line))
            if rank is None:
                rank = rank_of_pid.get(groups.get(Group.PID), failure.rank if failure is not None else None)
            if rank is None and failure is not None and failure.local_rank is not None:
                groups.setdefault(Group.LOCAL_RANK, str(failure.local_rank))
            if rank is None and hit.where.local_rank is not None:
                # a launcher's tag of the process (torchrun's tee header) on a Worker of unknown shape
                groups.setdefault(Group.LOCAL_RANK, str(hit.where.local_rank))
            key = (worker.label, rank)
            if key not in by_key:
                by_key[key] = (worker, rank, {}, [])
            for name, value in groups.items():  # later lines of one report add what earlier lacked
                by_key[key][2].setdefault(name, value)
            by_key[key][3].append(hit.where)
    _fold_rankless(by_key)
    odd = _odd_ones_out([groups for _, _, groups, _ in by_key.values()])
    ranks = sorted({rank for _, rank, _, _ in by_key.values() if rank is not None})
    expected = job.expected_processes
    if not odd and len(by_key) > 1 and expected is not None and len(ranks) >= expected:
        # Every process hit it: one finding for the job, not one per rank.
        worker, _, groups, _ = next(iter(by_key.values()))
        nodes = sorted({w.node_rank for w, _, _, _ in by_key.values() if w.node_rank is not None})
        groups = {**groups, Group.RANK: few(ranks), Group.NODE_RANK: few(nodes)}
        wheres = [w for _, _, _, ws in by_key.values() for w in ws]
        if _told_by_waiting(job, [w for w, _, _, _ in by_key.values()], wheres) and _another_failed(job):
            return []
        return [_with_cause(job, worker, finding(rule, rule.render_message(groups), wheres,
                                                 ranks=tuple(ranks), node_ranks=tuple(nodes)), wheres)]
    out = []
    reported = {rank for _, rank, _, _ in by_key.values()}
    for worker, rank, groups, wheres in by_key.values():
        if _told_by_waiting(job, [worker], wheres) and _another_failed(job):
            # A lost peer told in this rule's words: the consequence of the failure found
            # elsewhere, which is the story. With nothing else failed, it is the story.
            continue
        # An unknown one stays unset: a template's `[ (rank {rank})]` then drops, a bare `{rank}` reads "?".
        if worker.node_rank is not None:
            groups.setdefault(Group.NODE_RANK, str(worker.node_rank))
        if rank is not None:
            groups.setdefault(Group.RANK, str(rank))
        message = rule.render_message(groups)
        if rank is None and Group.LOCAL_RANK in groups and "{local_rank}" not in rule.message:
            stem, end = (message[:-1], ".") if message.endswith(".") else (message, "")
            message = f"{stem} (local_rank {groups[Group.LOCAL_RANK]} on {worker.label}){end}"
        found = _with_cause(job, worker, finding(rule, message, wheres,
                                                 node_rank=worker.node_rank, rank=rank,
                                                 worker=worker.label), wheres)
        if odd and rank not in odd:
            if odd & reported:
                found = replace(found, cascade=True)  # the odd one's own report leads
            elif len(odd) == 1:
                # The rank that diverged reported nothing itself: this report is about it.
                (odd_rank,) = odd
                found = replace(found, rank=odd_rank, node_rank=job.node_of_rank(odd_rank))
        out.append(found)
    return out
