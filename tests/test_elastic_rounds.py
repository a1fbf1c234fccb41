"""Elastic membership (issue 18, item 10): a Worker's env prints are grouped into rendezvous rounds,
and each round's WORLD_SIZE is checked against that round's world, never read as the platform's
WORLD_SIZE leaking in.

Real samples: `elastic-late-node` (torch 2.13) and `elastic-late-node-torch2.4` (a late node joins
an `--nnodes=1:2` job and the world re-forms from 2 to 4 processes), `elastic-late-node-reform-timeout`
(the re-formed round never completes), `world-size-leak` (a wrapper re-exports the platform
WORLD_SIZE), `restart-recovered` and `restart-not-recovered` (`--max-restarts`, not elastic). All
of them ran at torchrun's default log level, where a round shows only as `closing signal SIGTERM`
lines followed by a new block of env prints.

The agent's INFO lines (`Rendezvous'ing worker group`, the `Rendezvous complete` result with
`group_world_size=` and `global_world_sizes=`, `Detected N new nodes ...`, `Stopping worker group`,
the launch configs' `min_nodes` / `max_nodes`) come from tests/torch_source/formats.toml: lines
built from torch's source, not recorded. Where a test needs them inside a job, they are spliced
into a real sample's log (synthetic, said at each test); no real sample ran with LOGLEVEL=INFO.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES, job_model, torch_source_entries
from logscan.catalogue import load_catalogue
from logscan.config import parse_time
from logscan.diagnose.pipeline import diagnose_paths
from logscan.model.job import ROUND_FAILURE, ROUND_MEMBERSHIP, ROUND_START
from logscan.rule_ids import RENDEZVOUS_ROUND
from logscan.scan.lineparse import parse_launch
from logscan.scan.prefixes import strip_prefixes
from logscan.settings import Settings

CATALOGUE = load_catalogue()
FORMATS = torch_source_entries()


def diagnose(path):
    return diagnose_paths([str(path)], Settings(now=parse_time(POST_MORTEM_NOW)))


def model(path, status="succeeded"):
    return job_model(path, status)


def node(job, node_rank):
    return next(w for w in job.workers if w.node_rank == node_rank)


def agent_line(text: str, pid: int, line: int = 706) -> str:
    """An agent line with the v2.5+ logger prefix (formats.toml, family `prefixes`)."""
    return f"I1201 19:54:14.569000 {pid} torch/distributed/elastic/agent/server/api.py:{line}] {text}"


def rendezvous_result(pid: int, nodes: int, group_rank: int, world: int) -> list[str]:
    """The `Rendezvous complete` block as torch 2.8+ prints it (formats.toml, `rendezvous-complete`)."""
    first = group_rank * 2
    body = ["[default] Rendezvous complete for workers. Result:", "  restart_count=0",
            "  master_addr=job-eln-worker-0", "  master_port=30140", f"  group_rank={group_rank}",
            f"  group_world_size={nodes}", "  local_ranks=[0, 1]", f"  role_ranks=[{first}, {first + 1}]",
            f"  global_ranks=[{first}, {first + 1}]", f"  role_world_sizes=[{world}, {world}]",
            f"  global_world_sizes=[{world}, {world}]", "  event_log_handler=null", ""]
    return [agent_line(text, pid, 552) for text in body]


def at_info_level(sample: str, tmp_path: Path, rounds: list[tuple[int, int]],
                  second_round_world: int | None = None) -> Path:
    """Synthetic: a real sample with node 0's agent lines at LOGLEVEL=INFO spliced in, built from
    formats.toml (`rendezvousing`, `rendezvous-complete`, `new-nodes`, `stopping`): each round
    (nodes, WORLD_SIZE) opens with `Rendezvous'ing worker group` and its result, and the first one
    ends with `Detected 1 new nodes` and `Stopping worker group` before torchrun's SIGTERMs.
    `second_round_world` rewrites what the second round's processes print."""
    job = tmp_path / sample
    shutil.copytree(SAMPLES / sample, job)
    log = job / "worker-0" / "launch_ddp.log"
    lines = log.read_text().splitlines()
    pid = int(lines[1].split()[2])
    first_env = next(i for i, text in enumerate(lines) if "torchrun env" in text)
    stop = next(i for i, text in enumerate(lines) if "closing signal SIGTERM" in text)
    after_stop = stop + 2
    (nodes0, world0), (nodes1, world1) = rounds
    opening = lambda nodes, world: [agent_line("[default] Rendezvous'ing worker group", pid),  # noqa: E731
                                    *rendezvous_result(pid, nodes, 0, world)]
    tail = lines[after_stop:]
    if second_round_world is not None:
        tail = [text.replace("WORLD_SIZE= 4", f"WORLD_SIZE= {second_round_world}") for text in tail]
    lines = (lines[:first_env] + opening(nodes0, world0) + lines[first_env:stop]
             + [agent_line("[default] Detected 1 new nodes from group_rank=0; will restart worker group", pid, 961),
                agent_line("[default] Stopping worker group", pid, 732)]
             + lines[stop:after_stop] + opening(nodes1, world1) + tail)
    log.write_text("\n".join(lines) + "\n")
    return job


