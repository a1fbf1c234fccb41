"""Crashes: a training process raised or died by itself, before its first batch or during
training. Several ranks telling one error make one finding; their victims are folded under it."""

from __future__ import annotations

from collections import defaultdict

from logscan.catalogue import Group
from logscan.exit_signals import SIGNALS
from logscan.findings.base import cause_hint, finding, hits, plural, when_in_training
from logscan.model.failures import SIGKILL, SIGTERM, Failure, awaited_ranks, earlier_attempt_failures
from logscan.model.job import ROUND_FAILURE, Job
from logscan.scan.lineparse import RDZV_SHUTDOWN
from logscan.rule_ids import (CONNECT_FAILED, DEATH_SIGNAL_RECEIVED, SIBLING_TERMINATED, WORKER_GROUP_RESTART,
                              WORKER_KILLED)
from logscan.vocabulary import JobStatus, RunStage


def _crashes(job: Job, rule, during: bool):
    failures = [f for f in job.failures if f.after_progress == during]
    # A SIGKILL torchrun reported has its own rule (worker-killed); one only another launcher told
    # (DeepSpeed's `exits with return code = -9`) is a crash like any other. A SIGTERM is what
    # victims get.
    told_killed = {w.label for w in job.workers if any(h.rule_id == WORKER_KILLED for h in w.hits)}
    crashes = [f for f in failures if not f.cascade and f.exitcode != SIGTERM
               and not (f.exitcode == SIGKILL and f.worker.label in told_killed)]
    when = when_in_training(job, during)
    terminated = {f.rank for f in failures if f.exitcode == SIGTERM and f.rank is not None}
    out = [_crash_finding(job, rule, same, when, terminated) for same in _same_error(crashes)]
    if out:
        # The victims of these crashes, folded under them by the root-cause pass.
        victims = [f for f in failures if f.cascade]
        for same in _same_error(victims):
            out.append(_victim_finding(rule, same, when))
    return out


def _same_error(failures: list[Failure]) -> list[list[Failure]]:
    """Group failures that are one error told by several ranks (they differ only in numbers)."""
    groups = defaultdict(list)
    for f in failures:
        groups[(f.error_shape, f.cause)].append(f)
    for same in groups.values():
        same.sort(key=lambda f: (f.time is None, f.time or 0,
                                 f.rank if f.rank is not None else 1 << 30))
    return list(groups.values())


def _cause_hint(job: Job, same: list[Failure], everyone: bool = False) -> str | None:
    """The hint of the crashes' cause class, naming what their lines captured and where they
    happened: the node (and its host), or every node."""
    first = same[0]
    if not first.cause:
        return None
    lines = {(w.file, w.line) for f in same for w in (f.where, *f.more)}
    nodes = sorted({f.node_rank for f in same if f.node_rank is not None})
    where = ("every node" if everyone else plural(nodes, "node", "nodes")) \
        if everyone or len(nodes) > 1 else None
    return cause_hint(job, first.cause, first.worker, lines, where)


# torchrun's own traceback with no process's failure in view: torchrun itself failed.
LAUNCHER_FAILED_HINT = ("torchrun itself failed, as far as these lines show: read its exception (a rendezvous or "
                        "store error names the master's address and port; check it is reachable from this Worker "
                        "and that the port is free), and whether its processes' own logs say any of them started.")


LAUNCHER_KILLED_HINT = ("torchrun itself, not a training process, died of this signal: a crash in torchrun or in a "
                        "library it loaded (rerun with PYTHONFAULTHANDLER=1 for its stack); the processes' own lines "
                        "say whether training had finished, and a torch upgrade may carry the fix.")


