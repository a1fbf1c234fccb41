#!/usr/bin/env python3
"""Regenerate the logscan sample logs by really running torchrun.

Each scenario simulates a DDP job of N Workers on this machine: every Worker is its own launch
command (the platform guide's, or a variant the scenario names), started concurrently under
`unshare --uts --mount` with its own hostname, its own platform variables (MASTER_ADDR=127.0.0.1,
MASTER_PORT, WORLD_SIZE = number of Workers, RANK = Worker index) and its own `nvidia-smi` stub
GPU count. Training runs with gloo on CPU.

Usage:
    python3 generate.py              # all scenarios
    python3 generate.py NAME ...     # only these
    python3 generate.py --list

Environment:
    TORCH_VENV   venv with torch==2.13.0 (default /work/torchvenv); its bin/ goes first on PATH.

Needs root (unshare, mount --bind of a per-Worker /etc/hosts, sethostname).
"""
from __future__ import annotations

import datetime as _dt
import gzip
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

GEN_DIR = Path(__file__).resolve().parent
SAMPLES_DIR = GEN_DIR.parent
TORCH_VENV = Path(os.environ.get("TORCH_VENV", "/work/torchvenv"))

# The guide's start-up command (AIStudio "启动命令"), with TRAIN_SCRIPT/OUTPUT_DIR passed in the environment.
GUIDE_CMD = """set -euo pipefail
mkdir -p "$OUTPUT_DIR"
bash "$GEN_DIR/launch_ddp.sh" > >(tee -i "$OUTPUT_DIR/launch_ddp.log") 2>&1
"""

# Same, with every line stamped as `kubectl logs --timestamps` shows it (RFC 3339 UTC, nanoseconds).
STAMPED_CMD = """set -euo pipefail
mkdir -p "$OUTPUT_DIR"
bash "$GEN_DIR/launch_ddp.sh" > >(python3 -u "$GEN_DIR/stamp.py" | tee -i "$OUTPUT_DIR/launch_ddp.log") 2>&1
"""

# Pipe into tee without pipefail: the pipeline's status is tee's.
PIPE_TEE_CMD = """mkdir -p "$OUTPUT_DIR"
bash "$GEN_DIR/launch_ddp.sh" 2>&1 | tee "$OUTPUT_DIR/launch_ddp.log"
"""

# Only stdout goes into the pipe; stderr (tracebacks, torchrun's logging) reaches the console only.
PLAIN_TEE_CMD = """mkdir -p "$OUTPUT_DIR"
bash "$GEN_DIR/launch_ddp.sh" | tee "$OUTPUT_DIR/launch_ddp.log"
"""

# The guide's tee, then an upload step and a pause; the last command's status is the command's.
UPLOAD_SLEEP_CMD = """mkdir -p "$OUTPUT_DIR"
bash "$GEN_DIR/launch_ddp.sh" > >(tee -i "$OUTPUT_DIR/launch_ddp.log") 2>&1
mkdir -p "$UPLOAD_DIR"
cp -r "$OUTPUT_DIR" "$UPLOAD_DIR/"
sleep 2
"""

# The platform's WORLD_SIZE saved as NNODES by the start-up command, for the wrapper to re-export.
NNODES_EXPORT_CMD = """set -euo pipefail
export NNODES=$WORLD_SIZE
mkdir -p "$OUTPUT_DIR"
bash "$GEN_DIR/launch_ddp.sh" > >(tee -i "$OUTPUT_DIR/launch_ddp.log") 2>&1
"""

# Inside the Worker's own UTS and mount namespaces: set the hostname, give it an /etc/hosts
# entry (as a pod has for its own name), then run the start-up command.
WRAP = 'hostname "$1" && mount --bind "$2" /etc/hosts && exec bash -c "$3"'


@dataclass
class Worker:
    rank: str | None  # platform RANK; None = not injected
    gpus: int = 2
    log: str = ""  # path of its log inside the scenario dir
    env: dict = field(default_factory=dict)
    delay: float = 0.0  # seconds after the scenario start
    port: int | None = None  # MASTER_PORT override


@dataclass
class Scenario:
    name: str
    short: str
    layout: str
    workers: list
    description: str
    expect: dict
    nnodes: int | None = None  # platform WORLD_SIZE; default = number of Workers
    env: dict = field(default_factory=dict)  # for every Worker
    cmd: str = GUIDE_CMD
    limit: int = 150  # outer safety-net timeout per Worker (seconds)
    observed: str = ""
    outputs_in_sample: bool = False  # OUTPUT_DIR = the Worker's sample dir (keeps checkpoint.pt)
    shared_output: bool = False  # all Workers share one OUTPUT_DIR (shared storage)
    gzip_logs: tuple = ()  # log paths to gzip after the run (kept under the same name)
    snapshot_after: float | None = None  # copy logs after this many seconds, then kill (job still running)
    squat_port: bool = False  # something listens on MASTER_PORT before the Workers start
    train_script: str = "train.py"
    check: object = None  # callable(logs: dict[str, bytes]) -> str | None (problem), retried
    tries: int = 2
    keep_files: tuple = ()  # extra files to keep: (src relative to Worker 0 OUTPUT_DIR, dst in sample)


def _interleaved(logs):
    for data in logs.values():
        if re.search(rb"torchrun env:\s*torchrun env:", data):
            return None
    return "no interleaved 'torchrun env:' print"


def _has(*needles):
    def check(logs):
        blob = b"".join(logs.values())
        missing = [n for n in needles if n.encode() not in blob]
        return f"missing {missing}" if missing else None

    return check


def _all(*checks):
    def check(logs):
        for c in checks:
            problem = c(logs)
            if problem:
                return problem
        return None

    return check


def workers(n, gpus=2, log="worker-{i}/launch_ddp.log", **kw):
    return [Worker(rank=str(i), gpus=gpus, log=log.format(i=i), **kw) for i in range(n)]


