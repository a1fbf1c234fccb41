"""Launch-shape rules: do the Workers' launch lines describe one consistent job?"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import replace
from datetime import datetime, timedelta

from logscan.findings.base import HANDFUL, few, finding, plural
from logscan.scan.events import LAUNCH_LINE, format_master
from logscan.scan.lineparse import LIGHTNING_GLOBAL_KIND
from logscan.scan.prefixes import strip_prefixes
from logscan.model.job import Job, Worker


def _missing_node_ranks(job: Job) -> list[int]:
    """node_ranks of 0..nnodes-1 that no launch line claims and no process was seen running on."""
    nnodes = job.nnodes
    if nnodes is None:
        return []
    claimed = {w.node_rank for w in job.launched if w.node_rank is not None}
    # A node whose processes' env lines sit in another Worker's log ran; only its launch line
    # was overwritten (log-collision tells that story).
    seen_running = {job.home_node(e) for w in job.workers for e in w.foreign_envs}
    return [n for n in range(nnodes) if n not in claimed and n not in seen_running]


def _whole_world_trained(job: Job) -> bool:
    """Every Worker that is here got past its first batch, and no process saw a world smaller
    than the launch lines' total_procs: the rendezvous held every node, the missing ones too."""
    if not job.launched or not job.progressed:
        return False
    # A log with no launch line that shows torchrun or a traceback may be the missing Worker's
    # own, stopped before its launch line: then the Worker is not missing, it failed.
    present = [w for w in job.workers if w.launch is not None or w.ran_torchrun or w.exceptions]
    if not all(job.reached_first_batch(w) for w in present):
        return False
    totals = {w.launch.total_procs for w in job.launched}
    if len(totals) != 1 or None in totals:
        return False
    total = totals.pop()
    return all(e.world_size in (None, total) for w in job.workers for e in w.envs)


def _missing_message(job: Job, missing: list[int]) -> tuple[str, list]:
    declared = next(w.launch for w in job.launched if w.launch.nnodes == job.nnodes)
    silent = [w for w in job.workers if w.launch is None]
    # Workers placed by torchrun's own lines: those lines would name the missing node too.
    told_by = ("no launch line" if all(w.launch.source == LAUNCH_LINE for w in job.launched)
               else "no launch line or torchrun line of its own")
    message = (f"{plural(missing, 'node_rank', 'node_ranks')} of nnodes={job.nnodes} "
               f"{'has' if len(missing) == 1 else 'have'} {told_by} in any log")
    if silent:
        message += f"; {plural([w.stream for w in silent], 'log', 'logs')} never printed one"
    return message, [declared.where] + [w.last_line for w in silent]


def missing_worker(job: Job, rule):
    missing = _missing_node_ranks(job)
    if not missing or _whole_world_trained(job):
        return []  # missing-worker-log: the Worker ran, its log was not collected
    if len(job.workers) < 2:
        # One Worker's log (a paste, one node's file): the others' logs are simply not here, and
        # nothing in it says whether they ever started.
        return []
    unnumbered = [w for w in job.workers if w.node_rank is None and w.started_processes]
    if len(unnumbered) >= len(missing):
        # As many logs whose torchrun started processes but that say no node_rank: the "missing"
        # nodes are theirs.
        return []
    message, evidence = _missing_message(job, missing)
    return [finding(rule, message, evidence, node_rank=missing[0] if len(missing) == 1 else None,
                    node_ranks=tuple(missing))]


def missing_worker_log(job: Job, rule):
    missing = _missing_node_ranks(job)
    if not missing or not _whole_world_trained(job):
        return []
    message, evidence = _missing_message(job, missing)
    total = job.launched[0].launch.total_procs
    message += (f", yet every Worker here trained in the whole world of {total} processes: "
                f"{'that Worker' if len(missing) == 1 else 'those Workers'} ran, and "
                f"{'its log was' if len(missing) == 1 else 'their logs were'} not collected")
    progress = next((w.last_progress.where for w in job.workers if w.last_progress is not None), None)
    return [finding(rule, message, [*evidence, progress],
                    node_rank=missing[0] if len(missing) == 1 else None, node_ranks=tuple(missing))]


