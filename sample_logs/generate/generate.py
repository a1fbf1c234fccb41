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
    GEN_LIMIT_SCALE     multiply every scenario's safety-net timeout (default 1), on a loaded machine.
    TORCH_VENV          venv with torch==2.13.0 (default /work/torchvenv); its bin/ goes first on PATH.
    TORCH_VENV_<X_Y_Z>  venv for another torch version a scenario names (Scenario.torch), e.g.
                        TORCH_VENV_1_13_1; default /work/torchvenv-<version>. A scenario that names its
                        Python (Scenario.python) uses /work/torchvenv-<version>-py<python>
                        (TORCH_VENV_1_11_0_py3_9). torch 1.9 has no torchrun command: its scenarios set
                        TORCHRUN="python -m torch.distributed.run", which the launch scripts run.
    The version recorded in expected.json ("generated"."torch") is read from the venv's torch.__version__.

Needs root (unshare, mount --bind of a per-Worker /etc/hosts, sethostname).
"""
from __future__ import annotations

import datetime as _dt
import gzip
import hashlib
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
DEFAULT_TORCH = "2.13.0"
# A machine under load (cold imports of a CUDA wheel take most of a minute there) needs longer
# safety nets: every scenario's `limit` is multiplied by this.
LIMIT_SCALE = float(os.environ.get("GEN_LIMIT_SCALE", "1"))


def venv_for(version: str, python: str | None = None) -> Path:
    """The venv that provides torch `version` (Scenario.torch), on Python `python` where a scenario
    names one (Scenario.python: /work/torchvenv-<version>-py<python>)."""
    if version == DEFAULT_TORCH and python is None:
        return TORCH_VENV
    name = version + (f"-py{python}" if python else "")
    key = "TORCH_VENV_" + re.sub(r"\W", "_", name)
    return Path(os.environ.get(key, f"/work/torchvenv-{name}"))

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

# The guide's command, with torchrun's per-process log files (--log-dir) under OUTPUT_DIR.
LOG_DIR_CMD = """set -euo pipefail
mkdir -p "$OUTPUT_DIR"
export PET_LOG_DIR="$OUTPUT_DIR/torchrun_logs"
bash "$GEN_DIR/launch_ddp.sh" > >(tee -i "$OUTPUT_DIR/launch_ddp.log") 2>&1
"""

# tee -a: every Worker appends to the same launch_ddp.log on shared storage.
APPEND_CMD = """set -euo pipefail
mkdir -p "$OUTPUT_DIR"
bash "$GEN_DIR/launch_ddp.sh" > >(tee -a -i "$OUTPUT_DIR/launch_ddp.log") 2>&1
"""


# The container runtime's log instead of tee: each Worker's stdout and stderr are read separately by
# container_log.py and written in the CRI format (containerd, CRI-O) or Docker's json-file format.
CRI_CMD = """set -euo pipefail
mkdir -p "$OUTPUT_DIR"
python3 -u "$GEN_DIR/container_log.py" cri "$OUTPUT_DIR/launch_ddp.log" -- bash "$GEN_DIR/launch_ddp.sh"
"""
DOCKER_JSON_CMD = CRI_CMD.replace(" cri ", " docker-json ")

# A leftover process of an earlier step still holds the data-cache lock in OUTPUT_DIR.
LOCK_HELD_CMD = """set -euo pipefail
mkdir -p "$OUTPUT_DIR"
flock "$OUTPUT_DIR/data-cache.lock" sleep 100000 &
bash "$GEN_DIR/launch_ddp.sh" > >(tee -i "$OUTPUT_DIR/launch_ddp.log") 2>&1
"""


def guide_cmd_with(script: str) -> str:
    """The guide's command running a variant of launch_ddp.sh (a file in generate/)."""
    return GUIDE_CMD.replace("launch_ddp.sh", script)


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
    uncollected: tuple = ()  # log paths removed after the run: logs the platform did not collect
    snapshot_after: float | None = None  # copy logs after this many seconds, then kill (job still running)
    squat_port: bool = False  # something listens on MASTER_PORT before the Workers start
    train_script: str = "train.py"
    check: object = None  # callable(logs: dict[str, bytes]) -> str | None (problem), retried
    tries: int = 2
    keep_files: tuple = ()  # extra files to keep: (src relative to Worker 0 OUTPUT_DIR, dst in sample)
    torch: str = DEFAULT_TORCH  # torch version to run (its venv: venv_for())
    python: str | None = None  # the venv's Python where the version's default one does not do
    keep_dirs: tuple = ()  # dirs relative to each Worker's OUTPUT_DIR, copied beside that Worker's log
    kill_after: float | None = None  # SIGKILL every Worker's whole process tree after this many seconds
    kill_worker: tuple | None = None  # (worker index, needle): SIGKILL that Worker's tree once a log shows needle
    master_is_host: bool = False  # MASTER_ADDR = Worker 0's hostname (in every Worker's /etc/hosts)
    # Stop from outside: (signal name, needle or None, seconds after the needle shows in a log (or after
    # the start), target, worker indices or None for all). target "group": the Worker's launch process
    # group (the launch command, torchrun, tee; not torchrun's children, which have their own sessions),
    # as a platform stops a job; "torchrun": only that Worker's torchrun process.
    send_signal: tuple | None = None
    platform_status: bool = True  # False: no job_status file (the platform's status was not kept)


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


def _warned_by_others(needle, rank):
    """Some process other than `rank` printed needle (`[rankN]:` prefixes name them), and `rank` did not."""
    def check(logs):
        ranks = {int(m) for data in logs.values()
                 for m in re.findall(rb"\[rank(\d+)\]:[^\n]*" + re.escape(needle.encode()), data)}
        if rank in ranks:
            return f"rank {rank} printed {needle!r}"
        return None if ranks else f"no other rank printed {needle!r}"

    return check


def workers(n, gpus=2, log="worker-{i}/launch_ddp.log", **kw):
    return [Worker(rank=str(i), gpus=gpus, log=log.format(i=i), **kw) for i in range(n)]


def exp(rules, root=None, node_rank=None, rank=None, healthy=None, first=None, cause=None, verdict=None, note=None,
        gap=None):
    """The diagnosis a correct tool gives.

    first: where the first failure shows; defaults to the root cause's location; "none" when nothing
    failed. cause: the crash cause class, kept in root_cause. note: free text for the tool's author.
    gap: why logscan does not give this diagnosis yet (its test is an expected failure until it does).
    verdict: HEALTHY | FAILED | RUNNING | INCONCLUSIVE; defaults to HEALTHY when healthy, else FAILED.
    """
    if healthy is None:
        healthy = not any(r != "log-collision" for r in rules)
    if verdict is None:
        verdict = "HEALTHY" if healthy else "FAILED"
    assert verdict in ("HEALTHY", "FAILED", "RUNNING", "INCONCLUSIVE"), verdict
    d = {"healthy": healthy, "verdict": verdict, "rules": rules}
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
    if note:
        d["note"] = note
    if gap:
        d["known_gap"] = gap
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
    expect=exp(["crash-during-training"], root="crash-during-training", cause="non-finite-loss", node_rank=0, rank=1),
)
scenario(
    name="crash-log-not-collected", short="cnc", layout="worker-N/launch_ddp.log (worker-2 not collected)",
    workers=workers(3),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "runtime", "FAIL_RANKS": "1", "FAIL_STEP": "10", "STEP_SLEEP": "0.1"},
    uncollected=("worker-2/launch_ddp.log",),
    check=_has("non-finite loss"),
    description="3 Workers x 2 GPUs; rank 1 raises RuntimeError at step 10. Worker 2's log was written but "
    "is not in the sample (removed after the run, as when the platform fails to collect one Worker's log): "
    "the two present Workers trained 9 synchronised steps in the 6-process world.",
    expect=exp(["crash-during-training", "missing-worker-log"], root="crash-during-training", cause="non-finite-loss", node_rank=0,
               rank=1),
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
    expect=exp(["masked-exit-code", "crash-during-training"], root="crash-during-training", cause="non-finite-loss", node_rank=1, rank=2),
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
    expect=exp(["hang-before-first-batch"], root="hang-before-first-batch", verdict="FAILED",
               note="applies when scanned more than 30 min after the last log line. The blocked rank (1) is not "
               "named: the snapshot holds only the launch lines, the banner and the four env prints, so nothing "
               "in the logs tells which rank the others were waiting for."),
    check=_has("torchrun env:"),
)

# ---------------------------------------------------------------- Batch C: older torch releases
def _any(*needles):
    def check(logs):
        blob = b"".join(logs.values())
        return None if any(n.encode() in blob for n in needles) else f"none of {list(needles)}"

    return check


# prefixed: the release puts `[rankN]: ` on tracebacks raised after init_process_group (2.3 and later),
# so the logs name the rank that raised. slow_rdzv: its static rendezvous ignores PET_RDZV_CONF=timeout=20
# when a Worker is missing and gives up only after about 5.5 minutes.
_BATCH_C = (("1.13.1", "torch1.13", "t113", False, True), ("2.1.2", "torch2.1", "t21", False, True),
            ("2.0.1", "torch2.0", "t20", False, True), ("2.4.1", "torch2.4", "t24", True, False),
            ("2.6.0", "torch2.6", "t26", True, False), ("2.8.0", "torch2.8", "t28", True, False),
            ("2.11.0", "torch2.11", "t211", True, False), ("2.15.0", "torch2.15", "t215", True, False))
for _ver, _sfx, _tag, _prefixed, _slow_rdzv in _BATCH_C:
    scenario(
        name=f"healthy-2x2-{_sfx}", short=f"h22{_tag}", layout="worker-N/launch_ddp.log", torch=_ver,
        workers=workers(2),
        env={"LOOP_STYLE": "plain", "TRAIN_STEPS": "30"}, check=_has("training finished"),
        description=f"torch {_ver}: 2 Workers x 2 GPUs, 30 steps with plain `step i/N loss` lines from rank 0. "
        "Training finished on all ranks.",
        expect=exp([]),
    )
    scenario(
        name=f"crash-mid-training-{_sfx}", short=f"cmt{_tag}", layout="worker-N/launch_ddp.log", torch=_ver,
        workers=workers(2),
        env={"LOOP_STYLE": "plain", "FAIL_KIND": "runtime", "FAIL_RANKS": "1", "FAIL_STEP": "10",
             "STEP_SLEEP": "0.1"},
        check=_has("non-finite loss"),
        description=f"torch {_ver}: rank 1 raises RuntimeError at step 10; the other ranks lose their peer in "
        "the next gradient allreduce.",
        expect=exp(["crash-during-training"], root="crash-during-training", cause="non-finite-loss", node_rank=0,
                   rank=1) if _prefixed else
        exp(["crash-during-training"], root="crash-during-training", cause="non-finite-loss", node_rank=0, rank=None,
            note="rank 1 raised, but this release puts no `[rankN]: ` prefix on tracebacks and torchrun's "
            "summary on Worker 0 can name a victim as root cause (rank 0 in the committed runs), so the "
            "logs tell only that the original error is on node 0, not which of its ranks raised it."),
    )
    scenario(
        name=f"import-error-one-rank-{_sfx}", short=f"ie{_tag}", layout="worker-N/launch_ddp.log", torch=_ver,
        workers=workers(2),
        env={"LOOP_STYLE": "plain", "FAIL_KIND": "import", "FAIL_RANKS": "3"},
        check=_has("No module named 'flash_attn'"),
        description=f"torch {_ver}: global rank 3 (Worker 1, local rank 1) imports flash_attn, which the image "
        "lacks, before its env print and dies with ModuleNotFoundError; the other ranks then fail or wait.",
        expect=exp(["crash-before-first-batch", "missing-rank"], root="crash-before-first-batch", node_rank=1,
                   rank=3, cause="missing-dependency"),
    )
    scenario(
        name=f"self-sigkill-{_sfx}", short=f"sk{_tag}", layout="worker-N/launch_ddp.log", torch=_ver,
        workers=workers(2),
        env={"LOOP_STYLE": "plain", "FAIL_KIND": "sigkill", "FAIL_RANKS": "2", "FAIL_STEP": "5",
             "STEP_SLEEP": "0.1"},
        check=_has("SIGKILL"),
        description=f"torch {_ver}: rank 2 (Worker 1, local rank 0) sends itself SIGKILL at step 5.",
        expect=exp(["worker-killed"], root="worker-killed", node_rank=1, rank=2),
    )
    scenario(
        name=f"missing-worker-{_sfx}", short=f"mw{_tag}", layout="worker-N/launch_ddp.log", torch=_ver,
        nnodes=3, workers=workers(2),
        env={"LOOP_STYLE": "plain"},
        check=_any("Socket Timeout", "Timed out", "timed out"), limit=420 if _slow_rdzv else 150, tries=1,
        description=f"torch {_ver}: platform WORLD_SIZE=3 (nnodes=3) but only Workers 0 and 1 were started; "
        "both waited in torchrun's static rendezvous. " + (
            "This release ignores PET_RDZV_CONF=timeout=20 for that wait: torchrun gives up only after about "
            "5 minutes." if _slow_rdzv else "torchrun gives up after the 20 s of PET_RDZV_CONF=timeout=20."),
        expect=exp(["missing-worker", "hang-in-rendezvous"], root="missing-worker", node_rank=2,
                   note="nothing names the missing node: nnodes=3 in both `DDP launch` lines vs node_ranks 0 and 1 "
                   "is the evidence."),
    )
    scenario(
        name=f"stall-mid-training-{_sfx}", short=f"smt{_tag}", layout="worker-N/launch_ddp.log", torch=_ver,
        workers=workers(2),
        env={"LOOP_STYLE": "plain", "FAIL_KIND": "stall", "FAIL_RANKS": "1", "FAIL_STEP": "8", "STEP_SLEEP": "0.1"},
        check=_any("Timed out waiting", "timed out", "Timed out"),
        description=f"torch {_ver}: rank 1 stops (long sleep) at step 8; the other ranks hit the 20 s gloo "
        "collective timeout in the gradient allreduce.",
        expect=exp(["collective-timeout"], root="collective-timeout", node_rank=0, rank=1) if _prefixed else
        exp(["collective-timeout"], root="collective-timeout", node_rank=0, rank=1,
            note="no rank prefixes and the stalled rank 1 is absent from torchrun's summary; it is found "
            "by elimination: node 0's other local rank, the one with no error of its own that torchrun "
            "SIGTERMed (`Sending process N closing signal SIGTERM`)."),
    )

scenario(
    name="crash-tee-torch1.13", short="ctt113", layout="worker-N/launch_ddp.log", torch="1.13.1",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "runtime", "FAIL_RANKS": "1", "FAIL_STEP": "10", "STEP_SLEEP": "0.1",
         "PET_TEE": "3"},
    check=_has("non-finite loss"),
    description="torch 1.13.1 with torchrun --tee 3 (PET_TEE=3): child lines carry torchrun's per-rank prefix; "
    "rank 1 raises RuntimeError at step 10.",
    expect=exp(["crash-during-training"], root="crash-during-training", cause="non-finite-loss", node_rank=0, rank=1),
)
scenario(
    name="crash-redirects-log-dir-torch1.13", short="crl113", layout="worker-N/launch_ddp.log + worker-N/torchrun_logs/",
    torch="1.13.1", workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "runtime", "FAIL_RANKS": "1", "FAIL_STEP": "10", "STEP_SLEEP": "0.1",
         "PET_REDIRECTS": "3", "RECORD_ERRORS": "1"},
    cmd=LOG_DIR_CMD, keep_dirs=("torchrun_logs",),
    check=_has("FAILED"),
    description="torch 1.13.1 with torchrun --redirects 3 --log-dir (PET_REDIRECTS=3, PET_LOG_DIR=$OUTPUT_DIR/"
    "torchrun_logs): the children's stdout/stderr go only to per-process files, copied into the sample as "
    "worker-N/torchrun_logs/; main() is decorated with @record so the failing rank writes error.json. Rank 1 "
    "raises RuntimeError at step 10.",
    expect=exp(["crash-during-training"], root="crash-during-training", cause="non-finite-loss", node_rank=0, rank=1),
)