def exp(rules, root=None, node_rank=None, rank=None, healthy=None, first=None, cause=None):
    """The diagnosis a correct tool gives.

    first: where the first failure shows; defaults to the root cause's location; "none" when nothing
    failed. cause: the crash cause class, kept in root_cause.
    """
    if healthy is None:
        healthy = not any(r != "log-collision" for r in rules)
    d = {"healthy": healthy, "rules": rules}
    if root is None:
        d["root_cause"] = None
        d["first_failure"] = None
    else:
        d["root_cause"] = {"rule": root, "node_rank": node_rank, "rank": rank}
        if cause:
            d["root_cause"]["cause"] = cause
        if first == "none":
            d["first_failure"] = None
        else:
            d["first_failure"] = first if first is not None else {"node_rank": node_rank, "rank": rank}
    return d


SCENARIOS: list[Scenario] = []


def scenario(**kw):
    SCENARIOS.append(Scenario(**kw))


# ---------------------------------------------------------------- Batch A
scenario(
    name="healthy-2x2", short="h22", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "TRAIN_STEPS": "30", "SAVE_CHECKPOINT": "1"},
    outputs_in_sample=True, check=_has("training finished"),
    description="2 Workers x 2 GPUs, 30 steps with plain `step i/N loss` lines from rank 0; rank 0 saves "
    "worker-0/checkpoint.pt with torch.save (a non-log file in the sample). Training finished on all ranks.",
    expect=exp([]),
)
scenario(
    name="healthy-timestamps", short="hts", layout="logs/<hostname>.log",
    workers=workers(2, log="logs/job-hts-worker-{i}.log"),
    env={"LOOP_STYLE": "logging", "TRAIN_STEPS": "30", "PYTHONUNBUFFERED": "1"},
    cmd=STAMPED_CMD,
    check=_all(_interleaved, _has("training finished")), tries=6,
    description="2 Workers x 2 GPUs with PYTHONUNBUFFERED=1; every line is stamped live like "
    "`kubectl logs --timestamps` (RFC 3339 UTC with nanoseconds) before tee; progress via python logging. "
    "Training finished.",
    expect=exp([]),
)
scenario(
    name="healthy-gzip", short="hgz", layout="launch_ddp.N.log[.gz] (gzip, detect by magic bytes)",
    workers=[Worker(rank="0", log="launch_ddp.0.log.gz"), Worker(rank="1", log="launch_ddp.1.log")],
    env={"LOOP_STYLE": "hf", "TRAIN_STEPS": "30"},
    gzip_logs=("launch_ddp.0.log.gz", "launch_ddp.1.log"), check=_has("training finished", "'grad_norm'"),
    description="2 Workers x 2 GPUs, HF-Trainer-style dict progress lines. Both logs were gzipped after "
    "the run; launch_ddp.1.log is gzip too although its name has no .gz. Training finished.",
    expect=exp([]),
)
scenario(
    name="healthy-tee-1x4", short="tee", layout="launch_ddp.log",
    workers=[Worker(rank="0", gpus=4, log="launch_ddp.log")],
    env={"LOOP_STYLE": "tqdm", "TRAIN_STEPS": "30", "STEP_SLEEP": "0.1", "PET_TEE": "3"},
    check=_has("[default3]:torchrun env:", "training finished"),
    description="1 Worker x 4 GPUs, torchrun --tee 3 (PET_TEE=3) so every child line carries a "
    "`[defaultN]:` prefix; rank 0 shows a tqdm progress bar redrawn with \\r. Training finished.",
    expect=exp([]),
)
scenario(
    name="missing-worker", short="mw", layout="worker-N/launch_ddp.log",
    nnodes=3, workers=workers(2),
    env={"LOOP_STYLE": "plain"},
    description="Platform WORLD_SIZE=3 (nnodes=3) but only Workers 0 and 1 were started; Worker 2 never "
    "ran. Both waited in torchrun's static rendezvous and timed out (PET_RDZV_CONF=timeout=20).",
    expect=exp(["missing-worker", "hang-in-rendezvous"], root="missing-worker", node_rank=2),
    check=_has("2/3 clients joined"),
)
scenario(
    name="duplicate-node-rank", short="dnr", layout="worker-N/launch_ddp.log",
    nnodes=3,
    workers=[Worker(rank="0", log="worker-0/launch_ddp.log"), Worker(rank="1", log="worker-1/launch_ddp.log"),
             Worker(rank="1", log="worker-2/launch_ddp.log")],
    env={"LOOP_STYLE": "plain"},
    description="nnodes=3 with platform RANK=0,1,1: two Workers (worker-1, worker-2) claim node_rank 1 "
    "and node_rank 2 is absent.",
    expect=exp(["duplicate-node-rank", "missing-worker", "hang-in-rendezvous"], root="duplicate-node-rank", node_rank=1),
    check=_has("torchelastic/role_info"),
)
scenario(
    name="launch-mismatch", short="lm", layout="worker-N/launch_ddp.log",
    workers=[Worker(rank="0", log="worker-0/launch_ddp.log"),
             Worker(rank="1", log="worker-1/launch_ddp.log", port=-1)],
    env={"LOOP_STYLE": "plain"},
    description="2 Workers x 2 GPUs; Worker 1 was given a different MASTER_PORT than Worker 0, so it "
    "could not reach the master's store and Worker 0 waited for it; both timed out in rendezvous.",
    expect=exp(["launch-mismatch", "hang-in-rendezvous"], root="launch-mismatch", node_rank=1),
    check=_has("1/2 clients joined"),
)
scenario(
    name="gpu-count-mismatch", short="gcm", layout="worker-N/launch_ddp.log",
    workers=[Worker(rank="0", gpus=2, log="worker-0/launch_ddp.log"),
             Worker(rank="1", gpus=1, log="worker-1/launch_ddp.log")],
    env={"LOOP_STYLE": "plain", "TRAIN_STEPS": "20"},
    description="Worker 0 has 2 GPUs and Worker 1 has 1; each prints its own total_procs (4 and 2) while "
    "torchrun forms a world of 3 processes.",
    expect=exp(["gpu-count-mismatch", "world-size-mismatch"], root="gpu-count-mismatch", node_rank=None, first="none"),
    check=_has("WORLD_SIZE= 3", "training finished"),
)
scenario(
    name="launch-env-missing", short="lem", layout="launch_ddp.N.log",
    workers=[Worker(rank="0", log="launch_ddp.0.log"), Worker(rank=None, log="launch_ddp.1.log")],
    env={"LOOP_STYLE": "plain"},
    description="Worker 1 had no platform RANK; launch_ddp.sh stopped at ${RANK:?platform RANK is required} "
    "before torchrun. Worker 0 waited in rendezvous and timed out.",
    expect=exp(["launch-env-missing", "hang-in-rendezvous"], root="launch-env-missing", node_rank=None),
    check=_has("platform RANK is required", "1/2 clients joined"),
)
scenario(
    name="world-size-leak", short="wsl", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain"},
    cmd=NNODES_EXPORT_CMD, train_script="train_entry.py", limit=400,
    description="The start-up command saves the platform WORLD_SIZE as NNODES and TRAIN_SCRIPT is a "
    "wrapper (train_entry.py) that re-exports WORLD_SIZE=$NNODES before exec'ing train.py, so the "
    "training processes run with WORLD_SIZE=2 instead of 4.",
    expect=exp(["world-size-mismatch", "crash-before-first-batch"], root="world-size-mismatch", node_rank=None,
               first={"node_rank": 1, "rank": 2}),
    check=_has("rank < size", "WORLD_SIZE= 2"),
)
scenario(
    name="log-collision", short="lc", layout="launch_ddp.log (shared by both Workers)",
    workers=workers(2, log="launch_ddp.log"),
    env={"LOOP_STYLE": "plain", "TRAIN_STEPS": "30"},
    shared_output=True,
    description="2 Workers x 2 GPUs with the same OUTPUT_DIR on shared storage, so both tee -i into the "
    "same launch_ddp.log (each opened it with truncation and wrote at its own offset).",
    expect=exp(["log-collision"]),
)

