#!/usr/bin/env bash
set -euo pipefail
TRAIN_SCRIPT=${TRAIN_SCRIPT:-/mnt/public/project-a/train.py}
OUTPUT_DIR=${OUTPUT_DIR:-/mnt/public/project-a/outputs/ddp-smoke}
mkdir -p "$OUTPUT_DIR"
GPUS_PER_NODE=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l | tr -d ' ')
NNODES=${WORLD_SIZE:?platform WORLD_SIZE is required}
NODE_RANK=${RANK:?platform RANK is required}
MASTER_ADDR=${MASTER_ADDR:?platform MASTER_ADDR is required}
MASTER_PORT=${MASTER_PORT:-29500}
TOTAL_PROCS=$((GPUS_PER_NODE * NNODES))
echo "DDP launch: nnodes=${NNODES} node_rank=${NODE_RANK} gpus_per_node=${GPUS_PER_NODE} total_procs=${TOTAL_PROCS} master=${MASTER_ADDR}:${MASTER_PORT}"
# torch 1.9 has no torchrun command: TORCHRUN="python -m torch.distributed.run" there.
${TORCHRUN:-torchrun} \
--nproc_per_node="${GPUS_PER_NODE}" \
--nnodes="${NNODES}" \
--node_rank="${NODE_RANK}" \
--master_addr="${MASTER_ADDR}" \
--master_port="${MASTER_PORT}" \
"$TRAIN_SCRIPT" \
--output_dir "$OUTPUT_DIR"