def duplicate_node_rank(job: Job, rule):
    out = []
    for node_rank, workers in job.workers_by("node_rank").items():
        streams = sorted({w.stream for w in workers})
        if len(streams) < 2:
            continue
        out.append(finding(
            rule, f"{len(streams)} Worker logs claim node_rank {node_rank}: {few(streams)}",
            [w.launch.where for w in workers], node_rank=node_rank))
    # The launch lines tell it best; without them the processes' own rank lines tell it, across
    # Worker logs first, then within one log both nodes' output went to.
    return out or _ranks_claimed_twice(job, rule) or _ranks_repeated_in_one_log(job, rule)


def _ranks_claimed_twice(job: Job, rule):
    """Processes in two Workers' logs that claim the same global rank of one world (their rank
    lines agree on its size, or one says none): two nodes took the same node rank, so the ranks
    of the node rank nobody took never ran. Only the last round of each Worker counts: an elastic
    or c10d rendezvous may give a node other ranks when it re-forms the world."""
    if job.elastic:
        return []
    claims: dict[int, dict] = {}  # global rank → {Worker: its first line claiming it}
    for worker in job.workers:
        if worker.shared_file:
            continue  # a log several Workers wrote: its lines are dealt by rank already
        for env in worker.final_round.envs:
            if env.rank is not None:
                claims.setdefault(env.rank, {}).setdefault(worker, env)
    twice = {rank: lines for rank, lines in claims.items() if len(lines) > 1
             and len({e.world_size for e in lines.values()} - {None}) <= 1}
    if not twice:
        return []
    workers = list(dict.fromkeys(w for lines in twice.values() for w in lines))
    ranks = sorted(twice)
    message = (f"{len(workers)} Worker logs ({few(sorted(w.stream for w in workers))}) claim "
               f"global {plural(ranks, 'rank', 'ranks')}")
    sizes = {e.world_size for lines in claims.values() for e in lines.values()} - {None}
    if len(sizes) == 1:
        size = sizes.pop()
        message += f" of a world of {size}"
        unclaimed = [r for r in range(size) if r not in claims]
        # A rank that took part in training ran, whatever it printed: DDP steps together.
        if unclaimed and not job.training_started:
            message += (f"; {plural(unclaimed, 'rank', 'ranks')} never printed "
                        f"{'its' if len(unclaimed) == 1 else 'their'} rank line")
    message += ": two nodes took the same node rank"
    first = ranks[0]
    return [finding(rule, message, [twice[first][w].where for w in twice[first]],
                    rank=first if len(ranks) == 1 else None, ranks=tuple(ranks))]


# Lightning's own launcher takes the node rank from NODE_RANK (else GROUP_RANK), 0 when neither is set.
ONE_NODE_RANK_EACH = ("Set NODE_RANK on every node to its own value from the platform's per-node "
                      "variable (Lightning takes 0 when it is unset); never copy one.")


# Rank lines whose rank each process works out from the node rank its node was given, printed
# before init_process_group: Lightning's own launcher (NODE_RANK), whose two nodes given one node
# rank print them twice, then wait for the ranks nobody took. Other rank lines never show that:
# torchrun starts no process for two agents of one node rank (their rendezvous never completes:
# the duplicate-node-rank samples), so the env it passes on repeats only on a restart, whose lines
# torchrun logs to stderr, maybe not in this log; MPI (DeepSpeed's discovery) and Ray Train give
# every process its world rank themselves; Accelerate prints its state after init_process_group,
# which on rank 0 (the store's host, waiting for world_size - 1 clients) returns only once the
# whole world joined.
FROM_A_NODE_RANK = frozenset({LIGHTNING_GLOBAL_KIND})

# Two processes of one rank that printed this close together may have started together (two nodes
# launched at once); farther apart, the second is as likely a run started after the first ended.
SAME_START = timedelta(minutes=2)


