"""Other launchers' and frameworks' own rank and world lines (issue 28) are read as the env print
is: a process's rank, local rank and world size. Every log here is synthetic, built from the format
strings in each framework's source (no run of Lightning, Accelerate, DeepSpeed or Ray on GPUs was
possible here); the file each string comes from is named in the family's docstring, at the commit of
the public repository it was read at (tags are not stored with the copies that were searched).

A line only some scripts, releases or ranks print is never required: a missing one is a finding
only when processes other than rank 0 printed that very kind of line, and never for a rank of a
job that trained. Two processes claiming one global rank of one world are positive evidence.
"""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW
from logscan.catalogue import load_catalogue
from logscan.scan.events import TORCHRUN_ENV
from logscan.scan.lineparse import parse_accelerate_state, parse_deepspeed_launch, parse_rank_line
from logscan.scan.scanner import Scanner


def scan_text(tmp_path, text: str, name: str = "train.log"):
    log = tmp_path / name
    log.write_text(text)
    return Scanner(load_catalogue()).scan_file(str(log), name)


def report(run_cli, path) -> dict:
    return json.loads(run_cli("scan", path, "--format", "json", "--now", POST_MORTEM_NOW).stdout)


def rules_of(found: dict) -> list[str]:
    return [f["rule"] for f in found["findings"]]


# --- PyTorch Lightning ---------------------------------------------------------------------------
# `log.info(f"initializing ddp: GLOBAL_RANK: {global_rank}, MEMBER: {global_rank + 1}/{world_size}")`:
#   pytorch_lightning/plugins/training_type/ddp.py @ 1bae940 (Lightning-AI/pytorch-lightning, 1.x).
# `log.info(f"Initializing distributed: GLOBAL_RANK: {global_rank}, MEMBER: {global_rank + 1}/{world_size}")`:
#   src/lightning/fabric/utilities/distributed.py @ ffd8176 (2.x, _init_dist_connection).
# `_log.info(f"LOCAL_RANK: {local_rank} - CUDA_VISIBLE_DEVICES: [{devices}]")`:
#   pytorch_lightning/accelerators/gpu.py @ ee049f2 (1.x), src/lightning/pytorch/accelerators/cuda.py
#   @ eddba2f (2.x).

LIGHTNING_GLOBAL = {
    "1.x": "initializing ddp: GLOBAL_RANK: {rank}, MEMBER: {member}/{world}",
    # the 1.5 series (its IPU banner era), as real runs print it
    "1.5": "initializing distributed: GLOBAL_RANK: {rank}, MEMBER: {member}/{world}",
    "2.x": "Initializing distributed: GLOBAL_RANK: {rank}, MEMBER: {member}/{world}",
}
LIGHTNING_LOCAL = "LOCAL_RANK: {local} - CUDA_VISIBLE_DEVICES: [0,1,2,3]"
# Lightning's own logging format for its loggers (2.x) and a plain Python logging header (1.x)
LIGHTNING_HEADER = {
    "1.x": "INFO:pytorch_lightning.plugins.training_type.ddp:",
    "1.5": "INFO:pytorch_lightning.utilities.distributed:",
    "2.x": "[2024-05-02 10:00:01,100][lightning.fabric.utilities.distributed][INFO] - ",
}


@pytest.mark.parametrize("release", sorted(LIGHTNING_GLOBAL))
def test_lightnings_global_rank_line_names_rank_and_world(release):
    line = LIGHTNING_HEADER[release] + LIGHTNING_GLOBAL[release].format(rank=5, member=6, world=8)
    assert parse_rank_line(line) == ("Lightning GLOBAL_RANK", 5, None, 8)


def test_lightnings_local_rank_line_names_the_local_rank():
    assert parse_rank_line(LIGHTNING_LOCAL.format(local=1)) == ("Lightning LOCAL_RANK", None, 1, None)
    # The guide's env print is not one: `LOCAL_RANK= 1` has no ` - CUDA_VISIBLE_DEVICES: [`
    assert parse_rank_line("torchrun env: RANK= 5 LOCAL_RANK= 1 WORLD_SIZE= 8") is None


