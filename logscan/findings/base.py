"""What every code rule shares: turning a catalogue entry and what the job model shows into a
Finding."""

from __future__ import annotations

from collections.abc import Iterable

from logscan.catalogue import Rule
from logscan.scan.events import SignalHit
from logscan.diagnosis import Evidence, Finding, Where, range_pieces
from logscan.model.job import Worker

# Evidence lines a finding keeps: enough to show the failure and where it was seen again.
EVIDENCE_PER_FINDING = 4


def finding(rule: Rule, message: str, evidence: Iterable[Where] = (), *, node_rank=None,
            rank=None, worker=None, hint: str | None = None, limit: int = EVIDENCE_PER_FINDING,
            **extra) -> Finding:
    wheres = list(dict.fromkeys(w for w in evidence if w is not None))[:limit]
    stamp = next((w.time for w in wheres if w.time is not None), None)
    return Finding(
        rule=rule.id, severity=rule.severity, message=message, hint=hint or rule.hint, stage=rule.stage,
        node_rank=node_rank, rank=rank, evidence=tuple(Evidence.at(w) for w in wheres),
        worker=worker, time=stamp, **extra)


# A one-line message names at most this many ranks, node_ranks or logs (a run of numbers, `0-511`,
# is one), then says how many more: a 4,096-Worker job's messages stay one line.
HANDFUL = 4


def plural(items: Iterable, one: str, many: str) -> str:
    items = list(items)
    return f"{one} {items[0]}" if len(items) == 1 else f"{many} {few(items)}"


def few(items: Iterable, sep: str = ", ") -> str:
    """`0-48, 50-63`, or `0, 2, 4, 6 and 508 more`: at most HANDFUL pieces, runs of ints as one."""
    pieces = range_pieces(items)
    shown, rest = pieces[:HANDFUL], sum(count for _, count in pieces[HANDFUL:])
    return sep.join(text for text, _ in shown) + (f" and {rest} more" if rest else "")


def hits(worker: Worker, *rule_ids: str) -> list[SignalHit]:
    wanted = frozenset(rule_ids)
    return [h for h in worker.hits if h.rule_id in wanted]




# What a cause's hint says where its lines did not capture the name: the hint still reads.
HINT_DEFAULTS = {"module": "the missing module", "path": "the path the error names",
                 "var": "the variable the KeyError names"}


# How far above a failure's lines its traceback's frames are looked for.
TRACEBACK_REACH = 40


def cause_hint(job, cause: str, worker: Worker, lines: set[tuple[str, int]],
               where: str | None = None) -> str | None:
    """The hint of a cause class, its placeholders filled with what the cause signal captured on
    `lines` (the module, the path, the variable; the first line's, as the evidence shows it) and
    `{where}`: the given place, else the Worker's node and host."""
    captured: dict[str, str] = {}
    signals = job.catalogue.signals
    # a frame of the traceback above the lines may have said it where they do not (a cut exception
    # line under `_get_env_or_raise("RANK")`)
    above = {(file, line - back) for file, line in lines for back in range(1, TRACEBACK_REACH)}
    for near in (lines, above):
        for hit in sorted(worker.hits, key=lambda h: worker.position(h.where)):
            signal = signals.get(hit.rule_id)
            if signal is not None and signal.cause == cause and (hit.where.file, hit.where.line) in near:
                for name, value in hit.groups:
                    if value:
                        captured.setdefault(name, value)
        if captured:
            break
    if where is None:
        host = f" ({worker.host})" if worker.host else ""
        where = (f"node {worker.node_rank}" if worker.node_rank is not None else worker.label) + host
    return job.catalogue.cause_hint(cause, {**HINT_DEFAULTS, **captured, "where": where})


def when_in_training(job, trained: bool) -> str:
    """Where in the run a failure or stop came, as far as the lines tell: after training had
    started, before the first batch (the start-up is in view and no batch is), or unknown."""
    if trained:
        return "after training had started"
    return "before the first batch" if job.shows_start_up else "(no line shows whether training had started)"