# --- the agent's round lines, from torch's source -------------------------------------------------

ROUND_ENTRIES = ("rendezvousing", "stopping", "new-nodes", "rendezvous-complete", "launch-configs")


@pytest.mark.parametrize("entry", ROUND_ENTRIES)
def test_every_release_wording_of_the_agents_round_lines_is_read(entry):
    """Every example of formats.toml's entry (each release's logger prefix) is a rendezvous-round line."""
    signal = CATALOGUE.signals[RENDEZVOUS_ROUND]
    examples = next(e for e in FORMATS if e["id"] == entry)["examples"]
    assert len(examples) >= 1
    for example in examples:
        lines = [strip_prefixes(text).body for text in example.strip("\n").splitlines()]
        matched = [signal.match(body) for body in lines]
        assert any(matched), example
        if entry == "rendezvous-complete":
            found = {k: v for groups in matched if groups for k, v in groups.items()}
            assert (found["group_world_size"], found["global_world_size"]) == ("2", "4")
        if entry == "launch-configs":
            found = {k: v for groups in matched if groups for k, v in groups.items()}
            assert (found["min_nodes"], found["max_nodes"]) == ("2", "2")


# --- rounds at the default log level: real samples -------------------------------------------------

@pytest.mark.parametrize("sample", ["elastic-late-node", "elastic-late-node-torch2.4"])
def test_a_late_node_re_forms_the_world_in_a_second_round(sample):
    """Real: node 0 trained alone (WORLD_SIZE= 2), torchrun SIGTERMed its two processes when node 1
    arrived, and new env prints say WORLD_SIZE= 4."""
    job = model(SAMPLES / sample)
    rounds = node(job, 0).rounds
    assert [(r.reason, r.world_size, r.started) for r in rounds] == [
        (ROUND_START, 2, True), (ROUND_MEMBERSHIP, 4, True)]
    assert "torchrun env" in rounds[1].opened_at.text
    assert [r.world_size for r in node(job, 1).rounds] == [4]
    assert job.elastic


@pytest.mark.parametrize("sample", ["elastic-late-node", "elastic-late-node-torch2.4"])
def test_an_elastic_world_that_grew_is_healthy(sample):
    got = diagnose(SAMPLES / sample)
    assert got.verdict == "HEALTHY"
    assert not [f for f in got.findings if f.rule == "world-size-mismatch"]


@pytest.mark.parametrize("sample", ["restart-recovered", "restart-not-recovered"])
def test_a_restart_after_a_failure_is_a_round_of_the_same_world(sample):
    """Real (`--max-restarts=1`, nnodes=2): the restarted rounds keep WORLD_SIZE= 4, so nothing
    says the job is elastic."""
    job = model(SAMPLES / sample, status="failed")
    reasons = [r.reason for w in job.workers for r in w.rounds]
    assert ROUND_FAILURE in reasons and len(reasons) > len(job.workers)
    assert {r.world_size for w in job.workers for r in w.rounds} == {4}
    assert not job.elastic