def lightning_node(release: str, ranks, world: int, locals_=range(4)) -> str:
    lines = ["GPU available: True (cuda), used: True", "TPU available: False, using: 0 TPU cores"]
    lines += [LIGHTNING_HEADER[release] + LIGHTNING_GLOBAL[release].format(rank=r, member=r + 1, world=world)
              for r in ranks]
    lines += [LIGHTNING_LOCAL.format(local=local) for local in locals_]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("release", sorted(LIGHTNING_GLOBAL))
def test_two_nodes_that_both_think_they_are_node_0_duplicate_ranks_and_miss_the_rest(run_cli, tmp_path, release):
    """Both nodes print GLOBAL_RANK 0-3 of a world of 8, and 4-7 never: a duplicate node rank."""
    for worker in (0, 1):
        (tmp_path / f"worker-{worker}").mkdir()
        (tmp_path / f"worker-{worker}" / "train.log").write_text(lightning_node(release, range(4), 8))
    found = report(run_cli, tmp_path)
    assert found["verdict"] == "FAILED"
    assert found["root_cause"]["rule"] == "duplicate-node-rank"
    message = found["root_cause"]["message"]
    assert "claim global ranks 0-3 of a world of 8" in message
    assert "ranks 4-7 never printed" in message


def test_two_nodes_with_their_own_ranks_are_no_duplicate(run_cli, tmp_path):
    for worker, ranks in ((0, range(4)), (1, range(4, 8))):
        (tmp_path / f"worker-{worker}").mkdir()
        (tmp_path / f"worker-{worker}" / "train.log").write_text(lightning_node("2.x", ranks, 8))
    assert "duplicate-node-rank" not in rules_of(report(run_cli, tmp_path))


def test_one_process_printing_both_lightning_lines_is_one_round(tmp_path):
    """A process prints a GLOBAL_RANK line (no local rank) and a LOCAL_RANK line (no rank): neither
    is a second process of its local rank, so no restart is read from them."""
    from logscan.model.build import _split_rounds
    from logscan.model.job import Worker

    scan = scan_text(tmp_path, lightning_node("1.x", range(4), 4))
    worker = Worker("train.log", None)
    worker.envs = scan.envs
    assert len(_split_rounds(worker, frozenset())) == 1
    assert sorted(e.rank for e in scan.envs if e.rank is not None) == [0, 1, 2, 3]
    assert sorted(e.local_rank for e in scan.envs if e.local_rank is not None) == [0, 1, 2, 3]


# --- Hugging Face Accelerate ---------------------------------------------------------------------
# PartialState/AcceleratorState.__repr__ in src/accelerate/state.py @ b3a1aed (huggingface/accelerate):
#   f"Distributed environment: {self.distributed_type}{('  Backend: ' + self.backend) if self.backend else ''}\n"
#   f"Num processes: {self.num_processes}\n" f"Process index: {self.process_index}\n"
#   f"Local process index: {self.local_process_index}\n" f"Device: {self.device}\n"
# The 0.x releases before PartialState print `Distributed environment: DistributedType.MULTI_GPU`
# (an Enum's str), no backend, and end with `Use FP16 precision: False`.

ACCELERATE_FIRST = {
    "PartialState": "Distributed environment: MULTI_GPU  Backend: nccl",
    "0.x": "Distributed environment: DistributedType.MULTI_GPU",
}


def accelerate_state(release: str, world: int, rank: int, local: int) -> list[str]:
    lines = [ACCELERATE_FIRST[release], f"Num processes: {world}", f"Process index: {rank}",
             f"Local process index: {local}", f"Device: cuda:{local}"]
    return lines + (["Use FP16 precision: False"] if release == "0.x" else ["Mixed precision type: fp16"])