# ---------------------------------------------------------------- Batch D: layouts and behaviours (torch 2.13)
scenario(
    name="healthy-log-dir", short="hld", layout="worker-N/launch_ddp.log + worker-N/torchrun_logs/",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "TRAIN_STEPS": "30", "PET_TEE": "3"},
    cmd=LOG_DIR_CMD, keep_dirs=("torchrun_logs",),
    check=_has("training finished"),
    description="2 Workers x 2 GPUs, torchrun --tee 3 --log-dir (PET_TEE=3, PET_LOG_DIR=$OUTPUT_DIR/torchrun_logs): "
    "each Worker's per-process copies <run_id>_<random>/attempt_0/<local_rank>/{stdout,stderr}.log sit in "
    "worker-N/torchrun_logs/ beside its launch_ddp.log. Training finished.",
    expect=exp([]),
)
scenario(
    name="crash-log-dir", short="cld", layout="worker-N/launch_ddp.log + worker-N/torchrun_logs/",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "runtime", "FAIL_RANKS": "1", "FAIL_STEP": "10", "STEP_SLEEP": "0.1",
         "PET_TEE": "3", "RECORD_ERRORS": "1"},
    cmd=LOG_DIR_CMD, keep_dirs=("torchrun_logs",),
    check=_has("non-finite loss"),
    description="As healthy-log-dir, with main() decorated with @record (error.json per failing process); rank 1 "
    "raises RuntimeError at step 10.",
    expect=exp(["crash-during-training"], root="crash-during-training", cause="non-finite-loss", node_rank=0, rank=1),
)
scenario(
    name="healthy-shared-append", short="hsa", layout="launch_ddp.log (appended to by both Workers)",
    workers=workers(2, log="launch_ddp.log"),
    env={"LOOP_STYLE": "plain", "TRAIN_STEPS": "30", "STEP_SLEEP": "0.1"},
    shared_output=True, cmd=APPEND_CMD,
    check=_has("node_rank=0", "node_rank=1", "training finished"),
    description="2 Workers x 2 GPUs with the same OUTPUT_DIR on shared storage; both append (tee -a) to the "
    "same launch_ddp.log, so their lines interleave in one file. Training finished.",
    expect=exp(["log-collision"]),
)
scenario(
    name="healthy-tqdm-stamped", short="htq", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "tqdm", "TRAIN_STEPS": "2000", "STEP_SLEEP": "0", "TQDM_MININTERVAL": "0"},
    cmd=STAMPED_CMD,
    check=_has("2000/2000", "training finished"),
    description="2 Workers x 2 GPUs, 2000 fast steps (no sleep); rank 0's tqdm bar redraws on every update "
    "(mininterval=0) and every physical line is stamped like `kubectl logs --timestamps`, so the whole bar "
    "is one long line behind one timestamp, ending at 2000/2000. Training finished.",
    expect=exp([]),
)
scenario(
    name="config-print-crash", short="cpc", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "TRAIN_STEPS": "30", "CONFIG_PRINT": "1", "FAIL_KIND": "data-path"},
    check=_has("max_steps: 1000", "FileNotFoundError"),
    description="Rank 0 first prints a config block (`steps=30`, `max_steps: 1000`, `Total optimization steps = "
    "30`, `num_train_epochs=3`, `eval_steps 500`); then every rank raises FileNotFoundError on its data shard "
    "before the first batch.",
    expect=exp(["crash-before-first-batch"], root="crash-before-first-batch", cause="data-path"),
)
scenario(
    name="healthy-config-print", short="hcp", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "TRAIN_STEPS": "30", "CONFIG_PRINT": "1"},
    check=_has("max_steps: 1000", "training finished"),
    description="As config-print-crash (same config block from rank 0), but the data is there: 30 steps, "
    "training finished.",
    expect=exp([]),
)
scenario(
    name="local-rank-argparse", short="lra", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "LOCAL_RANK_ARG": "1"},
    cmd=guide_cmd_with("launch_ddp_legacy.sh"),
    check=_has("unrecognized arguments: --local-rank"),
    description="The launch script starts the job with the deprecated `python -m torch.distributed.launch` "
    "(launch_ddp_legacy.sh) instead of torchrun; since torch 2.0 that launcher passes `--local-rank=N` to the "
    "script (torchrun passes nothing, it sets LOCAL_RANK). The script's argparse knows only `--local_rank`, "
    "so every rank exits 2 with `error: unrecognized arguments: --local-rank=N` before init_process_group.",
    expect=exp(["crash-before-first-batch"], root="crash-before-first-batch", cause="local-rank-argument"),
)
scenario(
    name="banner-only-killed", short="bok", layout="worker-N/launch_ddp.log",
    nnodes=3, workers=workers(2),
    env={"LOOP_STYLE": "plain", "PET_RDZV_CONF": "timeout=600"},
    cmd=guide_cmd_with("launch_ddp_quiet.sh"), kill_after=8,
    check=_has("OMP_NUM_THREADS"),
    description="A launch script variant without the `DDP launch:` line (launch_ddp_quiet.sh); platform "
    "WORLD_SIZE=3 but only 2 Workers started, so both wait in rendezvous; after 8 s the platform kills the "
    "whole job (SIGKILL to every process). The logs hold only torchrun's OMP_NUM_THREADS banner.",
    expect=exp(["unexplained-failure"], root="unexplained-failure",
               note="the platform says failed and both launch commands died of SIGKILL (137); the logs hold only "
               "torchrun's start banner, with no `DDP launch` line, so not even nnodes is known. The logs do show both "
               "torchruns stopped before starting any process (in rendezvous), but the job was killed 8 s after "
               "launch, too soon to call that a hang."),
)
scenario(
    name="duplicate-node-rank-zero", short="dnz", layout="worker-N/launch_ddp.log",
    workers=[Worker(rank="0", log="worker-0/launch_ddp.log"),
             Worker(rank="0", log="worker-1/launch_ddp.log", delay=2)],
    env={"LOOP_STYLE": "plain"},
    check=_has("EADDRINUSE"),
    description="2 Workers both given platform RANK=0 on the same master: both run torchrun with node_rank=0 "
    "and try to host the rendezvous store on MASTER_PORT. Worker 1 (started 2 s later; here both share one "
    "network namespace) cannot bind the port; Worker 0 waits for a second node that never joins.",
    expect=exp(["duplicate-node-rank", "hang-in-rendezvous"], root="duplicate-node-rank", node_rank=0,
               note="Worker 1's EADDRINUSE is a symptom of the duplicate node_rank 0 (both Workers host the store), "
               "not an unrelated service on the port."),
)
scenario(
    name="rdzv-c10d-master-lost", short="rcm", layout="worker-N/launch_ddp.log",
    workers=[Worker(rank="0", log="worker-0/launch_ddp.log"),
             Worker(rank="1", log="worker-1/launch_ddp.log", delay=1)],
    env={"LOOP_STYLE": "plain", "TRAIN_STEPS": "60", "STEP_SLEEP": "0.2"},
    cmd=guide_cmd_with("launch_ddp_c10d.sh"), master_is_host=True, kill_worker=(0, "step 5/"),
    check=_has("step 5/"),
    description="torchrun with --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT (launch_ddp_c10d.sh); "
    "MASTER_ADDR is Worker 0's hostname, so Worker 0's agent hosts the rendezvous store. Once the logs show "
    "step 5, Worker 0's whole process tree (launch command, torchrun, training processes, tee) is SIGKILLed, "
    "as when its node is lost; Worker 1 goes on alone.",
    expect=exp(["worker-vanished"], root="worker-vanished", node_rank=0,
               note="the whole node 0 was lost (its log just stops after `step 5/60`, launch status 137); Worker "
               "1's gloo `Connection closed by peer [127.0.1.1]` and c10d store errors (Broken pipe, "
               "RendezvousConnectionError) are consequences. No single rank is named."),
)
scenario(
    name="collective-mismatch-broadcast", short="cmb", layout="worker-N/launch_ddp.log",
    workers=workers(1),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "collective-mismatch", "FAIL_RANKS": "1", "FAIL_STEP": "5",
         "TORCH_DISTRIBUTED_DEBUG": "DETAIL", "GRAD_SYNC": "manual", "ODD_COLLECTIVE": "broadcast_object_list"},
    check=_has("Detected mismatch between collectives"),
    description="1 Worker x 2 GPUs (2 ranks), TORCH_DISTRIBUTED_DEBUG=DETAIL, gradients averaged with explicit "
    "all_reduce calls; at step 5 rank 1 calls broadcast_object_list while rank 0 calls all_reduce.",
    expect=exp(["collective-mismatch"], root="collective-mismatch", node_rank=0, rank=1),
)
scenario(
    name="ddp-unused-parameters-debug", short="dupd", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "unused-param", "TORCH_DISTRIBUTED_DEBUG": "INFO"},
    check=_has("Expected to have finished reduction", "did not receive grad for rank"),
    description="As ddp-unused-parameters (aux_head never used, no find_unused_parameters) with "
    "TORCH_DISTRIBUTED_DEBUG=INFO, so the reducer's error names the parameters that got no grad, per rank.",
    expect=exp(["ddp-unused-parameters", "crash-during-training"], root="ddp-unused-parameters"),
)

# ---------------------------------------------------------------- Batch E: restarts, signals, container logs
def _docker_id(hostname):
    return hashlib.sha256(hostname.encode()).hexdigest()


scenario(
    name="restart-recovered", short="rr", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "transient", "FAIL_RANKS": "1", "FAIL_STEP": "10", "STEP_SLEEP": "0.1",
         "TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"},
    cmd=guide_cmd_with("launch_ddp_restarts.sh"), master_is_host=True,
    check=_has("connection reset by storage server", "training finished"),
    description="torchrun with c10d rendezvous and --max-restarts=1 (launch_ddp_restarts.sh, MASTER_ADDR = Worker 0's "
    "hostname), TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 (see restart-not-recovered). In attempt 0 rank 1 raises RuntimeError at "
    "step 10 (a transient storage fault: a marker file in its OUTPUT_DIR records it, so it happens only once); both "
    "torchruns restart their worker groups and attempt 1 trains 30 steps to the end.",
    expect=exp(["restart-recovered"], healthy=True,
               note="HEALTHY, with a warning that attempt 0 failed (rank 1's RuntimeError) and torchrun restarted the "
               "worker group once; the restarted attempt finished."),
)
scenario(
    name="restart-not-recovered", short="rnr", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "transient", "FAIL_RANKS": "1", "FAIL_STEP": "10", "STEP_SLEEP": "0.1"},
    cmd=guide_cmd_with("launch_ddp_restarts.sh"), master_is_host=True,
    check=_has("connection reset by storage server", "connectFullMesh failed"), tries=6,
    description="As restart-recovered with torch's default shared rendezvous TCP store: rank 1's transient RuntimeError "
    "at step 10 happens only once, but the restarted processes fail in init_process_group: gloo connects to "
    "addresses of the previous attempt (`Gloo connectFullMesh failed ... Connection refused`), and torchrun gives up.",
    expect=exp(["restart-loop", "crash-during-training"], root="crash-during-training", node_rank=0, rank=1,
               note="the first failure is rank 1's RuntimeError in attempt 0; the restarted attempts then failed for "
               "another reason (gloo connecting to the previous attempt's addresses), not the same error again."),
)
scenario(
    name="handled-exception", short="hex", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "handled-io", "FAIL_RANKS": "2", "FAIL_STEP": "12", "STEP_SLEEP": "0.1"},
    check=_has("could not write metrics", "training finished"),
    description="At step 12 rank 2 (Worker 1) appends to a metrics file whose directory does not exist yet; the "
    "FileNotFoundError is caught and logged with logging.exception (message and full traceback), the directory "
    "created and the write retried. Training finished on all ranks.",
    expect=exp([], note="the traceback was caught and logged (`ERROR - could not write metrics ... retrying`); "
               "training went on to `training finished: 30 steps`."),
)
scenario(
    name="platform-walltime-stall", short="pws", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "stall-io", "FAIL_RANKS": "1", "FAIL_STEP": "8", "STEP_SLEEP": "0.1",
         "TRAIN_STEPS": "60", "PG_TIMEOUT_S": "300"},
    send_signal=("SIGTERM", "reloading shard list", 15, "group", None), limit=120,
    check=_has("reloading shard list"),
    description="Rank 1 prints that it reloads the shard list at step 8 and then hangs (sleeps forever); the other "
    "ranks wait in the gradient allreduce with a 300 s collective timeout. 15 s after rank 1's line the platform "
    "stops the job at its wall-time limit: SIGTERM to every Worker's launch process group, long before any "
    "collective timeout.",
    expect=exp(["hang-ended-from-outside"], root="hang-ended-from-outside", node_rank=0, rank=1,
               note="the platform ended a stall before any timeout; the straggler is rank 1: its "
               "`rank 1: reloading shard list ...` line is the last line of node 0's log, after rank 0's `step 7/60`, "
               "while node 1's log ends in its start-up lines as its ranks print nothing in the loop, and nothing "
               "follows on either Worker (both launch commands 143)."),
)
scenario(
    name="walltime-stall-torchrun-signalled", short="wtsig", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "stall-io", "FAIL_RANKS": "1", "FAIL_STEP": "8", "STEP_SLEEP": "0.1",
         "TRAIN_STEPS": "60", "PG_TIMEOUT_S": "300"},
    send_signal=("SIGTERM", "reloading shard list", 15, "torchrun", None), limit=120,
    check=_has("reloading shard list", "death signal"),
    description="As platform-walltime-stall (rank 1 prints that it reloads the shard list at step 8 and hangs; the "
    "others wait in the allreduce with a 300 s collective timeout), but 15 s after rank 1's line the platform sends "
    "SIGTERM to every Worker's torchrun process only, as a container runtime signals a pod's main process: each "
    "torchrun shuts its processes down and reports it, and tee goes on writing.",
    expect=exp(["hang-ended-from-outside"], root="hang-ended-from-outside", node_rank=0, rank=1,
               note="every torchrun received SIGTERM (`Received 15 death signal`) while training had stalled; the "
               "straggler is rank 1, whose `rank 1: reloading shard list ...` line is node 0's last line before the "
               "teardown."),
)
scenario(
    name="sigterm-every-torchrun", short="stet", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "TRAIN_STEPS": "60", "STEP_SLEEP": "0.1"},
    send_signal=("SIGTERM", "step 10/", 0, "torchrun", None),
    check=_has("step 10/", "death signal"),
    description="Training goes on normally; once step 10 shows, the platform sends SIGTERM to every Worker's torchrun "
    "process (Worker 0's first), as a cancel does: each torchrun shuts its processes down.",
    expect=exp(["stopped-from-outside"], root="stopped-from-outside", node_rank=0,
               note="every torchrun received SIGTERM while training went on (each Worker's last line before the "
               "teardown is the loop's progress or its start-up lines): the job was stopped, no rank was stalled."),
)
scenario(
    name="uneven-data", short="ud", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "uneven", "FAIL_RANKS": "2", "FAIL_STEP": "12", "STEP_SLEEP": "0.1"},
    check=_has("step 11/30"),
    description="Each rank trains one pass over its own DataLoader and the script has no final barrier; rank 2's "
    "sampler yields only 11 batches (the others 30), so after step 11 rank 2 leaves the loop, destroys its process "
    "group and exits 0 while the other ranks are in step 12's gradient allreduce.",
    expect=exp(["rank-left-early"], root="rank-left-early", node_rank=1, rank=2,
               note="rank 2 left training early and exited 0 after 11 steps (it is in neither of node 1's failure "
               "entries: rank 3 is the root cause there, `Failures: <NO_OTHER_FAILURES>`, and node 1's torchrun "
               "terminated no process), and every other rank then failed in step 12 with gloo `Connection closed by "
               "peer`."),
)
scenario(
    name="uneven-data-rank1", short="ud1", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "uneven", "FAIL_RANKS": "1", "FAIL_STEP": "6", "STEP_SLEEP": "0.1"},
    check=_has("step 5/30"),
    description="As uneven-data, but the short sampler is rank 1's (Worker 0, beside rank 0, which prints progress): "
    "after step 5 rank 1 leaves the loop, destroys its process group and exits 0 while the other ranks are in step "
    "6's gradient allreduce.",
    expect=exp(["rank-left-early"], root="rank-left-early", node_rank=0, rank=1,
               note="rank 1 is in none of node 0's failure entries and node 0's torchrun stopped no process: it exited "
               "0 after step 5; every other rank then lost its peer in step 6."),
)
for _sig, _short in (("SIGHUP", "shu"), ("SIGINT", "sin")):
    scenario(
        name=f"{_sig.lower()}-from-outside", short=_short, layout="worker-N/launch_ddp.log",
        workers=workers(2),
        env={"LOOP_STYLE": "plain", "TRAIN_STEPS": "60", "STEP_SLEEP": "0.1"},
        send_signal=(_sig, "step 10/", 0, "torchrun", (1,)),
        check=_has("death signal"),
        description=f"Once step 10 shows, Worker 1's torchrun process receives {_sig} from outside (kill -{_sig[3:]} "
        "to its pid, as a closed terminal session or a Ctrl-C would send); it shuts its training processes down.",
        expect=exp(["stopped-from-outside"], root="stopped-from-outside", node_rank=1,
                   note=f"node 1's torchrun says it got {_sig} (`Received {getattr(signal, _sig).value} death signal, "
                   f"shutting down workers`, `SignalException: Process N got signal: {getattr(signal, _sig).value}`) "
                   "before any process failed by itself; node 0's lost peers follow from it."),
    )
