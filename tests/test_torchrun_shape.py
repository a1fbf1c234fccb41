"""A Worker's launch shape from torchrun's own lines where no launch line was printed (issue 28).

Production launch scripts often print no `DDP launch:` line. At LOGLEVEL=INFO torchrun's agent logs
its launch configs (`min_nodes`, `max_nodes`, `nproc_per_node`, `rdzv_backend`, `rdzv_endpoint`,
`rdzv_configs`) and each rendezvous result (`group_rank`, `group_world_size`, `local_ranks`,
`global_ranks`, `global_world_sizes`, `master_addr`, `master_port`): the node's place in the job.
The model declares it as the Worker's launch (Worker.launch, `source` TORCHRUN_LINES), so the
rules that compare Workers read it as they read a launch line; a Worker with a launch line keeps
the line's values.

Real samples (torch 2.13, LOGLEVEL=INFO, launch_ddp_quiet.sh): `healthy-2x2-prod-quiet-info`,
`crash-mid-training-prod-quiet-info`, `missing-worker-prod-quiet-info`; `healthy-2x2-prod-quiet`
(default log level: none of these lines) and `restart-loop` (Worker 0 at INFO with its launch
line). The other tests are synthetic and say so: lines built from torch's format strings in
tests/torch_source/formats.toml (`rendezvous-complete` for 1.13-2.15, `rendezvous-complete-1.9`,
`launch-configs`), or a real sample with one line changed.
"""

from __future__ import annotations

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES, job_model, sample_copy, torch_source_entries
from logscan.catalogue import load_catalogue
from logscan.config import parse_time
from logscan.diagnose.pipeline import diagnose_paths
from logscan.rule_ids import RENDEZVOUS_ROUND
from logscan.scan.events import LAUNCH_LINE, TORCHRUN_LINES
from logscan.scan.lineparse import AGENT_CONFIGS, AGENT_RESULT, parse_agent_block_line
from logscan.settings import Settings

CATALOGUE = load_catalogue()
FORMATS = {entry["id"]: entry for entry in torch_source_entries()}


def model(path, status="failed"):
    return job_model(path, status)


def diagnose(path):
    return diagnose_paths([str(path)], Settings(now=parse_time(POST_MORTEM_NOW)))


def shapes(job):
    """node_rank → (source, nnodes, gpus_per_node, total_procs, ranks) of each Worker."""
    return {w.node_rank: (w.launch.source, w.launch.nnodes, w.launch.gpus_per_node, w.launch.total_procs,
                          w.ranks) for w in job.workers}


def log_of(tmp_path, text: str):
    """A one-Worker job whose log is `text`."""
    job = tmp_path / "job"
    (job / "worker-0").mkdir(parents=True)
    (job / "worker-0" / "launch_ddp.log").write_text(text)
    return job


# --- real samples --------------------------------------------------------------------------------

def test_each_worker_without_a_launch_line_takes_its_shape_from_torchruns_info_lines():
    """Real: both Workers' rendezvous results (group_rank 0 and 1, local_ranks [0, 1], global_ranks
    [0, 1] and [2, 3], global_world_sizes [4, 4]) and launch configs (2 nodes, static rendezvous at
    127.0.0.1) place them as launch lines would."""
    job = model(SAMPLES / "healthy-2x2-prod-quiet-info", status="succeeded")
    assert shapes(job) == {0: (TORCHRUN_LINES, 2, 2, 4, range(0, 2)), 1: (TORCHRUN_LINES, 2, 2, 4, range(2, 4))}
    assert {w.launch.master_addr for w in job.workers} == {"127.0.0.1"}
    assert (job.nnodes, job.uniform_gpus, job.expected_processes) == (2, 2, 4)
    assert [w.node_rank for w in job.launched] == [0, 1]


def test_the_default_log_level_gives_no_shape_and_nothing_requires_one():
    """Real: the same job at torchrun's default level prints none of these lines: no shape is
    made up, and the run is still HEALTHY."""
    job = model(SAMPLES / "healthy-2x2-prod-quiet", status="succeeded")
    assert [w.launch for w in job.workers] == [None, None]
    assert not any(w.agent_shapes for w in job.workers)
    assert diagnose(SAMPLES / "healthy-2x2-prod-quiet").verdict == "HEALTHY"


def test_a_crash_is_placed_on_the_node_torchruns_result_names():
    """Real: rank 1's RuntimeError sits in node 0's log; node 1's ranks 2-3 come from its result's
    global_ranks, not from the failure summary."""
    job = model(SAMPLES / "crash-mid-training-prod-quiet-info")
    assert shapes(job)[1][-1] == range(2, 4)
    assert job.node_of_rank(1) == 0 and job.node_of_rank(3) == 1
    root = diagnose(SAMPLES / "crash-mid-training-prod-quiet-info").root_cause
    assert (root.rule, root.node_rank, root.rank) == ("crash-during-training", 0, 1)