@pytest.mark.parametrize("release", sorted(ACCELERATE_FIRST))
def test_accelerates_state_print_is_one_process_rank_line(tmp_path, release):
    # logged by `logger.info(accelerator.state, main_process_only=False)`: a header on the first line
    lines = accelerate_state(release, 8, 3, 1)
    lines[0] = "04/18/2024 10:00:00 - INFO - __main__ - " + lines[0]
    scan = scan_text(tmp_path, "\n".join(lines) + "\n")
    assert [(e.source, e.rank, e.local_rank, e.world_size) for e in scan.envs] == [("Accelerate state", 3, 1, 8)]
    assert scan.envs[0].where.line == 1


def test_accelerates_interleaved_state_prints_are_told_apart(tmp_path):
    """Two processes printing at once: each number fills the oldest print still missing it."""
    first, second = accelerate_state("PartialState", 4, 2, 0), accelerate_state("PartialState", 4, 3, 1)
    interleaved = [line for pair in zip(first, second) for line in pair]
    scan = scan_text(tmp_path, "\n".join(interleaved) + "\n")
    assert sorted((e.rank, e.local_rank, e.world_size) for e in scan.envs) == [(2, 0, 4), (3, 1, 4)]


def test_accelerates_number_lines_alone_are_nothing():
    assert parse_accelerate_state("Process index: 3") == ("RANK", 3)
    assert parse_accelerate_state("the Process index: 3 of the pool") is None


def test_accelerates_state_printed_on_the_main_process_only_requires_nothing_of_the_others(run_cli, tmp_path):
    """`print(accelerator.state)` under `if accelerator.is_main_process`: ranks 1-3 never print it,
    and that says nothing about them (no missing-rank)."""
    lines = ["DDP launch: nnodes=1 node_rank=0 gpus_per_node=4 total_procs=4 master=127.0.0.1:29500",
             *accelerate_state("PartialState", 4, 0, 0)]
    (tmp_path / "launch_ddp.log").write_text("\n".join(lines) + "\n")
    assert "missing-rank" not in rules_of(report(run_cli, tmp_path))


# --- missing ranks, on positive evidence only ---------------------------------------------------

def launched_lightning(ranks, world=4, progress=False) -> str:
    lines = [f"DDP launch: nnodes=1 node_rank=0 gpus_per_node={world} total_procs={world} master=127.0.0.1:29500"]
    lines += [LIGHTNING_GLOBAL["2.x"].format(rank=r, member=r + 1, world=world) for r in ranks]
    if progress:
        lines.append("Epoch 0:  50%|#####     | 5/10 [00:01<00:01,  4.00it/s, loss=0.693]")
    return "\n".join(lines) + "\n"


def test_a_rank_whose_siblings_printed_lightnings_line_and_it_did_not_is_missing(run_cli, tmp_path):
    (tmp_path / "launch_ddp.log").write_text(launched_lightning([0, 1, 3]))
    found = report(run_cli, tmp_path)
    missing = [f for f in found["findings"] if f["rule"] == "missing-rank"]
    assert [f["rank"] for f in missing] == [2]
    assert "Lightning GLOBAL_RANK" in missing[0]["message"]


def test_a_rank_of_a_job_that_trained_is_never_missing(run_cli, tmp_path):
    (tmp_path / "launch_ddp.log").write_text(launched_lightning([0, 1, 3], progress=True))
    assert "missing-rank" not in rules_of(report(run_cli, tmp_path))


def test_a_line_seen_from_rank_0_only_requires_nothing(run_cli, tmp_path):
    (tmp_path / "launch_ddp.log").write_text(launched_lightning([0]))
    assert "missing-rank" not in rules_of(report(run_cli, tmp_path))