scenario(
    name="native-crash-segv", short="seg", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "segv", "FAIL_RANKS": "1", "FAIL_STEP": "10", "STEP_SLEEP": "0.1"},
    check=_has("exitcode: -11"),
    description="At step 10 rank 1 reads address 0 through ctypes.string_at(0): a segmentation fault in native "
    "code (exit -11, no Python traceback).",
    expect=exp(["crash-during-training"], root="crash-during-training", node_rank=0, rank=1,
               note="the closest rule: a training process died (SIGSEGV, exit -11) after training had started; "
               "worker-killed is for SIGKILL only."),
)
scenario(
    name="abort-sigabrt", short="abt", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "abort", "FAIL_RANKS": "2", "FAIL_STEP": "10", "STEP_SLEEP": "0.1"},
    check=_has("exitcode: -6"),
    description="At step 10 rank 2 (Worker 1, local rank 0) calls os.abort(): SIGABRT (exit -6), as a failed C++ "
    "assertion or std::terminate ends a process; no Python traceback.",
    expect=exp(["crash-during-training"], root="crash-during-training", node_rank=1, rank=2,
               note="the closest rule: a training process died (SIGABRT, exit -6) after training had started."),
)
scenario(
    name="container-cri", short="cri", layout="worker-N/0.log (CRI log format, as under /var/log/pods)",
    workers=workers(2, log="worker-{i}/0.log"),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "runtime", "FAIL_RANKS": "1", "FAIL_STEP": "10", "STEP_SLEEP": "0.1"},
    cmd=CRI_CMD,
    check=_has(" stderr P ", " stdout F step 9/30", "non-finite loss"),
    description="As crash-mid-training (rank 1 raises RuntimeError at step 10), but no tee: each Worker's stdout and "
    "stderr are read from separate pipes and written as the CRI runtime (containerd, CRI-O) writes a container's "
    "log file: `<RFC 3339 nano time> <stdout|stderr> <F|P> <text>`, with lines over 200 bytes cut into P (partial) "
    "records and a final F (generate/container_log.py; containerd's own limit is 16 KiB).",
    expect=exp(["crash-during-training"], root="crash-during-training", cause="non-finite-loss", node_rank=0, rank=1),
)
scenario(
    name="container-docker-json", short="dkj", layout="worker-N/<container id>-json.log (Docker json-file)",
    workers=[Worker(rank=str(i), log=f"worker-{i}/{_docker_id(f'job-dkj-worker-{i}')}-json.log") for i in range(2)],
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "runtime", "FAIL_RANKS": "1", "FAIL_STEP": "10", "STEP_SLEEP": "0.1"},
    cmd=DOCKER_JSON_CMD,
    check=_has('"stream":"stderr"', '{"log":"step 9/30', "non-finite loss"),
    description="As container-cri, written as Docker's json-file log driver writes a container's log: one JSON "
    "object per line, `{\"log\":\"<text>\\n\",\"stream\":\"stdout|stderr\",\"time\":\"<RFC 3339 nano>\"}` "
    "(generate/container_log.py).",
    expect=exp(["crash-during-training"], root="crash-during-training", cause="non-finite-loss", node_rank=0, rank=1),
)
scenario(
    name="elastic-late-node", short="eln", layout="worker-N/launch_ddp.log",
    workers=[Worker(rank="0", log="worker-0/launch_ddp.log"),
             Worker(rank="1", log="worker-1/launch_ddp.log", delay=15)],
    env={"LOOP_STYLE": "plain", "TRAIN_STEPS": "60", "STEP_SLEEP": "0.3",
         "PET_RDZV_CONF": "join_timeout=60,last_call_timeout=3", "TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"},
    cmd=guide_cmd_with("launch_ddp_elastic.sh"), master_is_host=True,
    check=_has("WORLD_SIZE= 2", "WORLD_SIZE= 4", "training finished"),
    description="Elastic torchrun: --nnodes=1:2 with c10d rendezvous (launch_ddp_elastic.sh), MASTER_ADDR = Worker 0's "
    "hostname, TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 (see elastic-late-node-reform-timeout). Worker 1 starts 15 s late: "
    "Worker 0 first trains alone (world of 2), then its torchrun sees a new node waiting, stops its workers and the "
    "world re-forms with 4 processes, which train 60 steps to the end.",
    expect=exp([], note="the first, 2-process world was ended by torchrun for a membership change, not a failure."),
)
scenario(
    name="elastic-late-node-reform-timeout", short="elt", layout="worker-N/launch_ddp.log",
    workers=[Worker(rank="0", log="worker-0/launch_ddp.log"),
             Worker(rank="1", log="worker-1/launch_ddp.log", delay=15)],
    env={"LOOP_STYLE": "plain", "TRAIN_STEPS": "60", "STEP_SLEEP": "0.3",
         "PET_RDZV_CONF": "join_timeout=60,last_call_timeout=3"},
    cmd=guide_cmd_with("launch_ddp_elastic.sh"), master_is_host=True,
    check=_has("WORLD_SIZE= 2", "/MASTER_ADDR"),
    description="As elastic-late-node, with torch's default shared rendezvous TCP store: Worker 0 trains alone, "
    "stops its workers when Worker 1 arrives, and the second rendezvous round never completes: Worker 1 waits for "
    "the round's MASTER_ADDR key, Worker 0 (rank 0 again, so it does not publish it anew) for the role_info keys; "
    "both time out after the 60 s join timeout.",
    expect=exp(["hang-in-rendezvous"], root="hang-in-rendezvous", node_rank=None,
               note="node 0's `WORLD_SIZE= 2` env prints belong to the first round of an elastic job (--nnodes=1:2), "
               "not to a leaked WORLD_SIZE; the failure is the second round: both nodes time out in rendezvous, "
               "each waiting for keys the other was to write."),
)
scenario(
    name="file-lock-wait", short="flw", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "file-lock", "FAIL_RANKS": "3", "FAIL_STEP": "8", "STEP_SLEEP": "0.1",
         "TRAIN_STEPS": "60", "PG_TIMEOUT_S": "300"},
    cmd=LOCK_HELD_CMD, kill_after=40,
    check=_has("waiting for lock"),
    description="On each Worker a leftover process holds OUTPUT_DIR/data-cache.lock (flock). At step 8 rank 3 "
    "(Worker 1, local rank 1) prints that it waits for that lock and blocks in flock() forever; the others wait in "
    "the allreduce (300 s timeout). 40 s after the start the platform kills the whole job (SIGKILL to every process).",
    expect=exp(["hang-ended-from-outside"], root="hang-ended-from-outside", node_rank=1, rank=3,
               note="rank 3's `rank 3: waiting for lock .../data-cache.lock` is the last line of node 1, while node 0's "
               "log ends in the loop's `step 7/60`, and nothing follows on either Worker (killed, 137)."),
)
scenario(
    name="script-exit-1", short="se1", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "exit-1", "FAIL_RANKS": "1", "FAIL_STEP": "10", "STEP_SLEEP": "0.1"},
    check=_has("error: rank 1: label file"),
    description="At step 10 rank 1 prints its own message `error: rank 1: label file ... has 3 classes, model expects "
    "4` to stderr and calls sys.exit(1): no traceback.",
    expect=exp(["crash-during-training"], root="crash-during-training", node_rank=0, rank=1,
               note="the decisive line is the script's own `error: rank 1: label file ... model expects 4`, then "
               "torchrun's `failed (exitcode: 1) local_rank: 1`; there is no traceback."),
)
scenario(
    name="killed-silently", short="ksi", layout="worker-N/launch_ddp.log",
    workers=workers(1),
    env={"LOOP_STYLE": "plain", "TRAIN_STEPS": "60", "STEP_SLEEP": "0.2"},
    kill_worker=(0, "step 10/"),
    check=_has("step 10/"),
    description="1 Worker x 2 GPUs; once step 10 shows, the platform SIGKILLs the Worker's whole process tree "
    "(launch command, torchrun, training processes, tee), as when its container is killed. The log just stops.",
    expect=exp(["unexplained-failure"], root="unexplained-failure", node_rank=None,
               note="the only evidence is the platform status (failed), the launch status 137 and a log whose last "
               "line is an ordinary `step 10/60 loss ...`."),
)

# ---------------------------------------------------------------- Batch F: some of Batch E under torch 2.4.1
_BY_NAME = {sc.name: sc for sc in SCENARIOS}
for _name, _short in (("restart-recovered", "rrt24"), ("sighup-from-outside", "shut24"),
                      ("native-crash-segv", "segt24")):
    _base = _BY_NAME[_name]
    _kw = {**_base.__dict__, "name": f"{_name}-torch2.4", "short": _short, "torch": "2.4.1",
           "description": "torch 2.4.1: " + _base.description}
    if _name == "restart-recovered":
        # torch's default rendezvous settings: 2.4.1 restarts fine with them.
        _kw["env"] = {k: v for k, v in _base.env.items() if k != "TORCH_DISABLE_SHARE_RDZV_TCP_STORE"}
        _kw["description"] = ("torch 2.4.1: torchrun with c10d rendezvous and --max-restarts=1 (launch_ddp_restarts.sh, "
                              "MASTER_ADDR = Worker 0's hostname), torch's default rendezvous settings. In attempt 0 "
                              "rank 1 raises RuntimeError at step 10 (a transient storage fault, only once); both "
                              "torchruns restart their worker groups and attempt 1 trains 30 steps to the end.")
    scenario(**_kw)
# torch 2.4.1 re-forms the elastic world with its default settings (no shared rendezvous TCP store issue).
_base = _BY_NAME["elastic-late-node-reform-timeout"]
scenario(**{**_base.__dict__, "name": "elastic-late-node-torch2.4", "short": "elnt24", "torch": "2.4.1",
            "check": _has("WORLD_SIZE= 2", "WORLD_SIZE= 4", "training finished"),
            "description": "torch 2.4.1: elastic torchrun, --nnodes=1:2 with c10d rendezvous (launch_ddp_elastic.sh), "
            "MASTER_ADDR = Worker 0's hostname, torch's default rendezvous settings (as in "
            "elastic-late-node-reform-timeout). Worker 1 starts 15 s late: Worker 0 first trains alone (world of 2), then "
            "stops its workers and the world re-forms with 4 processes, which train 60 steps to the end.",
            "expect": _BY_NAME["elastic-late-node"].expect})
# The rank that left training early, under torch 2.4.1's torchrun (its own summary and logging).
_base = _BY_NAME["uneven-data"]
scenario(**{**_base.__dict__, "name": "uneven-data-torch2.4", "short": "udt24", "torch": "2.4.1",
            "description": "torch 2.4.1: " + _base.description})

# A Worker whose container has a small /dev/shm (SHM_SIZE, a tmpfs mounted in its own mount
# namespace, as a container runtime gives each container its own), with a DataLoader whose worker
# processes hand batches over through it.
SHM_CMD = """set -euo pipefail
if [ -n "${SHM_SIZE:-}" ]; then mount -t tmpfs -o "size=$SHM_SIZE" shm /dev/shm; fi
""" + GUIDE_CMD
scenario(
    name="dataloader-shm-full", short="dsf", layout="worker-N/launch_ddp.log",
    workers=[Worker(rank="0", gpus=2, log="worker-0/launch_ddp.log"),
             Worker(rank="1", gpus=2, log="worker-1/launch_ddp.log", env={"SHM_SIZE": "160k"})],
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "loader-workers"},
    cmd=SHM_CMD,
    description="Every rank loads batches with DataLoader(num_workers=2). Worker 1's container has a 160 KiB "
    "/dev/shm: its first batches fit, then a DataLoader worker cannot hand over the next one (ATen's `unable "
    "to allocate shared memory(shm) for file </torch_...>: No space left on device (28)`, re-raised in the "
    "training process by way of the collate frames), and that rank crashes; the others lose their peer.",
    expect=exp(["crash-during-training"], root="crash-during-training", node_rank=1, rank=3, cause="shared-memory"),
    check=_has("unable to allocate shared memory(shm)"),
)
_base = SCENARIOS[-1]  # dataloader-shm-full
scenario(**{**_base.__dict__, "name": "dataloader-shm-semaphore", "short": "dss",
            "workers": [Worker(rank="0", gpus=2, log="worker-0/launch_ddp.log"),
                        Worker(rank="1", gpus=2, log="worker-1/launch_ddp.log", env={"SHM_SIZE": "32k"})],
            "description": "As dataloader-shm-full with a 32 KiB /dev/shm on Worker 1: multiprocessing cannot "
            "even create the DataLoader's semaphores there (`OSError: [Errno 28] No space left on device` from "
            "`_multiprocessing.SemLock(`), before the first batch.",
            "expect": exp(["crash-before-first-batch"], root="crash-before-first-batch", node_rank=1, rank=2,
                          cause="shared-memory"),
            "check": _has("SemLock(")})

# ---------------------------------------------------------------- Batch G: the stage from torch's own warnings
# No progress line at all (LOOP_STYLE=silent): only DDP's find_unused_parameters warning, which each process
# prints at the end of its first forward with gradients on, says that a process had started training.
scenario(
    name="crash-training-silent", short="cts", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "silent", "FIND_UNUSED": "1", "FAIL_KIND": "bad-record", "FAIL_RANKS": "1",
         "FAIL_STEP": "5", "STEP_SLEEP": "0.1"},
    check=_has("find_unused_parameters=True was specified", "expected 16 features"),
    description="2 Workers x 2 GPUs, a script that prints no progress; DDP is built with "
    "find_unused_parameters=True on a model that uses every parameter, so each process prints DDP's warning "
    "after its first forward. Rank 1 raises ValueError on a malformed record at step 5; the others lose their "
    "peer.",
    expect=exp(["crash-during-training"], root="crash-during-training", node_rank=0, rank=1,
               note="no progress line anywhere: rank 1's own find_unused_parameters warning, printed before its "
               "traceback, is the only evidence that it was training."),
)
scenario(
    name="crash-first-batch-silent", short="cfs", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "silent", "FIND_UNUSED": "1", "FAIL_KIND": "bad-record", "FAIL_RANKS": "1",
         "FAIL_STEP": "1", "STEP_SLEEP": "0.1"},
    check=_all(_has("expected 16 features"), _warned_by_others("find_unused_parameters=True was specified", 1)),
    tries=4,
    description="As crash-training-silent, but rank 1 raises on its first batch, before its first forward: it "
    "prints no find_unused_parameters warning, while the other ranks, which ran their first forward, print "
    "theirs and then lose their peer in the gradient allreduce.",
    expect=exp(["crash-before-first-batch"], root="crash-before-first-batch", node_rank=0, rank=1,
               note="the other ranks' warnings say that they were training, not rank 1: the warning places only "
               "the process that printed it."),
)

_base = SCENARIOS[-2]  # crash-training-silent
scenario(**{**_base.__dict__, "name": "crash-training-silent-torch2.0", "short": "ctst20", "torch": "2.0.1",
            "description": "torch 2.0.1: " + _base.description + " This release prints the warning without a rank "
            "prefix (`[W reducer.cpp:1300] Warning: ...`) and puts none on tracebacks.",
            "expect": exp(["crash-during-training"], root="crash-during-training", node_rank=0, rank=1,
                          note="no rank prefixes: the two unprefixed warnings on worker 0, one per process of a "
                          "Worker of two, say that both of its processes were training. Which of them raised is "
                          "told only by torchrun's summary: in the committed run it names rank 1 as root cause and "
                          "leaves out the SIGTERMed rank 0; a rerun can name a victim (crash-mid-training-torch2.0).")})
scenario(
    name="healthy-unused-param-found", short="hupf", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "TRAIN_STEPS": "30", "FIND_UNUSED": "1", "FAIL_KIND": "unused-param"},
    check=_has("training finished"),
    description="2 Workers x 2 GPUs, DDP with find_unused_parameters=True on a model whose auxiliary head forward() "
    "never calls: DDP finds the unused parameters every step, so it prints no find_unused_parameters warning; "
    "training finishes.",
    expect=exp([]),
)
def _split_record(logs):
    """A json-file record whose line goes on in the next record (its "log" lacks the newline)."""
    pieces = re.compile(rb'^\{"log":"(?:[^"\\]|\\.)*(?<!\\n)","stream"', re.MULTILINE)
    return None if any(pieces.search(log) for log in logs.values()) else "no record split in pieces"


# Docker's json-file driver splits a line longer than its 16 KiB buffer into records whose "log"
# lacks the final newline; here the writer's buffer is 200 bytes, so torch's long lines are split.
scenario(**{**_BY_NAME["container-docker-json"].__dict__, "name": "container-docker-json-split",
            "short": "dks",
            "workers": [Worker(rank=str(i), log=f"worker-{i}/{_docker_id(f'job-dks-worker-{i}')}-json.log")
                        for i in range(2)],
            "cmd": DOCKER_JSON_CMD.replace('launch_ddp.log" --', 'launch_ddp.log" --max-line 200 --'),
            # Concurrent env prints may split a value from its key across lines (a race of the
            # processes' writes, which this scenario is not about): such a run is tried again.
            "check": _all(_has('{"log":"step 9/30', "non-finite loss",
                               *(f"RANK= {r} LOCAL_RANK= {r % 2} WORLD_SIZE= 4" for r in range(4))),
                          _split_record), "tries": 5,
            "description": "As container-docker-json, with the writer's buffer at 200 bytes instead of Docker's "
            "16 KiB: every longer line (the OMP_NUM_THREADS banner, gloo's lost-peer errors) is written as "
            "records whose \"log\" does not end in a newline, the last piece carrying it "
            "(generate/container_log.py --max-line 200).",
            "observed": "Five records end without a newline, each followed by the one that ends its line: "
            "each Worker's OMP_NUM_THREADS banner line (`... please further tune th` | `e variable for "
            "optimal performance ...`) and ranks 0, 2 and 3's gloo RuntimeError (`... Check t` | `he logs of "
            "the remote worker before reporting an error. GLHF! ...`), all on stderr."})

# ---------------------------------------------------------------- Batch P: production shape
# Production training scripts do not print the guide's temporary `torchrun env:` check and log progress
# from rank 0 only (train.py already does); some launch scripts print no `DDP launch:` line either. Each
# twin reruns a scenario so (PRINT_ENV=0; "-quiet": launch_ddp_quiet.sh; "-nostatus": no platform
# status kept), with the diagnosis a correct tool gives from what is left.
QUIET_CMD = guide_cmd_with("launch_ddp_quiet.sh")
QUIET_STAMPED_CMD = STAMPED_CMD.replace("launch_ddp.sh", "launch_ddp_quiet.sh")
_PROD = "Production shape (no `torchrun env:` print, progress from rank 0 only"


def production_twin(base: str, suffix: str, short: str, expect: dict, quiet: bool = False, info: bool = False,
                    **changes):
    """A Batch P twin of scenario `base`. quiet: launch_ddp_quiet.sh (no `DDP launch:` line); info: torchrun
    at LOGLEVEL=INFO, so its agent logs its launch configs and each rendezvous result."""
    sc = _BY_NAME[base]
    cmd = sc.cmd
    if quiet:
        assert "launch_ddp.sh" in cmd, base
        cmd = cmd.replace("launch_ddp.sh", "launch_ddp_quiet.sh")
    what = _PROD + (", no `DDP launch:` line" if quiet else "") + \
        (", torchrun at LOGLEVEL=INFO" if info else "") + \
        (", no platform status kept" if not changes.get("platform_status", True) else "") + "). "
    fields = {**sc.__dict__, "name": f"{base}-{suffix}", "short": short, "cmd": cmd,
              "env": {**sc.env, "PRINT_ENV": "0", **({"LOGLEVEL": "INFO"} if info else {})}, "expect": expect,
              "description": what + sc.description,
              "observed": "No process prints its env; only rank 0 prints progress, so node 1's log holds "
                          + ("torchrun's banner" if quiet else "its launch line and torchrun's banner")
                          + " and, where something failed there, its tracebacks and torchrun's report. "}
    fields.update(changes)
    scenario(**fields)


_BY_NAME = {sc.name: sc for sc in SCENARIOS}
production_twin("healthy-2x2", "prod", "h22p", exp([]), outputs_in_sample=False)
production_twin("healthy-2x2", "prod-quiet", "h22pq", exp([]), quiet=True, outputs_in_sample=False)
production_twin("healthy-2x2", "prod-nostatus", "h22pn", exp([]), outputs_in_sample=False, platform_status=False)
production_twin("healthy-2x2", "prod-quiet-nostatus", "h22pqn", exp([]), quiet=True, outputs_in_sample=False,
                platform_status=False)
production_twin("healthy-timestamps", "prod", "htsp", exp([]), check=_has("training finished"))
production_twin("healthy-timestamps", "prod-quiet", "htspq", exp([]), quiet=True, check=_has("training finished"))
production_twin("crash-mid-training", "prod", "cmtp",
                exp(["crash-during-training"], root="crash-during-training", cause="non-finite-loss", node_rank=0,
                    rank=1), check=_has("non-finite loss"))
_NO_NODE = ("no launch line, and at the default log level torchrun prints no node rank: each Worker's torchrun "
            "failure report numbers it (an entry's rank less its local rank is the Worker's first rank, and node n "
            "starts at n x nproc_per_node).")
production_twin("crash-mid-training", "prod-quiet", "cmtpq",
                exp(["crash-during-training"], root="crash-during-training", cause="non-finite-loss", node_rank=0,
                    rank=1, note=_NO_NODE), quiet=True, check=_has("non-finite loss"))
production_twin("import-error-one-rank", "prod", "iep",
                exp(["crash-before-first-batch"], root="crash-before-first-batch", node_rank=1, rank=3,
                    cause="missing-dependency"))