# ---------------------------------------------------------------- Batch B
scenario(
    name="import-error-one-rank", short="ie", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "import", "FAIL_RANKS": "3"},
    description="Global rank 3 (Worker 1, local rank 1) imports a package the image lacks (flash_attn) "
    "before its env print and dies with ModuleNotFoundError; the other ranks then fail or wait.",
    expect=exp(["crash-before-first-batch", "missing-rank"], root="crash-before-first-batch", node_rank=1, rank=3,
               cause="missing-dependency"),
    check=_has("No module named 'flash_attn'"),
)
scenario(
    name="missing-data-all-ranks", short="md", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "data-path"},
    description="Every rank opens its data shard under /mnt/public/project-a/data/train and raises "
    "FileNotFoundError before the first batch.",
    expect=exp(["crash-before-first-batch"], root="crash-before-first-batch", cause="data-path"),
    check=_has("FileNotFoundError"),
)
scenario(
    name="env-var-keyerror", short="ek", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "env-key"},
    description="Every rank reads os.environ[\"DATA_ROOT\"], which is not set, and raises KeyError before "
    "the first batch.",
    expect=exp(["crash-before-first-batch"], root="crash-before-first-batch", cause="env-var"),
    check=_has("KeyError: 'DATA_ROOT'"),
)
scenario(
    name="collate-error", short="ce", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "collate", "FAIL_RANKS": "1"},
    description="On rank 1 the DataLoader (num_workers=2) uses a collate_fn that calls torch.tensor on "
    "unpadded token lists of different lengths; ValueError in the DataLoader worker process, re-raised "
    "in the main process before the first batch.",
    expect=exp(["crash-before-first-batch"], root="crash-before-first-batch", node_rank=0, rank=1, cause="collator"),
    check=_has("Caught ValueError in DataLoader worker process"),
)
scenario(
    name="crash-mid-training", short="cmt", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "tqdm", "FAIL_KIND": "runtime", "FAIL_RANKS": "1", "FAIL_STEP": "10", "STEP_SLEEP": "0.2",
         "PYTHONUNBUFFERED": "1"},
    check=_all(_interleaved, _has("non-finite loss")), tries=6,
    description="Rank 1 raises RuntimeError at step 10 while rank 0 shows a tqdm bar (raw \\r redraws); "
    "PYTHONUNBUFFERED=1. The other ranks lose their peer in the next gradient allreduce.",
    expect=exp(["crash-during-training"], root="crash-during-training", node_rank=0, rank=1),
)
scenario(
    name="self-sigkill", short="sk", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "sigkill", "FAIL_RANKS": "2", "FAIL_STEP": "5", "STEP_SLEEP": "0.1",
         "PYTHONUNBUFFERED": "1"},
    description="Rank 2 (Worker 1, local rank 0) sends itself SIGKILL at step 5.",
    expect=exp(["worker-killed"], root="worker-killed", node_rank=1, rank=2),
    check=_has("Signal 9 (SIGKILL)"),
)
scenario(
    name="port-in-use", short="piu", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain"},
    squat_port=True, limit=60,
    description="Before Worker 0 launched, another service (python -m http.server) was listening on "
    "MASTER_PORT on all addresses of the master.",
    expect=exp(["port-in-use", "hang-in-rendezvous"], root="port-in-use", node_rank=0),
    check=_has("EADDRINUSE"),
)
scenario(
    name="restart-loop", short="rl", layout="worker-N/launch_ddp.log",
    workers=[Worker(rank="0", log="worker-0/launch_ddp.log", env={"LOGLEVEL": "INFO"}),
             Worker(rank="1", log="worker-1/launch_ddp.log")],
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "start-crash", "FAIL_RANKS": "0", "PET_MAX_RESTARTS": "2"},
    description="PET_MAX_RESTARTS=2; rank 0 raises RuntimeError right after init_process_group on every "
    "attempt, so torchrun restarts the worker group twice and then gives up. Worker 0 ran with LOGLEVEL=INFO.",
    expect=exp(["restart-loop", "crash-before-first-batch"], root="crash-before-first-batch", node_rank=0, rank=0),
    check=_has("will restart worker group", "could not open metrics writer"),
)
scenario(
    name="hang-before-ddp", short="hbd", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "hang-before-init", "FAIL_RANKS": "3"},
    description="Rank 3 sleeps forever before init_process_group; the others time out (20 s) waiting for "
    "it and torchrun on Worker 1 SIGTERMs the sleeper.",
    expect=exp(["hang-before-first-batch"], root="hang-before-first-batch", node_rank=1, rank=3),
    check=_has("wait timeout after 20000ms, keys: /default_pg"),
)
scenario(
    name="stall-mid-training", short="smt", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "stall", "FAIL_RANKS": "1", "FAIL_STEP": "8", "STEP_SLEEP": "0.1"},
    description="Rank 1 stops (long sleep) at step 8; the other ranks hit the 20 s gloo collective timeout "
    "in the gradient allreduce.",
    expect=exp(["collective-timeout"], root="collective-timeout", node_rank=0, rank=1),
    check=_has("Timed out waiting 20000ms for"),
)
scenario(
    name="ddp-unused-parameters", short="dup", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "unused-param"},
    description="The model has an aux_head that forward() never uses and DDP runs without "
    "find_unused_parameters; the second iteration raises the reducer's 'Expected to have finished "
    "reduction in the prior iteration' error on every rank.",
    expect=exp(["ddp-unused-parameters", "crash-during-training"], root="ddp-unused-parameters"),
    check=_has("Expected to have finished reduction", "step 1/30"),
)
scenario(
    name="collective-mismatch", short="cm", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "collective-mismatch", "FAIL_RANKS": "1", "FAIL_STEP": "5",
         "TORCH_DISTRIBUTED_DEBUG": "DETAIL", "GRAD_SYNC": "manual"},
    description="TORCH_DISTRIBUTED_DEBUG=DETAIL; gradients are averaged with explicit all_reduce calls (no "
    "DDP wrapper: constructing DDP under DETAIL segfaults in this torch 2.13 CPU build). At step 5 rank 1 "
    "calls all_gather while the other ranks call all_reduce.",
    expect=exp(["collective-mismatch"], root="collective-mismatch", node_rank=0, rank=1),
    check=_has("Detected mismatch between collectives"),
)
scenario(
    name="masked-pipe-tee", short="mpt", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "start-crash", "FAIL_RANKS": "1"},
    cmd=PIPE_TEE_CMD,
    description="Launch command `bash launch_ddp.sh 2>&1 | tee \"$LOG\"` without pipefail; rank 1 raises "
    "RuntimeError before the first batch, torchrun fails, but the command exits with tee's status 0.",
    expect=exp(["masked-exit-code", "crash-before-first-batch"], root="crash-before-first-batch", node_rank=0, rank=1),
    check=_has("could not open metrics writer"),
)
scenario(
    name="masked-upload-sleep", short="mus", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "runtime", "FAIL_RANKS": "2", "FAIL_STEP": "12", "STEP_SLEEP": "0.1"},
    cmd=UPLOAD_SLEEP_CMD,
    description="The guide's tee, followed by `cp -r` of the outputs and `sleep 2`, without set -e: rank 2 "
    "raises RuntimeError at step 12, yet the command's status is sleep's 0.",
    expect=exp(["masked-exit-code", "crash-during-training"], root="crash-during-training", node_rank=1, rank=2),
    check=_has("non-finite loss"),
)
scenario(
    name="masked-plain-tee", short="mplt", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "runtime", "FAIL_RANKS": "1", "FAIL_STEP": "10", "STEP_SLEEP": "0.1"},
    cmd=PLAIN_TEE_CMD,
    description="`bash launch_ddp.sh | tee \"$LOG\"`: stderr is not captured, so tracebacks and torchrun's "
    "failure report are not in the logs; rank 1 raises RuntimeError at step 10 and the command exits 0.",
    expect=exp(["masked-exit-code"], root="masked-exit-code", node_rank=None),
    check=_has("step 5/30"),
)
scenario(
    name="hang-still-running", short="hsr", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "block-before-first-batch", "FAIL_RANKS": "1",
         "PG_TIMEOUT_S": "600", "PET_RDZV_CONF": "timeout=600"},
    snapshot_after=30, limit=120,
    description="Rank 1 blocks forever before its first batch while the others wait in the first "
    "collective with a 10 min timeout; the logs are a snapshot taken 30 s after launch, then everything "
    "was killed. The job was still running when the snapshot was taken.",
    # The snapshot shows only env prints: nothing in the logs names the blocked rank.
    expect=exp(["hang-before-first-batch"], root="hang-before-first-batch"),
    check=_has("torchrun env:"),
)

