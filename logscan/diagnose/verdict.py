"""The verdict on a job, earned from the logs: HEALTHY needs positive evidence.

HEALTHY: every Worker the launch lines expect is there, each got past its first batch (or the run
finished), and nothing failed. FAILED: an error finding. RUNNING: the platform says the job runs and
nothing failed so far. INCONCLUSIVE: the logs do not show enough either way; the reason says what
is missing.
"""

from __future__ import annotations

import os

from logscan.model.job import Job, Worker, says_run_ended, store_barrier_count
from logscan.scan.prefixes import strip_prefixes
from logscan.catalogue import Group
from logscan.rule_ids import (DEATH_SIGNAL_RECEIVED, ERROR_LINE, PROCESS_GROUP_WAITING, SIBLING_TERMINATED,
                              TORCHRUN_STARTED, TRAINING_DIVERGED, WORKER_GROUP_RESTART, WORKER_GROUP_SUCCEEDED)
from logscan.vocabulary import JobStatus, Role, Severity, Verdict


def _shows_ddp(worker: Worker) -> bool:
    """The log shows a torchrun job at all: a launch line, torchrun's own lines, env prints,
    progress, or a line a process of a distributed world prefixed with its rank (`[rank0]:`)."""
    return (worker.ran_torchrun or bool(worker.progress) or any(w.rank is not None for w in worker.tail_lines)
            or any(h.rule_id == PROCESS_GROUP_WAITING for h in worker.hits))


def _waiting_to_form(workers) -> str | None:
    """What init_process_group's store barrier said last, where a Worker's log stops while it waits."""
    waits = [h for w in workers for h in w.hits if h.rule_id == PROCESS_GROUP_WAITING]
    if not waits:
        return None
    last = waits[-1]
    world, joined = int(last.group(Group.WORLD_SIZE)), int(last.group(Group.JOINED))
    return (f"init_process_group was still waiting in its store barrier when the lines stop "
            f"({last.where.file}:{last.where.line}): {store_barrier_count(world, joined)}")


def _unexplained_errors(worker: Worker):
    """Lines that say a process failed (a non-zero exit, a kill, an argument error) when no rule
    made a finding of them: a damaged or unknown failure report. torchrun stopping processes after
    the run's last step, with no signal of its own to say why, is one: it does that to the
    siblings of a process that failed."""
    end = worker.end_of_run()
    stopped_after = [] if end is None or any(h.rule_id == DEATH_SIGNAL_RECEIVED for h in worker.hits) else [
        h.where for h in worker.hits if h.rule_id == SIBLING_TERMINATED and h.group(Group.SIGNAL)
        # after it, or glued behind it on its line (a paste that lost its newlines)
        and (worker.position(h.where) > worker.position(end)
             or (worker.position(h.where) == worker.position(end) and h.where.text != end.text))]
    return [h.where for h in worker.hits if h.rule_id == ERROR_LINE] + \
        [e.where for e in worker.exits if e.exitcode] + stopped_after[:1]


def judge(job: Job, findings, empty_logs: list[str] = ()) -> tuple[Verdict, str]:
    """(verdict, why): the reason names the evidence, or what is missing. `empty_logs`: log files
    of the job that hold nothing at all."""
    verdict, reason = _judge(job, findings)
    silent = _silent_peer(job, empty_logs) if verdict == Verdict.HEALTHY else None
    if silent is not None:
        return Verdict.INCONCLUSIVE, silent
    return verdict, reason


