"""job model → findings → the Diagnosis every renderer takes."""

from __future__ import annotations

import re
from dataclasses import replace

from logscan.findings import CODE_RULES
from logscan.scan.events import format_master
from logscan.findings.signatures import signature_findings
from logscan.findings.expectations import hold_to_expectations
from logscan.diagnosis import Diagnosis, InputNote, ProcessSummary, WorkerSummary
from logscan.files.discovery import EMPTY_NOTE
from logscan.limits import MAX_RULE_TIMEOUTS, RUNAWAY_BUDGET
from logscan.scan.finders import USER_PROGRESS_FLAG
from logscan.model.job import Job
from logscan.diagnose.clock import clock_note, last_known_time
from logscan.diagnose.root_cause import choose_root_cause
from logscan.rule_ids import MISSING_RANK, MISSING_WORKER, MISSING_WORKER_LOG
from logscan.diagnose.fingerprint import verdict_fingerprint, with_fingerprints, within_logs
from logscan.diagnose.placement import location, stuck_places, with_findings, with_roles
from logscan.diagnose.stage_marks import RankMarks, mark, time_axis, worker_stages
from logscan.diagnose.verdict import judge, run_end
from logscan.diagnose.novel_lines import novel_lines
from logscan.diagnose.harmless import harmless_notes
from logscan.vocabulary import MarkStage, Role, RuleKind, RunStage, Severity, Verdict


def _run(job: Job, rule) -> list:
    if rule.kind == RuleKind.SIGNATURE:
        return signature_findings(job, rule)
    return CODE_RULES[rule.id](job, rule) if rule.id in CODE_RULES else []


def run_rules(job: Job, settings) -> tuple[list, tuple]:
    """(every finding, expectations' included; the result of each expectation a gate asked for)."""
    selected = [r for r in job.catalogue.rules.values()
                if settings.selects(r.id) and r.role != Role.EXPECTATION]
    findings = [f for rule in selected if not rule.fallback for f in _run(job, rule)]
    # Fallback rules say what there is to read when nothing else explains the job: the most
    # specific first (by precedence), and only until one of them explains it.
    for rule in sorted((r for r in selected if r.fallback), key=lambda r: r.precedence):
        if any(f.severity == Severity.ERROR for f in findings):
            break
        findings += _run(job, rule)
    # What a gate asked the logs to show (logscan check), judged with everything else found.
    unmet, expectations = hold_to_expectations(job, settings, findings, CODE_RULES)
    return findings + unmet, expectations


def _summaries(job: Job) -> tuple[WorkerSummary, ...]:
    out = []
    for w in job.workers:
        launch = w.launch
        # The ranks its processes printed, else, once it started processes, the ones its launch
        # line gives them.
        ranks = sorted({e.rank for e in w.envs if e.rank is not None}) or \
            (list(w.ranks or ()) if w.started_processes else [])
        master = format_master(launch.master_addr, launch.master_port) \
            if launch and launch.master_addr else None
        last = w.last_activity()
        known, _ = last_known_time(job, w)
        out.append(WorkerSummary(
            label=w.label, node_rank=w.node_rank, host=w.host, files=tuple(w.files),
            nnodes=launch.nnodes if launch else None,
            gpus_per_node=launch.gpus_per_node if launch else None,
            total_procs=launch.total_procs if launch else None, master=master,
            ranks=tuple(ranks), reached_first_batch=job.reached_first_batch(w),
            stage=job.stage_of(w), last_activity=last,
            stages=worker_stages(job, w), last_line=mark(MarkStage.LAST_LINE, w.last_line),
            last_known=known, trained_silently=w.trained_silently))
    return tuple(out)


def _processes(job: Job) -> tuple[ProcessSummary, ...]:
    failures = {(f.worker.label, f.rank): f for f in job.failures if f.rank is not None}
    out = {}
    for w in job.workers:
        lines = RankMarks(w)
        for env in w.own_envs:
            if env.rank is None or env.rank in out:
                continue
            failure = failures.get((w.label, env.rank))
            trained = failure.after_progress if failure is not None else job.reached_first_batch(w)
            stage = RunStage.TRAINING if trained else RunStage.INIT
            out[env.rank] = ProcessSummary(
                rank=env.rank, node_rank=w.node_rank, local_rank=env.local_rank,
                world_size=env.world_size, stage=stage,
                failed=failure.summary if failure else None,
                cascade=bool(failure and failure.cascade),
                stages=lines.stages(env, failure), last_line=lines.last_line(env.rank))
    return tuple(out[r] for r in sorted(out))


