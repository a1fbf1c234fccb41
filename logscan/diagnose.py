"""job model → findings → the Diagnosis every renderer takes."""

from __future__ import annotations

from dataclasses import replace

from logscan.checks import CHECKS
from logscan.events import format_master
from logscan.checks.signatures import signature_findings
from logscan.checks.expectations import EXPECTATION, expectation_findings
from logscan.diagnosis import (STAGES, Diagnosis, InputNote, Mark, Place, ProcessSummary,
                               WorkerSummary)
from logscan.interpret import MAX_RULE_TIMEOUTS
from logscan.model import Job
from logscan.rootcause import choose_root_cause
from logscan.rule_ids import (HANG_IN_RENDEZVOUS, HANG_RULES, MISSING_RANK, MISSING_WORKER,
                              MISSING_WORKER_LOG, SIGTERM_RECEIVED, TORCHRUN_STARTED,
                              WAITING_EVIDENCE)
from logscan.verdict import judge


def _selected(rule_id: str, settings) -> bool:
    if settings.select and rule_id not in settings.select:
        return False
    return rule_id not in settings.ignore


def _run(job: Job, rule) -> list:
    if rule.kind == "signature":
        return signature_findings(job, rule)
    return CHECKS[rule.id](job, rule) if rule.id in CHECKS else []


def run_rules(job: Job, settings) -> list:
    selected = [r for r in job.catalogue.rules.values()
                if _selected(r.id, settings) and r.role != EXPECTATION]
    findings = [f for rule in selected if not rule.fallback for f in _run(job, rule)]
    if not any(f.severity == "error" for f in findings):
        # Fallback rules say what there is to read when nothing else explains the job.
        findings += [f for rule in selected if rule.fallback for f in _run(job, rule)]
    # What a gate asked the logs to show (logscan check), judged with everything else found.
    return findings + expectation_findings(job, settings, findings, CHECKS)


def _summaries(job: Job) -> tuple[WorkerSummary, ...]:
    out = []
    for w in job.workers:
        launch = w.launch
        ranks = sorted({e.rank for e in w.envs if e.rank is not None})
        master = format_master(launch.master_addr, launch.master_port) \
            if launch and launch.master_addr else None
        last = w.last_activity()
        out.append(WorkerSummary(
            label=w.label, node_rank=w.node_rank, host=w.host, files=tuple(w.files),
            nnodes=launch.nnodes if launch else None,
            gpus_per_node=launch.gpus_per_node if launch else None,
            total_procs=launch.total_procs if launch else None, master=master,
            ranks=tuple(ranks), reached_first_batch=job.reached_first_batch(w),
            stage=job.stage_of(w), last_activity=last.isoformat() if last else None,
            stages=_worker_stages(job, w), last_line=_mark("last line", w.last_line)))
    return tuple(out)


def _processes(job: Job) -> tuple[ProcessSummary, ...]:
    failures = {(f.worker.label, f.rank): f for f in job.failures if f.rank is not None}
    out = {}
    for w in job.workers:
        for env in w.own_envs:
            if env.rank is None or env.rank in out:
                continue
            failure = failures.get((w.label, env.rank))
            if failure is not None:
                stage = "training" if failure.after_progress else "init"
            else:
                stage = "training" if job.reached_first_batch(w) else "init"
            out[env.rank] = ProcessSummary(
                rank=env.rank, node_rank=w.node_rank, local_rank=env.local_rank,
                world_size=env.world_size, stage=stage,
                failed=failure.summary if failure else None,
                cascade=bool(failure and failure.cascade),
                stages=_process_stages(w, env, failure), last_line=_process_last_line(w, env.rank))
    return tuple(out[r] for r in sorted(out))


# --- timelines: where each Worker and process got, and when (the report's timeline views) ---

RANK_WAITING = tuple(s for s in WAITING_EVIDENCE if s != SIGTERM_RECEIVED)


def _mark(stage: str, where) -> Mark | None:
    if where is None:
        return None
    return Mark(stage, where.file, where.line, where.text,
                where.time.isoformat() if where.time else None)


def _position(worker, where) -> tuple[int, int]:
    order = {name: i for i, name in enumerate(worker.files)}
    return order.get(where.file, len(order)), where.line


