"""Expectations: what a gate (`logscan check`) asked the logs to show, held to the job model.

Each expectation's code takes the job model, its catalogue entry (rules/expect-*.toml, role =
"expectation"), the run's Expectations and the findings of every other rule, and returns one
finding when the expectation is not met (none when it holds or was not asked for). A finding says
what was expected, what the logs show instead, and cites the lines that show it. An expectation the
logs cannot show because the job left no evidence of it (no launch line, no progress) is not met: a
gate never passes on missing evidence. One the lines cannot show whatever the job did (a time
limit, on lines that carry no times) is NotChecked: the gate says so, and why, and is not failed
by it.

The findings are the gate's, not the job's: the root-cause pass and the verdict leave them out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from logscan.findings.base import finding, plural
from logscan.diagnosis import ExpectationResult, format_duration
from logscan.expectations import EXPECTATIONS, Expectations, asked_for
from logscan.model.job import Job
from logscan.vocabulary import ExpectationStatus, Role, Severity


@dataclass(frozen=True)
class NotChecked:
    """What an expectation's code returns when the lines cannot show it either way: why."""

    why: str


def _launch_lines(job: Job):
    return [w.launch.where for w in job.launched]


def _unmet(rule, message: str, evidence=(), **extra):
    # No time: an expectation is about the whole run, never a candidate for its earliest failure.
    return [replace(finding(rule, message, evidence, **extra), time=None)]


def expect_workers(job: Job, rule, expect: Expectations, findings) -> list:
    want = expect.workers
    if want is None:
        return []
    nodes = sorted({w.node_rank for w in job.launched if w.node_rank is not None})
    problems = []
    if len(nodes) != want:
        seen = f"{plural(nodes, 'node_rank', 'node_ranks')}" if nodes else "no launch line"
        problems.append(f"the logs show {len(nodes)} Worker(s) with a launch line ({seen})")
    if job.nnodes is not None and job.nnodes != want:
        problems.append(f"the launch lines say nnodes={job.nnodes}")
    if not problems:
        return []
    silent = [w.last_line for w in job.workers if w.launch is None and w.last_line is not None]
    return _unmet(rule, f"expected {want} Worker(s): " + "; ".join(problems),
                  _launch_lines(job) + silent, node_ranks=tuple(nodes))


def expect_gpus_per_node(job: Job, rule, expect: Expectations, findings) -> list:
    want = expect.gpus_per_node
    if want is None:
        return []
    if not job.launched:
        return _unmet(rule, f"expected gpus_per_node={want}: no launch line shows gpus_per_node")
    wrong = [w for w in job.launched if w.launch.gpus_per_node != want]
    if not wrong:
        return []
    said = ", ".join(f"{w.label}: {w.launch.gpus_per_node}" for w in wrong[:8])
    nodes = tuple(w.node_rank for w in wrong if w.node_rank is not None)
    return _unmet(rule, f"expected gpus_per_node={want} on every Worker; the launch lines say {said}",
                  [w.launch.where for w in wrong],
                  node_rank=nodes[0] if len(nodes) == 1 else None, node_ranks=nodes)


def expect_world_size(job: Job, rule, expect: Expectations, findings) -> list:
    want = expect.world_size
    if want is None:
        return []
    problems, evidence = [], []
    said = [w for w in job.launched if w.launch.total_procs is not None]
    printed_any = any(e.world_size is not None for w in job.workers for e in w.envs)
    if not said and not printed_any:
        return _unmet(rule, f"expected world size {want}: no launch line and no env print shows one")
    wrong = [w for w in said if w.launch.total_procs != want]
    if wrong:
        totals = sorted({w.launch.total_procs for w in wrong})
        problems.append(f"the launch lines say total_procs={', '.join(map(str, totals))}")
        evidence += [w.launch.where for w in wrong]
    # The last rendezvous round is the world the job ended in: an elastic job's earlier rounds
    # ran with the nodes that were there then.
    printed = [e for w in job.workers for e in w.envs if e.world_size is not None and e.world_size != want
               and w.in_final_round(e.where)]
    if printed:
        sizes = sorted({e.world_size for e in printed})
        problems.append(f"processes printed WORLD_SIZE={', '.join(map(str, sizes))}")
        evidence += [e.where for e in printed]
    if not problems:
        return []
    return _unmet(rule, f"expected world size {want}: " + "; ".join(problems), evidence)


