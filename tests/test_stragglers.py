"""Stragglers no timeout line names: the rank whose last line differs from its peers' when the
platform ended the job (hang-ended-from-outside), and the rank that left training early with exit
0 while the others lost their peers (rank-left-early).

Real runs first: two stalls the platform ended (a shard-list reload, a file lock) and uneven data
under torch 2.13 and 2.4. Where no real run shows a variant, the test builds it from a real log and
says what it changed.
"""

from __future__ import annotations

import shutil

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES
from logscan.config import parse_time
from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings


def diagnose(path, **settings):
    return diagnose_paths([str(path)], Settings(now=parse_time(POST_MORTEM_NOW), **settings))


def rules_of(diagnosis) -> set[str]:
    return {f.rule for f in diagnosis.findings}


def copy_job(tmp_path, *workers):
    """A job made of real Worker logs: (sample, worker directory) pairs, as worker-0, worker-1..."""
    job = tmp_path / "job"
    for index, (sample, worker) in enumerate(workers):
        shutil.copytree(SAMPLES / sample / worker, job / f"worker-{index}")
    (job / "job_status").write_text("failed\n")
    return job


# ---------------------------------------------------------------- hang-ended-from-outside

@pytest.mark.parametrize("sample, node_rank, rank, last_words", [
    ("platform-walltime-stall", 0, 1, "reloading shard list"),
    ("file-lock-wait", 1, 3, "waiting for lock"),
    # every torchrun got SIGTERM and tore its processes down: the sign of life is before that
    ("walltime-stall-torchrun-signalled", 0, 1, "reloading shard list"),
])
def test_the_rank_whose_last_line_differs_is_the_straggler(sample, node_rank, rank, last_words):
    got = diagnose(SAMPLES / sample)
    root = got.root_cause
    assert (root.rule, root.node_rank, root.rank) == ("hang-ended-from-outside", node_rank, rank), got.summary()
    assert (got.first_failure.node_rank, got.first_failure.rank) == (node_rank, rank)
    finding = next(f for f in got.findings if f.rule == "hang-ended-from-outside")
    assert last_words in finding.evidence[0].text
    assert "unexplained-failure" not in rules_of(got)


def test_a_log_that_stops_on_an_ordinary_step_names_no_straggler():
    """killed-silently: the platform killed the only Worker; its last line is `step 10/60`."""
    got = diagnose(SAMPLES / "killed-silently")
    assert "hang-ended-from-outside" not in rules_of(got)
    assert (got.root_cause.rule, got.root_cause.rank) == ("unexplained-failure", None)


def test_every_torchrun_stopped_while_training_went_on_is_a_stop_not_a_straggler():
    """sigterm-every-torchrun: each Worker's last line before its teardown is the loop's
    `step 10/60` or its start-up lines."""
    got = diagnose(SAMPLES / "sigterm-every-torchrun")
    assert "hang-ended-from-outside" not in rules_of(got)
    assert (got.root_cause.rule, got.root_cause.node_rank) == ("stopped-from-outside", 0)


def test_when_every_worker_ends_on_a_line_of_its_own_none_stands_out(tmp_path):
    """Two real logs, each ending on a straggler's line: node 0 of platform-walltime-stall (rank
    1 reloading its shard list) and node 1 of file-lock-wait (rank 3 waiting for a lock)."""
    job = copy_job(tmp_path, ("platform-walltime-stall", "worker-0"), ("file-lock-wait", "worker-1"))
    assert "hang-ended-from-outside" not in rules_of(diagnose(job))


def test_the_straggler_is_named_by_its_lines_prefix(tmp_path):
    """platform-walltime-stall's real logs, with the straggler's last line as torchrun --tee
    prints it (`[default1]:`) and without the rank in its own text."""
    job = copy_job(tmp_path, ("platform-walltime-stall", "worker-0"), ("platform-walltime-stall", "worker-1"))
    log = job / "worker-0" / "launch_ddp.log"
    log.write_text(log.read_text().replace("rank 1: reloading", "[default1]:reloading"))
    got = diagnose(job)
    assert (got.root_cause.rule, got.root_cause.node_rank, got.root_cause.rank) == (
        "hang-ended-from-outside", 0, 1), got.summary()