# --- DeepSpeed -----------------------------------------------------------------------------------
# deepspeed/launcher/launch.py @ 7f32433 (microsoft/DeepSpeed), main():
#   logger.info(f"WORLD INFO DICT: {world_info}")
#   logger.info(f"nnodes={args.nnodes}, num_local_procs={num_local_procs}, node_rank={args.node_rank}")
#   logger.info(f"global_rank_mapping={global_rank_mapping}"); logger.info(f"dist_world_size={dist_world_size}")
# deepspeed/comm/comm.py, mpi_discovery (0.6 on; deepspeed/utils/distributed.py before), logged as
#   "Discovered MPI settings of world_rank={}, local_rank={}, world_size={}, master_addr={}, master_port={}"

DS = "[2023-04-14 13:10:01,101] [INFO] "


def deepspeed_launcher(node_rank: int, hosts=("worker-0", "worker-1"), procs=2) -> str:
    world = {h: list(range(procs)) for h in hosts}
    mapping, rank = {}, 0
    for host in hosts:
        mapping[host] = list(range(rank, rank + procs))
        rank += procs
    return (f"{DS}[launch.py:145:main] WORLD INFO DICT: {world}\n"
            f"{DS}[launch.py:151:main] nnodes={len(hosts)}, num_local_procs={procs}, node_rank={node_rank}\n"
            f"{DS}[launch.py:162:main] global_rank_mapping=defaultdict(<class 'list'>, {mapping})\n"
            f"{DS}[launch.py:163:main] dist_world_size={rank}\n"
            f"{DS}[launch.py:165:main] Setting CUDA_VISIBLE_DEVICES=0,1\n")


def test_deepspeeds_launcher_lines_are_the_nodes_launch_line(tmp_path):
    scan = scan_text(tmp_path, deepspeed_launcher(1))
    [launch] = scan.launches
    assert (launch.nnodes, launch.node_rank, launch.gpus_per_node, launch.total_procs) == (2, 1, 2, 4)
    assert parse_deepspeed_launch("dist_world_size=4") == 4


@pytest.mark.parametrize("line, expected", [
    (f"{DS}[comm.py:702:mpi_discovery] Discovered MPI settings of world_rank=5, local_rank=1, world_size=8, "
     "master_addr=10.140.57.89, master_port=29500", ("DeepSpeed MPI settings", 5, 1, 8)),
    ("Discovered MPI settings of world_rank=0, local_rank=0, world_size=1, master_addr=172.19.37.47, "
     "master_port=29500", ("DeepSpeed MPI settings", 0, 0, 1)),
])
def test_deepspeeds_mpi_discovery_names_the_process(line, expected):
    assert parse_rank_line(line) == expected


def test_two_deepspeed_launchers_on_node_rank_0_are_a_duplicate_node_rank(run_cli, tmp_path):
    for worker in (0, 1):
        (tmp_path / f"worker-{worker}").mkdir()
        (tmp_path / f"worker-{worker}" / "ds.log").write_text(deepspeed_launcher(0))
    found = report(run_cli, tmp_path)
    assert found["root_cause"]["rule"] == "duplicate-node-rank"
    assert "claim node_rank 0" in found["root_cause"]["message"]


def test_mpi_ranks_outside_the_launchers_world_are_a_world_size_mismatch(run_cli, tmp_path):
    """The launcher started 2 x 2 processes; its processes say they are in a world of 8."""
    text = deepspeed_launcher(0) + "".join(
        f"{DS}[comm.py:702:mpi_discovery] Discovered MPI settings of world_rank={r}, local_rank={r}, "
        f"world_size=8, master_addr=10.0.0.1, master_port=29500\n" for r in range(2))
    (tmp_path / "ds.log").write_text(text)
    found = report(run_cli, tmp_path)
    assert any(f["rule"] == "world-size-mismatch" and "WORLD_SIZE=8" in f["message"] for f in found["findings"])