def _ranks_repeated_in_one_log(job: Job, rule):
    """One log holding two nodes' output (a log path both wrote to, or a paste of both), both
    nodes having taken one node rank: each of that node's global ranks printed its rank line twice,
    and the other node rank's ranks never. A repeat is as often a restart (torchrun's, a
    scheduler's requeue, a second run appended to the log), so it counts only when:
    - nothing lies between the two prints: no torchrun or framework line, no error, exit,
      progress or launch line, and they are not minutes apart;
    - the world those lines name lacks ranks, at least as many as were repeated;
    - a node's worth repeated, never one rank alone (some scripts print on rank 0 only, and
      torchrun's --log-dir gives each process a file of its own that a second run appends to);
    - rank 0 is among them, unless the two processes' prints interleave (see below);
    - the line is one whose rank comes from a node rank, printed before the world forms
      (FROM_A_NODE_RANK);
    - nothing says the world trained, succeeded, or re-formed as an elastic one."""
    if job.elastic_beyond_repeats or job.training_started or any(w.group_succeeded for w in job.workers):
        return []
    if any(e.exitcode == 0 for w in job.workers for e in w.exits):
        return []
    seen = _ranks_seen(job)
    out = []
    for worker in job.workers:
        if worker.shared_file:
            continue  # a log several Workers wrote: its lines are dealt by rank already
        for source, (world, pairs) in _repeats_within_a_round(worker).items():
            repeated = sorted(pairs)
            missing = [r for r in range(world) if r not in seen]
            if len(repeated) < 2 or len(missing) < len(repeated):
                continue
            # Prints in two blocks, one after the other, are a paste of two nodes or two runs of
            # one node. Two runs of a node other than node 0 may show nothing between them (its
            # processes log no progress); node 0's rank 0 logs its run. Node 0 is also the node
            # rank Lightning takes when NODE_RANK is unset, the usual way two nodes share one.
            if 0 not in repeated and not _interleaved(worker, pairs) and not _labelled_apart(pairs):
                continue
            message = (f"{worker.stream} holds two processes of each of global ranks {few(repeated)} "
                       f"of a world of {world} (their {source} line twice, no restart between), and "
                       f"ranks {few(missing)} never printed theirs: two nodes took the same node rank "
                       f"and wrote to one log")
            first = pairs[repeated[0]]
            out.append(finding(rule, message, first, ranks=tuple(repeated), hint=ONE_NODE_RANK_EACH))
            break  # one process prints several kinds: the first kind tells it
    return out


def _ranks_seen(job: Job) -> set[int]:
    """Every global rank a line shows running: its rank line, or a `[rankN]:`-style prefix."""
    seen = {e.rank for w in job.workers for e in w.envs if e.rank is not None}
    for worker in job.workers:
        for kind in (worker.hits, worker.exceptions, worker.progress, worker.exits):
            seen.update(event.where.rank for event in kind if event.where.rank is not None)
    return seen


def _round_ends(worker: Worker) -> list[tuple[int, int]]:
    """Where, in the Worker's reading order, any line other than a rank line was read: each may
    end a run or start another (torchrun's restart lines and banner, a framework's end of
    training, an error, an exit, progress, a launch line), so no repeat across one is read as
    a second process."""
    earlier = worker.earlier_attempts
    kinds = [worker.hits, worker.exceptions, worker.exits, worker.progress, worker.launches,
             worker.agent_shapes]
    if earlier is not None:
        kinds += [earlier.hits, earlier.exceptions, earlier.exits]
    return sorted(worker.position(event.where) for kind in kinds for event in kind)