production_twin("self-sigkill", "prod", "skp", exp(["worker-killed"], root="worker-killed", node_rank=1, rank=2))
production_twin("missing-worker", "prod", "mwp",
                exp(["missing-worker", "hang-in-rendezvous"], root="missing-worker", node_rank=2))
production_twin("stall-mid-training", "prod", "smtp",
                exp(["collective-timeout"], root="collective-timeout", node_rank=0, rank=1))
production_twin("stall-mid-training", "prod-quiet", "smtpq",
                exp(["collective-timeout"], root="collective-timeout", node_rank=0, rank=1, note=_NO_NODE),
                quiet=True)
production_twin("platform-walltime-stall", "prod", "pwsp",
                exp(["hang-ended-from-outside"], root="hang-ended-from-outside", node_rank=0, rank=1))
production_twin("uneven-data", "prod", "udp", exp(["rank-left-early"], root="rank-left-early", node_rank=1, rank=2))
production_twin("sigterm-every-torchrun", "prod", "stetp", _BY_NAME["sigterm-every-torchrun"].expect)
production_twin("masked-plain-tee", "prod", "mptp", _BY_NAME["masked-plain-tee"].expect)
production_twin("hang-still-running", "prod", "hsrp",
                exp(["hang-before-first-batch"], root="hang-before-first-batch", verdict="FAILED"),
                check=None)
# A job that hangs mid-training while it still runs: rank 1 stops at step 8, the others wait in the
# gradient allreduce (10 min timeout); the logs are copied 45 s after launch, the platform says running.
scenario(
    name="stall-still-running-prod", short="ssrp", layout="logs/<hostname>.log",
    workers=workers(2, log="logs/job-ssrp-worker-{i}.log"),
    env={"LOOP_STYLE": "logging", "FAIL_KIND": "stall-io", "FAIL_RANKS": "1", "FAIL_STEP": "8", "STEP_SLEEP": "0.1",
         "TRAIN_STEPS": "60", "PG_TIMEOUT_S": "600", "PRINT_ENV": "0", "PYTHONUNBUFFERED": "1"},
    cmd=STAMPED_CMD, snapshot_after=45, limit=120, check=_has("reloading shard list"),
    description=_PROD + "). Every line stamped as `kubectl logs --timestamps` does. Rank 1 prints that it "
    "reloads the shard list at step 8 and sleeps forever; the others wait in the gradient allreduce with a "
    "600 s collective timeout. The logs were copied 45 s after launch while the job was still running.",
    expect=exp(["stall-during-training"], root="stall-during-training", node_rank=0, rank=1,
               note="applies when scanned a few minutes after the last line: steps came 0.1 s apart, then "
               "nothing; rank 1's `reloading shard list` line is the last line of node 0's log."),
)
scenario(**{**SCENARIOS[-1].__dict__, "name": "stall-still-running-prod-plain", "short": "ssrpp",
            "layout": "worker-N/launch_ddp.log", "workers": workers(2), "cmd": GUIDE_CMD,
            "env": {**SCENARIOS[-1].env, "LOOP_STYLE": "plain"},
            "description": SCENARIOS[-1].description.replace("Every line stamped as `kubectl logs --timestamps` "
                                                            "does. ", "Lines carry no times. ")})

# A healthy job copied while it trains: steps 0.5 s apart from rank 0, the platform says running. Read
# at the moment of the copy it is running; read much later with the platform still saying running, the
# same lines are a stall.
scenario(
    name="running-mid-training-prod", short="rmtp", layout="logs/<hostname>.log",
    workers=workers(2, log="logs/job-rmtp-worker-{i}.log"),
    env={"LOOP_STYLE": "logging", "STEP_SLEEP": "0.5", "TRAIN_STEPS": "400", "PRINT_ENV": "0",
         "PYTHONUNBUFFERED": "1"},
    cmd=STAMPED_CMD, snapshot_after=40, limit=120, check=_has("iter 20 "),
    description=_PROD + "). Every line stamped as `kubectl logs --timestamps` does. 400 steps 0.5 s apart; the "
    "logs were copied 40 s after launch while the job trained normally, and the platform says running.",
    expect=exp(["stall-during-training"], root="stall-during-training", first="none",
               note="applies when scanned long after the copy with the platform still saying running (the "
               "samples are read at a fixed later time); read within seconds of its last line it is RUNNING with "
               "no finding (tests/test_running_jobs.py)."),
)

# Stalls the platform ended before any timeout, with no straggler's line to name anyone: the silence
# before the stop, against the job's own rhythm, says the stall came first.
scenario(
    name="stall-silent-sigterm-prod", short="sssp", layout="logs/<hostname>.log",
    workers=workers(2, log="logs/job-sssp-worker-{i}.log"),
    env={"LOOP_STYLE": "logging", "FAIL_KIND": "stall", "FAIL_RANKS": "1", "FAIL_STEP": "8", "STEP_SLEEP": "0.15",
         "TRAIN_STEPS": "60", "PG_TIMEOUT_S": "300", "PRINT_ENV": "0", "PYTHONUNBUFFERED": "1"},
    cmd=STAMPED_CMD, send_signal=("SIGTERM", "iter 5 ", 40, "torchrun", None), limit=150,
    check=_has("iter 5 ", "death signal"),
    description=_PROD + "). Every line stamped as `kubectl logs --timestamps` does. Rank 1 stops silently "
    "(a long sleep, nothing printed) at step 8; the others wait in the gradient allreduce with a 300 s "
    "collective timeout. About 40 s after rank 0's `iter 5` line the platform sends SIGTERM to every Worker's "
    "torchrun, long before any timeout.",
    expect=exp(["hang-ended-from-outside"], root="hang-ended-from-outside", node_rank=None, rank=None,
               note="steps came 0.15 s apart, then nothing for about 40 s until the stop: the stall came first and "
               "the stop only ended it. No line names the straggler (it printed nothing)."),
)
scenario(
    name="hang-before-first-batch-sigterm-prod", short="hbsp", layout="logs/<hostname>.log",
    workers=workers(2, log="logs/job-hbsp-worker-{i}.log"),
    env={"LOOP_STYLE": "logging", "FAIL_KIND": "block-before-first-batch", "FAIL_RANKS": "1",
         "PG_TIMEOUT_S": "600", "PRINT_ENV": "0", "PYTHONUNBUFFERED": "1"},
    cmd=STAMPED_CMD, send_signal=("SIGTERM", None, 45, "torchrun", None), limit=150,
    check=_has("death signal"),
    description=_PROD + "). Every line stamped as `kubectl logs --timestamps` does. Rank 1 blocks forever "
    "before its first batch while the others wait in the first collective (10 min timeout); 45 s after the "
    "launch the platform sends SIGTERM to every Worker's torchrun.",
    expect=exp(["hang-ended-from-outside"], root="hang-ended-from-outside", node_rank=None, rank=None,
               note="nothing came from any process after torchrun's start-up until the stop: a stall before the "
               "first batch that the platform ended, not a job stopped while it worked."),
)

production_twin("uneven-data", "empty-prod", "udep",
                exp(["rank-left-early"], root="rank-left-early", node_rank=1, rank=2,
                    note="rank 2's sampler yields no batch: it leaves before the first batch and exits 0, and the "
                    "others lose their peer in the first gradient allreduce."),
                env={**_BY_NAME["uneven-data"].env, "FAIL_STEP": "1", "PRINT_ENV": "0"},
                check=_has("Connection closed by peer"),
                description=_PROD + "). As uneven-data, but rank 2's sampler yields no batch at all: it leaves "
                "the loop before its first batch, destroys its process group and exits 0 while the other ranks "
                "are in the first gradient allreduce.")

# The families that had no production twin yet.
_GCM = exp(["gpu-count-mismatch"], root="gpu-count-mismatch", node_rank=None, first="none")
production_twin("gpu-count-mismatch", "prod", "gcmp", _GCM, check=_has("training finished"))
production_twin("gpu-count-mismatch", "prod-quiet-info", "gcmpqi",
                {**_GCM, "note": "no launch line: torchrun's launch configs give each Worker's nproc_per_node "
                 "(2 and 1) and its rendezvous result the world of 3."},
                quiet=True, info=True, check=_has("training finished"))
# No launch line and torchrun at its default level: node 1's torchrun, with one process, prints not even its
# OMP_NUM_THREADS banner (only nproc_per_node > 1 does), so node 1's log is empty and nothing in the logs
# says how many processes either node ran. The logs cannot tell the mismatch; they cannot vouch for node 1.
_EMPTY_NODE = ("node 1's log is empty (torchrun prints its banner only for nproc_per_node > 1, and only rank 0 "
               "logs): nothing shows that node 1 ran, or with how many processes, so the logs can call the job "
               "neither HEALTHY nor FAILED.")
_EMPTY_GAP = ("an empty Worker log is dropped at discovery (a note, `empty file`), so the verdict sees one Worker "
              "that finished and says HEALTHY; it needs the empty log counted as a Worker that shows nothing "
              "(logscan.files.discovery, logscan.diagnose.verdict).")
production_twin("gpu-count-mismatch", "prod-quiet", "gcmpq",
                exp([], healthy=False, verdict="INCONCLUSIVE", note=_EMPTY_NODE, gap=_EMPTY_GAP), quiet=True,
                check=_has("training finished"))
production_twin("gpu-count-mismatch", "prod-quiet-nostatus", "gcmpqn",
                exp([], healthy=False, verdict="INCONCLUSIVE", note=_EMPTY_NODE, gap=_EMPTY_GAP), quiet=True,
                platform_status=False, check=_has("training finished"))
# Without the env print, the WORLD_SIZE the processes saw is in gloo's refusal of their ranks (`rank < size.
# 2 vs 2`), whose hint is the fix; that it equals nnodes is for the reader.
_WSL = exp(["gloo-rank-out-of-range", "crash-before-first-batch"], root="gloo-rank-out-of-range", node_rank=1,
           rank=2, note="no env print: gloo's `rank < size. 2 vs 2` on node 1 is what shows the processes' "
           "WORLD_SIZE (2, the platform's Worker count) is not the launch's 4.")
production_twin("world-size-leak", "prod", "wslp", _WSL, check=_has("rank < size"))
production_twin("world-size-leak", "prod-quiet-info", "wslpqi", _WSL, quiet=True, info=True,
                check=_has("rank < size"))
production_twin("log-collision", "prod", "lcp",
                exp(["missing-worker-log"], healthy=True,
                    note="both Workers `tee -i` the same file, each from offset 0: node 1's launch line and banner "
                    "overwrote node 0's byte for byte (lines of the same length), and only node 0's rank 0 printed "
                    "more, so nothing shows two writers. The file reads as node 1's log; node 0's is not there "
                    "(missing-worker-log, whose hint is the fix: a log path per Worker)."))
production_twin("elastic-late-node", "prod", "elnp", _BY_NAME["elastic-late-node"].expect,
                check=_has("training finished"))
production_twin("container-cri", "prod", "crip", _BY_NAME["container-cri"].expect,
                check=_has(" stderr P ", "non-finite loss"))
production_twin("container-docker-json", "prod", "dkjp", _BY_NAME["container-docker-json"].expect,
                check=_has('"stream":"stderr"', "non-finite loss"),
                workers=[Worker(rank=str(i), log=f"worker-{i}/{_docker_id(f'job-dkjp-worker-{i}')}-json.log")
                         for i in range(2)])
production_twin("ddp-unused-parameters-debug", "prod", "dupdp", _BY_NAME["ddp-unused-parameters-debug"].expect)

# torch 2.14.1 (the CUDA wheel, run on the CPU with gloo), production shape only: no env print, progress
# from rank 0. A release the debugging-shape samples do not have.
for _base, _short, _expect in (
        ("healthy-2x2", "h22t214", exp([])),
        ("crash-mid-training", "cmtt214", exp(["crash-during-training"], root="crash-during-training",
                                              cause="non-finite-loss", node_rank=0, rank=1)),
        ("import-error-one-rank", "iet214", exp(["crash-before-first-batch"], root="crash-before-first-batch",
                                                node_rank=1, rank=3, cause="missing-dependency")),
        ("self-sigkill", "skt214", exp(["worker-killed"], root="worker-killed", node_rank=1, rank=2)),
        ("stall-mid-training", "smtt214", exp(["collective-timeout"], root="collective-timeout", node_rank=0,
                                              rank=1)),
        ("platform-walltime-stall", "pwst214", exp(["hang-ended-from-outside"], root="hang-ended-from-outside",
                                                   node_rank=0, rank=1))):
    _sc = _BY_NAME[_base]
    scenario(**{**_sc.__dict__, "name": f"{_base}-torch2.14-prod", "short": _short, "torch": "2.14.1",
                "env": {**_sc.env, "PRINT_ENV": "0"}, "expect": _expect, "outputs_in_sample": False,
                "check": _has("training finished") if _base == "healthy-2x2" else
                _has("non-finite loss") if _base == "crash-mid-training" else _sc.check,
                "description": "torch 2.14.1: " + _PROD + "). " + _sc.description,
                "observed": ""})

# torch 1.9 to 1.12 (CUDA wheels, run on the CPU with gloo), production shape only. torch 1.9 has no torchrun
# command: its launch scripts run `python -m torch.distributed.run` (TORCHRUN). None of these releases puts
# `[rankN]: ` on tracebacks.
_NO_PREFIX = ("rank 1 raised, but this release puts no `[rankN]: ` prefix on tracebacks and only rank 0 prints "
              "progress, so the logs tell that the original error is on node 0, not which of its ranks raised it.")
_STOP_1_9 = ("torch 1.9's torchrun handles no signal: it dies of the SIGTERM without a line, and only the shell's "
             "`Terminated` on node 1 tells the stop (node 0's log ends in its progress, its shell's report lost).")
_ROOT_1_9 = ("no `[rankN]: ` prefixes, but in the committed run node 0's torchrun saw rank 1 fail first and stopped "
             "rank 0 without a word (1.9 logs no `Sending process N closing signal`): its summary lists only rank 1, "
             "as root cause, and the one traceback that is not a lost peer is rank 1's.")
_MISSING_OLD = ("Platform WORLD_SIZE=3 (nnodes=3) but only Workers 0 and 1 were started; Worker 2 never ran. Both "
                "wait in torchrun's static rendezvous, which in these releases gives up only after many minutes "
                "whatever PET_RDZV_CONF=timeout=20 says; after 5 minutes the run was ended from outside (SIGTERM to "
                "each Worker's launch, status 143), as a platform's limit ends such a job.")
for _ver, _sfx, _tag in (("1.9.1", "torch1.9", "t19"), ("1.10.2", "torch1.10", "t110"),
                         ("1.11.0", "torch1.11", "t111"), ("1.12.1", "torch1.12", "t112")):
    _oldest = _ver in ("1.9.1", "1.10.2")
    for _base, _short, _expect in (
            ("healthy-2x2", "h22", exp([])),
            ("crash-mid-training", "cmt", exp(["crash-during-training"], root="crash-during-training",
                                              cause="non-finite-loss", node_rank=0, rank=1, note=_ROOT_1_9)
             if _ver == "1.9.1" else exp(["crash-during-training"], root="crash-during-training",
                                         cause="non-finite-loss", node_rank=0, rank=None, note=_NO_PREFIX)),
            ("self-sigkill", "sk", exp(["worker-killed"], root="worker-killed", node_rank=1, rank=2)),
            ("stall-mid-training", "smt", exp(["collective-timeout"], root="collective-timeout", node_rank=0,
                                              rank=1)),
            ("missing-worker", "mw", exp(["missing-worker", "hang-in-rendezvous"], root="missing-worker",
                                         node_rank=2)),
            ("platform-walltime-stall", "pws", exp(["hang-ended-from-outside"], root="hang-ended-from-outside",
                                                   node_rank=0, rank=1)),
            ("import-error-one-rank", "ie", exp(["crash-before-first-batch"], root="crash-before-first-batch",
                                                node_rank=1, rank=3, cause="missing-dependency")),
            ("sigterm-every-torchrun", "stet", exp(["stopped-from-outside"], root="stopped-from-outside",
                                                   node_rank=1, note=_STOP_1_9) if _ver == "1.9.1" else
             exp(["stopped-from-outside"], root="stopped-from-outside", node_rank=0))):
        if _base in ("stall-mid-training", "missing-worker", "platform-walltime-stall",
                     "sigterm-every-torchrun") and not _oldest:
            continue
        if _base == "import-error-one-rank" and _ver not in ("1.9.1", "1.12.1"):
            continue
        _sc = _BY_NAME[_base]
        scenario(**{**_sc.__dict__, "name": f"{_base}-{_sfx}-prod", "short": f"{_short}{_tag}p", "torch": _ver,
                    # 1.11's torchrun segfaults at its exit barrier under Python 3.10 (see below)
                    "python": "3.9" if _ver == "1.11.0" else None,
                    "env": {**_sc.env, "PRINT_ENV": "0",
                            **({"TORCHRUN": "python -m torch.distributed.run"} if _ver == "1.9.1" else {})},
                    "expect": _expect, "outputs_in_sample": False,
                    # The store host of these releases waits for the missing node for good: the
                    # safety net ends the run once the other node has given up.
                    "limit": 150 if _base == "missing-worker" else _sc.limit,
                    "tries": 1 if _base == "missing-worker" else _sc.tries,
                    "check": _has("training finished") if _base == "healthy-2x2" else
                    _has("non-finite loss") if _base == "crash-mid-training" else
                    _any("Socket Timeout", "Timed out", "timed out") if _base == "missing-worker" else
                    _has("step 10/") if _base == "sigterm-every-torchrun" else _sc.check,
                    "description": f"torch {_ver}" + (" (`python -m torch.distributed.run`: no torchrun command "
                                                       "yet)" if _ver == "1.9.1" else "") + ": " + _PROD + "). "
                    + (_MISSING_OLD if _base == "missing-worker" else _sc.description),
                    "observed": ""})

# torch 1.9 without the launch line: the node of each failure from 1.9's own table (an entry's rank less its
# local rank is the node's first rank).
for _base, _short in (("crash-mid-training", "cmt19pq"), ("self-sigkill", "sk19pq")):
    _sc = next(sc for sc in SCENARIOS if sc.name == f"{_base}-torch1.9-prod")
    scenario(**{**_sc.__dict__, "name": f"{_base}-torch1.9-prod-quiet", "short": _short,
                "cmd": _sc.cmd.replace("launch_ddp.sh", "launch_ddp_quiet.sh"),
                "expect": {**_sc.expect, "note": _NO_NODE} if _base == "self-sigkill" else _sc.expect,
                "description": _sc.description.replace(_PROD, _PROD + ", no `DDP launch:` line")})

