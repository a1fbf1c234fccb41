"""Rules on what the training processes say torchrun gave them."""

from __future__ import annotations

from collections import defaultdict

from logscan.checks.base import finding, plural
from logscan.model import Job


UNEVEN_GPUS_HINT = ("Give every Worker the same number of GPUs, or make the launch script and "
                    "training code compute ranks and world size for uneven Workers.")


def world_size_mismatch(job: Job, rule):
    uneven = len({w.launch.gpus_per_node for w in job.launched}) > 1
    wrong_size = defaultdict(list)   # (WORLD_SIZE seen, total_procs expected, nnodes) -> envs
    out = []
    for worker in job.launched:
        launch = worker.launch
        foreign = job.foreign_envs(worker)  # reported by log-collision, not as wrong ranks
        for env in worker.envs:
            if env in foreign:
                continue
            if env.world_size != launch.total_procs:
                wrong_size[(env.world_size, launch.total_procs, launch.nnodes)].append((worker, env))
            expected = (worker.rank_offset + env.local_rank
                        if worker.rank_offset is not None and env.local_rank is not None else None)
            if expected is not None and env.rank is not None and env.rank != expected:
                message = (f"{worker.label}: RANK={env.rank} with LOCAL_RANK={env.local_rank}, "
                           f"expected RANK={expected}")
            elif (launch.gpus_per_node is not None and env.local_rank is not None
                  and env.local_rank >= launch.gpus_per_node):
                message = (f"{worker.label}: LOCAL_RANK={env.local_rank} but the Worker has "
                           f"gpus_per_node={launch.gpus_per_node}")
            else:
                continue
            out.append(finding(rule, message, [env.where], node_rank=worker.node_rank, rank=env.rank))
    for (size, total, nnodes), seen in wrong_size.items():
        workers = list(dict.fromkeys(w for w, _ in seen))
        ranks = sorted({e.rank for _, e in seen if e.rank is not None})
        where = workers[0].label if len(workers) == 1 else f"{len(workers)} Workers"
        who = plural(ranks, "rank", "ranks") if ranks else "processes"
        if size is None:
            message = f"{where}: {who} run without WORLD_SIZE set"
        else:
            verb = "sees" if len(ranks) == 1 else "see"
            message = f"{where}: {who} {verb} WORLD_SIZE={size}, but the launch lines expect total_procs={total}"
        leaked = size is not None and size == nnodes
        if leaked:
            message += "; that is nnodes: the platform's WORLD_SIZE leaked into the training processes"
        # One line per Worker is evidence enough; the rest say the same.
        evidence = [next(e.where for w2, e in seen if w2 is w) for w in workers]
        out.append(finding(rule, message, evidence,
                           node_rank=workers[0].node_rank if len(workers) == 1 else None,
                           rank=ranks[0] if len(ranks) == 1 else None, ranks=tuple(ranks),
                           node_ranks=tuple(w.node_rank for w in workers if w.node_rank is not None),
                           hint=UNEVEN_GPUS_HINT if uneven and not leaked else None))
    return out


def missing_rank(job: Job, rule):
    if not job.prints_env:
        return []  # this training script does not print its env: absence means nothing
    out = []
    for worker in job.launched:
        gpus = worker.launch.gpus_per_node
        if not gpus or not worker.started_processes or worker.rank_offset is None:
            continue
        if worker.shared_file or job.foreign_envs(worker):
            continue  # another Worker overwrote part of this log: absence proves nothing
        own = worker.envs
        seen = {e.local_rank for e in own if e.local_rank is not None}
        seen |= {e.rank - worker.rank_offset for e in own
                 if e.local_rank is None and e.rank is not None}
        missing = [worker.rank_offset + local for local in range(gpus) if local not in seen]
        if not missing:
            continue
        out.append(finding(
            rule, f"{worker.label}: {plural(missing, 'rank', 'ranks')} never printed "
                  f"{'its' if len(missing) == 1 else 'their'} torchrun env line",
            [worker.launch.where] + [e.where for e in worker.envs[:2]],
            node_rank=worker.node_rank, rank=missing[0] if len(missing) == 1 else None,
            ranks=tuple(missing)))
    return out