def _repeats_within_a_round(worker: Worker) -> dict[str, tuple[int, dict]]:
    """By kind of rank line naming one world size: that size, and each rank printed twice in one
    logger's dress (_logger_head) with no possible round end between, with its two lines."""
    ends = _round_ends(worker)
    by_kind: dict[tuple[str, str], list] = {}
    for env in worker.envs:
        if env.rank is not None and env.source in FROM_A_NODE_RANK:
            by_kind.setdefault((env.source, _logger_head(env.where.text)), []).append(env)
    found: dict[str, tuple[int, dict]] = {}
    for (source, _), envs in by_kind.items():
        worlds = {e.world_size for e in envs} - {None}
        if len(worlds) != 1:
            continue
        world = worlds.pop()
        last: dict[int, object] = {}
        pairs: dict[int, list] = {}
        for env in sorted(envs, key=lambda e: worker.position(e.where)):
            before = last.get(env.rank)
            last[env.rank] = env
            if before is None or env.rank in pairs or not 0 <= env.rank < world:
                continue
            if _one_round(worker, ends, before.where, env.where):
                pairs[env.rank] = [before.where, env.where]
        if pairs and len(pairs) > len(found.get(source, (0, {}))[1]):
            found[source] = (world, pairs)
    return found


_DIGITS = re.compile(r"\d+")


def _logger_head(text: str) -> str:
    """What a logger wrote before a line's own words, its numbers blanked (`I# #:#:#.# # distributed.py:#]`,
    `INFO:`): a process that logs through two handlers (Python's root logger and absl's, as Lightning on
    some clusters does) writes each rank line twice, once in each dress, while two processes of one
    rank write the same dress twice."""
    body = strip_prefixes(text).body.strip()
    at = text.find(body) if body else -1
    return _DIGITS.sub("#", text[:at].strip()) if at > 0 else ""


def _interleaved(worker: Worker, pairs: dict) -> bool:
    """Some rank printed its second line before another printed its first: two processes of each
    ran at once, as a log both nodes append to shows them (two runs one after the other cannot)."""
    firsts = [worker.position(lines[0]) for lines in pairs.values()]
    seconds = [worker.position(lines[1]) for lines in pairs.values()]
    return min(seconds) < max(firsts)


def _labelled_apart(pairs: dict) -> bool:
    """Each rank's two lines carry different task labels (srun --label's `0: `, `1: `): two tasks, so
    two processes that ran side by side, never one run after another."""
    return all(first.task is not None and second.task is not None and first.task != second.task
               for first, second in pairs.values())


def _one_round(worker: Worker, ends: list, first, second) -> bool:
    """No line that may end a run lies between the two prints, and they are not minutes apart."""
    # A line of both kinds (a rank line a rule also matched) ends nothing between the two.
    if bisect_left(ends, worker.position(second)) > bisect_right(ends, worker.position(first)):
        return False
    times = (first.time, second.time)
    # Stamps of one clock only: a year-less stamp or a zone on one of them alone compares nothing.
    if all(isinstance(t, datetime) for t in times) and (times[0].tzinfo is None) == (times[1].tzinfo is None):
        return abs(times[1] - times[0]) <= SAME_START
    return True


def _outliers(groups: dict, node0_decides: bool) -> list:
    """The Workers that differ from the reference value: node 0's where node 0 hosts the thing
    compared (the rendezvous store), else the majority's; none when there is no majority."""
    if node0_decides:
        reference = next((v for v, ws in groups.items() if any(w.node_rank == 0 for w in ws)), None)
        if reference is not None:
            return [w for value, ws in groups.items() if value != reference for w in ws]
    sizes = sorted((len(ws) for ws in groups.values()), reverse=True)
    if len(sizes) > 1 and sizes[0] == sizes[1]:
        return []
    reference = max(groups.items(), key=lambda item: len(item[1]))[0]
    return [w for value, ws in groups.items() if value != reference for w in ws]


def _disagreement(rule, what: str, groups: dict, show, node0_decides: bool = False) -> list:
    if len(groups) < 2:
        return []
    outliers = _outliers(groups, node0_decides)
    ordered = sorted(groups.items(), key=lambda kv: str(kv[0]))
    parts = "; ".join(f"{show(value)} on {_labels(ws)}" for value, ws in ordered[:HANDFUL])
    if len(ordered) > HANDFUL:
        parts += f"; and {len(ordered) - HANDFUL} more values"
    node_rank = outliers[0].node_rank if len(outliers) == 1 else None
    return [finding(rule, f"Workers disagree on {what}: {parts}",
                    [ws[0].launch.where for ws in groups.values()] + [w.launch.where for w in outliers],
                    node_rank=node_rank, node_ranks=tuple(sorted(
                        w.node_rank for w in outliers if w.node_rank is not None)))]