def _stamped_job(tmp_path, quiet_gap_s: float):
    """Synthetic, in `kubectl logs --timestamps` dress (no real stalled run has stamped lines):
    node 0's ranks train, then rank 1 prints that it reloads its shard list; node 1's rank 3 goes
    on printing a heartbeat of its own, the last one `quiet_gap_s` after rank 1's line."""
    def stamp(seconds: float) -> str:
        return f"2026-12-01T10:{int(seconds // 60):02d}:{seconds % 60:06.3f}Z"

    for node in (0, 1):
        lines = [f"DDP launch: nnodes=2 node_rank={node} gpus_per_node=2 total_procs=4 master=10.0.0.1:29500"]
        lines += [f"torchrun env: RANK= {2 * node + i} LOCAL_RANK= {i} WORLD_SIZE= 4" for i in (0, 1)]
        if node == 0:
            lines += [f"step {i}/60 loss 1.40{i}" for i in range(1, 8)]
            lines.append("rank 1: reloading shard list from /mnt/data/train")
        else:
            lines.append("rank 3: heartbeat, waiting in allreduce")
        times = [i * 0.5 for i in range(len(lines))]
        if node == 1:
            times[-1] = times[-1] + quiet_gap_s + 4
        text = "".join(f"{stamp(t)} {line}\n" for t, line in zip(times, lines))
        (tmp_path / f"worker-{node}").mkdir()
        (tmp_path / f"worker-{node}" / "launch_ddp.log").write_text(text)
    (tmp_path / "job_status").write_text("failed\n")
    return tmp_path


def test_of_several_last_lines_of_their_own_the_far_older_one_is_the_straggler(tmp_path):
    got = diagnose(_stamped_job(tmp_path, quiet_gap_s=20 * 60))
    assert (got.root_cause.rule, got.root_cause.node_rank, got.root_cause.rank) == (
        "hang-ended-from-outside", 0, 1), got.summary()


def test_last_lines_of_their_own_seconds_apart_name_no_straggler(tmp_path):
    got = diagnose(_stamped_job(tmp_path, quiet_gap_s=5))
    assert "hang-ended-from-outside" not in rules_of(got)


# ---------------------------------------------------------------- rank-left-early

@pytest.mark.parametrize("sample, node_rank, rank, last_step", [
    ("uneven-data", 1, 2, "step 11/30"),
    # torch 2.4.1 leaves the rank 0 it SIGTERMed out of node 0's report
    ("uneven-data-torch2.4", 1, 2, "step 11/30"),
    # beside rank 0, which prints the progress; node 1 reports the rank 3 it SIGTERMed
    ("uneven-data-rank1", 0, 1, "step 5/30"),
])
def test_the_rank_absent_from_its_torchruns_report_left_early(sample, node_rank, rank, last_step):
    got = diagnose(SAMPLES / sample)
    root = got.root_cause
    assert (root.rule, root.node_rank, root.rank) == ("rank-left-early", node_rank, rank), got.summary()
    assert (got.first_failure.node_rank, got.first_failure.rank) == (node_rank, rank)
    assert "exited 0" in root.message and last_step in root.message


@pytest.mark.parametrize("sample", ["stall-mid-training-torch1.13", "stall-mid-training-torch2.1"])
def test_a_rank_its_torchrun_stopped_but_left_out_of_its_report_did_not_leave_early(sample):
    """These releases leave the process they SIGTERMed (the stalled rank 1) out of the report:
    `Sending process N closing signal SIGTERM` says it did not exit by itself."""
    got = diagnose(SAMPLES / sample)
    assert "rank-left-early" not in rules_of(got)
    assert (got.root_cause.rule, got.root_cause.rank) == ("collective-timeout", 1)


def test_a_closing_signal_to_a_process_left_unreported_keeps_the_rank_from_leaving_early(tmp_path):
    """uneven-data's real logs, with node 1's torchrun also sending a closing signal to a pid its
    report does not list (as torch 2.4 does for the processes it stops): rank 2 may have been
    stopped, not have exited by itself."""
    job = copy_job(tmp_path, ("uneven-data", "worker-0"), ("uneven-data", "worker-1"))
    log = job / "worker-1" / "launch_ddp.log"
    lines = log.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "failed (exitcode: 1)" in line)
    lines.insert(at, "W1201 19:57:38.900000 27316 torch/distributed/elastic/multiprocessing/api.py:1028] "
                     "Sending process 27377 closing signal SIGTERM\n")
    log.write_text("".join(lines))
    assert "rank-left-early" not in rules_of(diagnose(job))


@pytest.mark.parametrize("ending", ["\n", "", "\n\n\n"])
@pytest.mark.parametrize("chunk_size", [1 << 19, 64, 4096])
def test_the_scan_keeps_a_files_last_lines_numbered_as_in_the_file(tmp_path, chunk_size, ending):
    """What a Worker's processes printed last, before torchrun's teardown, is read from these:
    numbered as the file is, whatever the reader's blocks, blank lines left out."""
    from logscan.catalogue import load_catalogue
    from logscan.scan.scanner import TAIL_LINES, Scanner

    log = tmp_path / "launch_ddp.log"
    log.write_text("\n".join(f"line {n}" if n % 7 else "" for n in range(1, 501)) + ending)
    scan = Scanner(load_catalogue()).scan_file(str(log), "launch_ddp.log", chunk_size=chunk_size)
    assert scan.tail_lines[-1].text == "line 500"
    assert all(where.text == f"line {where.line}" for where in scan.tail_lines)
    physical = 500 + max(ending.count("\n") - 1, 0)  # blank lines after line 500 count too
    assert len(scan.tail_lines) == len([n for n in range(physical - TAIL_LINES + 1, 501) if n % 7])