# torch 1.11.0 under Python 3.10: every torchrun dies of SIGSEGV in its exit barrier's store read after its
# processes finished (pytorch/pytorch#72086), so a job that trained to its end exits 139.
_HEALTHY_1_11 = next(sc for sc in SCENARIOS if sc.name == "healthy-2x2-torch1.11-prod")
scenario(**{**_HEALTHY_1_11.__dict__, "name": "torchrun-exit-segfault-torch1.11-prod",
            "short": "tes111p", "python": "3.10", "check": _has("training finished", "Segmentation fault"),
            "description": "torch 1.11.0 on Python 3.10: " + _PROD + "). 2 Workers x 2 GPUs train 30 steps to the "
            "end; then each Worker's torchrun dies of SIGSEGV in its exit barrier (a store read, "
            "torch/distributed/elastic/utils/store.py get_all), a bug of that release under Python 3.10 "
            "(pytorch/pytorch#72086). Python's faulthandler prints the agent's stack and bash reports the "
            "`Segmentation fault` of the torchrun command; the launch exits 139.",
            "expect": exp(["unexplained-failure"], root="unexplained-failure", node_rank=None,
                          note="no rule names a crash of torchrun itself: the honest answer is FAILED with the "
                          "segfault lines cited (`Fatal Python error: Segmentation fault` over torchrun's own "
                          "frames, bash's `Segmentation fault` of the torchrun command). Training itself finished: "
                          "rank 0 printed `training finished` after the final barrier."),
            "observed": ""})

# Quiet launch scripts with torchrun at LOGLEVEL=INFO (a platform default in some images): no launch line, but
# torchrun's agent logs its launch configs (min_nodes, max_nodes, nproc_per_node, rdzv_endpoint) and each
# rendezvous result (group_rank, group_world_size, global_ranks, global_world_sizes): the node's shape.
_SHAPE_FROM_TORCHRUN = ("no launch line; torchrun's INFO lines give each Worker's shape: the rendezvous result's "
                        "group_rank and global_ranks, the launch configs' nproc_per_node and min_nodes/max_nodes.")
production_twin("healthy-2x2", "prod-quiet-info", "h22pqi", exp([]), quiet=True, info=True, outputs_in_sample=False)
production_twin("crash-mid-training", "prod-quiet-info", "cmtpqi",
                exp(["crash-during-training"], root="crash-during-training", cause="non-finite-loss", node_rank=0,
                    rank=1, note=_SHAPE_FROM_TORCHRUN), quiet=True, info=True, check=_has("non-finite loss"))
production_twin("missing-worker", "prod-quiet-info", "mwpqi",
                exp(["missing-worker", "hang-in-rendezvous"], root="missing-worker", node_rank=2,
                    note="no launch line, and the rendezvous never completed, so no result block: the launch "
                    "configs' `min_nodes: 3` / `max_nodes: 3` say three nodes were expected; two logs are here."),
                quiet=True, info=True, check=_has("2/3 clients joined", "min_nodes"))

# Frameworks that take torchrun's environment themselves, in production shape: PyTorch Lightning prints
# `Initializing distributed: GLOBAL_RANK: r, MEMBER: r+1/W` from every process, its banner and progress from
# rank 0 and `Trainer.fit` stopped at its end; Accelerate logs with python logging's `[RANK r]` form and prints
# its multi-line state from every process. Neither prints the guide's env check.
# framework → (its training script, what the run is, the per-Worker safety net in seconds)
FRAMEWORKS = {
    "lightning": ("train_lightning.py", "PyTorch Lightning (Trainer(strategy=\"ddp\"), CPU, gloo)", 240),
    "accelerate": ("train_accelerate.py", "Hugging Face Accelerate (Accelerator(cpu=True), python logging with "
                   "`[RANK r]` and the state print from every process)", 240),
    "hf-trainer": ("train_hf_trainer.py", "Hugging Face Trainer (transformers 5, a tiny BERT from its config, CPU, "
                   "gloo)", 300),
}


def framework_scenario(name, short, cmd, platform_status, env, expect, what):
    """A 2 Workers x 2 run of the framework its name starts with, under torchrun, in production shape."""
    script, about, limit = next(v for k, v in FRAMEWORKS.items() if name.startswith(k + "-"))
    scenario(name=name, short=short, layout="worker-N/launch_ddp.log", workers=workers(2), cmd=cmd,
             platform_status=platform_status, env={"PRINT_ENV": "0", "PYTHONUNBUFFERED": "1", **env},
             train_script=script, limit=limit, description=f"{about} under torchrun, {_PROD}). {what}",
             expect=expect)


for _row in (
        ("lightning-healthy-prod", "ltp", GUIDE_CMD, True, {}, exp([]),
         "30 steps in one epoch; Lightning says `Trainer.fit` stopped: `max_epochs=1` reached."),
        ("lightning-healthy-prod-quiet-nostatus", "ltpqn", QUIET_CMD, False, {"PROGRESS_BAR": "1"}, exp([]),
         "No `DDP launch:` line, no platform status kept; Lightning's own progress bar (raw \\r redraws) from "
         "rank 0."),
        ("lightning-crash-prod", "ltcp", GUIDE_CMD, True, {"FAIL_KIND": "runtime", "FAIL_RANKS": "1"},
         exp(["crash-during-training"], root="crash-during-training", node_rank=0, rank=1),
         "Rank 1's training_step raises RuntimeError at step 10; the other ranks lose their peer."),
        ("lightning-data-path-prod-quiet", "ltdpq", QUIET_CMD, True, {"FAIL_KIND": "data-path", "FAIL_RANKS": "3"},
         exp(["crash-before-first-batch"], root="crash-before-first-batch", node_rank=1, rank=3, cause="data-path"),
         "No `DDP launch:` line. Rank 3 cannot open its data file before Trainer.fit; the other ranks wait for it "
         "in Lightning's process group set-up until torchrun stops them."),
        ("accelerate-healthy-prod", "acp", GUIDE_CMD, True, {}, exp([]),
         "30 steps; rank 0 logs every 5th step and `Training completed.`"),
        ("accelerate-crash-prod", "accp", GUIDE_CMD, True, {"FAIL_KIND": "runtime", "FAIL_RANKS": "2"},
         exp(["crash-during-training"], root="crash-during-training", node_rank=1, rank=2),
         "Rank 2 raises ValueError at step 10; the other ranks lose their peer in the gradient allreduce."),
        ("accelerate-env-key-prod-quiet", "acekq", QUIET_CMD, True, {"FAIL_KIND": "env-key", "FAIL_RANKS": "3"},
         exp(["crash-before-first-batch"], root="crash-before-first-batch", node_rank=1, rank=3, cause="env-var"),
         "No `DDP launch:` line. Rank 3 reads an environment variable the image does not set, after its state "
         "print and before training."),
        # The Hugging Face Trainer: its own tqdm bar and `{'loss': ...}` dicts from rank 0, its DDP warnings
        # from every rank.
        ("hf-trainer-healthy-prod", "hftp", GUIDE_CMD, True, {}, exp([]),
         "30 steps; the Trainer's bar reaches 30/30 and it prints its train_runtime dict."),
        ("hf-trainer-healthy-prod-quiet-nostatus", "hftpqn", QUIET_CMD, False, {}, exp([]),
         "No `DDP launch:` line, no platform status kept."),
        ("hf-trainer-collate-prod", "hftcp", GUIDE_CMD, True, {"FAIL_KIND": "runtime", "FAIL_RANKS": "3"},
         exp(["crash-during-training"], root="crash-during-training", node_rank=1, rank=3, cause="collator"),
         "Rank 3's data collator raises ValueError at its 10th batch; the other ranks lose their peer."),
        ("hf-trainer-no-gpu-prod-quiet", "hftngq", QUIET_CMD, True, {"FAIL_KIND": "cuda-device", "FAIL_RANKS": "2"},
         exp(["crash-before-first-batch"], root="crash-before-first-batch", rank=2,
             note="no launch line, and node 0's torchrun was stopped by the platform before any report: node 1's "
             "report places it at first rank 2, which is node 1 only if there were two nodes, and nothing says so"),
         "No `DDP launch:` line. Rank 2 moves a tensor to a GPU on a node without one (a CPU build of torch), "
         "before the Trainer."),
):
    framework_scenario(*_row)

# An agent that has used up its restarts closes the rendezvous for every node: the elastic launch with
# node 1's torchrun allowed no restart (PET_MAX_RESTARTS=0) and node 0's three. Rank 1 raises at step 5.
scenario(
    name="rendezvous-closed-prod", short="rcp", layout="worker-N/launch_ddp.log",
    workers=[Worker(rank="0", log="worker-0/launch_ddp.log", env={"PET_MAX_RESTARTS": "3"}),
             Worker(rank="1", log="worker-1/launch_ddp.log", env={"PET_MAX_RESTARTS": "0"})],
    env={"LOOP_STYLE": "plain", "TRAIN_STEPS": "60", "STEP_SLEEP": "0.1", "FAIL_KIND": "runtime",
         "FAIL_RANKS": "1", "FAIL_STEP": "5", "PRINT_ENV": "0", "TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"},
    cmd=guide_cmd_with("launch_ddp_elastic.sh"), master_is_host=True, check=_has("RendezvousClosedError"),
    limit=180,
    description=_PROD + "). Elastic torchrun (--nnodes=1:2, c10d rendezvous on Worker 0's host); node 1's "
    "torchrun may not restart (PET_MAX_RESTARTS=0), node 0's three times. Rank 1 raises RuntimeError at step 5; "
    "the node without restarts closes the rendezvous as it exits, and the other node's torchrun, restarting, "
    "finds it closed (RendezvousClosedError).",
    expect=exp(["crash-during-training", "rendezvous-closed"], root="crash-during-training", cause="non-finite-loss",
               rank=1, node_rank=0,
               note="elastic: which node gets group rank 0 is the rendezvous's choice; in this run Worker 0's log holds "
               "rank 1's traceback"),
)

# The failing Worker's log is the one the platform did not collect: what is left shows only the
# other Worker's processes losing their peer, in production shape.
scenario(
    name="crash-elsewhere-not-collected-prod", short="cencp", layout="worker-N/launch_ddp.log (worker-1 not collected)",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "runtime", "FAIL_RANKS": "2", "FAIL_STEP": "10", "STEP_SLEEP": "0.1",
         "PRINT_ENV": "0"},
    uncollected=("worker-1/launch_ddp.log",), check=_has("non-finite loss"),
    description=_PROD + "). Rank 2 (node 1) raises RuntimeError at step 10; node 1's log was written but is not "
    "in the sample (the platform did not collect it). Node 0's processes lose their peer in the next allreduce.",
    expect=exp(["failure-elsewhere"], root="failure-elsewhere", first="none",
               note="the failing rank's log is not here: the lines show only its peers losing it"),
)

# More failure families in production shape: each as its debugging-shape scenario, without the env
# print. Only what that print alone told is left out of the expectation (missing-rank).
for _base, _short in (("duplicate-node-rank", "dnrp"), ("launch-mismatch", "lmp"), ("launch-env-missing", "lemp"),
                      ("missing-data-all-ranks", "mdap"), ("env-var-keyerror", "evkp"), ("collate-error", "cep"),
                      ("port-in-use", "piup"), ("restart-loop", "rlp"), ("ddp-unused-parameters", "dupp"),
                      ("collective-mismatch", "cmp"), ("masked-pipe-tee", "mpp"), ("native-crash-segv", "ncsp"),
                      ("abort-sigabrt", "asp"), ("file-lock-wait", "flwp"), ("killed-silently", "ksp"),
                      ("dataloader-shm-full", "dsfp"), ("crash-first-batch-silent", "cfsp"),
                      ("restart-recovered", "rrp"), ("rdzv-c10d-master-lost", "rcmlp"), ("sighup-from-outside", "shup"),
                      ("script-exit-1", "se1p")):
    _sc = _BY_NAME[_base]
    _expect = {**_sc.expect, "rules": [r for r in _sc.expect["rules"] if r != "missing-rank"]}
    if _base == "dataloader-shm-full":
        # Which of Worker 1's ranks fills its /dev/shm first is a race: in the committed run, rank 2.
        _expect = exp(["crash-during-training"], root="crash-during-training", node_rank=1, rank=2,
                      cause="shared-memory", note="which of node 1's ranks runs out of /dev/shm first is a race; "
                      "in this run rank 2 raised and rank 3 was stopped by its torchrun.")
    production_twin(_base, "prod", _short, _expect, tries=1,
                    check=None if "torchrun env" in repr(_sc.check.__closure__ if _sc.check else "") else _sc.check)

# The same segmentation fault with Python's faulthandler on (PYTHONFAULTHANDLER=1, as many images
# and launch scripts set): the dying process prints `Fatal Python error: Segmentation fault` and its
# threads' stacks before torchrun reports exit -11. One death, told by both.
scenario(
    name="native-crash-segv-faulthandler-prod", short="ncsfp", layout="worker-N/launch_ddp.log",
    workers=workers(2),
    env={"LOOP_STYLE": "plain", "FAIL_KIND": "segv", "FAIL_RANKS": "1", "FAIL_STEP": "10", "STEP_SLEEP": "0.1",
         "PRINT_ENV": "0", "PYTHONFAULTHANDLER": "1"},
    check=_has("Fatal Python error: Segmentation fault"),
    description=_PROD + "). At step 10 rank 1 reads address 0 through ctypes.string_at(0) with "
    "PYTHONFAULTHANDLER=1: the process prints faulthandler's `Fatal Python error: Segmentation fault` and its "
    "stacks, then torchrun reports exit -11.",
    expect=exp(["crash-during-training"], root="crash-during-training", node_rank=0, rank=1,
               note="faulthandler's report and torchrun's failed line are one death of rank 1, told twice."),
)

def _nan_progress(line: bytes, at_least: int):
    """At least `at_least` progress lines (regex `line`, one per match) show a NaN loss, and the run reached
    its normal end."""
    def check(logs):
        count = sum(len(re.findall(line, data, re.MULTILINE)) for data in logs.values())
        if count < at_least:
            return f"{count} progress lines with a nan loss, want at least {at_least}"
        return None

    return _all(check, _has("training finished"))


# Training that diverged: from step 21 of 60 on, every rank's loss is NaN (FAIL_KIND=diverge), and the job
# trains on to its end: every process exits 0 and the platform says succeeded. Only the progress lines tell.
_DIVERGED = exp(["training-diverged"], root="training-diverged", node_rank=None, rank=None, verdict="FAILED",
                note="the divergence is the whole world's: DDP averages every rank's gradients, so a NaN on one "
                "rank is on all of them after the next all-reduce; no process fails and the job succeeded")
for _name, _short, _style, _line, _what in (
        ("diverged-nan-hf-prod", "dvhp", "hf", rb"^\{'loss': 'nan'",
         "rank 0 prints an HF-Trainer-style dict every 5 steps (`{'loss': ..., 'grad_norm': ...}`)"),
        ("diverged-nan-plain-prod", "dvpp", "plain", rb"^step \d+/\d+ loss nan$",
         "rank 0 prints `step i/60 loss x` every step")):
    scenario(
        name=_name, short=_short, layout="worker-N/launch_ddp.log", workers=workers(2),
        env={"LOOP_STYLE": _style, "TRAIN_STEPS": "60", "FAIL_KIND": "diverge", "FAIL_STEP": "21", "PRINT_ENV": "0"},
        check=_nan_progress(_line, 5),
        description=_PROD + f"). 60 steps; {_what}. From step 21 on every rank multiplies its loss by NaN before "
        "backward, so the loss and the gradients are NaN from there to the end; nothing raises, training "
        "finishes (`training finished: 60 steps`) and every launch command exits 0.",
        expect=_DIVERGED,
    )

# Diagnoses logscan does not give yet: each sample's test is an expected failure until it does.
KNOWN_GAPS: dict[str, str] = {
}

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
# The LOGLEVEL=INFO twins: what torch 2.13's agent printed on each Worker.
_INFO_BLOCKS = (
    "No `DDP launch:` line. At LOGLEVEL=INFO every line of torchrun's own logging carries its glog header "
    "(`I1202 12:31:15.974000 2477 torch/distributed/launcher/api.py:254] `): first `Using nproc_per_node=2.`, the "
    "banner, then `Starting elastic_operator with launch configs:` and one `  key : value` line each "
    "(`  min_nodes                : 2`, `  max_nodes                : 2`, `  nproc_per_node           : 2`, "
    "`  rdzv_backend             : static`, `  rdzv_endpoint            : 127.0.0.1:<port>`, `  rdzv_configs             : "
    "{'timeout': '20', 'rank': 1}` (the node rank, static rendezvous only), ...), `[default] starting workers for "
    "entrypoint: python3`, `[default] Rendezvous'ing worker group`")
OBSERVED.update({
    "healthy-2x2-prod-quiet-info": _INFO_BLOCKS + ", then `[default] Rendezvous complete for workers. Result:` and "
    "`  restart_count=0`, `  master_addr=127.0.0.1`, `  master_port=<port>`, `  group_rank=1`, `  group_world_size=2`, "
    "`  local_ranks=[0, 1]`, `  role_ranks=[2, 3]`, `  global_ranks=[2, 3]`, `  role_world_sizes=[4, 4]`, "
    "`  global_world_sizes=[4, 4]`, `  event_log_handler=null` on node 1 (group_rank=0, global_ranks=[0, 1] on node 0), "
    "`[default] Starting worker group`. Only rank 0 prints progress; at the end each agent logs `[default] worker "
    "group successfully finished. Waiting 300 seconds for other agents to finish.` and its exit barrier lines.",
    "crash-mid-training-prod-quiet-info": _INFO_BLOCKS + " and the same `Rendezvous complete` block as "
    "healthy-2x2-prod-quiet-info. Rank 1 raises at step 10 (`[rank1]: RuntimeError: non-finite loss ...`, node 0); "
    "each node's FAILED summary names its own ranks (`rank      : 2 (local_rank: 0)`, `host      : "
    "job-cmtpqi-worker-1`).",
    "missing-worker-prod-quiet-info": _INFO_BLOCKS + " with `min_nodes : 3` and `max_nodes : 3`, then nothing for "
    "about 20 s: the rendezvous never completes, so no result block. Node 0 raises `DistStoreError: Timed out after "
    "21 seconds waiting for clients. 2/3 clients joined.`, node 1 (its configs say `'rank': 1`) `DistStoreError: wait "
    "timeout after 20000ms, keys: /none/torchelastic/assigned_ranks/1`, each through torchrun's own traceback.",
})
for _k in OBSERVED:
    OBSERVED[_k] = COMMON + OBSERVED[_k]