def _silent_peer(job: Job, empty_logs: list[str]) -> str | None:
    """Why a job that looks healthy may not be: a peer Worker's log (named as a Worker's log
    here is) holds nothing, while another Worker printed torchrun's start-up banner. torchrun
    prints that banner whenever it starts more than one process (and OMP_NUM_THREADS is unset, as
    it is for all Workers alike): the empty Worker started one process (an uneven GPU count, which
    the launch lines would show) or never ran; the world that trained was not the one asked for."""
    names = {os.path.basename(f) for w in job.workers if _shows_ddp(w) for f in w.files}
    empty = [path for path in empty_logs if os.path.basename(path) in names]
    banner = next((h.where for w in job.workers for h in w.hits
                   if h.rule_id == TORCHRUN_STARTED and "OMP_NUM_THREADS" in h.where.text), None)
    if not empty or banner is None:
        return None
    return (f"{empty[0]} is empty while {banner.file}:{banner.line} is torchrun's banner for more than "
            f"one process: that Worker started a single process (an uneven GPU count) or none, so the "
            f"world that trained may not be the one the job asked for; its launch line would say")


def _judge(job: Job, findings) -> tuple[Verdict, str]:
    # The job's verdict: an unmet expectation of a gate is the gate's result, not the job's.
    rules = job.catalogue.rules
    errors = [f for f in findings if f.severity == Severity.ERROR
              and not (f.rule in rules and rules[f.rule].role == Role.EXPECTATION)]
    if errors:
        return Verdict.FAILED, _failed_because(errors)
    if job.job_status == JobStatus.RUNNING:
        return Verdict.RUNNING, "the platform reports the job running and nothing has failed so far"
    ddp = [w for w in job.workers if _shows_ddp(w)]
    if not ddp:
        files = sum(len(w.files) for w in job.workers)
        return Verdict.INCONCLUSIVE, (f"no line in {files} file(s) shows that training began (no progress "
                                      f"line), nor a torchrun job (no launch line, torchrun output or env print)")
    unexplained = [lines for w in job.workers if (lines := _unexplained_errors(w))]
    if unexplained:
        where = unexplained[0][-1]
        return Verdict.INCONCLUSIVE, (f"no rule explains the error-like line {where.file}:{where.line} "
                                      f"({where.text.strip()[:80]}): what failed, and why, the logs "
                                      f"do not say")
    if all(w.group_succeeded for w in ddp) and (job.nnodes is None or len(ddp) >= job.nnodes):
        told = next(h.where for h in ddp[0].hits if h.rule_id == WORKER_GROUP_SUCCEEDED)
        return Verdict.HEALTHY, (f"the run finished: torchrun reports every Worker's processes exited 0 "
                                 f"({told.file}:{told.line}), and nothing failed")
    finished = [w for w in ddp if w.progress_fraction() == 1.0]
    if finished:
        # DDP synchronises every step: a run that reached its last step did so on every rank.
        last = finished[0].last_progress.where
        return Verdict.HEALTHY, (f"the run finished: {last.file}:{last.line} is its last step, and "
                                 f"nothing failed")
    if job.nnodes is not None and len(job.launched) < job.nnodes and not job.every_rank_trained:
        return Verdict.INCONCLUSIVE, (f"{len(job.launched)} of nnodes={job.nnodes} Workers have a launch "
                                      f"line: the other logs are not here")
    stuck = [w for w in ddp if not job.reached_first_batch(w)]
    if stuck:
        where = ", ".join(f"{w.label} ({job.stage_of(w)})" for w in stuck[:4])
        more = f" and {len(stuck) - 4} more" if len(stuck) > 4 else ""
        restart = next((h.where for w in stuck for h in w.hits if h.rule_id == WORKER_GROUP_RESTART), None)
        closing = next((h.where for w in stuck for h in w.hits if h.rule_id == SIBLING_TERMINATED), None)
        if restart is None and closing is not None:
            # torchrun (mp.spawn alike) SIGTERMs its processes when one failed or it was itself stopped; which,
            # the lines after it would say
            return Verdict.INCONCLUSIVE, (f"the launcher stopped its processes ({closing.file}:{closing.line}): one "
                                          f"of them failed or the launcher was stopped, and the lines that would "
                                          f"say which are not here")
        if restart is not None:
            # torchrun's word that an attempt failed, with the attempt after it cut off
            return Verdict.INCONCLUSIVE, (f"torchrun restarted its worker group after a failure "
                                          f"({restart.file}:{restart.line}), and the logs stop before "
                                          f"the new attempt shows how it went; no line shows that {where}{more} "
                                          f"got past the first batch")
        waiting = _waiting_to_form(stuck)
        if waiting is not None:
            return Verdict.INCONCLUSIVE, waiting
        return Verdict.INCONCLUSIVE, (f"no line shows that {where}{more} got past the first batch, and "
                                      f"nothing says it failed")
    if job.job_status == JobStatus.SUCCEEDED:
        return Verdict.HEALTHY, ("every Worker got past its first batch, the platform reports the job "
                                 "succeeded, and nothing failed")
    ended = next((end for w in ddp if (end := w.end_of_run()) is not None), None)
    if ended is not None:
        return Verdict.HEALTHY, (f"the run finished: {ended.file}:{ended.line} is its end-of-run line, and "
                                 f"nothing failed")
    closing = next((h.where for w in ddp for h in w.hits if h.rule_id == SIBLING_TERMINATED
                    and (w.last_progress is None or w.position(h.where) > w.position(w.last_progress.where))), None)
    if closing is not None and not any(h.rule_id == WORKER_GROUP_RESTART for w in ddp for h in w.hits):
        # torchrun (mp.spawn alike) SIGTERMs its processes when one failed or it was itself stopped
        return Verdict.INCONCLUSIVE, (f"training went on, then the launcher stopped its processes "
                                      f"({closing.file}:{closing.line}): one of them failed or the launcher was "
                                      f"stopped, and the lines that would say which are not here")
    # Training went on and then the lines stop, with no end and no error: a run still going, or
    # one killed from outside, look the same here.
    diverging = " with its loss diverged (training-diverged)" if any(
        f.rule == TRAINING_DIVERGED for f in findings) else ""
    return Verdict.INCONCLUSIVE, (f"training went on{diverging}, then the logs stop with no error and no end of the "
                                  "run: still running or stopped from outside, the logs do not say (the platform's "
                                  "job status would)")


