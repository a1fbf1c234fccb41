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
    expect=exp(["hang-before-first-batch"], root="hang-before-first-batch", node_rank=0, rank=1),
    check=_has("torchrun env:"),
)

# Per-scenario facts seen in the real logs, filled in after runs.
OBSERVED: dict[str, str] = {}


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
    for i, p, _, console in procs:
        rc = p.wait()
        if sc.snapshot_after is None:
            statuses[i] = rc
        console.close()
        try:  # leftovers of this Worker's process group (timeout makes itself the group leader)
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
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