def _crash_finding(job: Job, rule, same: list[Failure], when: str, terminated: set[int]):
    first = same[0]
    ranks = sorted({f.rank for f in same if f.rank is not None})
    killed_by = SIGNALS.get(first.killed_by) if first.killed_by is not None else None
    were = "was" if len(same) == 1 else "were"
    verb = "failed with" if first.code_cut else "raised" if first.exitcode is None else f"{were} killed by" if killed_by else "failed with"
    if first.likely:
        return _failed_task_finding(rule, first, when)
    if first.in_launcher:
        who = f"torchrun on {first.worker.label}"
        ended = first.worker.end_of_run()
        if first.after_group_ended:
            when = "in its exit barrier, after its processes had all exited 0"
        elif ended is not None and first.worker.position(ended) < first.worker.position(first.where):
            when = "after training had finished"
    elif len(same) == 1:
        who = f"rank {first.rank}" if first.rank is not None else \
            f"local_rank {first.local_rank} on {first.worker.label}" if first.local_rank is not None else \
            _slurm_tasks(first) if first.tasks else \
            f"the process with pid {first.left_out_pid} on {first.worker.label} (torchrun's SIGTERMs left it out)" \
            if first.left_out_pid is not None else f"a process on {first.worker.label}"
    elif len(ranks) == len(same):
        who = f"{plural(ranks, 'rank', 'ranks')} all"
    elif not ranks and all(f.tasks for f in same):
        who = f"Slurm {plural(sorted({t for f in same for t in f.tasks}), 'task', 'tasks')} all"
    else:
        who = f"{len(same)} processes" + (f" (first: rank {first.rank})" if first.rank is not None else "")
    nodes = sorted({f.node_rank for f in same if f.node_rank is not None})
    # Every process hit the same local error (on every Worker, torchrun SIGTERMing the slower
    # siblings of the first to fail): it is the job's, not one rank's.
    expected = job.expected_processes
    every_node = {w.node_rank for w in job.launched} <= set(nodes)
    everyone = len(same) > 1 and expected is not None and (
        len(ranks) >= expected or (every_node and len(set(ranks) | terminated) >= expected))
    meaning = f": {killed_by.meaning}" if killed_by and first.cause is None else ""
    hint = (LAUNCHER_KILLED_HINT if killed_by else LAUNCHER_FAILED_HINT) if first.in_launcher else \
        killed_by.hint if killed_by and first.cause is None else _cause_hint(job, same, everyone)
    return finding(rule, f"{who} {verb} {first.summary} {when}{meaning}",
                   [w for f in same for w in (f.where, *f.more)],
                   node_rank=None if everyone else first.node_rank, node_ranks=tuple(nodes),
                   rank=None if everyone else first.rank,
                   ranks=tuple(ranks), cause=first.cause, worker=first.worker.label, hint=hint)


def _slurm_tasks(failure: Failure) -> str:
    """`Slurm task 58 on gpu-node-7`: srun's own name for what ended."""
    on = f" on {failure.host}" if failure.host else ""
    return f"Slurm {plural(failure.tasks, 'task', 'tasks')}{on}"


def _failed_task_finding(rule, failure: Failure, when: str):
    """Slurm's word that a task failed, with the task srun did not have to stop named as likely."""
    stopped = failure.stopped_tasks
    if failure.tasks:
        named = plural(failure.tasks, "task", "tasks")
        message = (f"Slurm {named} likely failed first {when}: Slurm cancelled the step due to a task's "
                   f"failure, and srun terminated {plural(stopped, 'task', 'tasks')}, not {named}")
        hint = (f"Read the output of {named} (srun --label prefixes each line with its task id) for its "
                f"error: the terminated tasks only followed it.")
    else:
        message = (f"a task of the step on {failure.worker.label} failed {when}: Slurm cancelled the step "
                   f"due to a task's failure; srun's lines do not say which task")
        hint = ("Rerun with srun --label to see each task's output by its task id; the task that "
                "failed is the one srun does not report as Terminated.")
    return finding(rule, message, [failure.where, *failure.more], worker=failure.worker.label,
                   node_rank=failure.node_rank, hint=hint)


def _victim_finding(rule, same: list[Failure], when: str):
    first = same[0]
    ranks = sorted({f.rank for f in same if f.rank is not None})
    tasks = sorted({t for f in same for t in f.tasks})
    one = len(same) == 1
    who = plural(ranks, "rank", "ranks") if ranks else f"Slurm {plural(tasks, 'task', 'tasks')}" if tasks \
        else ("a process" if one else f"{len(same)} processes")
    stopper = "srun" if tasks and not ranks else "torchrun"
    many = not one or len(tasks) > 1
    # A positive exit status is the process's own end (a wait that gave up), not torchrun's signal.
    what = (f"{'were' if many else 'was'} terminated by {stopper}" if first.exitcode is not None
            and first.exitcode <= 0 else f"then failed with {first.summary}")
    return finding(rule, f"{who} {what} {when}: a consequence of the failure above",
                   [f.where for f in same], node_rank=first.node_rank if len(same) == 1 else None,
                   rank=first.rank if len(same) == 1 else None, ranks=tuple(ranks),
                   worker=first.worker.label, cascade=True)