# Batch C (older torch): how their messages differ from 2.13, as seen in the committed runs.
COMMON_OLD = {
    "1.13.1": "torch 1.13.1 (Python 3.10): torchrun's logging uses the plain `LEVEL:logger:` format, e.g. "
    "`WARNING:torch.distributed.run:` alone on the banner's first line, with the asterisk rows and the `Setting "
    "OMP_NUM_THREADS ...` line UNPREFIXED below it, and `ERROR:torch.distributed.elastic.multiprocessing.api:failed "
    "(exitcode: 1) local_rank: 0 (pid: N) of binary: /work/torchvenv-1.13.1/bin/python3`, `WARNING:torch.distributed."
    "elastic.multiprocessing.api:Sending process N closing signal SIGTERM`. No `[rankN]: ` prefixes anywhere: child "
    "tracebacks are bare `Traceback (most recent call last):` blocks, so which rank raised is only known from the "
    "FAILED summary. gloo errors are shorter: `[../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection "
    "closed by peer [127.0.1.1]:58294` without the `This is typically caused by ...` sentence. ",
    "2.1.2": "torch 2.1.2: torchrun's logging prefix is `[2026-12-01 12:56:52,188] torch.distributed.run: [WARNING] ` "
    "on every banner line and `[...] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) "
    "local_rank: 0 (pid: N) of binary: ...` / `[...] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending "
    "process N closing signal SIGTERM`. No `[rankN]: ` prefixes: child tracebacks are bare. gloo: `[../third_party/"
    "gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [127.0.0.1]:32906` (no `This is typically "
    "caused ...` sentence). ",
}
OBSERVED_OLD = {
    "healthy-2x2": "Nothing but `DDP launch`, the banner, env prints and `step 1/30` ... `step 30/30`, `training "
    "finished: 30 steps`.",
    "crash-mid-training": "Worker 0: bare `Traceback` ... `RuntimeError: non-finite loss encountered at step 10 "
    "(loss=nan); stopping` followed by a second bare traceback ending in the gloo `Connection closed by peer`; "
    "nothing says which of ranks 0/1 raised which. Worker 0's summary lists rank 1 under Failures and rank 0 as "
    "`Root Cause (first observed failure)`, both `exitcode  : 1` with `traceback : To enable traceback see: ...`. "
    "Worker 1: both ranks die of `Connection closed by peer`.",
    "import-error-one-rank": "Worker 1: bare `ModuleNotFoundError: No module named 'flash_attn'`, only rank 2's env "
    "print, `Sending process N closing signal SIGTERM`, summary root cause rank 3 (local_rank: 1) exitcode 1 with "
    "`Failures: <NO_OTHER_FAILURES>`: unlike 2.13 the SIGTERMed rank 2 is not listed. Worker 0's ranks fail inside "
    "init_process_group about 30 s later with bare `RuntimeError: Socket Timeout` (2.13: `DistStoreError: wait "
    "timeout after 20000ms, keys: /default_pg/0//cpu//0/2`, which names the missing rank; here nothing does).",
    "self-sigkill": "Worker 1: `failed (exitcode: -9) local_rank: 0 (pid: N)` and in the summary `exitcode  : -9 "
    "(pid: N)` WITHOUT the ` (SIGKILL)` suffix 2.13 prints, then `traceback : Signal 9 (SIGKILL) received by PID N`. "
    "Peers: `Read error [127.0.1.2]:49042: Connection reset by peer` / `Connection closed by peer`, bare tracebacks.",
    "missing-worker": "Both Workers print `DDP launch` and the banner, then nothing for about 5.5 minutes "
    "(PET_RDZV_CONF=timeout=20 does not shorten this wait), then torchrun's own bare traceback through "
    "`_rendezvous` -> `_assign_worker_ranks` -> `_share_and_gather` -> `store_util.synchronize` -> `get_all` -> "
    "`data = store.get(f\"{prefix}{idx}\")`, ending `RuntimeError: Socket Timeout` ON BOTH Workers, the store host "
    "included (2.13: `DistStoreError: Timed out after 21 seconds waiting for clients. 2/3 clients joined.` on "
    "node 0 and `wait timeout after 20000ms, keys: /none/torchelastic/assigned_ranks/1` on node 1). No env print, "
    "no FAILED summary; launch statuses 1.",
    "stall-mid-training": "Worker 0: rank 0's bare traceback ending `RuntimeError: [../third_party/gloo/gloo/"
    "transport/tcp/unbound_buffer.cc:81] Timed out waiting 20000ms for recv operation to complete`, then `Sending "
    "process N closing signal SIGTERM` (the stalled rank 1, named only by pid) and a summary with root cause rank 0 "
    "and `Failures: <NO_OTHER_FAILURES>`: the SIGTERMed rank 1 is not listed at all. Rank 1 is found by elimination "
    "(node 0's other local rank, silent, SIGTERMed). Worker 1: ranks 2 and 3 time out too (`... for send operation "
    "to complete` / `... for recv ...`).",
}
COMMON_OLD["2.0.1"] = (
    "torch 2.0.1 (Python 3.11): torchrun's logging and messages as in 1.13.1: `WARNING:torch.distributed.run:` "
    "alone on the banner's first line, the asterisk rows and `Setting OMP_NUM_THREADS ...` unprefixed below it, "
    "`ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: N) of binary: "
    "/work/torchvenv-2.0.1/bin/python3`. No `[rankN]: ` prefixes. gloo: `[../third_party/gloo/gloo/transport/tcp/"
    "pair.cc:598] Connection closed by peer [127.0.0.1]:18052` (no `This is typically caused ...` sentence). ")
for _ver, _sfx in (("1.13.1", "torch1.13"), ("2.1.2", "torch2.1"), ("2.0.1", "torch2.0")):
    for _k, _v in OBSERVED_OLD.items():
        OBSERVED[f"{_k}-{_sfx}"] = COMMON_OLD[_ver] + _v

# Batch C's recent releases (rank prefixes): how their messages differ from 2.13, as seen in the committed runs.
COMMON_NEW = {
    "2.4.1": "torch 2.4.1 (Python 3.11): glog-style headers with a thread id where 2.13 has the pid (`W1201 22:47:47.564000 "
    "139782105414528 torch/distributed/run.py:779] `); tracebacks raised after init_process_group carry `[rankN]: `. "
    "The FAILED summary is the v1.10..v2.11 table (`exitcode  : -9 (pid: N)` with no `(SIGKILL)`, a SIGTERMed sibling "
    "not listed: `Failures: <NO_OTHER_FAILURES>`). gloo: `[../third_party/gloo/gloo/transport/tcp/pair.cc:N] ...` "
    "without the `This is typically caused ...` sentence; store waits that time out raise `torch.distributed."
    "DistStoreError: Socket Timeout` (no key). ",
    "2.6.0": "torch 2.6.0 (Python 3.11): torchrun logs with glog-style headers and the pid, as 2.13 "
    "(`W1202 00:50:13.153000 14719 torch/distributed/run.py:792] `); tracebacks raised after init_process_group "
    "carry `[rankN]: `. No `[Gloo] Rank N is connected ...` line (2.8's). The FAILED summary is the v1.10..v2.11 "
    "table: `exitcode  : -9 (pid: N)` with no `(SIGKILL)` suffix, a rank torchrun SIGTERMed not listed "
    "(`Failures: <NO_OTHER_FAILURES>`). gloo: `[/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:534] "
    "Connection closed by peer [127.0.0.1]:58025` and `pair.cc:525] Read error ...: Connection reset by peer`, no "
    "`This is typically caused ...` sentence. ",
    "2.8.0": "torch 2.8.0 (Python 3.11): torchrun logs with glog-style headers and the pid, as 2.13 "
    "(`W1201 22:13:56.764000 7011 torch/distributed/run.py:774] `); tracebacks raised after init_process_group "
    "carry `[rankN]: `. After init every process prints `[Gloo] Rank 0 is connected to 3 peer ranks. Expected "
    "number of connected peer ranks is : 3` (stdout, unprefixed; 2.13 and 2.15 print no such line). The FAILED "
    "summary is the v1.10..v2.11 table: `exitcode  : -9 (pid: N)` with no `(SIGKILL)` suffix, no trailing space "
    "after `(pid: N)`, and a rank torchrun SIGTERMed is not listed (`Failures: <NO_OTHER_FAILURES>`). gloo: "
    "`[/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:544] Connection closed by peer [127.0.1.1]:18856`, "
    "no `This is typically caused ...` sentence. ",
    "2.11.0": "torch 2.11.0 (Python 3.11): torchrun logs with glog-style headers and the pid, as 2.13 "
    "(`W1202 01:19:56.177000 21271 torch/distributed/run.py:851] `); tracebacks raised after init_process_group "
    "carry `[rankN]: `; no `[Gloo] Rank N is connected ...` line. The FAILED summary is the v1.10..v2.11 table "
    "(`exitcode  : -15 (pid: N)` with no `(SIGTERM)` suffix, no trailing space), but the sibling torchrun "
    "SIGTERMed is listed under `Failures:` (`traceback : Signal 15 (SIGTERM) received by PID N`), as in 2.13. gloo: "
    "`[/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:547] Connection closed by peer [127.0.1.1]:20369`, no "
    "`This is typically caused ...` sentence. ",
    "2.15.0": "torch 2.15.0 (Python 3.11): torchrun's headers as 2.13 (`W1201 22:17:36.965000 10256 torch/distributed/"
    "run.py:982] `), `[rankN]: ` on tracebacks raised after init_process_group. The FAILED summary is 2.13's: "
    "`exitcode  : -15 (pid: N)  (SIGTERM)`, a trailing space after `exitcode  : 1 (pid: N) `, and the SIGTERMed "
    "sibling listed under `Failures:`. gloo as 2.13: `... pair.cc:561] Connection closed by peer [127.0.1.1]:5017. "
    "This is typically caused by a remote worker crashing. Check the logs of the remote worker before reporting an "
    "error. GLHF! 🏖️`, `Read error ...: Connection reset by peer. This is typically caused by a remote worker "
    "hanging or bugs in the application. ...`. ",
}
OBSERVED_NEW = {
    "healthy-2x2": "`DDP launch`, the banner, env prints, `step 1/30` ... `step 30/30`, `training finished: 30 steps`.",
    "crash-mid-training": "Worker 0: `[rank1]: RuntimeError: non-finite loss encountered at step 10 (loss=nan); "
    "stopping`, then rank 0's `[rank0]: RuntimeError: ... Connection closed by peer`; the summary's root cause is "
    "rank 1 (local_rank: 1), exitcode 1. Worker 1: ranks 2 and 3 lose their peer in the gradient allreduce.",
    "import-error-one-rank": "Worker 1: unprefixed `ModuleNotFoundError: No module named 'flash_attn'` (raised before "
    "init_process_group), root cause rank 3 (local_rank: 1). Worker 0's ranks give up in init_process_group with "
    "a store timeout: `torch.distributed.DistStoreError: wait timeout after 20000ms, keys: /default_pg/0//cpu//0/2`, "
    "each after a `[c10d] waitForInput: socket SocketImpl(...) timed out after 20000ms` warning (2.6.0, 2.8.0, 2.11.0, "
    "2.15.0); "
    "`torch.distributed.DistStoreError: Socket Timeout`, no key named (2.4.1).",
    "self-sigkill": "Worker 1: `failed (exitcode: -9) local_rank: 0 (pid: N)`, summary `traceback : Signal 9 (SIGKILL) "
    "received by PID N`. The peers: `[rankN]: RuntimeError: ... Connection closed by peer` / `Read error ...: "
    "Connection reset by peer`.",
    "missing-worker": "Node 0 (store host): torchrun's own traceback ending `torch.distributed.DistStoreError: Timed "
    "out after 21 seconds waiting for clients. 2/3 clients joined.` after about 20 s (as 2.13; 1.13 to 2.1 wait "
    "5.5 minutes). Node 1: ",
    "stall-mid-training": "Worker 0: `[rank0]: RuntimeError: [.../gloo/transport/tcp/unbound_buffer.cc:N] Timed out "
    "waiting 20000ms for recv operation to complete`, `Sending process N closing signal SIGTERM` (the stalled rank "
    "1), summary root cause rank 0. Worker 1: ranks 2 and 3 time out too (send / recv).",
}
OBSERVED_NODE1 = {
    "2.4.1": "`[W1201 22:47:27.388242052 socket.cpp:428] [c10d] While waitForInput, poolFD failed with (errno: 0 - "
    "Success).`, then `torch.distributed.DistStoreError: Socket Timeout` (no key named).",
    "2.8.0": "`[W... TCPStore.cpp:138] [c10d] recvValueWithTimeout failed on SocketImpl(...): Failed to recv, got 0 "
    "bytes. ...` followed by the c10::Error's C++ backtrace (`Exception raised from recvBytes at ...Utils.hpp:682 "
    "(most recent call first):`, `frame #0: ...` to `frame #9: ...`, then `frame #35` to `frame #37`), then `torch.distributed.DistNetworkError: Failed "
    "to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?` when node 0's "
    "store went away.",
    "2.6.0": "no warning, then torchrun's own traceback ending `torch.distributed.DistNetworkError: failed to recv, got 0 "
    "bytes` (2.6's short lower-case wording of 2.8's `Failed to recv, got 0 bytes. Connection was likely closed. ...`) "
    "when node 0's store went away.",
    "2.11.0": "as 2.15: `[c10d] waitForInput: poll for socket SocketImpl(...) returned 0, likely a timeout`, `... timed "
    "out after 20000ms`, then `torch.distributed.DistStoreError: wait timeout after 20000ms, keys: "
    "/none/torchelastic/assigned_ranks/1`.",
    "2.15.0": "`[c10d] waitForInput: poll for socket SocketImpl(...) returned 0, likely a timeout`, `... timed out after "
    "20000ms`, then `torch.distributed.DistStoreError: wait timeout after 20000ms, keys: "
    "/none/torchelastic/assigned_ranks/1`.",
}
for _ver, _sfx in (("2.4.1", "torch2.4"), ("2.6.0", "torch2.6"), ("2.8.0", "torch2.8"), ("2.11.0", "torch2.11"),
                   ("2.15.0", "torch2.15")):
    for _k, _v in OBSERVED_NEW.items():
        OBSERVED[f"{_k}-{_sfx}"] = COMMON_NEW[_ver] + _v + (OBSERVED_NODE1[_ver] if _k == "missing-worker" else "")
OBSERVED["crash-tee-torch1.13"] = COMMON_OLD["1.13.1"] + (
    "With --tee 3 torchrun 1.13 prefixes child lines `[default0]:` / `[default1]:` exactly like 2.13 (no "
    "`[stderr]`-style tags), but still no `[rankN]:` inside: `[default1]:Traceback (most recent call last):` ... "
    "`[default1]:RuntimeError: non-finite loss encountered at step 10 (loss=nan); stopping` (worker-0 line 11), "
    "so local rank 1 on node 0 = rank 1. Lines arrive out of order as in 2.13: the tracebacks (stderr) come first, "
    "the env prints and `[default0]:step 1/30` ... `step 9/30` (stdout) only after torchrun's `ERROR:...failed "
    "(exitcode: 1)` line. The summary names rank 0 root cause.")
OBSERVED["crash-redirects-log-dir-torch1.13"] = COMMON_OLD["1.13.1"] + (
    "With --redirects 3 launch_ddp.log holds NO child output at all (no env print, no progress, no traceback): "
    "only `DDP launch`, the banner, `ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) "
    "local_rank: 0 ...`, `ERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:no error file "
    "defined for parent, to copy child error file (...)` and the FAILED summary. Thanks to @record the summary "
    "carries each failing process's traceback (`error_file: /tmp/logscan-gen-.../torchrun_logs/none_<random>/"
    "attempt_0/1/error.json`, `traceback : Traceback (most recent call last):` ... `RuntimeError: non-finite loss "
    "encountered at step 10 (loss=nan); stopping` for rank 1; root cause still rank 0 with the gloo error). The "
    "child lines are in worker-N/torchrun_logs/none_<random>/attempt_0/<local_rank>/{stdout,stderr}.log (no "
    "prefixes) plus error.json per failed process.")

# torch 1.9 to 1.12 (production shape): how their messages differ, as seen in the committed runs.
COMMON_OLDEST = {
    "1.9.1": "torch 1.9.1 (Python 3.9, `python -m torch.distributed.run`): the banner's logger is `__main__`, its "
    "first asterisk row on the same line (`WARNING:__main__:*****************************************`). The "
    "failure summary is 1.9's own table: `Root Cause:` first, `Other Failures:` after, fields unpadded "
    "(`  rank: 2 (local_rank: 0)`, `  exitcode: -9 (pid: N)`, `  msg: \"Signal 9 (SIGKILL) received by PID N\"`), "
    "no host. Before it, per failed process, a UserWarning block `CHILD PROCESS FAILED WITH NO ERROR_FILE` whose "
    "`Child process N (local_rank R) FAILED (exitcode C)` gives the GLOBAL rank as R. torchrun stops the other "
    "processes of a failed group without logging it (no `Sending process N closing signal` line): a stopped "
    "process is in neither list of the summary. ",
    "1.10.2": "torch 1.10.2 (Python 3.9): `WARNING:torch.distributed.run:` alone on the banner's first line, the "
    "asterisk rows and `Setting OMP_NUM_THREADS ...` unprefixed below it; `WARNING:torch.distributed.elastic."
    "multiprocessing.api:Sending process N closing signal SIGTERM`; the v1.10 table (`Failures:` first, `Root "
    "Cause (first observed failure):` last, keys padded, `host`, `traceback : To enable traceback see: ...`). ",
    "1.11.0": "torch 1.11.0 (Python 3.9): messages as 1.10.2. ",
    "1.12.1": "torch 1.12.1 (Python 3.10): messages as 1.10.2. ",
}
OBSERVED_OLDEST = {
    "healthy-2x2": "Node 1's log: the launch line and torchrun's banner only.",
    "crash-mid-training": "No `[rankN]: ` prefixes: rank 1's `RuntimeError: non-finite loss ...` and rank 0's lost "
    "peer are bare tracebacks inside rank 0's tqdm redraws.",
    "self-sigkill": "Node 1: `failed (exitcode: -9) local_rank: 0`, summary root cause rank 2 with exitcode -9; rank "
    "3 exits 1 after losing its peer (`Read error ...: Connection reset by peer`, or `Connection closed by peer` "
    "in 1.12).",
    "stall-mid-training": "Node 0: rank 0's `Timed out waiting 20000ms for recv operation to complete`; the summary "
    "lists rank 0 only. Node 1: ranks 2 and 3 time out (send / recv).",
    "missing-worker": "Both Workers print the launch line and the banner, then nothing until the run is ended "
    "(no error, no summary: the static rendezvous was still waiting).",
    "platform-walltime-stall": "Node 0's log ends in rank 1's `rank 1: reloading shard list ...` after rank 0's "
    "`step 7/60`; node 1's in its banner. The SIGTERM to each launch process group ends tee too: no torchrun "
    "line about the signal.",
    "import-error-one-rank": "Node 1: rank 3's bare `ModuleNotFoundError: No module named 'flash_attn'`, summary "
    "root cause rank 3. Node 0: ranks 0 and 1 give up in init_process_group with `RuntimeError: Socket Timeout`.",
}
for _ver, _sfx in (("1.9.1", "torch1.9"), ("1.10.2", "torch1.10"), ("1.11.0", "torch1.11"), ("1.12.1", "torch1.12")):
    for _k, _v in OBSERVED_OLDEST.items():
        OBSERVED[f"{_k}-{_sfx}-prod"] = COMMON_OLDEST[_ver] + _v
