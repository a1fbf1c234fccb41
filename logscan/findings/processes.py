"""Rules on what the training processes say torchrun gave them."""

from __future__ import annotations

from logscan.findings.base import finding, plural
from logscan.scan.events import TORCHRUN_ENV, EnvPrint
from logscan.model.job import Job, LaunchShape, Round


UNEVEN_GPUS_HINT = ("Give every Worker the same number of GPUs, or make the launch script and "
                    "training code compute ranks and world size for uneven Workers.")


def _processes_with_launch(job: Job) -> list[tuple[EnvPrint, LaunchShape, Round]]:
    """Each process's own env print beside its Worker's launch line and the rendezvous round
    it ran in, Worker by Worker."""
    return [(env, shape, round_) for shape in job.launch_shapes for round_ in shape.worker.rounds
            for env in round_.envs]


def _expected_world(job: Job, shape: LaunchShape, round_: Round) -> tuple[int | None, str]:
    """The WORLD_SIZE the processes of this round should see, and what says so."""
    if round_.global_world_size is not None:
        return round_.global_world_size, (f"torchrun's rendezvous (round {round_.index}) gave "
                                          f"WORLD_SIZE={round_.global_world_size}")
    nodes, gpus = round_.group_world_size, job.uniform_gpus
    if nodes is not None and gpus:
        return nodes * gpus, (f"torchrun's rendezvous (round {round_.index}) formed a world of "
                              f"{nodes} node{'s' if nodes > 1 else ''} x {gpus} processes")
    if job.elastic and job.formed_world(round_.world_size, shape.total_procs):
        return round_.world_size, "an elastic world re-formed around the nodes that were there"
    return shape.total_procs, f"the launch lines expect total_procs={shape.total_procs}"


def world_size_mismatch(job: Job, rule):
    processes = _processes_with_launch(job)
    uneven = len({shape.gpus_per_node for _, shape, _ in processes
                  if shape.gpus_per_node is not None}) > 1
    out = []
    for env, shape, _ in processes:
        worker, local, gpus = shape.worker, env.local_rank, shape.gpus_per_node
        # An elastic rendezvous numbers the nodes in the order they joined, not by node_rank.
        laid_out = None not in (shape.rank_offset, local) and not job.elastic
        expected = shape.rank_offset + local if laid_out else None
        if None not in (env.rank, expected) and env.rank != expected:
            message = (f"{worker.label}: RANK={env.rank} with LOCAL_RANK={local}, "
                       f"expected RANK={expected}")
        elif None not in (local, gpus) and local >= gpus:
            message = f"{worker.label}: LOCAL_RANK={local} but the Worker has gpus_per_node={gpus}"
        else:
            continue
        out.append(finding(rule, message, [env.where], node_rank=worker.node_rank, rank=env.rank))
    # Each round's WORLD_SIZE against that round's world. WORLD_SIZE unset counts as wrong; a
    # round nothing gives a size for (no launch line's total_procs) gives no expectation.
    wrong_size: dict[tuple, list[tuple[EnvPrint, LaunchShape]]] = {}  # in order of first sight
    for env, shape, round_ in processes:
        total, expected_by = _expected_world(job, shape, round_)
        if total is not None and env.world_size != total:
            key = (env.world_size, total, expected_by, shape.nnodes)
            wrong_size.setdefault(key, []).append((env, shape))
    for (size, total, expected_by, nnodes), group in wrong_size.items():
        first_env_of: dict = {}  # Worker → its first env print here, Workers in order of first sight
        for env, shape in group:
            first_env_of.setdefault(shape.worker, env)
        workers = list(first_env_of)
        ranks = sorted({env.rank for env, _ in group if env.rank is not None})
        where = workers[0].label if len(workers) == 1 else f"{len(workers)} Workers"
        who = plural(ranks, "rank", "ranks") if ranks else "processes"
        if size is None:
            message = f"{where}: {who} run without WORLD_SIZE set"
        else:
            verb = "sees" if len(ranks) == 1 else "see"
            message = f"{where}: {who} {verb} WORLD_SIZE={size}, but {expected_by}"
        leaked = size is not None and size == nnodes
        if leaked:
            message += "; that is nnodes: the platform's WORLD_SIZE leaked into the training processes"
        # One line per Worker is evidence enough; the rest say the same.
        evidence = [env.where for env in first_env_of.values()]
        out.append(finding(rule, message, evidence,
                           node_rank=workers[0].node_rank if len(workers) == 1 else None,
                           rank=ranks[0] if len(ranks) == 1 else None, ranks=tuple(ranks),
                           node_ranks=tuple(w.node_rank for w in workers if w.node_rank is not None),
                           hint=UNEVEN_GPUS_HINT if uneven and not leaked else None))
    return out