# Text logs compress 5-20 times; far beyond that is a file of one repeated line, or a gzip bomb.
# Either is read in full with flat memory, and the report says so.
EXPANSION_NOTE = 100
# Files skipped as not logs are named in the report, up to this many; the rest are counted.
SKIPPED_NAMED = 5
# A file name that says it is a log: `x.log`, `x.log.1`, `x.log.gz`, `x.out`, `x.err`, `stdout`.
LOG_NAME = re.compile(r"(?i)(\.(log|out|err)(\.\d+)?(\.gz)?|\bstd(out|err)(\.txt)?)$")


def _input_notes(job: Job, found) -> tuple[InputNote, ...]:
    notes = [InputNote(p, why) for p, why in found.notes]
    if found.skipped:
        named = ", ".join(found.skipped[:SKIPPED_NAMED])
        more = len(found.skipped) - SKIPPED_NAMED
        # Files that are not logs are no news (shown with -v), unless one is named like a log:
        # that may be a log logscan could not read as one.
        notes.append(InputNote(named + (f" and {more} more" if more > 0 else ""),
                               "not logs (checkpoints, binaries, configs, other files): skipped",
                               minor=not any(LOG_NAME.search(p) for p in found.skipped)))
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
            what = rule_id if rule_id.startswith(USER_PROGRESS_FLAG) else f"rule {rule_id}"
            notes.append(InputNote(scan.display, f"{what} timed out on this file's lines (a runaway pattern); after "
                                                    f"{MAX_RULE_TIMEOUTS} such lines (one, once runaway patterns have cost the scan "
                                                    f"{RUNAWAY_BUDGET:g} s) it is not tried again in this scan"))
    return tuple(notes)


def _fingerprinted(job: Job, findings: list) -> list:
    """Each finding with its fingerprint and the catalogue's word on whether its rule is a hang,
    in a fixed order (two findings that would share a fingerprint are told apart by it). A
    Worker's label is hashed within the job only where it is a log stream's path (a Worker with
    no node_rank)."""
    rules = job.catalogue.rules
    findings = [replace(f, hang=f.rule in rules and rules[f.rule].hang)
                for f in sorted(findings, key=lambda f: f.sort_key)]
    within = within_logs(file for w in job.workers for file in w.files)
    streams = {w.label for w in job.workers if w.node_rank is None}
    return with_fingerprints(findings, lambda shown: within(shown) if shown in streams else shown)


def diagnose_job(job: Job, settings, found) -> Diagnosis:
    """The one finished Diagnosis: after the root-cause pass nothing in it is worked out again."""
    findings, expectations = run_rules(job, settings)
    findings = _fingerprinted(job, findings)
    findings, _, first = choose_root_cause(job, findings)
    missing_nodes = sorted({n for f in findings if f.rule in (MISSING_WORKER, MISSING_WORKER_LOG)
                            for n in f.node_ranks})
    missing_ranks = sorted({r for f in findings if f.rule == MISSING_RANK for r in f.ranks})
    verdict, reason = judge(job, findings, [path for path, note in found.notes if note == EMPTY_NOTE])
    # A failed job's report is about its failure; otherwise the known-harmless warnings are named,
    # so that a paste of them is not left without a word on them.
    nothing_failed = verdict != Verdict.FAILED
    no_failure_seen = nothing_failed and not any(w.error_lines(job.catalogue) for w in job.workers)
    workers, processes = _summaries(job), _processes(job)
    findings = tuple(replace(f, location=location(f, workers, job.name)) for f in findings)
    root = next((f for f in findings if f.is_root), None)
    stuck = stuck_places(findings, workers, processes)
    processes = with_roles(processes, root, stuck)
    diagnosis = Diagnosis(
        job=job.name, workers=with_findings(workers, processes, findings), processes=processes,
        findings=findings, root_cause=root, first_failure=first,
        reached_first_batch=job.reached_first_batch_anywhere,
        missing_node_ranks=tuple(missing_nodes), missing_ranks=tuple(missing_ranks),
        verdict=verdict, verdict_reason=reason, verdict_fingerprint=verdict_fingerprint(verdict),
        job_status=job.job_status,
        config_file=str(settings.config_path) if settings.config_path else None,
        inputs=_input_notes(job, found), skipped=tuple(found.skipped),
        files_scanned=len(job.scans), bytes_scanned=sum(s.size for s in job.scans),
        lines_scanned=sum(s.lines for s in job.scans), clock_note=clock_note(job),
        finished=run_end(job), harmless=harmless_notes(job) if nothing_failed else (),
        no_failure_seen=no_failure_seen, time_axis=time_axis(workers), stuck=stuck,
        expectations=expectations)
    return replace(diagnosis, novel_lines=novel_lines(job, root)) if diagnosis.fails else diagnosis
