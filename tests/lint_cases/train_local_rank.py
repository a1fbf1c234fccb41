# Written for the logscan lint tests (tests/test_lint.py): NOT a real training script.
# fires lint-local-rank-argparse: --local_rank only, LOCAL_RANK never read
import argparse

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args = parser.parse_args()
torch.cuda.set_device(args.local_rank)
dist.init_process_group(backend="nccl")