def printed_by_every_rank(job: Job) -> set[str]:
    """The kinds of rank line this job's processes print whatever their rank, on positive evidence:
    the guide's env print (its script prints it first thing, on every rank), or a framework's line
    that a process other than rank 0 printed. A line seen from rank 0 only may be one that only
    rank 0 prints (Accelerate's state under `main_process_only`, Ray Train's since 2.5): its
    absence elsewhere says nothing."""
    kinds = set()
    for worker in job.workers:
        for env in worker.envs:
            if env.source == TORCHRUN_ENV or (env.rank or 0) > 0 or (env.local_rank or 0) > 0:
                kinds.add(env.source)
    return kinds


def _same_local_ranks_everywhere(job: Job) -> bool:
    """Every Worker's processes printed from the same local ranks, fewer than the Worker has: what
    torchrun's --local-ranks-filter shows (one local rank's output per node), or a script that
    prints on local rank 0 only. A rank that died first leaves its own Worker's set short, not
    every Worker's alike."""
    shown = []
    for worker in job.launched:
        if not worker.launch.gpus_per_node or worker.rank_offset is None or not worker.envs:
            return False
        locals_ = {e.local_rank if e.local_rank is not None else e.rank - worker.rank_offset
                   for e in worker.envs if e.local_rank is not None or e.rank is not None}
        shown.append((frozenset(locals_), worker.launch.gpus_per_node))
    return len(shown) > 1 and len({seen for seen, _ in shown}) == 1 and all(len(seen) < gpus for seen, gpus in shown)


def missing_rank(job: Job, rule):
    kinds = printed_by_every_rank(job)
    if not kinds:
        return []  # no line this job prints on every rank: absence means nothing
    line = "torchrun env line" if kinds == {TORCHRUN_ENV} else f"rank line ({', '.join(sorted(kinds))})"
    if _same_local_ranks_everywhere(job):
        return []  # torchrun --local-ranks-filter, or a script that prints on some local ranks only
    out = []
    for worker in job.launched:
        gpus = worker.launch.gpus_per_node
        if not gpus or not worker.started_processes or worker.rank_offset is None:
            continue
        if job.reached_first_batch(worker):
            continue  # its processes took part in training: an env print was lost, not a rank
        if worker.shared_file or worker.foreign_envs:
            continue  # another Worker overwrote part of this log: absence proves nothing
        own = worker.envs  # a line of any kind shows the process was there
        seen = {e.local_rank for e in own if e.local_rank is not None}
        seen |= {e.rank - worker.rank_offset for e in own
                 if e.local_rank is None and e.rank is not None}
        missing = [worker.rank_offset + local for local in range(gpus) if local not in seen]
        if not missing:
            continue
        out.append(finding(
            rule, f"{worker.label}: {plural(missing, 'rank', 'ranks')} never printed "
                  f"{'its' if len(missing) == 1 else 'their'} {line}",
            [worker.launch.where] + [e.where for e in worker.envs[:2]],
            node_rank=worker.node_rank, rank=missing[0] if len(missing) == 1 else None,
            ranks=tuple(missing)))
    return out