def _failed_because(errors) -> str:
    """Why a job FAILED, in words: its root cause, and how many other errors there are."""
    root = next((f for f in errors if f.is_root), errors[0])
    follow = sum(f.is_consequence for f in errors)
    apart = len(errors) - 1 - follow
    more = [f"{follow} consequence{'s' if follow > 1 else ''} of it"] if follow else []
    more += [f"{apart} other error{'s' if apart > 1 else ''} of {'their' if apart > 1 else 'its'} own"] if apart else []
    return f"the logs show the failure {root.heading}" + (f" ({', '.join(more)})" if more else "")


# How much of a script's end-of-run line the verdict quotes.
QUOTED = 60


def run_end(job: Job) -> str | None:
    """How the logs say the run ended, when they do: `30/30 steps` from a last progress line at
    its total, a last line that says so, a framework's word that its training loop ended, or
    torchrun's report that every process exited 0."""
    for w in job.workers:
        if w.progress_fraction() == 1.0 and (steps := w.finished_steps()):
            return f"{steps} steps"
    for w in job.workers:
        if w.last_line is not None and says_run_ended(w.last_line.text):
            return f"its last line: {strip_prefixes(w.last_line.text).body.strip()[:QUOTED]}"
    for w in job.workers:
        if (end := w.end_of_run()) is not None:
            # A framework's own word that its loop ended (Lightning's `Trainer.fit` stopped line): it
            # ends its line, which a progress bar's last redraw may begin.
            said = strip_prefixes(end.text).body.strip()
            who = "its end-of-run line" if says_run_ended(end.text) else "the framework says"
            return f"{who}: {'…' if len(said) > QUOTED else ''}{said[-QUOTED:]}"
    ddp = [w for w in job.workers if _shows_ddp(w)]
    if ddp and all(w.group_succeeded for w in ddp):
        return "every process exited 0"
    return None