def _labels(workers) -> str:
    """`node 0, node 3`, or `nodes 0-511` when every one has a node_rank: at most a handful."""
    node_ranks = [w.node_rank for w in workers]
    if len(workers) > 1 and None not in node_ranks:
        return f"nodes {few(node_ranks)}"
    return few([w.label for w in workers])


def launch_mismatch(job: Job, rule):
    launched = job.launched
    by_nnodes = job.workers_by("nnodes")
    by_master = job.workers_by("master_addr", "master_port")
    # Node 0 hosts the rendezvous store: its nnodes and its port are the ones the job waits on.
    out = _disagreement(rule, "nnodes", by_nnodes, lambda n: f"nnodes={n}", node0_decides=True)
    out += _disagreement(rule, "the master address", by_master, lambda am: format_master(*am),
                         node0_decides=True)
    for worker in launched:
        launch = worker.launch
        for key, value in launch.absurd:
            out.append(finding(
                rule, f"{worker.label}: the launch line says {key}={value[:20]}, more than any job "
                      f"has: a damaged line or a wrong platform variable (the value is ignored)",
                [launch.where], node_rank=worker.node_rank))
        for key, said, ran in launch.disputed:
            out.append(finding(
                rule, f"{worker.label}: the launch line says {key}={said}, but the node's own torchrun "
                      f"logged {key}={ran}: the line did not describe the command that ran",
                [launch.where, *_torchrun_lines(worker)], node_rank=worker.node_rank))
        if None in (launch.total_procs, launch.nnodes, launch.gpus_per_node):
            continue
        # torchrun's own world is the sum of every node's count, not a line's arithmetic: where it
        # differs from this node's count times nnodes, the nodes' counts differ (gpu-count-mismatch).
        if launch.source == LAUNCH_LINE and launch.total_procs != launch.nnodes * launch.gpus_per_node:
            out.append(finding(
                rule, f"{worker.label}: total_procs={launch.total_procs} is not nnodes × "
                      f"gpus_per_node = {launch.nnodes} × {launch.gpus_per_node}",
                [launch.where], node_rank=worker.node_rank))
    nnodes = job.nnodes
    # Only logs that show a launch or torchrun at work count as Workers' logs: a stray text
    # file beside them (notes, a data manifest) is no extra Worker.
    workers = [w for w in job.workers if w.ran_torchrun]
    streams = {w.stream for w in workers}
    if nnodes is not None and len(streams) > nnodes:
        out.append(finding(
            rule, f"{len(streams)} Worker logs for nnodes={nnodes}",
            [w.launch.where if w.launch else w.last_line for w in workers]))
    return out


def _torchrun_lines(worker) -> list:
    """The first line of each block of torchrun's own account of the node (its launch configs,
    its last rendezvous result)."""
    lasts = {shape.block: shape.where for shape in worker.agent_shapes}
    return sorted(lasts.values(), key=lambda where: where.line)


def gpu_count_mismatch(job: Job, rule):
    counts = job.workers_by("gpus_per_node")
    if len(counts) < 2:
        return []
    found = _disagreement(rule, "gpus_per_node", counts, lambda g: f"gpus_per_node={g}")[0]
    world = sum(g * len(ws) for g, ws in counts.items())
    totals = sorted({w.launch.total_procs for ws in counts.values() for w in ws
                     if w.launch.total_procs is not None})
    message = found.message
    if any(w.launch.source != LAUNCH_LINE for ws in counts.values() for w in ws):
        # torchrun's rendezvous result: the world it formed, not one a launch line expected
        if totals == [world]:
            message += f"; torchrun formed a world of {world} processes, as its rendezvous results say"
    elif len(job.launched) == job.nnodes:
        message += (f"; torchrun forms a world of {world} processes, "
                    f"not the total_procs={'/'.join(map(str, totals))} the launch lines expect")
    return [replace(found, message=message)]

