# Written for the logscan lint tests (tests/test_lint.py): NOT a real training script.
# quiet: the torchrun guide's script, LOCAL_RANK from the environment
import os

import torch
import torch.distributed as dist


def main():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)


if __name__ == "__main__":
    main()