def crash_before_first_batch(job: Job, rule):
    return _crashes(job, rule, during=False)


def crash_during_training(job: Job, rule):
    return _crashes(job, rule, during=True)


def _restarts(worker, after_failure: bool = True) -> int:
    """How often torchrun restarted this Worker's group. One restart shows as an "N/M attempts
    left" line and, at LOGLEVEL=INFO, as the next group's restart_count: count restarts, not the
    lines that tell of them; at the default level, as the processes' env prints repeated, which
    count only `after_failure` (else they are an elastic world re-forming)."""
    told = hits(worker, WORKER_GROUP_RESTART)
    if worker.earlier_attempts is not None:
        told += [h for h in worker.earlier_attempts.hits if h.rule_id == WORKER_GROUP_RESTART]
    attempts_left = {h.group(Group.ATTEMPTS_LEFT) for h in told} - {None}
    counts = [int(h.group(Group.RESTART_COUNT)) for h in told if h.group(Group.RESTART_COUNT) is not None]
    prints = defaultdict(int)
    for env in worker.envs:
        prints[(env.source, env.rank, env.local_rank)] += 1  # one process prints several kinds
    reprinted = max(prints.values(), default=1) - 1 if after_failure else 0
    return max(len(attempts_left), max(counts, default=0), reprinted)


def restart_loop(job: Job, rule):
    out = []
    # New rounds while no group anywhere had failed re-formed the world (nodes came or went): an
    # elastic job's membership change, not a restart.
    after_failure = any(r.reason == ROUND_FAILURE for w in job.workers for r in w.rounds)
    for worker in job.workers:
        restarts = _restarts(worker, after_failure)
        if restarts < 1:
            continue
        failures = job.failures_of(worker)
        if not failures and not worker.exits:
            continue
        first = min(failures, key=lambda f: worker.position(f.where), default=None)
        message = (f"{worker.label}: torchrun restarted the worker group {restarts} "
                   f"time{'s' if restarts > 1 else ''} and it failed again")
        if first is not None:
            message += f"; first failure: {first.summary}"
        evidence = [h.where for h in hits(worker, WORKER_GROUP_RESTART)[:2]]
        if first is not None:
            evidence.insert(0, first.where)
        out.append(finding(rule, message, evidence or [worker.last_line], node_rank=worker.node_rank,
                           rank=first.rank if first else None, worker=worker.label))
    return out


def restart_recovered(job: Job, rule):
    restarted = [w for w in job.workers if w.earlier_attempts is not None]
    if not restarted:
        return []
    failures = [f for w in restarted for f in earlier_attempt_failures(job, w)]
    # The failure the restart recovered from: the first that was not a consequence of another.
    if not failures:
        return []  # an elastic world that re-formed around a new member: nothing failed
    first = min(failures, key=lambda f: (f.cascade, f.time is None, f.time or 0, f.node_rank or 0))
    restarts = max(_restarts(w) for w in restarted)
    times = f"{restarts} time{'s' if restarts > 1 else ''}" if restarts else "again"
    who = f"rank {first.rank} failed with" if first.rank is not None else f"{first.worker.label} had"
    return [finding(rule, f"torchrun restarted the worker group {times} after {who} {first.summary}; "
                          f"the restarted attempt went on", [first.where],
                    node_rank=first.node_rank, rank=first.rank, worker=first.worker.label,
                    hint=_cause_hint(job, [first]))]


def worker_vanished(job: Job, rule):
    if any(not f.cascade for f in job.failures):
        return []  # something failed by itself: that is the story
    lost = [f for f in job.failures if f.cascade]
    ended = job.job_status in (JobStatus.FAILED, JobStatus.SUCCEEDED) or bool(lost)
    lost_ranks = sorted({f.rank for f in lost if f.rank is not None})
    out = []
    for worker in job.workers:
        if not ended or not worker.started_processes or worker.exits:
            continue
        # A Worker whose processes failed has error lines: it is not one that vanished. Its own
        # failures are left out of the others' all the same.
        own = job.failures_of(worker)
        others = [f for f in lost if f.worker is not worker] if own else lost
        if not others or worker.error_lines(job.catalogue) or worker.progress_fraction() == 1.0:
            continue
        end = worker.last_line
        ranks = sorted({f.rank for f in others if f.rank is not None}) if own else lost_ranks
        who = plural(ranks, "rank", "ranks") if ranks else "the processes of the other Workers"
        where = f" at {end.file}:{end.line}" if end else ""
        out.append(finding(rule, f"{worker.label}'s log stops{where} with no error and no exit report, "
                                 f"while {who} lost their peers: {worker.label} was killed from outside "
                                 f"or its output stopped being captured",
                           [end, *(f.where for f in others[:2])], node_rank=worker.node_rank,
                           worker=worker.label))
    return out