# --- Ray Train -----------------------------------------------------------------------------------
# ray/train/torch/config.py, _setup_torch_process_group (ray-project/ray): `logger.info(f"Setting up
# process group for: {init_method} [rank={world_rank}, world_size={world_size}]")` on every rank
# (to about 2.5); later releases log it at INFO on world rank 0 only, at DEBUG elsewhere. Ray's
# worker prefix `(RayTrainWorker pid=2283, ip=10.0.21.161) ` names a pid, not a rank.

@pytest.mark.parametrize("line, expected", [
    ("(RayTrainWorker pid=2283, ip=10.0.21.161) Setting up process group for: env:// [rank=0, world_size=2]",
     (0, None, 2)),
    ("(RayTrainWorker pid=327, ip=172.20.121.132) Setting up process group for: env:// [rank=3, world_size=4]",
     (3, None, 4)),
])
def test_ray_trains_process_group_line_names_the_world_rank(tmp_path, line, expected):
    [env] = scan_text(tmp_path, line + "\n").envs
    assert (env.source, env.rank, env.local_rank, env.world_size) == ("Ray Train process group", *expected)


# --- launchers whose prefix names the rank -------------------------------------------------------
# `mpirun --tag-output` (OpenMPI, orte/mca/iof: `[jobid,rank]<stdout>:`) names the MPI rank, which is
# the process's global rank when mpirun starts the training processes itself: read already by
# logscan.scan.prefixes; a rank line behind it is still read.

@pytest.mark.parametrize("prefix, rank", [("[1,3]<stdout>:", 3), ("[14,0]<stderr>:", 0)])
def test_a_rank_line_behind_mpiruns_tag_keeps_the_tags_rank(tmp_path, prefix, rank):
    line = (f"{prefix}Discovered MPI settings of world_rank={rank}, local_rank={rank}, world_size=4, "
            "master_addr=10.0.0.1, master_port=29500")
    [env] = scan_text(tmp_path, line + "\n").envs
    assert (env.where.rank, env.rank) == (rank, rank)


def test_the_guides_env_print_is_still_the_torchrun_kind(tmp_path):
    [env] = scan_text(tmp_path, "torchrun env: RANK= 5 LOCAL_RANK= 1 WORLD_SIZE= 8\n").envs
    assert (env.source, env.rank, env.local_rank, env.world_size) == (TORCHRUN_ENV, 5, 1, 8)


# --- two nodes that took one node rank, in ONE log -----------------------------------------------
# A log both nodes append to (one path on a shared file system) interleaves their prints; a paste
# of both nodes' output puts one block after the other. Both are synthetic here, built from the
# format strings above; the restart lines come from a real torchrun run (restart-loop-prod).

def lightning_ranks(release: str, ranks, world: int = 8) -> list[str]:
    return [LIGHTNING_HEADER[release] + LIGHTNING_GLOBAL[release].format(rank=r, member=r + 1, world=world)
            for r in ranks]


def two_nodes_in_one_log(release: str, ranks, layout: str, between: list[str] = ()) -> str:
    first, second = lightning_ranks(release, ranks), lightning_ranks(release, ranks)
    if layout == "shared":
        lines = [line for pair in zip(first, second) for line in pair]
    else:  # "pasted": one node's lines, then the other's (or one run, then the next)
        lines = ["GPU available: True (cuda), used: True", *first, *between,
                 "GPU available: True (cuda), used: True", *second]
    return "\n".join(lines) + "\n"


def one_log_report(run_cli, tmp_path, text: str) -> dict:
    (tmp_path / "train.log").write_text(text)
    return report(run_cli, tmp_path)