OBSERVED["crash-mid-training-torch1.9-prod"] += (
    " Node 0's summary lists rank 1 alone, as root cause (`Other Failures: <NO_OTHER_FAILURES>`): rank 0, stopped "
    "unseen, printed its lost peer's traceback but is not listed.")
OBSERVED["import-error-one-rank-torch1.9-prod"] += (
    " In the committed run node 0's two tracebacks interleave past reading: `RuntimeErrorpg = ProcessGroupGloo(: `, "
    "`Socket TimeoutRuntimeError`, `: Socket Timeout`.")
OBSERVED["stall-mid-training-torch1.9-prod"] += (
    " The stalled rank 1 was stopped by torchrun without a line: only elimination names it.")
OBSERVED["torchrun-exit-segfault-torch1.11-prod"] = COMMON_OLDEST["1.11.0"].replace("Python 3.9", "Python 3.10") + (
    "Rank 0 prints `step 30/30` and `training finished: 30 steps`; then node 0's torchrun prints `Fatal Python "
    "error: Segmentation fault`, the agent's stack (`store.py, line 31 in get_all` ... `_exit_barrier` ... "
    "`bin/torchrun`), the extension modules, and bash's `launch_ddp.sh: line 21: N Segmentation fault      "
    "${TORCHRUN:-torchrun} --nproc_per_node=...`; launch status 139. In the committed run node 1's torchrun lost the "
    "store instead: `ERROR:torch.distributed.elastic.agent.server.api:Error waiting on exit barrier. Elapsed: 0.05 "
    "seconds` with `RuntimeError: Connection reset by peer`, and exited 0 (in an earlier run both segfaulted).")

# Batch G (torch 2.13.0): facts seen in the committed runs.
OBSERVED["crash-training-silent"] = COMMON + (
    "No progress line anywhere. Every process prints DDP's warning once, at the end of its first forward: "
    "`[rank1]:[W1201 22:08:57.291649173 reducer.cpp:1529] Warning: find_unused_parameters=True was specified in DDP "
    "constructor, but did not find any unused parameters in the forward pass. ... (function operator())` (worker-0 "
    "lines 8-9 for ranks 1 and 0), then rank 1's `[rank1]: ValueError: record 32 of /mnt/public/project-a/data/train/"
    "part-00001: expected 16 features, got 15` (line 15), whose traceback holds only train.py frames. The other "
    "ranks' tracebacks go through `loss.backward()` and end in gloo's `Connection closed by peer`.")
OBSERVED["crash-first-batch-silent"] = COMMON + (
    "Rank 1 raises `ValueError: record 0 of ...` (worker-0 line 13) before its first forward and prints no DDP "
    "warning; ranks 0, 2 and 3 print theirs (`[rank0]:[W1201 ... reducer.cpp:1529] Warning: find_unused_parameters="
    "True ...` after rank 1's traceback on worker 0) and die in `loss.backward()` with `Connection closed by peer`.")

OBSERVED["crash-training-silent-torch2.0"] = COMMON_OLD["2.0.1"] + (
    "worker-0 lines 8-9: the same warning twice without any rank, `[W reducer.cpp:1300] Warning: "
    "find_unused_parameters=True was specified in DDP constructor, ...`, one per process; then a bare traceback "
    "ending `ValueError: record 32 of ...` (line 15) and rank 0's `Connection closed by peer`. The summary names "
    "rank 1 (local_rank: 1) root cause, `Failures: <NO_OTHER_FAILURES>`.")
OBSERVED["healthy-unused-param-found"] = COMMON + (
    "With an unused auxiliary head DDP(find_unused_parameters=True) prints nothing at all: no reducer warning, no "
    "error; only the env prints, `step 1/30` ... `step 30/30` and `training finished: 30 steps`.")

# Batch D (torch 2.13.0): facts seen in the committed runs.
OBSERVED.update({_k: COMMON + _v for _k, _v in {
    "healthy-log-dir": "launch_ddp.log holds only `[default0]:`/`[default1]:`-prefixed child lines besides torchrun's "
    "own; the per-process files under worker-N/torchrun_logs/none_<random>/attempt_0/<local_rank>/ hold the same "
    "lines without prefix (run_id `none` with static rendezvous; the random suffix differs per Worker). Only "
    "local rank 0 of Worker 0 has progress; stderr.log files are empty. No error.json (nothing failed).",
    "crash-log-dir": "With --tee the child lines reach launch_ddp.log OUT OF ORDER: worker-0/launch_ddp.log starts with "
    "rank 1's traceback (`[default1]:[rank1]: RuntimeError: non-finite loss encountered at step 10 (loss=nan); "
    "stopping`, line 14) and only after torchrun's `failed (exitcode: 1) local_rank: 1` and `E... error_handler.py:145] "
    "no error file defined for parent, to copy child error file (...)` come the env prints and `[default0]:step 1/30` "
    "... `step 9/30` (lines 34-44): torchrun tails stdout and stderr files separately. Every failing process wrote "
    "error.json (`{\"message\": {\"message\": \"RuntimeError: ...\", \"extraInfo\": {\"py_callstack\": ..., "
    "\"timestamp\": ...}}}`), so the FAILED summary shows `error_file: /tmp/logscan-gen-.../torchrun_logs/none_<random>/"
    "attempt_0/1/error.json` (the path on the Worker at run time, not inside this sample) and the child's Python "
    "traceback instead of the `To enable traceback` link, also for the SIGTERMed victims (`exitcode  : -15`).",
    "healthy-shared-append": "Both `DDP launch` lines (node_rank=1 first, then 0), both OMP_NUM_THREADS banners "
    "(two torchrun pids) and the env prints of all four ranks are in one file, interleaved inside lines: "
    "`torchrun env:torchrun env: RANK= 3 LOCAL_RANK= 1 WORLD_SIZE= 4` then ` RANK= 2 ...`. Progress lines are "
    "rank 0's only; one `training finished: 30 steps`. Both commands exited 0.",
    "healthy-tqdm-stamped": "Worker 0's log is ~330 KB: the tqdm bar (about 4000 `\\r` redraws: one per update "
    "and one per set_postfix) is one physical line behind ONE timestamp, stamped when the line ended (the bar's "
    "close, just before `training finished: 2000 steps`), so the timestamp is ~20 s after the bar began. The first "
    "redraw `train:   0%|          | 0/2000 [00:00<?, ?it/s]` has no leading `\\r`; the last is `train: 100%|"
    "██████████| 2000/2000 [00:17<00:00, 113.61it/s, loss=1.3997]`. Worker 1's log has no progress at all.",
    "config-print-crash": "Rank 0's config block (`***** Running training *****`, `  Num examples = 960`, "
    "`  num_train_epochs=3`, `  Total optimization steps = 30`, `  steps=30`, `  max_steps: 1000`, `  eval_steps "
    "500`, ...) comes before any progress; then every rank: `[rankN]: FileNotFoundError: [Errno 2] No such file or "
    "directory: '/mnt/public/project-a/data/train/shard-0000N-of-00004.jsonl'`. No `step` line anywhere.",
    "healthy-config-print": "The config block of rank 0 interleaves with rank 1's env print: `torchrun env:  "
    "save_steps: 500` followed later by ` RANK= 1 LOCAL_RANK= 1 WORLD_SIZE= 4` (worker-0 lines 14-18). Then "
    "`step 1/30` ... `step 30/30` and `training finished: 30 steps`.",
    "local-rank-argparse": "Each log starts with `DDP launch`, then the launcher's multi-line `.../torch/distributed/"
    "launch.py:207: FutureWarning: The module torch.distributed.launch is deprecated` / `and will be removed in "
    "future. Use torchrun.` / ... `If your script expects `--local-rank` argument to be set, please` ... and a "
    "stray `  main()` line, then the usual `W... run.py:874]` banner (the launcher is torchrun underneath). The env "
    "prints come first (module level), then per rank `usage: train.py [-h] --output_dir OUTPUT_DIR [--local_rank "
    "LOCAL_RANK]` and `train.py: error: unrecognized arguments: --local-rank=0` (the value is the LOCAL rank, so "
    "both Workers show =0 and =1). Exit code 2, unprefixed (argparse runs before init_process_group). FAILED "
    "summary with `exitcode  : 2`; on Worker 0 the second rank shows as a SIGTERM victim (-15).",
    "banner-only-killed": "Each log is exactly the four `W... torch/distributed/run.py:874]` banner lines "
    "(OMP_NUM_THREADS); no `DDP launch` line, no env print, nothing after. Killed 8 s after launch; both launch "
    "statuses 137.",
    "duplicate-node-rank-zero": "Both logs say `DDP launch: nnodes=2 node_rank=0 ...`. Worker 1 (started 2 s "
    "later): torchrun's own traceback ending `torch.distributed.DistNetworkError: The server socket has failed to "
    "listen on any local network address. port: 29990, useIpv6: false, code: -98, name: EADDRINUSE, message: address "
    "already in use`. Worker 0: `torch.distributed.DistStoreError: Timed out after 21 seconds waiting for clients. "
    "1/2 clients joined.` No training process started.",
    "rdzv-c10d-master-lost": "c10d rendezvous put ranks 0,1 on Worker 0 and 2,3 on Worker 1 (node_rank is ignored "
    "by c10d; it only appears in the `DDP launch` line). worker-0/launch_ddp.log simply stops after `step 5/60` "
    "(no error, no summary: everything including tee was killed). Worker 1: `[rank2]:`/`[rank3]: RuntimeError: "
    "[.../gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.1.1]:<port>`, then torchrun's "
    "`[W... TCPStore.cpp:138] [c10d] recvValueWithTimeout failed on SocketImpl(..., remote=[::ffff:127.0.1.1]:30000): "
    "Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?`, "
    "`[W... TCPStore.cpp:106] [c10d] sendBytes failed on SocketImpl(...): Broken pipe`, `W... dynamic_rendezvous.py:1298] "
    "The node 'job-rcm-worker-1_<pid>_0' has failed to shutdown the rendezvous 'ddp-job' due to an error of type "
    "RendezvousConnectionError.` and a traceback ending `torch.distributed.elastic.rendezvous.api."
    "RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.` "
    "(chained from `torch.distributed.DistNetworkError: Failed to recv, got 0 bytes...`). No FAILED summary on "
    "Worker 1 either. Launch statuses: Worker 0 137 (killed), Worker 1 1.",
    "collective-mismatch-broadcast": "After `step 4/30`: `[rank0]: RuntimeError: Detected mismatch between "
    "collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=16, OpType=ALLREDUCE, "
    "TensorShape=[4], TensorDtypes=Float, ...), but Rank 1 is running collective: CollectiveFingerPrint("
    "SequenceNumber=16, OpType=BROADCAST, TensorShape=[1], TensorDtypes=Long, ...)...`; rank 1's message names "
    "itself first (`Rank 1 is running collective: ...OpType=BROADCAST..., but Rank 0 is running ...ALLREDUCE`). "
    "With two ranks the text alone does not say which side is odd; broadcast_object_list shows as a BROADCAST of a "
    "1-element Long tensor (the pickled size).",
    "ddp-unused-parameters-debug": "As ddp-unused-parameters, plus per rank `[rankN]: Parameters which did not "
    "receive grad for rank N: aux_head.bias, aux_head.weight` before `[rankN]: Parameter indices which did not "
    "receive grad for rank N: 4 5`. DDP under INFO did not crash (only DETAIL segfaults in this build).",
}.items()})