def failure_elsewhere(job: Job, rule):
    """Processes failed only because they lost a peer or the store, and the logs hold no failure
    of their own: the first failure is on a rank or Worker whose lines are not here (a paste of one
    rank's traceback, or one Worker's log of several)."""
    # A lost peer a process reported itself, in a line that says so: torchrun's SIGTERM to the
    # siblings of a failed process is no such report, nor a KeyboardInterrupt a stop brought.
    waiting = job.catalogue.cascade_signals
    lost = [f for f in job.failures if f.cascade and f.exitcode is None and any(s in waiting for s in f.signals)]
    if any(not f.cascade for f in job.failures):
        return []
    if not lost:
        return _agent_lost_store(job, rule)
    same = _same_error(lost)[0]
    first = same[0]
    ranks = sorted({f.rank for f in lost if f.rank is not None})
    who = plural(ranks, "rank", "ranks") if ranks else \
        f"local_rank {first.local_rank} on {first.worker.label}" if len(lost) == 1 and first.local_rank is not None \
        else "a process" if len(lost) == 1 else f"{len(lost)} processes"
    # raised while joining the world (init_process_group, DDP's first broadcast): the store's host or a
    # peer was gone before training began
    setting_up = job.catalogue.signals_at(RunStage.INIT)
    when = " while setting up the process group or DDP" if all(
        any(s in setting_up for s in f.signals) for f in lost) else ""
    message = (f"{who} failed with {first.summary}{when}: {'it' if len(lost) == 1 else 'they'} lost a peer or the "
               f"store's host, and the failure that caused it is not in these lines")
    awaited = sorted(awaited_ranks(job) - set(ranks))
    if awaited:
        # the rank the lost ones name as the one they waited for (monitored_barrier's `from rank 0`)
        message += f" ({plural(awaited, 'rank', 'ranks')}, which {'it' if len(lost) == 1 else 'they'} waited for, " \
                   f"is where to look)"
    # The ranks named are the ones that lost a peer, not the one that failed: no rank is the cause.
    return [finding(rule, message, [f.where for f in lost], ranks=tuple(ranks))]


def _agent_lost_store(job: Job, rule):
    """torchrun's agent lost the rendezvous store after its processes had started (its keep-alive
    or its check for waiting nodes raised RendezvousConnectionError) and stopped them, with no
    signal from outside: the store's host, node 0's agent, went away. A keep-alive that only timed
    out (RendezvousTimeoutError) is a late heartbeat, often recovered from, and no such word."""
    out = []
    for worker in job.workers:
        lost = hits(worker, CONNECT_FAILED)
        stopped = hits(worker, SIBLING_TERMINATED)
        if not lost or hits(worker, DEATH_SIGNAL_RECEIVED):
            continue
        if not stopped:
            # its shutdown of the rendezvous, as it left it (`has failed to shutdown the rendezvous ... due
            # to an error of type RendezvousConnectionError`): the store's host was gone by then
            shutdown = [h for h in lost if RDZV_SHUTDOWN in h.where.text]
            if shutdown:
                message = (f"{worker.label}'s torchrun lost the rendezvous store as it shut the rendezvous down: "
                           f"the store's host went away first (its job ended or it failed), and what ended it is "
                           f"not in these lines")
                out.append(finding(rule, message, [shutdown[0].where], node_rank=worker.node_rank,
                                   worker=worker.label))
            continue
        first_stop = min(worker.position(h.where) for h in stopped)
        before = [h for h in lost if worker.position(h.where) < first_stop]
        if not before:
            continue
        message = (f"{worker.label}'s torchrun lost the rendezvous store while its processes ran, and stopped "
                   f"them: the store's host went away, and what ended it is not in these lines")
        out.append(finding(rule, message, [before[-1].where, stopped[0].where], node_rank=worker.node_rank,
                           worker=worker.label))
    return out[:1]