@pytest.mark.parametrize("layout", ["pasted", "shared"])
@pytest.mark.parametrize("release", sorted(LIGHTNING_GLOBAL))
def test_one_log_with_two_nodes_that_both_think_they_are_node_0_is_a_duplicate(run_cli, tmp_path, release, layout):
    """Ranks 0-3 printed twice with nothing between, `MEMBER: k/8`, ranks 4-7 never."""
    found = one_log_report(run_cli, tmp_path, two_nodes_in_one_log(release, range(4), layout))
    assert found["verdict"] == "FAILED"
    cause = found["root_cause"]
    assert cause["rule"] == "duplicate-node-rank"
    assert "global ranks 0-3 of a world of 8 (their Lightning GLOBAL_RANK line twice" in cause["message"]
    assert "ranks 4-7 never printed theirs" in cause["message"]
    assert "NODE_RANK" in cause["hint"]
    assert [e["text"] for e in cause["evidence"]] == lightning_ranks(release, [0]) * 2


@pytest.mark.parametrize("layout, duplicate", [("shared", True), ("pasted", False)])
def test_a_node_rank_other_than_0_taken_twice_is_told_only_by_interleaved_prints(run_cli, tmp_path, layout, duplicate):
    """Ranks 4-7 twice: printed at once (interleaved) only two processes each can do; one block
    after the other is as well two runs of node 1, whose processes log nothing else."""
    found = one_log_report(run_cli, tmp_path, two_nodes_in_one_log("2.x", range(4, 8), layout))
    assert ("duplicate-node-rank" in rules_of(found)) is duplicate
    if duplicate:
        assert "ranks 0-3 never printed theirs" in found["root_cause"]["message"]


def test_deepspeeds_mpi_discovery_printed_twice_in_one_log_is_a_later_run(run_cli, tmp_path):
    """mpirun gives every process its world rank itself: no node rank to take twice."""
    def discovered(rank):
        return (f"{DS}[comm.py:702:mpi_discovery] Discovered MPI settings of world_rank={rank}, "
                f"local_rank={rank}, world_size=4, master_addr=10.0.0.1, master_port=29500")
    found = one_log_report(run_cli, tmp_path, "\n".join(discovered(r) for r in (0, 0, 1, 1)) + "\n")
    assert "duplicate-node-rank" not in rules_of(found)


@pytest.mark.parametrize("layout", ["pasted", "shared"])
def test_the_guides_env_print_twice_in_one_log_is_a_restart(run_cli, tmp_path, layout):
    """The guide's env print (`torchrun env: RANK= r LOCAL_RANK= l WORLD_SIZE= w`, the format of
    the real samples) twice with nothing between: torchrun starts no process for two agents of
    one node rank, so this is a restart whose torchrun lines went to another stream (stderr)."""
    prints = [f"torchrun env: RANK= {r} LOCAL_RANK= {r} WORLD_SIZE= 4" for r in (0, 1)]
    lines = [p for p in prints for _ in (0, 1)] if layout == "shared" else prints * 2
    assert "duplicate-node-rank" not in rules_of(one_log_report(run_cli, tmp_path, "\n".join(lines) + "\n"))


def torchruns_restart_lines() -> list[str]:
    """torchrun's own lines between a failed attempt and the next (a real run's)."""
    from conftest import SAMPLES

    lines = (SAMPLES / "restart-loop-prod" / "worker-0" / "launch_ddp.log").read_text().splitlines()
    restart = next(i for i, line in enumerate(lines) if "attempts left; will restart" in line)
    started = next(i for i in range(restart, len(lines)) if "Starting worker group" in lines[i])
    return lines[restart - 2:started + 1]


RESTARTS = {
    "torchrun restarted the group": torchruns_restart_lines(),
    # loops/fit_loop.py, rank_zero_info(f"`Trainer.fit` stopped: `max_epochs={self.max_epochs!r}` reached.")
    "the first run finished": ["`Trainer.fit` stopped: `max_epochs=1` reached."],
    # The first run trained: Lightning's progress bar (tqdm's format)
    "the first run trained": ["Epoch 0: 100%|##########| 10/10 [00:01<00:00,  8.00it/s, v_num=0]"],
    # The first run crashed: Python's traceback of an uncaught exception
    "the first run crashed": ["Traceback (most recent call last):", '  File "train.py", line 40, in <module>',
                              "RuntimeError: CUDA error: an illegal memory access was encountered"],
}