OBSERVED.update({_k: COMMON + _v for _k, _v in {
    "restart-recovered": "Attempt 0: `[rank1]: RuntimeError: shard reader: connection reset by storage server while "
    "reading batch 9 (transient)` after `step 9/30`; ranks 0, 2, 3 `[rankN]: RuntimeError: [.../gloo/transport/tcp/"
    "pair.cc:553] Connection closed by peer ...`; node 0's torchrun prints `Sending process N closing signal SIGTERM` "
    "and `failed (exitcode: 1) local_rank: 1 (pid: N)`, node 1's two `closing signal SIGTERM` lines; no FAILED "
    "summary. At the default log level nothing says `restart`: the only sign is the second block of `torchrun env:` "
    "prints for the same ranks on both Workers. Attempt 1 runs `step 1/30` ... `step 30/30 loss 1.4118` and "
    "`training finished: 30 steps`; both launch commands exit 0. Without TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 the "
    "restart failed in 3 of 4 runs here (restart-not-recovered); with static rendezvous the restarted ranks timed "
    "out in their first collective.",
    "restart-not-recovered": "Attempt 0 as in restart-recovered (`[rank1]: RuntimeError: shard reader: connection reset "
    "by storage server ...`, lost peers elsewhere). Then each Worker prints two more blocks of env prints (torchrun "
    "restarted its group twice: once for the failure, once when the other node re-joined), and the restarted "
    "processes fail inside init_process_group, without a `[rankN]:` prefix. Node 1: `[/__w/pytorch/pytorch/"
    "third_party/gloo/gloo/transport/tcp/debug_logger.cc:9] ERROR failed to connect, willRetry=1, retry=1, "
    "retryLimit=3, rank=2, size=4, ..., error=SO_ERROR: Connection refused, remote=[127.0.1.2]:<port>$2` (4 tries), "
    "`[E... ProcessGroupGloo.cpp:67] Gloo connectFullMesh failed with [.../pair.cc:152] timed out connecting: "
    "SO_ERROR: Connection refused, remote=...` and a traceback ending `RuntimeError: Gloo connectFullMesh failed "
    "with ...`; node 0's last attempt: `Gloo connectFullMesh failed with [.../tcp/pair.h:311] Connect timeout "
    "[none]`. Nothing listened at the addresses the restarted ranks read from the shared store. Both torchruns end "
    "with a FAILED summary (root causes rank 1 and rank 3, exit 1); both launch commands exit 1.",
    "handled-exception": "Worker 1 (rank 2, no `[rankN]:` prefix: the traceback is printed by logging, not by the "
    "excepthook): `2026-12-01 19:56:25,165 - train - ERROR - could not write metrics to .../metrics/rank2.jsonl "
    "(attempt 1/3), retrying`, then `Traceback (most recent call last):` ... `FileNotFoundError: [Errno 2] No such file "
    "or directory: '.../metrics/rank2.jsonl'`. No further error: rank 0 goes on to `step 30/30` and `training "
    "finished: 30 steps`, both launch commands exit 0 and the job succeeded.",
    "platform-walltime-stall": "Worker 0's log: `step 7/60 loss 1.4941`, then `rank 1: reloading shard list from "
    "/mnt/public/project-a/data/train` as its last line; Worker 1's log ends with its env prints. Nothing else: the "
    "SIGTERM to each launch process group also ended tee, so torchrun's reaction (if any) did not reach the logs. No "
    "timeout line (collective timeout 300 s). Both launch commands 143. The decisive line is rank 1's `reloading "
    "shard list`: the last sign of life, after which rank 0 printed no step.",
    "uneven-data": "Rank 0's last progress line is `step 11/30 loss 1.3910`. Rank 2 prints nothing and exits 0. Ranks "
    "0, 1, 3: `[rankN]: RuntimeError: [.../gloo/transport/tcp/pair.cc:553] Connection closed by peer [...]:<port>` "
    "from loss.backward(). Node 0's summary: root cause rank 1 exit 1, rank 0 SIGTERM (-15). Node 1's: root cause rank "
    "3 exit 1 and `Failures: <NO_OTHER_FAILURES>`: rank 2 is in neither, so it had exited 0 before; that absence is "
    "the decisive evidence.",
    "sighup-from-outside": "Node 1: `W... agent/server/api.py:753] Received 1 death signal, shutting down workers` "
    "(Python 3.11 prints the number), `Sending process N closing signal SIGHUP` twice, then torchrun's traceback "
    "ending `torch.distributed.elastic.multiprocessing.api.SignalException: Process N got signal: 1`; no FAILED "
    "summary. Node 0: both ranks `Read error [127.0.0.1]:<port>: Connection reset by peer` and a summary with both "
    "at exit 1 (in an earlier run node 0's rank 1 instead printed `terminate called without an active exception` "
    "and torchrun named it `exitcode : -6 (pid: N)  (SIGABRT)`: a consequence too). Both launch commands exit 1.",
    "sigint-from-outside": "Node 1: `Received 2 death signal, shutting down workers`, `Sending process N closing "
    "signal SIGINT`, `[rank2]: KeyboardInterrupt` and `[rank3]: KeyboardInterrupt` (each after a `[rankN]: Traceback "
    "(most recent call last):`), then `SignalException: Process N got signal: 2`; no FAILED summary. Node 0: ranks "
    "lose their peer (`Connection closed by peer`) and its summary lists exit 1 and a SIGTERM (-15). Both launch "
    "commands exit 1.",
    "native-crash-segv": "Rank 1 prints nothing when it dies (no faulthandler). Node 0: `failed (exitcode: -11) "
    "local_rank: 1 (pid: N)` and the summary's root cause `exitcode  : -11 (pid: N)  (SIGSEGV)`, `traceback : Signal "
    "11 (SIGSEGV) received by PID N`; rank 0 `Read error [127.0.1.1]:<port>: Connection reset by peer` and -15. "
    "Node 1: ranks 2, 3 lose their peer (`Read error ... Connection reset by peer`, `Connection closed by peer`).",
    "abort-sigabrt": "Rank 2 prints nothing of its own (os.abort: no traceback, no `Aborted` line: no shell reports "
    "it). Node 1: `failed (exitcode: -6) local_rank: 0 (pid: N)`, root cause `exitcode  : -6 (pid: N)  (SIGABRT)`, "
    "`Signal 6 (SIGABRT) received by PID N`; rank 3 lost its peer and was SIGTERMed. Node 0: ranks 0, 1 lost their "
    "peer (`Connection closed by peer`, `Read error ... Connection reset by peer`).",
    "container-cri": "Every line is a CRI record, e.g. `2026-12-01T20:00:17.842801851Z stdout F step 1/30 loss "
    "1.5568`; torchrun's logging and tracebacks are `stderr`, progress and env prints `stdout`. Lines over 200 bytes "
    "are split: torchrun's OMP_NUM_THREADS banner line becomes `... stderr P W1201 ... please further tune t` + "
    "`... stderr F he variable for optimal performance ...`, and so do the long gloo `Connection closed by peer` "
    "lines. The run itself is crash-mid-training's: `[rank1]: RuntimeError: non-finite loss encountered at step 10 "
    "(loss=nan); stopping`.",
    "container-docker-json": "Every line is one JSON object, e.g. `{\"log\":\"step 1/30 loss 1.5568\\n\","
    "\"stream\":\"stdout\",\"time\":\"2026-12-01T19:53:43.274457358Z\"}`; `<module>` appears as `\\u003cmodule"
    "\\u003e`, quotes as `\\\"`, and the gloo lines' emoji as UTF-8. No line reached Docker's 16 KiB split size. "
    "The run is crash-mid-training's (rank 1 RuntimeError at step 10).",
    "elastic-late-node": "Worker 0: `torchrun env: RANK= 0 LOCAL_RANK= 0 WORLD_SIZE= 2` (and rank 1), a few steps "
    "(`step 6/60 loss 1.4528` the last), then, when Worker 1 arrived, `W... multiprocessing/api.py:1028] Sending "
    "process N closing signal SIGTERM` twice (no error, no summary; at the default log level nothing says why), new "
    "env prints with `WORLD_SIZE= 4` and `step 1/60` ... `step 60/60 loss 1.4036`, `training finished: 60 steps`. "
    "Worker 1: its env prints (ranks 2, 3, `WORLD_SIZE= 4`) only. Both launch commands exit 0. The `DDP launch` lines "
    "still print nnodes=2 and node_rank (the variant does not pass them to torchrun).",
    "elastic-late-node-reform-timeout": "Worker 0: the first round's env prints with `WORLD_SIZE= 2`, steps up to when "
    "Worker 1 arrived, `Sending process N closing signal SIGTERM` twice, then after 60 s `[W... socket.cpp:494] [c10d] "
    "waitForInput: socket SocketImpl(...) timed out after 60000ms` and `torch.distributed.DistStoreError: wait timeout "
    "after 60000ms, keys: /torch.rendezvous.ddp-job.1/torchelastic/role_info/0, /torch.rendezvous.ddp-job.1/"
    "torchelastic/role_info/1`. Worker 1 (no env print at all): `DistStoreError: wait timeout after 60000ms, keys: "
    "/torch.rendezvous.ddp-job.1/MASTER_ADDR`. Both launch commands exit 1. In torch 2.13's dynamic_rendezvous.py "
    "a node that stays rank 0 keeps its bootstrap store info from round 0 and does not write round 1's MASTER_ADDR; "
    "TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 avoids it (elastic-late-node).",
    "uneven-data-torch2.4": "As uneven-data, with torch 2.4.1's formats: rank 0's last progress line is `step 11/30 "
    "loss 1.3910`; ranks 0, 1 and 3 raise `[rankN]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] "
    "Connection closed by peer [...]:<port>` from loss.backward(). Node 0's torchrun sends rank 0 `closing signal "
    "SIGTERM` but its report lists only rank 1 (exit 1) and `Failures: <NO_OTHER_FAILURES>`: this release leaves the "
    "processes it stopped out of the report. Node 1's report: rank 3 exit 1, `<NO_OTHER_FAILURES>`, and no closing "
    "signal: rank 2 had exited 0 before.",
    "walltime-stall-torchrun-signalled": "Worker 0's log: `step 7/60 loss 1.4941`, then `rank 1: reloading shard list "
    "from /mnt/public/project-a/data/train`; Worker 1's ends its start-up with the env prints. 15 s later each log "
    "shows its torchrun's teardown: `Received 15 death signal, shutting down workers`, `Sending process N closing "
    "signal SIGTERM` for both its processes and torchrun's own traceback ending `SignalException: Process N got "
    "signal: 15`; no failure report, no traceback of a training process. Both launch commands exit 1.",
    "sigterm-every-torchrun": "Worker 0's log: progress to `step 10/60`, then its torchrun's teardown (`Received 15 "
    "death signal, shutting down workers`, two `closing signal SIGTERM` lines, `SignalException: Process N got signal: "
    "15`); Worker 1's: its env prints, then the same teardown, a few ms after Worker 0's. Both launch commands exit 1.",
    "uneven-data-rank1": "Rank 0's last progress line is `step 5/30 loss 1.4855`. Rank 1 prints nothing and exits 0. "
    "Ranks 0, 2 and 3: `[rankN]: RuntimeError: [.../gloo/transport/tcp/pair.cc:553] Connection closed by peer "
    "[...]:<port>` from loss.backward(). Node 0's report: root cause rank 0 exit 1, `Failures: <NO_OTHER_FAILURES>`, no "
    "closing signal sent; node 1's: root cause rank 2 exit 1 and rank 3 SIGTERM (-15), the pid its `Sending process N "
    "closing signal SIGTERM` line names.",
    "file-lock-wait": "Worker 0's log ends at `step 7/60 loss 1.4941`; Worker 1's last line is `rank 3: waiting for "
    "lock /tmp/.../worker-1/output/data-cache.lock`. No error, no timeout (300 s), no torchrun summary: the whole job "
    "was SIGKILLed (both launch statuses 137). The decisive line is rank 3's `waiting for lock`.",
    "script-exit-1": "Node 0 after `step 9/30`: `error: rank 1: label file /mnt/public/project-a/data/labels.json has 3 "
    "classes, model expects 4` (stderr, no traceback, no `[rank1]:` prefix: sys.exit does not go through the "
    "excepthook), then the other ranks' `Connection closed by peer`, `failed (exitcode: 1) local_rank: 1` and a "
    "summary with rank 1 `exitcode : 1` and `traceback : To enable traceback see: ...` as root cause.",
    "killed-silently": "The whole log is the launch line, torchrun's banner, two env prints and `step 1/60` ... "
    "`step 10/60 loss 1.5023`. Nothing after: the launch command's status is 137 and the job failed.",
}.items()})

OBSERVED.update({_k: COMMON + _v for _k, _v in {
    "restart-recovered-torch2.4": "As restart-recovered, with torch 2.4.1's default rendezvous settings and prefixes: "
    "torchrun's log lines carry a thread id where 2.13 has the pid (`W1201 19:58:00.519000 139660045224832 "
    "torch/distributed/run.py:779] `), gloo's lost peer reads `[../third_party/gloo/gloo/transport/tcp/pair.cc:534] "
    "Connection closed by peer [...]:<port>` (no `This is typically caused by...` sentence). Attempt 0: "
    "`[rank1]: RuntimeError: shard reader: connection reset by storage server while reading batch 9 (transient)`; "
    "node 0 `failed (exitcode: 1) local_rank: 1`. A second block of env prints on both Workers, then `step 30/30` and "
    "`training finished: 30 steps`; both launch commands exit 0.",
    "sighup-from-outside-torch2.4": "Node 1: `W... agent/server/api.py:688] Received 1 death signal, shutting down "
    "workers`, `Sending process N closing signal SIGHUP` twice, `SignalException: Process N got signal: 1`; no "
    "summary. Node 0: ranks 0, 1 `[../third_party/gloo/gloo/transport/tcp/pair.cc:525] Read error "
    "[127.0.0.1]:<port>: Connection reset by peer` and a FAILED summary.",
    "native-crash-segv-torch2.4": "Node 0: `failed (exitcode: -11) local_rank: 1 (pid: N)`, summary root cause "
    "`exitcode  : -11 (pid: N)` (2.4.1 appends no `(SIGSEGV)` to the exit code) and `traceback : Signal 11 (SIGSEGV) "
    "received by PID N`, `Failures: <NO_OTHER_FAILURES>` although rank 0 lost its peer and was SIGTERMed.",
    "elastic-late-node-torch2.4": "As elastic-late-node, without TORCH_DISABLE_SHARE_RDZV_TCP_STORE: torch 2.4.1 re-forms "
    "the world with its default settings. Worker 0: env prints with `WORLD_SIZE= 2`; in the committed run Worker 1 "
    "arrived before the 2-process world printed a step: `Sending process N closing signal SIGTERM` twice right after "
    "those env prints, then env prints with `WORLD_SIZE= 4`, `step 1/60` ... `step 60/60 loss 1.4036`, `training "
    "finished: 60 steps`. Both launch commands exit 0.",
}.items()})


# Training that diverged (torch 2.13.0): facts seen in the committed runs.
_DIVERGED_QUIET = (
    " Nothing else in either log: no warning, error or traceback anywhere (neither torch nor gloo says a word "
    "about the NaN; clip_grad_norm_ returns it without complaint), and torchrun prints nothing after its banner. "
    "Node 1's log is its launch line and torchrun's banner only. Both launch commands exit 0; the job succeeded. "
    "Only rank 0's loss is printed: that the other ranks' losses were NaN as well is not in the logs.")
OBSERVED.update({
    "diverged-nan-hf-prod": "Node 0's log holds rank 0's dicts every 5 steps: `{'loss': '1.5002', 'grad_norm': "
    "'0.432', 'learning_rate': '5e-05', 'epoch': '0.08'}` ... `{'loss': '1.3617', 'grad_norm': '0.5411', "
    "'learning_rate': '5e-05', 'epoch': '0.33'}` (steps 5-20), then `{'loss': 'nan', 'grad_norm': 'nan', "
    "'learning_rate': '5e-05', 'epoch': '0.42'}` (worker-0 line 10, step 25; the NaN begins at step 21, FAIL_STEP, "
    "which no dict shows) and the same with epochs 0.50 ... 1.00: 8 of its 12 dicts show nan, then `training finished: 60 steps`."
    + _DIVERGED_QUIET,
    "diverged-nan-plain-prod": "Node 0's log holds `step 1/60 loss 1.4131` ... `step 20/60 loss 1.3505`, then "
    "`step 21/60 loss nan` (worker-0 line 26) and every step after it to `step 60/60 loss nan` (40 lines with nan), "
    "then `training finished: 60 steps`." + _DIVERGED_QUIET,
})

# ---------------------------------------------------------------- running

def base_env(venv: Path = TORCH_VENV):
    path = f"{GEN_DIR}:{venv / 'bin'}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    return {
        "PATH": path,
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "GEN_DIR": str(GEN_DIR),
        "PET_RDZV_CONF": "timeout=20",
    }


def _versions(venv: Path = TORCH_VENV):
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import torch, platform; print(torch.__version__.split('+')[0]); print(platform.python_version())"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    return out[0], out[1]


def _kill_marked(marker: str, var: str = "LOGSCAN_GEN_RUN"):
    """SIGKILL every process whose environment carries this run's marker.

    torchrun starts its children in new sessions, so killing a Worker's process group does not
    reach them; the marker (set only in this run's Worker environments) does. var=LOGSCAN_GEN_WORKER
    with marker "<run>-<i>" reaches one Worker's processes only.
    """
    needle = f"{var}={marker}".encode()
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


def _torchrun_pids(marker: str):
    """The torchrun processes (its console script, or `python -m torch.distributed.run`) of one Worker."""
    needle = f"LOGSCAN_GEN_WORKER={marker}".encode()
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            env = (d / "environ").read_bytes()
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if needle in env.split(b"\0") and (any(a.endswith(b"/torchrun") for a in argv[:2])
                                            or b"torch.distributed.run" in argv[:3]):
            pids.append(int(d.name))
    return pids


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
        host_lines = f"127.0.0.1\tlocalhost\n127.0.1.{i + 1}\t{hostname}\n"
        master_name = f"job-{sc.short}-worker-0"
        if sc.master_is_host and i != 0:
            host_lines += f"127.0.1.1\t{master_name}\n"
        hosts.write_text(host_lines)
        env = base_env(venv_for(sc.torch, sc.python))
        env.update(sc.env)
        env.update(
            LOGSCAN_GEN_RUN=work.name,
            LOGSCAN_GEN_WORKER=f"{work.name}-{i}",
            MASTER_ADDR=master_name if sc.master_is_host else "127.0.0.1",
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
            ["timeout", "--preserve-status", "-k", "10", str(round(sc.limit * LIMIT_SCALE)), "unshare", "--uts", "--mount",
             "bash", "-c", WRAP, "worker", hostname, str(hosts), sc.cmd],
            env=env, stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT, cwd=str(wdir),
        )
        procs.append((i, p, outdir, console))

    statuses = {}
    snapshot = None
    if sc.kill_worker is not None:
        # Lose one Worker (e.g. its node dies): SIGKILL its whole process tree once a log shows needle.
        victim, needle = sc.kill_worker
        deadline = start + sc.limit * LIMIT_SCALE
        while time.monotonic() < deadline and any(p.poll() is None for _, p, _, _ in procs):
            blobs = [(outdir / "launch_ddp.log").read_bytes() if (outdir / "launch_ddp.log").exists() else b""
                     for _, _, outdir, _ in procs]
            if any(needle.encode() in b for b in blobs):
                break
            time.sleep(0.2)
        for i, p, _, _ in procs:
            if i == victim:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        _kill_marked(f"{work.name}-{victim}", "LOGSCAN_GEN_WORKER")
    if sc.send_signal is not None:
        signame, needle, after, target, which = sc.send_signal
        sig = getattr(signal, signame)
        deadline = start + sc.limit * LIMIT_SCALE
        if needle is not None:
            while time.monotonic() < deadline and any(p.poll() is None for _, p, _, _ in procs):
                blobs = [(o / "launch_ddp.log").read_bytes() if (o / "launch_ddp.log").exists() else b""
                         for _, _, o, _ in procs]
                if any(needle.encode() in b for b in blobs):
                    break
                time.sleep(0.2)
            t0 = time.monotonic()
        else:
            t0 = start
        while time.monotonic() < t0 + after and any(p.poll() is None for _, p, _, _ in procs):
            time.sleep(0.2)
        for i, p, _, _ in procs:
            if which is not None and i not in which:
                continue
            if target == "group":
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    pass
            else:
                for pid in _torchrun_pids(f"{work.name}-{i}"):
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        pass
    if sc.kill_after is not None:
        # The platform kills the whole job: SIGKILL to every process of every Worker.
        deadline = start + sc.kill_after
        while time.monotonic() < deadline and any(p.poll() is None for _, p, _, _ in procs):
            time.sleep(0.2)
        for i, p, _, _ in procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _kill_marked(work.name)
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
    outdirs = {i: outdir for i, _, outdir, _ in procs}
    return statuses, logs, outdirs


def _expect(sc: Scenario) -> dict:
    """The scenario's expected diagnosis, with its known gap (KNOWN_GAPS) where logscan does not give it yet."""
    return {**sc.expect, **({"known_gap": KNOWN_GAPS[sc.name]} if sc.name in KNOWN_GAPS else {})}


def generate(sc: Scenario, index: int, torch_v: str, py_v: str):
    port = 29500 + 10 * index
    dest = SAMPLES_DIR / sc.name
    for attempt in range(1, sc.tries + 1):
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        work = Path(tempfile.mkdtemp(prefix=f"logscan-gen-{sc.name}-"))
        t0 = time.monotonic()
        statuses, logs, outdirs = run_once(sc, port, work)
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
    for i, w in enumerate(sc.workers):
        for rel in sc.keep_dirs:
            src = outdirs[i] / rel
            if src.is_dir():
                shutil.copytree(src, (dest / w.log).parent / rel)
    for name in sc.uncollected:
        (dest / name).unlink()
        if not any((dest / name).parent.iterdir()):
            (dest / name).parent.rmdir()
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
    if sc.platform_status:
        (dest / "job_status").write_text(job_status + "\n")
    doc = {
        "scenario": sc.name,
        "description": sc.description,
        "layout": sc.layout,
        "workers": wlist,
        "job_status": job_status,
        "expect": _expect(sc),
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
                doc.update(description=sc.description, layout=sc.layout, expect=_expect(sc),
                           observed=OBSERVED.get(sc.name, sc.observed))
                path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        return 0
    if os.geteuid() != 0:
        print("generate.py needs root (unshare/mount/hostname)", file=sys.stderr)
        return 2
    wanted = argv or names
    unknown = [n for n in wanted if n not in names]
    if unknown:
        print(f"unknown scenario(s): {unknown}", file=sys.stderr)
        return 2
    versions = {}
    for sc in SCENARIOS:
        if sc.name in wanted and (sc.torch, sc.python) not in versions:
            venv = venv_for(sc.torch, sc.python)
            if not (venv / "bin" / "torchrun").exists() and not (venv / "bin" / "python").exists():
                numpy = "numpy" if sc.torch == DEFAULT_TORCH else "'numpy<2'"
                print(f"no torchrun in {venv} (torch {sc.torch}, for {sc.name}); create it: python3 -m venv "
                      f"{venv} && {venv}/bin/pip install torch=={sc.torch} {numpy} tqdm", file=sys.stderr)
                return 2
            key = (sc.torch, sc.python)
            versions[key] = _versions(venv)
            if versions[key][0] != sc.torch:
                print(f"WARNING: {venv} has torch {versions[key][0]}, scenarios ask for {sc.torch}; "
                      "expected.json records the version really used", file=sys.stderr)
    for idx, sc in enumerate(SCENARIOS):
        if sc.name in wanted:
            generate(sc, idx, *versions[(sc.torch, sc.python)])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