def _worker_stages(job: Job, w) -> tuple[Mark, ...]:
    """One mark per stage the Worker reached, each on the first line that shows it."""
    by_line = lambda items: sorted(items, key=lambda where: _position(w, where))  # noqa: E731
    own_envs = [e.where for e in w.own_envs]
    progress = by_line(p.where for p in w.progress)
    failures = job.failures_of(w)
    failure = min(failures, key=lambda f: (f.cascade, _position(w, f.where)), default=None)
    found = {
        "launched": w.launch.where if w.launch else None,
        "torchrun started": next(iter(by_line(h.where for h in w.hits if h.rule_id == TORCHRUN_STARTED)), None),
        "env printed": next(iter(by_line(own_envs)), None),
        "first batch": progress[0] if progress else None,
        "last progress": progress[-1] if len(progress) > 1 else None,
        "failure": failure.where if failure else None,
        "end": w.last_line,
    }
    marks = [_mark(stage, found[stage]) for stage in STAGES if found[stage] is not None]
    return tuple(sorted(marks, key=lambda m: (_position(w, m), STAGES.index(m.stage))))


def _rank_lines(w, rank: int):
    """A rank's own lines: its env print, its progress, its exceptions and what it said while
    waiting on others (torchrun's report about it is torchrun's, not the rank's)."""
    yield from (e.where for e in w.envs if e.rank == rank)
    own = [p.where for p in w.progress] + [x.where for x in w.exceptions if not x.agent] + \
        [h.where for h in w.hits if h.rule_id in RANK_WAITING]
    yield from (where for where in own if w.global_rank(where) == rank)


def _process_stages(w, env, failure) -> tuple[Mark, ...]:
    progress = sorted((p.where for p in w.progress if w.global_rank(p.where) == env.rank),
                      key=lambda where: _position(w, where))
    marks = [_mark("env printed", env.where),
             _mark("first batch", progress[0]) if progress else None,
             _mark("last progress", progress[-1]) if len(progress) > 1 else None,
             _mark("failure", failure.where) if failure else None]
    return tuple(sorted((m for m in marks if m), key=lambda m: _position(w, m)))


def _process_last_line(w, rank: int) -> Mark | None:
    lines = list(_rank_lines(w, rank))
    return _mark("last line", max(lines, key=lambda where: _position(w, where))) if lines else None


def _time_axis(workers: tuple[WorkerSummary, ...]) -> str:
    """"time" when every Worker's first and last marks carry times, so Workers can be drawn
    against one clock; "order" otherwise."""
    timed = [w.stages[0].time and w.stages[-1].time for w in workers if w.stages]
    return "time" if timed and all(timed) else "order"


def _stuck(findings, workers, processes) -> tuple[Place, ...]:
    """Where a hang left things waiting: the Workers stuck in rendezvous, and every process that
    did not fail by itself when processes hung or a collective timed out."""
    hangs = [f for f in findings if f.rule in HANG_RULES and f.severity == "error"]
    places = [Place(f.node_rank, None) for f in hangs
              if f.rule == HANG_IN_RENDEZVOUS and f.node_rank is not None]
    if any(f.rule != HANG_IN_RENDEZVOUS for f in hangs):
        waiting = [Place(p.node_rank, p.rank) for p in processes if p.failed is None or p.cascade]
        places += waiting or [Place(w.node_rank, None) for w in workers
                              if w.node_rank is not None and w.stage != "launch"]
    return tuple(dict.fromkeys(places))


class _Rows:
    """Where the Worker rows are, by node_rank, label and file, and each rank's node_rank: what
    `_about` looks up for every finding (scanning every row per finding was quadratic)."""

    def __init__(self, workers: tuple[WorkerSummary, ...], processes):
        self.workers = workers
        self.at_node: dict = {}
        self.named: dict = {}
        self.in_file: dict = {}
        for i, w in enumerate(workers):
            self.at_node.setdefault(w.node_rank, []).append(i)
            self.named.setdefault(w.label, []).append(i)
            for file in w.files:
                self.in_file.setdefault(file, []).append(i)
        self.node_of_rank: dict = {}
        for p in processes:
            self.node_of_rank.setdefault(p.rank, set()).add(p.node_rank)

    def labels(self, rows: set[int]) -> list[str]:
        return [self.workers[i].label for i in sorted(rows)]