@pytest.mark.parametrize("between", sorted(RESTARTS))
def test_ranks_printed_again_after_a_restart_or_a_runs_end_are_no_duplicate(run_cli, tmp_path, between):
    found = one_log_report(run_cli, tmp_path, two_nodes_in_one_log("1.x", range(4), "pasted", RESTARTS[between]))
    assert "duplicate-node-rank" not in rules_of(found)


@pytest.mark.parametrize("second_at, duplicate", [("10:00:04", True), ("10:41:07", False)])
def test_a_repeat_minutes_later_is_a_later_run(run_cli, tmp_path, second_at, duplicate):
    """Python logging's `%(asctime)s - %(levelname)s - ` header gives each print a time: two nodes
    start within seconds of each other, a second run after the first one's start-up at least."""
    def stamped(at, ranks):
        return [f"2024-05-02 {at},100 - INFO - " + line for line in lightning_ranks("2.x", ranks)]
    text = "\n".join(stamped("10:00:01", range(4)) + stamped(second_at, range(4))) + "\n"
    assert ("duplicate-node-rank" in rules_of(one_log_report(run_cli, tmp_path, text))) is duplicate


@pytest.mark.parametrize("first, second", [
    (range(8), range(8)),          # the whole world, twice: two runs of a world that formed
    (range(1), range(1)),          # rank 0 alone: some scripts print on rank 0 only
    (range(7), range(4)),          # 0-3 twice but only rank 7 missing: no node's worth is
])
def test_a_repeat_that_leaves_no_node_rank_untaken_is_no_duplicate(run_cli, tmp_path, first, second):
    text = "\n".join(lightning_ranks("2.x", first) + lightning_ranks("2.x", second)) + "\n"
    assert "duplicate-node-rank" not in rules_of(one_log_report(run_cli, tmp_path, text))


def test_a_job_that_trained_elsewhere_had_its_whole_world(run_cli, tmp_path):
    """The repeated ranks' log has nothing between them, but another Worker's log shows training
    (and no rank line): DDP steps together, so every rank of the world ran."""
    progress = "Epoch 0:  50%|#####     | 5/10 [00:01<00:01,  4.00it/s, loss=0.693]\n"
    for worker, text in (("0", two_nodes_in_one_log("2.x", range(4), "pasted")), ("1", progress)):
        (tmp_path / f"worker-{worker}").mkdir()
        (tmp_path / f"worker-{worker}" / "train.log").write_text(text)
    assert "duplicate-node-rank" not in rules_of(report(run_cli, tmp_path))