def test_the_platform_world_size_leak_is_still_a_leak():
    """Real: every process of both Workers printed WORLD_SIZE= 2 (nnodes) in their only round."""
    got = diagnose(SAMPLES / "world-size-leak")
    assert got.root_cause.rule == "world-size-mismatch"
    assert "the platform's WORLD_SIZE leaked" in got.root_cause.message


# --- a re-formed round that never completes ------------------------------------------------------

def test_a_re_formed_round_that_never_completes_hangs_on_every_node():
    """Real: node 0's group was stopped for node 1, then both agents timed out in round 1."""
    job = model(SAMPLES / "elastic-late-node-reform-timeout", status="failed")
    final = node(job, 0).final_round
    assert (final.index, final.reason, final.started) == (1, ROUND_MEMBERSHIP, False)
    assert job.stage_of(node(job, 0)) == "rendezvous"
    got = diagnose(SAMPLES / "elastic-late-node-reform-timeout")
    hangs = [f for f in got.findings if f.rule == "hang-in-rendezvous"]
    assert len(hangs) == 1 and hangs[0].node_ranks == (0, 1)
    assert (got.root_cause.rule, got.root_cause.node_rank) == ("hang-in-rendezvous", None)
    assert not [f for f in got.findings if f.rule == "world-size-mismatch"]


def test_a_re_formed_round_told_by_the_agents_info_lines_hangs_too(tmp_path):
    """Synthetic: elastic-late-node-reform-timeout with node 0's INFO round lines spliced in
    (formats.toml); the second round opens at `Rendezvous'ing worker group` and never completes."""
    job_dir = tmp_path / "job"
    shutil.copytree(SAMPLES / "elastic-late-node-reform-timeout", job_dir)
    log = job_dir / "worker-0" / "launch_ddp.log"
    lines = log.read_text().splitlines()
    pid = int(lines[1].split()[2])
    stop = next(i for i, text in enumerate(lines) if "closing signal SIGTERM" in text)
    lines[stop:stop] = [agent_line("[default] Detected 1 new nodes from group_rank=0; will restart worker group", pid),
                        agent_line("[default] Stopping worker group", pid)]
    lines[stop + 4:stop + 4] = [agent_line("[default] Rendezvous'ing worker group", pid)]
    log.write_text("\n".join(lines) + "\n")
    final = node(model(job_dir, status="failed"), 0).final_round
    assert "Rendezvous'ing" in final.opened_at.text and not final.started
    got = diagnose(job_dir)
    assert (got.root_cause.rule, got.root_cause.node_rank) == ("hang-in-rendezvous", None)


# --- rounds told by the agent's INFO lines (synthetic, from torch's source) --------------------------

def test_each_round_is_checked_against_its_rendezvous_result(tmp_path):
    """Synthetic: elastic-late-node with INFO round lines; round 0 has 1 node (WORLD_SIZE 2),
    round 1 has 2 nodes (WORLD_SIZE 4), as the processes printed."""
    job_dir = at_info_level("elastic-late-node", tmp_path, [(1, 2), (2, 4)])
    rounds = node(model(job_dir), 0).rounds
    assert [(r.group_world_size, r.global_world_size, r.world_size) for r in rounds] == [(1, 2, 2), (2, 4, 4)]
    assert "Rendezvous'ing" in rounds[1].opened_at.text
    got = diagnose(job_dir)
    assert got.verdict == "HEALTHY"


def test_a_round_whose_processes_see_another_size_than_torchrun_gave_is_a_leak(tmp_path):
    """Synthetic: as above, but the re-formed round's processes print WORLD_SIZE= 2 (nnodes) where
    torchrun's result says 4: something re-exported the platform's value."""
    job_dir = at_info_level("elastic-late-node", tmp_path, [(1, 2), (2, 4)], second_round_world=2)
    got = diagnose(job_dir)
    leaks = [f for f in got.findings if f.rule == "world-size-mismatch"]
    assert len(leaks) == 1
    assert "gave WORLD_SIZE=4" in leaks[0].message and "leaked" in leaks[0].message