def _about(f, rows: _Rows) -> list[str]:
    """Labels of the Workers a finding is about: its node_rank(s) or Worker, else the Workers of
    its ranks, else those whose files hold its evidence."""
    nodes = {f.node_rank} if f.node_rank is not None else set(f.node_ranks)
    hit = {i for n in nodes for i in rows.at_node.get(n, ())} | set(rows.named.get(f.worker, ()))
    if hit or nodes:
        return rows.labels(hit)  # a node_rank with no log has no Worker row: the report shows it apart
    ranks = {f.rank} if f.rank is not None else set(f.ranks)
    nodes = {n for r in ranks for n in rows.node_of_rank.get(r, ()) if n is not None}
    hit = {i for n in nodes for i in rows.at_node.get(n, ())}
    if hit:
        return rows.labels(hit)
    files = {e.file for e in f.evidence}
    return rows.labels({i for file in files for i in rows.in_file.get(file, ())})


def _with_findings(workers, processes, findings) -> tuple[WorkerSummary, ...]:
    about: dict[str, list[str]] = {}
    rows = _Rows(workers, processes)
    for f in findings:
        for label in _about(f, rows):
            about.setdefault(label, []).append(f.key)
    return tuple(replace(w, findings=tuple(about.get(w.label, ()))) for w in workers)


def _root_key(findings, root) -> str | None:
    if root is None:
        return None
    return next((f.key for f in findings if f.caused_by is None and f.rule == root.rule
                 and f.node_rank == root.node_rank and f.rank == root.rank
                 and f.message == root.message), None)


# Text logs compress 5-20 times; far beyond that is a file of one repeated line, or a gzip bomb.
# Either is read in full with flat memory, and the report says so.
EXPANSION_NOTE = 100
# Files skipped as not logs are named in the report, up to this many; the rest are counted.
SKIPPED_NAMED = 5


def _input_notes(job: Job, found) -> tuple[InputNote, ...]:
    notes = [InputNote(p, why) for p, why in found.notes]
    if found.skipped:
        named = ", ".join(found.skipped[:SKIPPED_NAMED])
        more = len(found.skipped) - SKIPPED_NAMED
        notes.append(InputNote(named + (f" and {more} more" if more > 0 else ""),
                               "not logs (checkpoints, binaries, configs, other files): skipped"))
    for scan in job.scans:
        if scan.leading_nul:
            notes.append(InputNote(scan.display, f"starts with {scan.leading_nul} NUL bytes (a live log cut by "
                                                 f"copytruncate): skipped them and read the rest"))
        if scan.expansion > EXPANSION_NOTE:
            notes.append(InputNote(scan.display, f"expands {scan.expansion:.0f} times when decompressed "
                                                 f"(more than {EXPANSION_NOTE}): read in full, memory stays flat"))
        if scan.truncated:
            notes.append(InputNote(scan.display, f"truncated: {scan.truncated}; diagnosed what was readable"))
        if scan.read_error:
            notes.append(InputNote(scan.display, f"read stopped early: {scan.read_error}"))
        for rule_id in dict.fromkeys(scan.rule_timeouts):
            notes.append(InputNote(scan.display, f"rule {rule_id} timed out on this file's lines (a runaway pattern); after "
                                                    f"{MAX_RULE_TIMEOUTS} such lines it is not tried again in this scan"))
    return tuple(notes)


def diagnose_job(job: Job, settings, found) -> Diagnosis:
    findings = run_rules(job, settings)
    findings, root, first = choose_root_cause(job, findings)
    findings.sort(key=lambda f: f.sort_key)
    missing_nodes = sorted({n for f in findings if f.rule in (MISSING_WORKER, MISSING_WORKER_LOG)
                            for n in f.node_ranks})
    missing_ranks = sorted({r for f in findings if f.rule == MISSING_RANK for r in f.ranks})
    verdict, reason = judge(job, findings)
    diagnosis = Diagnosis(
        job=job.name, workers=_summaries(job), processes=_processes(job), findings=tuple(findings),
        root_cause=root, first_failure=first,
        reached_first_batch=any(w.reached_first_batch for w in job.workers),
        missing_node_ranks=tuple(missing_nodes), missing_ranks=tuple(missing_ranks),
        verdict=verdict, verdict_reason=reason,
        job_status=job.job_status,
        config_file=str(settings.config_path) if settings.config_path else None,
        inputs=_input_notes(job, found), skipped=tuple(found.skipped),
        files_scanned=len(job.scans), bytes_scanned=sum(s.size for s in job.scans),
        lines_scanned=sum(s.lines for s in job.scans))
    return replace(diagnosis, time_axis=_time_axis(diagnosis.workers),
                   stuck=_stuck(diagnosis.findings, diagnosis.workers, diagnosis.processes),
                   workers=_with_findings(diagnosis.workers, diagnosis.processes, diagnosis.findings),
                   root_key=_root_key(diagnosis.findings, root))