# Per-scenario facts seen in the real logs (torch 2.13.0, gloo, CPU). Racy details (which env prints
# interleave, exact timings) can differ after a regeneration.
COMMON = (
    "torchrun always starts the script as `python -u`, so child stdout is unbuffered whatever "
    "PYTHONUNBUFFERED says and concurrent `torchrun env:` prints can interleave inside one line. "
    "Tracebacks get the `[rankN]: ` prefix only after init_process_group returned (c10d installs that "
    "excepthook); failures before or inside init_process_group are unprefixed. "
)
OBSERVED: dict[str, str] = {
    "healthy-2x2": "Only rank 0 prints progress (`step 30/30 loss 1.4118`, then `training finished: 30 steps`). "
    "In the committed run Worker 0's env prints interleaved: `torchrun env:torchrun env: RANK= 0 LOCAL_RANK= 0 "
    "WORLD_SIZE= 4` followed by ` RANK= 1 LOCAL_RANK= 1 WORLD_SIZE= 4`. The only torchrun lines are the "
    "OMP_NUM_THREADS banner (`W1129 ... torch/distributed/run.py:874] ...`).",
    "healthy-timestamps": "Every physical line starts with `2026-11-29T19:18:28.112313023Z ` (stamped by a "
    "filter before tee, so torchrun's own `W1129 19:18:27.715000 19755 torch/distributed/run.py:874] ` prefix follows the stamp). The "
    "interleaved env print continues on the next stamped line: `...Z torchrun env:torchrun env: RANK= 0 "
    "LOCAL_RANK= 0 WORLD_SIZE= 4` then `...Z  RANK= 1 LOCAL_RANK= 1 WORLD_SIZE= 4`. Progress lines are "
    "`2026-11-29 19:18:34,098 - train - INFO - epoch 0 iter 5 loss 1.36` (python logging to stderr).",
    "healthy-gzip": "Both files are gzip (magic 1f 8b); launch_ddp.1.log has no .gz suffix. Progress lines "
    "look like `{'loss': '1.4060', 'grad_norm': '0.4234', 'learning_rate': '5e-05', 'epoch': '0.33'}` "
    "from rank 0 every 5 steps.",
    "healthy-tee-1x4": "With --tee 3 torchrun re-reads each rank's files and prefixes lines `[default0]:` ... "
    "`[default3]:`. tqdm's `\\r` redraws do NOT survive: every redraw became its own line, and a stray "
    "prefix follows each one: `[default0]:train:  10%|█         | 3/30 [00:00<00:02, 13.03it/s, "
    "loss=1.3688][default0]:` (13.03it/s in the committed run; the `\\r` is replaced by a newline plus a new prefix). The file has no "
    "carriage returns. An empty `[default0]:` line precedes the bar.",
    "missing-worker": "Worker 0 (store host): `torch.distributed.DistStoreError: Timed out after 21 seconds "
    "waiting for clients. 2/3 clients joined.` raised from static_tcp_rendezvous.py next_rendezvous, "
    "before any child starts (no env prints, no FAILED summary, only torchrun's own traceback). Worker 1: "
    "`[W... socket.cpp:469] [c10d] waitForInput: poll for socket SocketImpl(...) returned 0, likely a "
    "timeout` and `torch.distributed.DistStoreError: wait timeout after 20000ms, keys: "
    "/none/torchelastic/assigned_ranks/1`. Neither log names the missing node; only nnodes=3 vs two "
    "`DDP launch` lines (node_rank 0 and 1) tell it is node 2.",
    "duplicate-node-rank": "The store counted 3 clients, so rendezvous got further than with a missing "
    "Worker: Worker 0 failed with `DistStoreError: wait timeout after 20000ms, keys: "
    "/none/torchelastic/role_info/0, /none/torchelastic/role_info/1, /none/torchelastic/role_info/2`; both "
    "node_rank-1 Workers with `wait timeout after 20000ms, keys: /none/torchelastic/assigned_ranks/1`. "
    "No training process started anywhere.",
    "launch-mismatch": "Worker 0 prints master=127.0.0.1:29560, Worker 1 master=127.0.0.1:29561. Worker 1: "
    "`[E... socket.cpp:1028] [c10d] The client socket has timed out after 20000ms while trying to connect "
    "to (127.0.0.1, 29561).`, a retry line `[W... TCPStore.cpp:340] [c10d] TCP client failed to "
    "connect/validate to host 127.0.0.1:29561 - retrying (try=0, timeout=20000ms, delay=...ms)`, C++ "
    "`frame #N:` stack dumps, then `torch.distributed.DistNetworkError: The client socket has timed out "
    "after 20000ms while trying to connect to (127.0.0.1, 29561).` (reported as a timeout, not as "
    "`Connection refused`). Worker 0: `Timed out after 21 seconds waiting for clients. 1/2 clients joined.`",
    "gpu-count-mismatch": "Nothing fails: torchrun sums the local world sizes, the processes print "
    "`WORLD_SIZE= 3` (ranks 0,1 on Worker 0 and rank 2 on Worker 1) and training finishes; both launch "
    "commands exit 0, so the job shows succeeded. The only evidence is gpus_per_node=2 vs 1 and "
    "total_procs=4 vs 2 in the two `DDP launch` lines, versus WORLD_SIZE= 3 in the env prints.",
    "launch-env-missing": "Worker 1's whole log is one line: `/work/main/sample_logs/generate/launch_ddp.sh: "
    "line 8: RANK: platform RANK is required` (no `DDP launch` line, so its node_rank is unknown). Worker 0: "
    "`torch.distributed.DistStoreError: Timed out after 21 seconds waiting for clients. 1/2 clients joined.`",
    "world-size-leak": "The wrapper exec's python without -u, so env prints are block-buffered and can show up "
    "late. Processes print `WORLD_SIZE= 2` while `DDP launch` says total_procs=4. Ranks 0 and 1 (Worker 0) "
    "formed a 2-process world on their own and TRAINED TO THE END (`training finished: 30 steps`); ranks 2 "
    "and 3 failed inside init_process_group with unprefixed `RuntimeError: [enforce fail at "
    ".../gloo/gloo/context.cc:23] rank < size. 2 vs 2` and `... 3 vs 2`. Worker 0's torchrun then waited "
    "300 s in the exit barrier: `E... torch/distributed/elastic/agent/server/api.py:1008] Error waiting on "
    "exit barrier. Elapsed: 300.1... seconds` with `DistStoreError: wait timeout after 300000ms, keys: "
    "/none/torchelastic/agent/terminal_state/last_member`, and still exited 0; Worker 1 exited 1.",
    "log-collision": "Both Workers' tee opened the same file with truncation and wrote at their own offsets; "
    "the 1.4 KB that survived is one coherent-looking log whose first line is Worker 1's `DDP launch: "
    "nnodes=2 node_rank=1 ...` while the progress lines are rank 0's (only rank 0 prints them) and the "
    "env prints mix both Workers: `torchrun env:torchrun env: RANK= 0 LOCAL_RANK= 0 WORLD_SIZE= 4` then "
    "` RANK= 3 LOCAL_RANK= 1 WORLD_SIZE= 4` (ranks 0 and 3 live on different Workers, so this is an "
    "overwrite, not a pipe interleave). No NUL bytes. Both launch commands exited 0.",
    "import-error-one-rank": "Worker 1: unprefixed `Traceback` ... `ModuleNotFoundError: No module named "
    "'flash_attn'` with rank 2's env print landing between the traceback lines; rank 3 never prints its "
    "env line; torchrun SIGTERMs rank 2 (`exitcode  : -15 ... (SIGTERM)`) and names rank 3 as root cause "
    "(exitcode 1). Worker 0's ranks 0 and 1 wait inside init_process_group and fail 20 s later with "
    "unprefixed `torch.distributed.DistStoreError: wait timeout after 20000ms, keys: /default_pg/0//cpu//0/2` "
    "(the key names rank 2, the first missing registrant, not rank 3).",
    "missing-data-all-ranks": "`[rank0]: FileNotFoundError: [Errno 2] No such file or directory: "
    "'/mnt/public/project-a/data/train/shard-00000-of-00004.jsonl'` and the same for ranks 1-3 (shard "
    "00001..00003). All four exit 1 at about the same second; no SIGTERM victims on Worker 0.",
    "env-var-keyerror": "`[rank0]:   File \"<frozen os>\", line 679, in __getitem__` then `[rank0]: KeyError: "
    "'DATA_ROOT'`, on all four ranks.",
    "collate-error": "Rank 1: `[rank1]: ValueError: Caught ValueError in DataLoader worker process 0.`, "
    "`[rank1]: Original Traceback (most recent call last):` ... `[rank1]: ValueError: expected sequence of "
    "length 14 at dim 1 (got 16)`. The other ranks had taken their first batch and die in backward: "
    "`[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] "
    "Connection closed by peer [127.0.1.1]:13701. This is typically caused by a remote worker crashing. "
    "Check the logs of the remote worker before reporting an error. GLHF! 🏖️`.",
    "crash-mid-training": "Rank 0's tqdm bar is a single physical line of `\\r`-separated redraws (`\\rtrain:  "
    "30%|███       | 9/30 [...]`); the first traceback line `[rank1]: Traceback (most recent call last):` is "
    "glued straight onto the end of the last redraw: `...9/30 [00:01<00:04,  5.13it/s, loss=1.4476][rank1]: Traceback (most recent call last):`. Root error `[rank1]: RuntimeError: non-finite loss "
    "encountered at step 10 (loss=nan); stopping`; ranks 0, 2, 3 get gloo `Connection closed by peer "
    "[127.0.1.1]:<port>` in backward. Worker 0 env prints interleaved.",
    "self-sigkill": "No traceback from rank 2. Worker 1's summary: `exitcode  : -9 (pid: N)  (SIGKILL)` and "
    "`traceback : Signal 9 (SIGKILL) received by PID N`, plus `failed (exitcode: -9) local_rank: 0`. Peers: "
    "`[rank3]: RuntimeError: [...pair.cc:537] Read error [127.0.0.1]:15592: Connection reset by peer. This is "
    "typically caused by a remote worker hanging or bugs in the application.` and rank 0 `Connection closed "
    "by peer`. The summary's separator lines are 55 characters here, not 60 (the width follows the "
    "content).",
    "port-in-use": "Worker 0: torchrun's own traceback ending `torch.distributed.DistNetworkError: The "
    "server socket has failed to listen on any local network address. port: 29670, useIpv6: false, code: "
    "-98, name: EADDRINUSE, message: address already in use`. Worker 1 connected to the unrelated service, "
    "waited for a store reply that never came and printed nothing after the OMP_NUM_THREADS banner; it was "
    "stopped with SIGTERM after 60 s (as a platform stops the rest of a failed job), so its launch status "
    "is 143 and nothing more reached its log (tee got the same SIGTERM).",
    "restart-loop": "Worker 0 (LOGLEVEL=INFO) shows the launch config dump and `I... "
    "torch/distributed/elastic/agent/server/api.py:942] [default] Worker group FAILED. 2/2 attempts left; "
    "will restart worker group`, then `1/2 attempts left`, and `Rendezvous complete ... restart_count=1/2`. "
    "Worker 1 (default level) shows a restart only as repeated `torchrun env:` blocks. Restarts are not in "
    "step across Workers, so attempts 2-3 fail in init with unprefixed gloo errors: `[.../gloo/transport/"
    "tcp/debug_logger.cc:9] ERROR failed to connect, willRetry=1, retry=1, retryLimit=3, rank=0, size=4, "
    "...error=SO_ERROR: Connection refused`, `RuntimeError: Gloo connectFullMesh failed with "
    "[...pair.cc:152] timed out connecting: SO_ERROR: Connection refused, remote=[127.0.1.1]:58788$0` and "
    "`... [...pair.h:311] Connect timeout [none]`. Rank 0's own `RuntimeError: rank 0: could not open "
    "metrics writer ...` appears on attempts 1 and 3. At the end `I... errors/__init__.py:380] ('local_rank "
    "%s FAILED with no error file. Decorate your entrypoint fn with @record ...', 0)`.",
    "hang-before-ddp": "Rank 3 prints its env line, then never joins. Ranks 0, 1, 2 fail inside "
    "init_process_group after 20 s with unprefixed `torch.distributed.DistStoreError: wait timeout after "
    "20000ms, keys: /default_pg/0//cpu//0/3` (the key's last component is the missing rank), preceded by "
    "`[W... socket.cpp:494] [c10d] waitForInput: socket SocketImpl(...) timed out after 20000ms`. Worker 1's "
    "torchrun then SIGTERMs rank 3 (`exitcode  : -15`) and names rank 2 as root cause.",
    "stall-mid-training": "`[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
    "unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation to complete`, rank 2 `... "
    "unbound_buffer.cc:129] Timed out waiting 20000ms for send operation to complete`. The stalled rank 1 "
    "prints nothing and is SIGTERMed by Worker 0's torchrun (`exitcode  : -15`). No watchdog lines (gloo).",
    "ddp-unused-parameters": "After `step 1/30`, every rank: `[rankN]: RuntimeError: Expected to have "
    "finished reduction in the prior iteration before starting a new one. This error indicates that your "
    "module has parameters that were not used in producing loss. ...` spread over several `[rankN]:` lines, "
    "ending `[rank0]: Parameter indices which did not receive grad for rank 0: 4 5` and a TORCH_DISTRIBUTED_DEBUG "
    "hint.",
    "collective-mismatch": "Every rank: `[rankN]: RuntimeError: Detected mismatch between collectives on "
    "ranks. Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=16, OpType=ALLREDUCE, "
    "TensorShape=[4], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(...)), but Rank 1 is running "
    "collective: CollectiveFingerPrint(SequenceNumber=16, OpType=ALLGATHER, ...).Collectives differ in the "
    "following aspects:   Op type: ALLREDUCEvs ALLGATHER` (three spaces after the colon, no space before `vs`, none after `).`). "
    "Ranks 2 and 3 compare themselves with rank 1. Surprise: with TORCH_DISTRIBUTED_DEBUG=DETAIL, "
    "constructing DistributedDataParallel segfaults in this torch 2.13 CPU build (children die with "
    "`exitcode: -11` and no Python traceback), hence the manual gradient all_reduce here.",
    "masked-pipe-tee": "Full failure output is in the logs (stderr went into the pipe): `[rank1]: "
    "RuntimeError: rank 1: could not open metrics writer under ...` and the FAILED summary, yet both "
    "launch commands exited 0 (pipeline status = tee's, no pipefail).",
    "masked-upload-sleep": "Logs are complete: `[rank2]: RuntimeError: non-finite loss encountered at step 12 "
    "(loss=nan); stopping`, cascades and FAILED summaries; the command's status is sleep's, 0.",
    "masked-plain-tee": "The logs hold only stdout: `DDP launch`, env prints (interleaved on both Workers), "
    "and rank 0's `step 1/30` ... `step 9/30`, then nothing. No OMP_NUM_THREADS banner, no traceback, no "
    "FAILED summary (all stderr). Both commands exited 0.",
    "hang-still-running": "Snapshot after 30 s: `DDP launch`, the OMP_NUM_THREADS banner and the four env "
    "prints, then nothing (rank 1 blocks before its first batch; ranks 0, 2, 3 wait in the first gradient "
    "allreduce with a 600 s timeout). Processes were then killed; launch_exit_status is null because the "
    "commands had not exited when the snapshot was taken. The hang diagnosis applies when the scan happens "
    "long (e.g. 30 min) after the last line.",
}
for _k in OBSERVED:
    OBSERVED[_k] = COMMON + OBSERVED[_k]


