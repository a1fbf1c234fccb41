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
    "2.x": "Initializing distributed: GLOBAL_RANK: {rank}, MEMBER: {member}/{world}",
}
LIGHTNING_LOCAL = "LOCAL_RANK: {local} - CUDA_VISIBLE_DEVICES: [0,1,2,3]"
# Lightning's own logging format for its loggers (2.x) and a plain Python logging header (1.x)
LIGHTNING_HEADER = {
    "1.x": "INFO:pytorch_lightning.plugins.training_type.ddp:",
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