# --- the launch line's --nnodes shape ---------------------------------------------------------------

@pytest.mark.parametrize("shape, least, most", [("1:2", 1, 2), ("2:8", 2, 8)])
def test_a_launch_line_may_print_a_node_range(shape, least, most):
    """Synthetic: the guide's launch line prints the platform's count (`nnodes=2`) even in the
    elastic variant, so no real sample shows a range; a script that echoes torchrun's own
    `--nnodes=MIN:MAX` does."""
    fields = parse_launch(f"DDP launch: nnodes={shape} node_rank=0 gpus_per_node=2 total_procs=4 master=h:1")
    assert (fields["min_nnodes"], fields["nnodes"]) == (least, most)
    assert ("nnodes", shape) in fields["raw_fields"]
    assert parse_launch("DDP launch: nnodes=2 node_rank=0")["min_nnodes"] is None
    assert parse_launch("DDP launch: nnodes=3:2 node_rank=0")["min_nnodes"] is None  # not a range


@pytest.mark.parametrize("nnodes, leak", [("1:2", False), ("2", True)])
def test_a_world_of_the_nodes_that_came_is_elastic_only_if_the_launch_says_so(tmp_path, nnodes, leak):
    """Synthetic, from elastic-late-node's node 0 log cut after its first round: the job ran one
    round of one node (WORLD_SIZE= 2). Launched `nnodes=1:2` that is a world an elastic job may
    form; launched `nnodes=2` it is the platform's value."""
    worker = tmp_path / "job" / "worker-0"
    worker.mkdir(parents=True)
    lines = (SAMPLES / "elastic-late-node" / "worker-0" / "launch_ddp.log").read_text().splitlines()
    stop = next(i for i, text in enumerate(lines) if "closing signal SIGTERM" in text)
    lines = [lines[0].replace("nnodes=2", f"nnodes={nnodes}")] + lines[1:stop] + ["training finished: 6 steps"]
    (worker / "launch_ddp.log").write_text("\n".join(lines) + "\n")
    (tmp_path / "job" / "job_status").write_text("succeeded\n")
    fired = {f.rule for f in diagnose(tmp_path / "job").findings}
    assert ("world-size-mismatch" in fired) == leak


@pytest.mark.parametrize("sample", ["crash-log-dir", "healthy-tee-1x4"])
def test_teed_env_prints_after_a_stop_are_the_same_round(sample):
    """Real, torchrun --tee: each process's stdout is copied by its own thread, so in crash-log-dir
    node 0's env prints come after torchrun's SIGTERM of rank 0; no process printed twice, so
    there was one round."""
    job = model(SAMPLES / sample, status="failed")
    assert all(len(w.rounds) == 1 for w in job.workers)
    assert not job.elastic


def test_a_node_arriving_after_the_job_finished_is_not_a_leak(tmp_path):
    """Synthetic, from two real logs: node 0 is elastic-late-node's node 0 with its world never
    re-formed (its first round, WORLD_SIZE= 2, then its second round's steps 7/60 to 60/60 and
    `training finished`: it trained alone to the end); node 1 is the late node of
    elastic-late-node-reform-timeout, whose rendezvous timed out (its master line made node 0's).
    A fixed node count starts no process before every node joined, so node 0's world of 2 is one
    an elastic rendezvous formed: node 1 hung in rendezvous, nobody leaked WORLD_SIZE."""
    job = tmp_path / "job"
    (job / "worker-0").mkdir(parents=True)
    (job / "worker-1").mkdir()
    lines = (SAMPLES / "elastic-late-node" / "worker-0" / "launch_ddp.log").read_text().splitlines()
    stop = next(i for i, text in enumerate(lines) if "closing signal SIGTERM" in text)
    rest = next(i for i, text in enumerate(lines) if i > stop and text.startswith("step 7/60"))
    (job / "worker-0" / "launch_ddp.log").write_text("\n".join(lines[:stop] + lines[rest:]) + "\n")
    late = (SAMPLES / "elastic-late-node-reform-timeout" / "worker-1" / "launch_ddp.log").read_text()
    (job / "worker-1" / "launch_ddp.log").write_text(late.replace("job-elt-worker-0:30150", "job-eln-worker-0:30140"))
    (job / "job_status").write_text("failed\n")
    assert model(job, status="failed").elastic
    got = diagnose(job)
    assert (got.root_cause.rule, got.root_cause.node_rank) == ("hang-in-rendezvous", 1)
    assert not [f for f in got.findings if f.rule == "world-size-mismatch"]