def expect_first_batch(job: Job, rule, expect: Expectations, findings) -> list:
    if not expect.first_batch:
        return []
    stuck = [w for w in job.workers if w.ran_torchrun and not job.reached_first_batch(w)]
    expected = job.nnodes if job.nnodes is not None else expect.workers
    missing = []
    if expected is not None:
        have = {w.node_rank for w in job.launched}
        missing = [n for n in range(expected) if n not in have]
    if not job.workers or not any(w.ran_torchrun for w in job.workers):
        return _unmet(rule, "expected every rank to reach its first batch: no log shows a torchrun job")
    if not stuck and not missing:
        return []
    parts = []
    if stuck:
        parts.append(", ".join(f"{w.label} stopped at {job.stage_of(w)}" for w in stuck[:8])
                     + (f" and {len(stuck) - 8} more" if len(stuck) > 8 else ""))
    if missing:
        parts.append(f"{plural(missing, 'node_rank', 'node_ranks')} left no log to show it")
    nodes = tuple(sorted({w.node_rank for w in stuck if w.node_rank is not None} | set(missing)))
    return _unmet(rule, "expected every rank to reach its first batch: " + "; ".join(parts),
                  [w.last_line for w in stuck],
                  node_rank=nodes[0] if len(nodes) == 1 else None, node_ranks=nodes)


def expect_finished(job: Job, rule, expect: Expectations, findings) -> list:
    if not expect.finished:
        return []
    ends = [where for w in job.workers if (where := w.end_of_run()) is not None]
    if ends:
        return []
    last = [w.last_progress.where for w in job.workers if w.last_progress is not None]
    if last:
        shown = max(last, key=lambda where: where.line)
        return _unmet(rule, "expected the run to finish: the last progress line is not at its total "
                            f"({shown.text.strip()[:80]}) and no end-of-run line follows", last[-1:])
    tails = [w.last_line for w in job.workers if w.last_line is not None]
    return _unmet(rule, "expected the run to finish: no progress line and no end-of-run line",
                  tails[:2])


def expect_time_to_first_batch(job: Job, rule, expect: Expectations, findings) -> list:
    limit = expect.max_time_to_first_batch
    if limit is None:
        return []
    timed, slow = 0, []
    for w in job.workers:
        start = next((l.where for l in w.launches if l.where.time is not None), None)
        first = next((p.where for p in w.progress if p.where.time is not None), None)
        if start is None or first is None:
            continue
        timed += 1
        took = first.time - start.time
        if took > limit:
            slow.append((w, took, start, first))
    if not timed:
        return NotChecked("no Worker has both a timestamped launch line and a timestamped progress "
                          "line; collect logs with timestamps (kubectl logs --timestamps)")
    if not slow:
        return []
    said = ", ".join(f"{w.label} took {format_duration(t)}"
                     for w, t, _, _ in slow)
    nodes = tuple(w.node_rank for w, *_ in slow if w.node_rank is not None)
    return _unmet(rule, f"expected the first batch within {format_duration(limit)}: {said}",
                  [where for _, _, s, f in slow for where in (s, f)],
                  node_rank=nodes[0] if len(nodes) == 1 else None, node_ranks=nodes)


def expect_max_warnings(job: Job, rule, expect: Expectations, findings) -> list:
    limit = expect.max_warnings
    if limit is None:
        return []
    warnings = [f for f in findings if f.severity == Severity.WARNING]
    if len(warnings) <= limit:
        return []
    rules = ", ".join(dict.fromkeys(f.rule for f in warnings))
    return _unmet(rule, f"expected at most {limit} warning(s), found {len(warnings)} ({rules})")


def hold_to_expectations(job: Job, settings, findings: list, code_rules) -> tuple[list, tuple]:
    """(the findings of the asked-for expectations the job does not meet, the result of each one
    asked), in catalogue order; `code_rules` maps each expectation's id to its function
    (logscan.findings.CODE_RULES)."""
    expect = getattr(settings, "expectations", None)
    if expect is None or not expect.any:
        return [], ()
    asked = {e.rule: e.asked(getattr(expect, e.field)) for e in asked_for(expect)}
    unmet, results = [], []
    for rule in job.catalogue.with_role(Role.EXPECTATION):
        if rule.id not in code_rules or rule.id not in asked or not settings.selects(rule.id):
            continue
        found = code_rules[rule.id](job, rule, expect, findings)
        if isinstance(found, NotChecked):
            results.append(ExpectationResult(rule.id, asked[rule.id], ExpectationStatus.NOT_CHECKED, found.why))
        elif found:
            unmet += found
            results.append(ExpectationResult(rule.id, asked[rule.id], ExpectationStatus.NOT_MET, found[0].message))
        else:
            results.append(ExpectationResult(rule.id, asked[rule.id], ExpectationStatus.HELD))
    order = [e.rule for e in EXPECTATIONS]
    return unmet, tuple(sorted(results, key=lambda r: order.index(r.rule)))


def asked(catalogue, expect: Expectations, code_rules) -> list[str]:
    """The ids of the expectation rules this run asked for, in catalogue order."""
    wanted = {e.rule for e in asked_for(expect)}
    return [rule.id for rule in catalogue.with_role(Role.EXPECTATION) if rule.id in code_rules and rule.id in wanted]