# ---------------------------------------------------------------- running

def base_env():
    path = f"{GEN_DIR}:{TORCH_VENV / 'bin'}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    return {
        "PATH": path,
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "GEN_DIR": str(GEN_DIR),
        "PET_RDZV_CONF": "timeout=20",
    }


def _versions():
    out = subprocess.run(
        [str(TORCH_VENV / "bin" / "python"), "-c",
         "import torch, platform; print(torch.__version__.split('+')[0]); print(platform.python_version())"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    return out[0], out[1]


def _kill_marked(marker: str):
    """SIGKILL every process whose environment carries this run's marker.

    torchrun starts its children in new sessions, so killing a Worker's process group does not
    reach them; the marker (set only in this run's Worker environments) does.
    """
    needle = f"LOGSCAN_GEN_RUN={marker}".encode()
    for _ in range(3):
        found = False
        for d in Path("/proc").iterdir():
            if not d.name.isdigit() or int(d.name) == os.getpid():
                continue
            try:
                env = (d / "environ").read_bytes()
            except OSError:
                continue
            if needle in env.split(b"\0"):
                found = True
                try:
                    os.kill(int(d.name), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if not found:
            return
        time.sleep(0.5)


def run_once(sc: Scenario, port: int, work: Path):
    """Run every Worker of the scenario; returns (statuses, {worker index: log bytes})."""
    squatter = None
    if sc.squat_port:
        # An unrelated service already on the master's port, on all addresses (IPv4 and IPv6).
        squatter = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "::"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=str(work),
        )
        for _ in range(50):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)

    shared_out = work / "shared-output"
    procs = []
    start = time.monotonic()
    order = sorted(range(len(sc.workers)), key=lambda i: sc.workers[i].delay)
    for i in order:
        w = sc.workers[i]
        hostname = f"job-{sc.short}-worker-{i}"
        wdir = work / f"worker-{i}"
        wdir.mkdir(parents=True, exist_ok=True)
        if sc.outputs_in_sample:
            outdir = SAMPLES_DIR / sc.name / f"worker-{i}"
        elif sc.shared_output:
            outdir = shared_out
        else:
            outdir = wdir / "output"
        hosts = wdir / "hosts"
        # Each Worker's own name on its own loopback address (127.0.1.<i+1>), so reverse lookups
        # (torchrun's failure report `host :`) give the Worker's hostname.
        hosts.write_text(f"127.0.0.1\tlocalhost\n127.0.1.{i + 1}\t{hostname}\n")
        env = base_env()
        env.update(sc.env)
        env.update(
            LOGSCAN_GEN_RUN=work.name,
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port + 1 if w.port == -1 else (w.port or port)),
            WORLD_SIZE=str(sc.nnodes or len(sc.workers)),
            FAKE_GPU_COUNT=str(w.gpus),
            TRAIN_SCRIPT=str(GEN_DIR / sc.train_script),
            OUTPUT_DIR=str(outdir),
            UPLOAD_DIR=str(wdir / "upload"),
        )
        if w.rank is not None:
            env["RANK"] = w.rank
        env.update(w.env)
        delay = w.delay - (time.monotonic() - start)
        if delay > 0:
            time.sleep(delay)
        console = open(wdir / "console.txt", "wb")
        p = subprocess.Popen(
            ["timeout", "--preserve-status", "-k", "10", str(sc.limit), "unshare", "--uts", "--mount",
             "bash", "-c", WRAP, "worker", hostname, str(hosts), sc.cmd],
            env=env, stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT, cwd=str(wdir),
        )
        procs.append((i, p, outdir, console))

    statuses = {}
    snapshot = None
    if sc.snapshot_after is not None:
        deadline = start + sc.snapshot_after
        while time.monotonic() < deadline and any(p.poll() is None for _, p, _, _ in procs):
            time.sleep(0.5)
        snapshot = {i: (outdir / "launch_ddp.log").read_bytes() for i, _, outdir, _ in procs}
        for i, p, _, _ in procs:
            statuses[i] = p.poll()  # None: still running
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _kill_marked(work.name)
    for i, p, _, console in procs:
        rc = p.wait()
        if sc.snapshot_after is None:
            statuses[i] = rc
        console.close()
        try:  # leftovers of this Worker's process group (timeout makes itself the group leader)
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _kill_marked(work.name)  # anything of this run still alive (e.g. torchrun children in their own sessions)
    if squatter is not None:
        squatter.terminate()
        squatter.wait()
    time.sleep(2)  # let the process-substitution tee drain
    if snapshot is not None:
        logs = snapshot
    else:
        logs = {i: (outdir / "launch_ddp.log").read_bytes() for i, _, outdir, _ in procs}
    return statuses, logs