@pytest.mark.parametrize("sample", [p.name for p in sorted(SAMPLES.glob("*/expected.json"))
                                    for p in [p.parent]])
def test_a_worker_of_one_round_started_as_its_round_did(sample):
    """Every real sample: where torchrun never restarted a Worker's group, its one round started
    processes exactly when the Worker did (Round.started reads what Worker.started_processes reads)."""
    job = model(SAMPLES / sample, status="failed")
    for worker in job.workers:
        if len(worker.rounds) == 1:
            assert worker.final_round.started == worker.started_processes, worker.label


@pytest.mark.parametrize("sample", ["elastic-late-node", "elastic-late-node-torch2.4"])
def test_a_gate_on_the_world_size_reads_the_world_the_job_ended_in(run_cli, sample):
    """Real: the job ended in a world of 4 (its first round, of 2, re-formed), so a gate asking
    for 4 holds and one asking for 2 does not."""
    assert run_cli("check", SAMPLES / sample, "--expect-world-size", "4", "--now", POST_MORTEM_NOW).exit_code == 0
    failed = run_cli("check", SAMPLES / sample, "--expect-world-size", "2", "--now", POST_MORTEM_NOW)
    assert failed.exit_code == 1 and "WORLD_SIZE=4" in failed.stdout


def test_a_crash_after_the_world_re_formed_is_no_restart_loop(tmp_path):
    """Synthetic: elastic-late-node with node 0's re-formed round cut at step 10 and ended by a
    crash of rank 0 (a `[rank0]:` traceback, then torchrun's `Sending process N closing signal
    SIGTERM` and `failed (exitcode: 1) local_rank: 0 ...` as formats.toml's `signals` family words
    them). The second env block re-formed the world; nothing had failed before it, so torchrun did
    not restart anything: the crash is the story, not a restart that failed again."""
    job = tmp_path / "job"
    shutil.copytree(SAMPLES / "elastic-late-node", job)
    log = job / "worker-0" / "launch_ddp.log"
    lines = log.read_text().splitlines()
    pid = lines[1].split()[2]
    second = next(i for i, text in enumerate(lines) if "WORLD_SIZE= 4" in text)
    cut = next(i for i, text in enumerate(lines) if i > second and text.startswith("step 10/60"))
    lines = lines[:cut + 1] + [
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/work/train.py", line 9, in <module>',
        "[rank0]: RuntimeError: boom",
        f"W1201 19:54:30.000000 {pid} torch/distributed/elastic/multiprocessing/api.py:1028] "
        "Sending process 25990 closing signal SIGTERM",
        f"E1201 19:54:30.100000 {pid} torch/distributed/elastic/multiprocessing/api.py:1002] "
        "failed (exitcode: 1) local_rank: 0 (pid: 25989) of binary: /usr/bin/python3"]
    log.write_text("\n".join(lines) + "\n")
    (job / "job_status").write_text("failed\n")
    got = diagnose(job)
    fired = {f.rule for f in got.findings}
    assert (got.root_cause.rule, got.root_cause.rank) == ("crash-during-training", 0)
    assert "restart-loop" not in fired and "world-size-mismatch" not in fired


def test_a_restart_after_a_failure_still_counts():
    """Real (restart-not-recovered): node 0's second restart was node 1's failure calling every
    agent back; both nodes burned their restarts."""
    got = diagnose(SAMPLES / "restart-not-recovered")
    assert {f.node_rank for f in got.findings if f.rule == "restart-loop"} == {0, 1}
