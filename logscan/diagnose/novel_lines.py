"""When no rule knows the failure: the lines that set the failing rank apart from its peers.

The failing rank's last lines and its last error-like lines are turned into templates (numbers, paths, hex
ids, addresses and times masked) by Drain3's template miner; each template is ranked by how few
peers printed it (the other ranks of the same Worker, the other Workers of the job), by how near the
rank's end it is, and by how seldom the rank itself repeated it. A line every peer printed too is not
novel and is never shown.

What a line says of itself weighs too (line_weight): one that reads as an error (an exception, a
C++ `[E...]` header, words such as `failed`, `error`, `unknown`) keeps its score; an ordinary line
counts half; INFO and debug chatter (TORCH_CPP_LOG_LEVEL=INFO, NCCL_DEBUG=INFO) and the lines the
catalogue knows to be harmless (logscan.diagnose.harmless) sink below them. Chatter is printed in
bulk around the end of a run (a store's clean-up), so without this it would crowd out the one
line that tells.

Only the failing unit's own lines teach the miner (a few hundred at most); peers' lines are matched
against what it learnt, never added, so the cost does not grow with the job beyond the peers
compared (at most MAX_PEERS of them, the nearest first).

A sweep also holds the same job's earlier healthy runs (logscan.sweep.series): each healthy run
leaves the templates of its lines (run_templates: the lines a failing run would offer, masked), and
a failing run's novel lines are ranked again against them (with_history). A template no healthy run
printed is new since the last one; one they printed too is normal for this job and goes down.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from logscan.diagnose.harmless import harmless_lines
from logscan.diagnosis import Finding, NovelLine, Where
from logscan.limits import MAX_RUN_TEMPLATES, MAX_TEMPLATE_CHARS
from logscan.model.job import Job, Worker
from logscan.scan.lineparse import parse_exception, parse_summary_line
from logscan.scan.prefixes import strip_prefixes

# How many novel lines a diagnosis keeps; reports show the first few.
MAX_NOVEL_LINES = 5
# Peers a failing unit is compared with: the other ranks of its Worker, then the Workers nearest it.
MAX_PEERS = 32
# Error-like lines a Worker adds beyond its last lines, the last ones: a log that logged a handled
# traceback every few steps for days holds millions.
MAX_ERROR_LINES = 300
# A line this many lines before the unit's end weighs half as much as its last line.
RECENCY_LINES = 20
# A novel line's score against the series' healthy runs: one none of them printed keeps what it had
# above NEW_FLOOR (new lines first, in their order among peers); one they printed too is scaled
# down by SEEN_FACTOR (below every new line).
NEW_FLOOR = 0.5
SEEN_FACTOR = 0.25
# What a line's own words weigh (line_weight), from the most telling: a line that reads as an
# error, an ordinary line, INFO or debug chatter, a line the catalogue knows to be harmless.
ERROR_LIKE, ORDINARY, CHATTER, KNOWN_HARMLESS = 1.0, 0.5, 0.2, 0.05

# The level a line's logging header gives, in the part the prefixes take (C++ `[I1129 ...`,
# `[W reducer.cpp:12]`, glog `E1129 ...`, Python logging's `INFO:name:` and `[INFO]`).
_CPP_LEVEL = re.compile(r"(?:^|[\s:\]])\[?(?P<level>[VIWEFC])(?:\d{3,4}[ ]\d{2}:|[ ][^\]\s]+:\d+\])")
_WORD_LEVEL = re.compile(r"\b(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL|FATAL)\b")
# Chatter that names its level in its body: c10d's debug and trace tags, NCCL's INFO and TRACE.
_CHATTER_BODY = re.compile(r"\[c10d - (?:debug|trace)\]|\bNCCL (?:INFO|TRACE)\b")
# Words an error says itself with.
_ERROR_WORDS = re.compile(
    r"(?i)\b(?:errors?|fail(?:ed|ure|s)?|fatal|unknown|exceptions?|abort(?:ed|ing)?|refused|denied|"
    r"timed[ ]out|timeout|invalid|cannot|can't|unable|unhandled|illegal|corrupt(?:ed)?|killed|"
    r"segmentation[ ]fault|core[ ]dumped|not[ ]found|no[ ]such|broken[ ]pipe|didn't[ ]work)\b")
_CHATTER_LEVELS = frozenset({"V", "I", "DEBUG", "INFO"})
_ERROR_LEVELS = frozenset({"E", "F", "C", "ERROR", "CRITICAL", "FATAL"})


def line_weight(text: str, harmless: bool = False) -> tuple[float, str]:
    """(what the line's own words weigh, from 0 to 1; what sets it down, for `why`): see the
    module's docstring."""
    if harmless:
        return KNOWN_HARMLESS, "known to be harmless"
    body = _body(text)
    head = text[:len(text) - len(body)] if text.endswith(body) else ""
    found = _CPP_LEVEL.search(head) or _WORD_LEVEL.search(head)
    level = found["level"] if found else None
    if level in _CHATTER_LEVELS or _CHATTER_BODY.search(body):
        return CHATTER, "INFO or debug chatter"
    if level in _ERROR_LEVELS or parse_exception(body.strip()) is not None or _ERROR_WORDS.search(body):
        return ERROR_LIKE, ""
    return ORDINARY, ""

# Masks in the order they apply: a time before its numbers, a path before its digits.
_MASKS = (
    (r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?", "TIME"),
    (r"\b[VIWEFC]\d{4} \d{2}:\d{2}:\d{2}(?:\.\d+)?", "TIME"),
    (r"\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b", "TIME"),
    (r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?(?:<\d+>)?", "IP"),
    (r"(?:[A-Za-z]:)?(?:/[\w.@%+=,~-]+){2,}/?", "PATH"),
    (r"\b0x[0-9a-fA-F]+\b|\b[0-9a-fA-F]*\d[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*\b(?<=\w{8})", "HEX"),
    (r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", "NUM"),
)

# Lines that say where a traceback went, not what happened: its frames and their carets; lines
# without a word (rules, blank lines).
_FRAME = re.compile(r'^\s*File "[^"]*", line \d+|^[\W_]*$')
# torchrun's own reaction to a failure: its agent's logging and its summary block. logscan reads
# them already (exits, signals sent), and every Worker that failed prints their like.
_AGENT_LINE = re.compile(r"torch[/.]distributed[/.](?:elastic|run)\b")
_SUMMARY_EXTRA = re.compile(r"\S+ FAILED|\[\d+\]:|<NO_OTHER_FAILURES>")


@dataclass(frozen=True)
class HealthyRun:
    """An earlier healthy run of the same job, as a sweep keeps it: its id (`40`) and templates."""

    run: str
    templates: frozenset[str]


@dataclass
class _Unit:
    """Lines of one rank (`rank 3`) or of one Worker (`node 1`), in log order."""

    label: str
    lines: list[Where]


def _miner():
    from drain3.masking import MaskingInstruction
    from drain3.template_miner import TemplateMiner
    from drain3.template_miner_config import TemplateMinerConfig

    config = TemplateMinerConfig()  # not read from a drain3.ini in the working directory
    config.masking_instructions = [MaskingInstruction(pattern, name) for pattern, name in _MASKS]
    config.profiling_enabled = False
    return TemplateMiner(config=config)


@lru_cache(maxsize=65536)
def _body(text: str) -> str:
    return strip_prefixes(text).body


_COMPILED_MASKS = tuple((re.compile(pattern), f"<{name}>") for pattern, name in _MASKS)


def template_of(text: str) -> str:
    """A line as a template: its body with the miner's masks applied, as Drain3's masker applies
    them, and its words joined by one space (the miner's tokens). Two runs' lines of one template
    are equal here, so a series' history is a set of these."""
    body = _body(text).strip()
    for regex, mask in _COMPILED_MASKS:
        body = regex.sub(mask, body)
    return " ".join(body.split())


def run_templates(job: Job) -> tuple[str, ...]:
    """The templates of the lines a healthy run offers for comparison: each Worker's last lines
    and error-like lines (the lines a failing run's novel lines are chosen from), each once, in
    log order, at most MAX_RUN_TEMPLATES."""
    kept: dict[str, None] = {}
    for worker in job.workers:
        for where in _worker_lines(job, worker):
            template = template_of(where.text)
            if template and len(template) <= MAX_TEMPLATE_CHARS:
                kept[template] = None
                if len(kept) >= MAX_RUN_TEMPLATES:
                    return tuple(kept)
    return tuple(kept)


def with_history(lines: tuple[NovelLine, ...], history: list[HealthyRun]) -> tuple[NovelLine, ...]:
    """Novel lines ranked again against the same job's earlier healthy runs (oldest first): a line
    whose template none of them printed is new since the last one and keeps its place above every
    line they did print, which is normal for this job and goes down. The rank's last line keeps
    its score whatever they printed: where it stopped is news even when the line is ordinary (a
    job killed from outside stops at a normal line). Without history, unchanged."""
    if not history or not lines:
        return lines
    latest = history[-1].run
    ranked = []
    for line in lines:
        template = template_of(line.text)
        seen = sum(template in run.templates for run in history)
        runs = f"healthy run {latest}" if len(history) == 1 else f"{seen} of {len(history)} earlier healthy runs"
        if not seen:
            score, why = NEW_FLOOR + (1.0 - NEW_FLOOR) * line.score, f"{line.why}; new since run {latest}"
        elif line.last:
            score, why = line.score, f"{line.why}; in {runs} too: it stopped at a line normal for this job"
        else:
            score, why = line.score * SEEN_FACTOR, f"{line.why}; in {runs} too: normal for this job"
        ranked.append(NovelLine(line.file, line.line, line.text, round(score, 4), why, line.last))
    return tuple(sorted(ranked, key=lambda n: (-n.score, n.file, n.line)))


def _worker_lines(job: Job, worker: Worker) -> list[Where]:
    """A Worker's last lines and error-like lines, each once, in log order, without what only
    says where a traceback went (its frames, their source lines and carets) and without progress
    lines but its last (the loop's heartbeat is no news, except where it stopped)."""
    lines = [w for scan in worker.scans for w in scan.tail_lines]
    lines += worker.error_lines(job.catalogue)[-MAX_ERROR_LINES:]
    lines = sorted(dict.fromkeys(lines), key=worker.position)
    progress = {p.where for p in worker.progress}
    kept, after_frame = [], False
    for i, where in enumerate(lines):
        body = _body(where.text)
        if _FRAME.match(body) or after_frame and body.startswith("    "):
            after_frame = body.lstrip().startswith("File ")
            continue
        after_frame = False
        if where in progress and i != len(lines) - 1:
            continue
        if (_AGENT_LINE.search(where.text) or parse_summary_line(body) is not None
                or _SUMMARY_EXTRA.fullmatch(body.strip())):
            continue
        kept.append(where)
    return kept


def _rank_of(worker: Worker, where: Where) -> int | None:
    """The rank a line's own prefix names. Not Worker.global_rank: its one-GPU fallback would make
    torchrun's unprefixed lines that rank's, to be compared with other ranks instead of Workers."""
    if where.rank is not None:
        return where.rank
    if where.local_rank is not None and worker.rank_offset is not None:
        return worker.rank_offset + where.local_rank
    return None


def _split(worker: Worker, lines: list[Where]) -> tuple[list[Where], dict[int, list[Where]]]:
    unranked, by_rank = [], {}
    for where in lines:
        rank = _rank_of(worker, where)
        (unranked if rank is None else by_rank.setdefault(rank, [])).append(where)
    return unranked, by_rank


def _units(job: Job, failing: Worker, rank: int | None):
    """The failing unit's lines, and its peers: for the lines that name a rank, the other ranks'
    lines (of its own Worker first); for the lines that name none, the other Workers' (a Worker's
    own unprefixed lines are every one of its ranks', so only another Worker can share them)."""
    order = {id(w): i for i, w in enumerate(job.workers)}
    others = sorted((w for w in job.workers if w is not failing),
                    key=lambda w: (abs((w.node_rank or 0) - (failing.node_rank or 0)), order[id(w)]))
    own_lines = _worker_lines(job, failing)
    unranked, by_rank = _split(failing, own_lines)
    rank_peers = [_Unit(f"rank {r}", lines) for r, lines in sorted(by_rank.items()) if r != rank]
    worker_peers = []
    for worker in others[:MAX_PEERS]:
        lines = _worker_lines(job, worker)
        if not lines:
            continue
        worker_peers.append(_Unit(worker.label, lines))
        _, theirs = _split(worker, lines)
        rank_peers += [_Unit(f"rank {r}", ls) for r, ls in sorted(theirs.items())]
    if rank is None or rank not in by_rank:
        # The logs do not tell this rank's lines apart: the whole Worker is the unit.
        return _Unit(failing.label, own_lines), worker_peers, worker_peers
    own = _Unit(f"rank {rank}", sorted(by_rank[rank] + unranked, key=failing.position))
    return own, rank_peers[:MAX_PEERS], worker_peers


def _failing_place(job: Job, root: Finding | None) -> tuple[Worker, int | None] | None:
    """The Worker and rank to explain: the root cause's, else the Worker whose log stopped first
    (by the times its lines carry; a file's mtime says when it was copied, not when it stopped)."""
    if root is not None:
        for worker in job.workers:
            if root.worker is not None and worker.label == root.worker \
                    or root.node_rank is not None and worker.node_rank == root.node_rank:
                return worker, root.rank
        if root.rank is not None:
            node = job.node_of_rank(root.rank)
            worker = next((w for w in job.workers if node is not None and w.node_rank == node), None)
            if worker is not None:
                return worker, root.rank
    stopped = [(t, i, w) for i, w in enumerate(job.workers)
               if (t := max((s.last_time for s in w.scans if s.last_time and s.last_time.tzinfo),
                            default=None)) is not None]
    if len(stopped) >= 2:
        return min(stopped, key=lambda item: item[:2])[2], None
    if len(job.workers) == 1:
        return job.workers[0], None
    return None


def _why(label: str, peers: list[_Unit], shared: int, last: bool) -> str:
    if not peers:
        why = "no peer to compare with"
    elif shared == 0:
        why = f"only on {label}"
    else:
        why = f"on {shared} of {len(peers)} peers too"
    return why + ("; its last line" if last else "")


def novel_lines(job: Job, root: Finding | None) -> tuple[NovelLine, ...]:
    place = _failing_place(job, root)
    if place is None:
        return ()
    worker = place[0]
    own, rank_peers, worker_peers = _units(job, *place)
    if not own.lines:
        return ()
    miner = _miner()
    clusters = [miner.add_log_message(_body(w.text).strip())["cluster_id"] for w in own.lines]
    templates = set(clusters)
    count = {c: clusters.count(c) for c in templates}

    def shared_with(peers: list[_Unit]) -> dict[int, int]:
        shared = dict.fromkeys(templates, 0)
        for peer in peers:
            seen = set()
            for where in peer.lines:
                match = miner.match(_body(where.text).strip())
                if match is not None and match.cluster_id in templates:
                    seen.add(match.cluster_id)
            for c in seen:
                shared[c] += 1
        return shared

    by_rank_peers, by_worker_peers = shared_with(rank_peers), shared_with(worker_peers)
    known_harmless = harmless_lines(job)
    best: dict[int, NovelLine] = {}
    end = len(own.lines) - 1
    for i, (where, cluster) in enumerate(zip(own.lines, clusters)):
        ranked = _rank_of(worker, where) is not None
        peers = rank_peers if ranked else worker_peers
        shared = (by_rank_peers if ranked else by_worker_peers)[cluster]
        rarity = 1.0 - shared / len(peers) if peers else 1.0
        if rarity <= 0.0:
            continue  # every peer printed it too
        last = i == end
        # Where the rank stopped weighs in full however often the rank printed its like.
        uniqueness = 1.0 if last else 1.0 / math.sqrt(count[cluster])
        weight, sets_down = line_weight(where.text, (where.file, where.line) in known_harmless)
        score = round(weight * rarity * uniqueness / (1.0 + (end - i) / RECENCY_LINES), 4)
        why = _why(own.label if ranked else worker.label, peers, shared, last)
        line = NovelLine(where.file, where.line, where.text, score,
                         f"{why}; {sets_down}" if sets_down else why, last)
        kept = best.get(cluster)
        if kept is None or line.score >= kept.score:
            best[cluster] = line  # a template's latest, highest-scoring line stands for it
    ranked_lines = sorted(best.values(), key=lambda n: (-n.score, n.file, n.line))
    return tuple(ranked_lines[:MAX_NOVEL_LINES])
