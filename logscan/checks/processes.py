"""Rules on what the training processes say torchrun gave them."""

from __future__ import annotations

import pandas as pd

from logscan.checks.base import finding, plural
from logscan.model import Job


UNEVEN_GPUS_HINT = ("Give every Worker the same number of GPUs, or make the launch script and "
                    "training code compute ranks and world size for uneven Workers.")


def _processes_with_launch(job: Job) -> pd.DataFrame:
    """Each process's own env print beside its Worker's launch line."""
    own = job.process_table[~job.process_table["foreign"]]
    launch = job.launched_table[["total_procs", "nnodes", "gpus_per_node", "rank_offset"]]
    return own.merge(launch, left_on="worker_index", right_index=True)


def world_size_mismatch(job: Job, rule):
    table = _processes_with_launch(job)
    uneven = table["gpus_per_node"].nunique() > 1
    out = []
    expected = table["rank_offset"] + table["local_rank"]
    wrong_rank = (table["rank"] != expected).fillna(False)
    too_local = (table["local_rank"] >= table["gpus_per_node"]).fillna(False) & ~wrong_rank
    for row in table[wrong_rank | too_local].itertuples():
        env = job.env_of(row)
        worker = job.workers[row.worker_index]
        if wrong_rank[row.Index]:
            message = (f"{worker.label}: RANK={env.rank} with LOCAL_RANK={env.local_rank}, "
                       f"expected RANK={expected[row.Index]}")
        else:
            message = (f"{worker.label}: LOCAL_RANK={env.local_rank} but the Worker has "
                       f"gpus_per_node={row.gpus_per_node}")
        out.append(finding(rule, message, [env.where], node_rank=worker.node_rank, rank=env.rank))
    # WORLD_SIZE unset counts as wrong; a launch line without total_procs gives no expectation.
    wrong_size = table["total_procs"].notna() & (
        table["world_size"].isna() | (table["world_size"] != table["total_procs"]).fillna(False))
    for (size, total, nnodes), rows in table[wrong_size].groupby(
            ["world_size", "total_procs", "nnodes"], dropna=False, sort=False):
        size = None if pd.isna(size) else int(size)
        total = int(total)
        nnodes = None if pd.isna(nnodes) else int(nnodes)
        workers = [job.workers[i] for i in dict.fromkeys(rows["worker_index"])]
        ranks = sorted(int(r) for r in rows["rank"].dropna().unique())
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
        evidence = [job.env_of(group.iloc[0]).where for _, group in rows.groupby("worker_index", sort=False)]
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
        if worker.shared_file or worker.foreign_envs:
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
