"""Rules on what the training processes say torchrun gave them."""

from __future__ import annotations

from collections import defaultdict

from logscan.checks.base import finding, plural
from logscan.model import Job


UNEVEN_GPUS_HINT = ("Give every Worker the same number of GPUs, or make the launch script and "
                    "training code compute ranks and world size for uneven Workers.")


def world_size_mismatch(job: Job, rule):
    uneven = len({w.launch.gpus_per_node for w in job.launched}) > 1
    out = []
    for worker in job.launched:
        launch = worker.launch
        wrong_size = defaultdict(list)
        wrong_rank = []
        for env in worker.envs:
            if env.world_size != launch.total_procs:
                wrong_size[env.world_size].append(env)
            expected = (worker.rank_offset + env.local_rank
                        if worker.rank_offset is not None and env.local_rank is not None else None)
            if expected is not None and env.rank is not None and env.rank != expected:
                wrong_rank.append((env, expected))
            elif (launch.gpus_per_node is not None and env.local_rank is not None
                  and env.local_rank >= launch.gpus_per_node):
                wrong_rank.append((env, None))
        for size, envs in wrong_size.items():
            ranks = sorted({e.rank for e in envs if e.rank is not None})
            who = plural(ranks, "rank", "ranks") if ranks else "processes"
            if size is None:
                message = f"{worker.label}: {who} run without WORLD_SIZE set"
            else:
                verb = "sees" if len(ranks) == 1 else "see"
                message = (f"{worker.label}: {who} {verb} WORLD_SIZE={size}, but the launch line "
                           f"expects total_procs={launch.total_procs}")
                if size == launch.nnodes and size != launch.total_procs:
                    message += ("; that is nnodes: the platform's WORLD_SIZE leaked into the "
                                "training processes")
            leaked = size is not None and size == launch.nnodes
            out.append(finding(rule, message, [e.where for e in envs], node_rank=worker.node_rank,
                               rank=ranks[0] if len(ranks) == 1 else None, ranks=tuple(ranks),
                               hint=UNEVEN_GPUS_HINT if uneven and not leaked else None))
        for env, expected in wrong_rank:
            if expected is None:
                message = (f"{worker.label}: LOCAL_RANK={env.local_rank} but the Worker has "
                           f"gpus_per_node={launch.gpus_per_node}")
            else:
                message = (f"{worker.label}: RANK={env.rank} with LOCAL_RANK={env.local_rank}, "
                           f"expected RANK={expected}")
            out.append(finding(rule, message, [env.where], node_rank=worker.node_rank, rank=env.rank))
    return out


def missing_rank(job: Job, rule):
    if not job.prints_env:
        return []  # this training script does not print its env: absence means nothing
    out = []
    for worker in job.launched:
        gpus = worker.launch.gpus_per_node
        if not gpus or not worker.started_processes or worker.rank_offset is None:
            continue
        seen = {e.local_rank for e in worker.envs if e.local_rank is not None}
        seen |= {e.rank - worker.rank_offset for e in worker.envs
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