def generate(sc: Scenario, index: int, torch_v: str, py_v: str):
    port = 29500 + 10 * index
    dest = SAMPLES_DIR / sc.name
    for attempt in range(1, sc.tries + 1):
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        work = Path(tempfile.mkdtemp(prefix=f"logscan-gen-{sc.name}-"))
        t0 = time.monotonic()
        statuses, logs = run_once(sc, port, work)
        took = time.monotonic() - t0
        problem = sc.check(logs) if sc.check else None
        print(f"{sc.name}: attempt {attempt}, statuses {statuses}, {took:.0f}s"
              + (f", retry: {problem}" if problem else ""), flush=True)
        if not problem:
            break
        shutil.rmtree(work, ignore_errors=True)
    if problem:
        print(f"WARNING {sc.name}: {problem}", flush=True)

    # Write the logs in the scenario's layout.
    wlist = []
    for i, w in enumerate(sc.workers):
        target = dest / w.log
        target.parent.mkdir(parents=True, exist_ok=True)
        if not (sc.outputs_in_sample and target.exists()):
            target.write_bytes(logs[i])
        st = statuses[i]
        wlist.append({
            "platform_rank": w.rank,
            "hostname": f"job-{sc.short}-worker-{i}",
            "gpus": w.gpus,
            "log": w.log,
            "launch_exit_status": (st if st is None or st >= 0 else 128 - st),
        })
    for name in sc.gzip_logs:
        path = dest / name
        data = path.read_bytes()
        with open(path, "wb") as raw, gzip.GzipFile(
            filename=name.removesuffix(".gz"), mode="wb", fileobj=raw, mtime=0
        ) as gz:
            gz.write(data)
    if sc.outputs_in_sample:
        # Keep only the logs and checkpoint.pt written there by the run.
        keep = {dest / w.log for w in sc.workers} | {dest / "worker-0" / "checkpoint.pt"}
        for p in sorted(dest.rglob("*"), reverse=True):
            if p.is_file() and p not in keep:
                p.unlink()
            elif p.is_dir() and not any(p.iterdir()):
                p.rmdir()

    if sc.snapshot_after is not None:
        job_status = "running"
    else:
        job_status = "succeeded" if all(s == 0 for s in statuses.values()) else "failed"
    (dest / "job_status").write_text(job_status + "\n")
    doc = {
        "scenario": sc.name,
        "description": sc.description,
        "layout": sc.layout,
        "workers": wlist,
        "job_status": job_status,
        "expect": sc.expect,
        "observed": OBSERVED.get(sc.name, sc.observed),
        "generated": {"torch": torch_v, "python": py_v, "date": _dt.date.today().isoformat()},
    }
    (dest / "expected.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    shutil.rmtree(work, ignore_errors=True)


def main(argv):
    names = [s.name for s in SCENARIOS]
    if "--list" in argv:
        print("\n".join(names))
        return 0
    if "--refresh-json" in argv:
        # Rewrite description/layout/expect/observed from this file; keep what the run recorded.
        wanted = [a for a in argv if a != "--refresh-json"] or names
        for sc in SCENARIOS:
            path = SAMPLES_DIR / sc.name / "expected.json"
            if sc.name in wanted and path.exists():
                doc = json.loads(path.read_text())
                doc.update(description=sc.description, layout=sc.layout, expect=sc.expect,
                           observed=OBSERVED.get(sc.name, sc.observed))
                path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        return 0
    if os.geteuid() != 0:
        print("generate.py needs root (unshare/mount/hostname)", file=sys.stderr)
        return 2
    if not (TORCH_VENV / "bin" / "torchrun").exists():
        print(f"no torchrun in {TORCH_VENV}; create it: python3 -m venv {TORCH_VENV} && "
              f"{TORCH_VENV}/bin/pip install torch==2.13.0 numpy tqdm", file=sys.stderr)
        return 2
    wanted = argv or names
    unknown = [n for n in wanted if n not in names]
    if unknown:
        print(f"unknown scenario(s): {unknown}", file=sys.stderr)
        return 2
    torch_v, py_v = _versions()
    for idx, sc in enumerate(SCENARIOS):
        if sc.name in wanted:
            generate(sc, idx, torch_v, py_v)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