def test_a_rendezvous_that_never_completed_still_has_its_launch_configs():
    """Real: nnodes=3 with two Workers; the rendezvous timed out, so no result block. The launch
    configs' min_nodes = max_nodes = 3 give nnodes, their static rendezvous's `'rank': N` the node
    rank: node 2 is missing."""
    job = model(SAMPLES / "missing-worker-prod-quiet-info")
    assert shapes(job) == {0: (TORCHRUN_LINES, 3, 2, None, range(0, 2)), 1: (TORCHRUN_LINES, 3, 2, None, range(2, 4))}
    assert all(s.block == AGENT_CONFIGS for w in job.workers for s in w.agent_shapes)
    report = diagnose(SAMPLES / "missing-worker-prod-quiet-info")
    assert (report.root_cause.rule, report.root_cause.node_rank) == ("missing-worker", 2)
    missing = next(f for f in report.findings if f.rule == "missing-worker")
    assert "no launch line or torchrun line of its own" in missing.message


def test_a_launch_line_keeps_its_values_beside_torchruns_lines():
    """Real: restart-loop's Worker 0 printed its launch line and ran at LOGLEVEL=INFO (three
    rounds); its launch stays the launch line's, with the first rank torchrun gave and no dispute."""
    job = model(SAMPLES / "restart-loop")
    node0 = next(w for w in job.workers if w.node_rank == 0)
    assert (node0.launch.source, node0.launch.where.line, node0.launch.disputed) == (LAUNCH_LINE, 1, ())
    assert node0.launch.first_rank == 0 and len([s for s in node0.agent_shapes if s.block == AGENT_RESULT]) == 3


# --- synthetic: a real sample with one line changed -------------------------------------------------

def test_a_launch_line_that_contradicts_its_own_torchrun_is_a_launch_mismatch(tmp_path):
    """Synthetic: restart-loop with Worker 0's launch line claiming gpus_per_node=4 (torchrun's
    configs say nproc_per_node 2, and it started local ranks 0 and 1): the launch line keeps its
    value, and launch-mismatch says the line did not describe the command."""
    job_dir = sample_copy(tmp_path, "restart-loop", "worker-0/launch_ddp.log",
                          "gpus_per_node=2 total_procs=4", "gpus_per_node=4 total_procs=8")
    node0 = next(w for w in model(job_dir).workers if w.node_rank == 0)
    assert node0.launch.gpus_per_node == 4
    assert node0.launch.disputed == (("gpus_per_node", 4, 2),)
    found = [f for f in diagnose(job_dir).findings if f.rule == "launch-mismatch"]
    assert any("torchrun logged gpus_per_node=2" in f.message for f in found), [f.message for f in found]


def test_torchruns_lines_fill_what_a_launch_line_leaves_out(tmp_path):
    """Synthetic: restart-loop with Worker 0's launch line lacking gpus_per_node and total_procs:
    torchrun's result fills them (2 local ranks, WORLD_SIZE 4), nothing is disputed."""
    job_dir = sample_copy(tmp_path, "restart-loop", "worker-0/launch_ddp.log",
                          " gpus_per_node=2 total_procs=4", "")
    node0 = next(w for w in model(job_dir).workers if w.node_rank == 0)
    assert (node0.launch.source, node0.launch.gpus_per_node, node0.launch.total_procs) == (LAUNCH_LINE, 2, 4)
    assert node0.launch.disputed == ()


# --- synthetic: lines built from torch's format strings ---------------------------------------------

@pytest.mark.parametrize("entry", ["rendezvous-complete", "rendezvous-complete-1.9"])
def test_every_release_s_rendezvous_result_gives_the_same_shape(entry, tmp_path):
    """Synthetic (formats.toml): each example of 1.9's tab-indented block with its `workers={...}`
    dict and of 1.13-2.15's `key=value` block, every logger prefix, gives group_rank 1 of 2 nodes,
    2 local ranks, first global rank 2 and WORLD_SIZE 4."""
    examples = FORMATS[entry]["examples"]
    assert examples
    for example in examples:
        worker = model(log_of(tmp_path / str(hash(example)), example.lstrip("\n"))).workers[0]
        launch = worker.launch
        assert (launch.source, launch.node_rank, launch.nnodes, launch.gpus_per_node, launch.first_rank,
                launch.total_procs) == (TORCHRUN_LINES, 1, 2, 2, 2, 4), example
        assert (worker.node_rank, worker.ranks) == (1, range(2, 4))
        assert (launch.master_addr, launch.master_port) == ("job-7f3a-worker-0", 29500)