def test_accelerates_state_printed_twice_is_no_duplicate(run_cli, tmp_path):
    """Accelerate prints its state after init_process_group, where rank 0 of a world missing ranks
    stays: a repeat that holds rank 0 is a second run's."""
    lines = [line for rank in (0, 1, 0, 1) for line in accelerate_state("PartialState", 8, rank, rank)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    scan = scan_text(tmp_path, "\n".join(lines) + "\n", "other.log")
    assert [e.rank for e in scan.envs] == [0, 1, 0, 1]
    assert "duplicate-node-rank" not in rules_of(report(run_cli, tmp_path / "train.log"))


@pytest.mark.parametrize("sample, logs", [
    # one process's own file (torchrun --log-dir), a second run appended to it
    ("healthy-log-dir", ["worker-1/torchrun_logs/none_ilf_nir1/attempt_0/1/stdout.log"] * 2),
    # node 1's two processes' files, twice: two runs of node 1 that print nothing but their env line
    ("healthy-log-dir", ["worker-1/torchrun_logs/none_ilf_nir1/attempt_0/0/stdout.log",
                         "worker-1/torchrun_logs/none_ilf_nir1/attempt_0/1/stdout.log"] * 2),
    # a node's launch log with its restarts, appended to itself
    ("restart-loop-prod", ["worker-0/launch_ddp.log"] * 2),
    ("healthy-2x2", ["worker-1/launch_ddp.log"] * 2),
])
def test_real_logs_of_one_node_run_twice_into_one_log_are_no_duplicate(run_cli, tmp_path, sample, logs):
    """Real runs' logs, concatenated as a second run appending to the same log would."""
    from conftest import SAMPLES

    text = "".join((SAMPLES / sample / log).read_text() for log in logs)
    assert "duplicate-node-rank" not in rules_of(one_log_report(run_cli, tmp_path, text))


def a_real_line(sample: str, log: str, contains: str) -> str:
    from conftest import SAMPLES

    return next(line for line in (SAMPLES / sample / log).read_text().splitlines() if contains in line)


@pytest.mark.parametrize("before, after", [
    # launched elastic (the guide's launch line with torchrun's `--nnodes=MIN:MAX`): a world that
    # re-formed gives its ranks out again
    (["DDP launch: nnodes=1:2 node_rank=0 gpus_per_node=4 total_procs=8 master=10.0.0.1:29500"], []),
    # torchrun's word, later in the log, that the group succeeded (a real run's line)
    ([], [a_real_line("healthy-2x2-prod-quiet-info", "worker-0/launch_ddp.log",
                       "worker group successfully finished")]),
])
def test_a_world_that_may_re_form_or_that_succeeded_is_no_duplicate(run_cli, tmp_path, before, after):
    text = "\n".join(before + two_nodes_in_one_log("2.x", range(4), "pasted").splitlines() + after) + "\n"
    assert "duplicate-node-rank" not in rules_of(one_log_report(run_cli, tmp_path, text))


@pytest.mark.parametrize("labels", [("0: ", "1: "), (" 3: ", "12: ")])
def test_a_node_rank_taken_twice_in_blocks_under_sruns_task_labels_is_a_duplicate(run_cli, tmp_path, labels):
    """srun --label puts each task's id before its lines (`%*d: `, padded to the widest id): two blocks
    of one rank's line under two labels are two tasks side by side, never one run after another."""
    first, second = labels
    lines = ([first + line for line in lightning_ranks("2.x", range(1, 4))]
             + [second + line for line in lightning_ranks("2.x", range(1, 4))])
    found = one_log_report(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert found["root_cause"]["rule"] == "duplicate-node-rank"


def test_one_tasks_rank_lines_printed_twice_in_blocks_is_no_duplicate(run_cli, tmp_path):
    """The same label on both blocks: one task's two runs, as without labels."""
    lines = ["0: " + line for line in lightning_ranks("2.x", range(1, 4)) * 2]
    found = one_log_report(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert "duplicate-node-rank" not in rules_of(found)


# absl's logging format (absl/logging/__init__.py, PythonFormatter: glog's `I%m%d %H:%M:%S.%f %thread file:line] `)
ABSL_HEADER = "I0411 01:28:10.{micro:06d} 140656298329920 distributed.py:244] "


@pytest.mark.parametrize("nodes", [1, 2])
def test_a_process_logging_its_rank_line_through_two_handlers_is_one_process(run_cli, tmp_path, nodes):
    """A process whose rank line goes out through Python's root handler (`INFO: `) and absl's too
    prints it twice, once in each dress: one process. Two nodes on one node rank print each dress
    twice. Synthetic lines from Lightning's and absl's formats."""
    lines = []
    for rank in range(4):
        body = LIGHTNING_GLOBAL["2.x"].format(rank=rank, member=rank + 1, world=8)
        lines += [f"INFO: {body}", ABSL_HEADER.format(micro=rank) + body] * nodes
    found = one_log_report(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert ("duplicate-node-rank" in rules_of(found)) is (nodes == 2)
    assert (found["verdict"] == "FAILED") is (nodes == 2)