def test_the_launch_configs_alone_give_nnodes_gpus_master_and_a_static_node_rank(tmp_path):
    """Synthetic (formats.toml `launch-configs`, static rendezvous with `'rank': 1`)."""
    example = FORMATS["launch-configs"]["examples"][0].lstrip("\n")
    launch = model(log_of(tmp_path, example)).workers[0].launch
    assert (launch.node_rank, launch.nnodes, launch.min_nnodes, launch.gpus_per_node) == (1, 2, None, 2)
    assert (launch.master_addr, launch.master_port, launch.total_procs) == ("job-7f3a-worker-0", 29500, None)


def test_an_elastic_range_is_kept_as_a_launch_lines_min_max_and_c10d_names_no_node(tmp_path):
    """Synthetic (formats.toml `launch-configs` with min_nodes 1, max_nodes 4 and c10d rendezvous):
    nnodes is the most nodes, min_nnodes the fewest, as a launch line's `nnodes=1:4` says; c10d
    assigns group ranks itself, so `--node_rank` says nothing and no node rank is made up."""
    example = FORMATS["launch-configs"]["examples"][0].lstrip("\n")
    example = (example.replace("min_nodes        : 2", "min_nodes        : 1")
               .replace("max_nodes        : 2", "max_nodes        : 4")
               .replace("rdzv_backend     : static", "rdzv_backend     : c10d"))
    job = model(log_of(tmp_path, example))
    launch = job.workers[0].launch
    assert (launch.nnodes, launch.min_nnodes, launch.node_rank) == (4, 1, None)
    assert job.elastic


def test_a_result_flattened_onto_one_line_is_read_as_the_block(tmp_path):
    """Synthetic: a collector that joins a record's lines leaves the 1.13+ block on one line (the
    fields of formats.toml's `rendezvous-complete`, joined by spaces)."""
    block = FORMATS["rendezvous-complete"]["examples"][0].strip("\n").splitlines()
    joined = block[0] + " " + " ".join(text.strip() for text in block[1:])
    launch = model(log_of(tmp_path, joined + "\n")).workers[0].launch
    assert (launch.node_rank, launch.nnodes, launch.gpus_per_node, launch.first_rank) == (1, 2, 2, 2)


def test_the_rendezvous_round_signal_still_reads_the_lines_the_shape_reads(tmp_path):
    """Synthetic (formats.toml `rendezvous-complete`, 2.8+ prefix): the result's lines are both a
    shape and the round's world for the rendezvous-round signal."""
    example = FORMATS["rendezvous-complete"]["examples"][-1].lstrip("\n")
    worker = model(log_of(tmp_path, example)).workers[0]
    assert [h.rule_id for h in worker.hits].count(RENDEZVOUS_ROUND) == 2  # group_world_size, global_world_sizes
    assert worker.rounds[0].group_world_size == 2 and worker.rounds[0].global_world_size == 4


@pytest.mark.parametrize("line", [
    "group_rank=1 loss=0.3",                       # a script's own print: more than the field
    "epoch 3 local_ranks=[0, 1] done",
    "  nproc_per_node is 2",                       # no `key : value`
    "  rdzv_endpoint            : ",               # c10d without an endpoint prints nothing
    "Using nproc_per_node=2.",
])
def test_lines_that_only_mention_a_field_are_not_part_of_a_block(line):
    """Synthetic lines: a field line holds its field and nothing else."""
    assert parse_agent_block_line(line) is None


def test_torchelastics_own_result_block_gives_its_assigned_global_ranks(tmp_path):
    """Synthetic, built from the f-string of torchelastic's agent (the package torchrun grew from;
    a stored copy of its agent/server/api.py): `Result:` on a line of its own, then tab-indented
    `group_rank`, `group_world_size`, `rank stride` and `assigned global_ranks`; no local ranks
    and no world size are printed."""
    text = ("INFO 2021-03-01 10:00:00,000 [default] Rendezvous complete for workers.\nResult:\n"
            "\trestart_count=0\n\tgroup_rank=1\n\tgroup_world_size=2\n\trank stride=2\n"
            "\tassigned global_ranks=[2, 3]\n\tmaster_addr=job-7f3a-worker-0\n\tmaster_port=29500\n")
    launch = model(log_of(tmp_path, text)).workers[0].launch
    assert (launch.node_rank, launch.nnodes, launch.gpus_per_node, launch.first_rank, launch.total_procs) == \
        (1, 2, 2, 2, None)
