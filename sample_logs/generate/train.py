"""Tiny DDP training script used to produce the sample logs (gloo, CPU only).

Started by torchrun through launch_ddp.sh. Behaviour is chosen by environment variables
(the generator sets them per scenario):

  LOOP_STYLE       plain | hf | logging | tqdm | silent   how progress is printed (rank 0 only; silent: never)
  TRAIN_STEPS      number of optimizer steps (default 30)
  STEP_SLEEP       seconds to sleep per step (default 0.05)
  PG_TIMEOUT_S     init_process_group timeout in seconds (default 20)
  SAVE_CHECKPOINT  1: rank 0 writes OUTPUT_DIR/checkpoint.pt at the end
  FAIL_KIND        none | import | data-path | env-key | collate | runtime | sigkill |
                   start-crash | hang-before-init | block-before-first-batch | stall |
                   unused-param | collective-mismatch | (more kinds: see the end of this file)
  FAIL_RANKS       comma-separated global ranks, or "all" (default "all")
  FAIL_STEP        step at which step-bound failures happen (default 10)
  GRAD_SYNC        ddp (default) | manual: no DDP wrapper, explicit gradient all_reduce
  ODD_COLLECTIVE   collective-mismatch: what the failing ranks call, all_gather (default) |
                   broadcast_object_list
  TQDM_MININTERVAL tqdm mininterval (default 0.3); 0 also sets miniters=1 (a redraw per update)
  CONFIG_PRINT     1: rank 0 prints a training-config block before anything else
  LOCAL_RANK_ARG   1: argparse knows only --local_rank (the pre-2.0 launcher spelling)
  RECORD_ERRORS    1: main() is wrapped in torch.distributed.elastic's @record (writes error.json)
  FIND_UNUSED      1: DDP(find_unused_parameters=True)
"""
import os

_fail_kind = os.environ.get("FAIL_KIND", "none")
_fail_ranks = os.environ.get("FAIL_RANKS", "all")


def _fails_here():
    if _fail_ranks == "all":
        return True
    return os.environ.get("RANK") in _fail_ranks.split(",")


if _fail_kind == "import" and _fails_here():
    # An optional fused-kernel package that the image does not have.
    import flash_attn  # noqa: F401

if os.environ.get("CONFIG_PRINT") == "1" and os.environ.get("RANK") == "0":
    # A config dump as training frameworks print it: numbers that are not progress.
    print("***** Running training *****")
    print("  Num examples = 960")
    print("  num_train_epochs=3")
    print("  Total optimization steps = " + os.environ.get("TRAIN_STEPS", "30"))
    print("training config:")
    print("  steps=" + os.environ.get("TRAIN_STEPS", "30"))
    print("  max_steps: 1000")
    print("  eval_steps 500")
    print("  save_steps: 500")
    print("  warmup_steps=100")
    print("  learning_rate=0.05")

# The guide's temporary check of what torchrun injected; production scripts do not print it
# (PRINT_ENV=0, the production twins of the scenarios).
if os.environ.get("PRINT_ENV", "1") != "0":
    print("torchrun env:", "RANK=", os.environ.get("RANK"), "LOCAL_RANK=", os.environ.get("LOCAL_RANK"), "WORLD_SIZE=", os.environ.get("WORLD_SIZE"))

import argparse
import logging
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

logger = logging.getLogger("train")


class SyntheticDataset(Dataset):
    """Random features and labels; with ragged=True each sample is a token list of varying length."""

    def __init__(self, n, dim=16, classes=4, ragged=False):
        g = torch.Generator().manual_seed(1234)
        self.x = torch.randn(n, dim, generator=g)
        self.y = torch.randint(0, classes, (n,), generator=g)
        self.ragged = ragged

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        if self.ragged:
            length = 12 + (i % 5)
            return {"input_ids": list(range(length)), "label": int(self.y[i])}
        return self.x[i], self.y[i]


def collate_tokens(batch):
    # No padding: fails as soon as two samples of different length meet in one batch.
    input_ids = torch.tensor([s["input_ids"] for s in batch])
    labels = torch.tensor([s["label"] for s in batch])
    return input_ids, labels


class Net(nn.Module):
    def __init__(self, dim=16, hidden=32, classes=4, with_unused_head=False):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, classes)
        if with_unused_head:
            # An auxiliary head that forward() never calls.
            self.aux_head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(self.body(x))


class Progress:
    def __init__(self, style, total, steps_per_epoch, lr, is_main):
        self.style = style
        self.total = total
        self.steps_per_epoch = steps_per_epoch
        self.lr = lr
        self.is_main = is_main
        self.bar = None
        if is_main and style == "tqdm":
            from tqdm import tqdm

            mininterval = float(os.environ.get("TQDM_MININTERVAL", "0.3"))
            if mininterval > 0:
                self.bar = tqdm(total=total, desc="train", mininterval=mininterval)
            else:
                self.bar = tqdm(total=total, desc="train", mininterval=0, miniters=1)

    def update(self, step, epoch, it, loss, grad_norm):
        if not self.is_main:
            return
        if self.style == "plain":
            print(f"step {step}/{self.total} loss {loss:.4f}")
        elif self.style == "hf":
            if step % 5 == 0:
                frac = step / self.steps_per_epoch
                print({"loss": f"{loss:.4f}", "grad_norm": f"{grad_norm:.4g}",
                       "learning_rate": f"{self.lr:.4g}", "epoch": f"{frac:.2f}"})
        elif self.style == "logging":
            if it % 5 == 0:
                logger.info("epoch %d iter %d loss %.2f", epoch, it, loss)
        elif self.style == "tqdm":
            self.bar.update(1)
            self.bar.set_postfix(loss=f"{loss:.4f}")

    def close(self):
        if self.bar is not None:
            self.bar.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", required=True)
    if os.environ.get("LOCAL_RANK_ARG") == "1":
        # Written for the pre-2.0 launcher, which passed --local_rank=N.
        parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()

    style = os.environ.get("LOOP_STYLE", "plain")
    total_steps = int(os.environ.get("TRAIN_STEPS", "30"))
    step_sleep = float(os.environ.get("STEP_SLEEP", "0.05"))
    pg_timeout = float(os.environ.get("PG_TIMEOUT_S", "20"))
    fail_step = int(os.environ.get("FAIL_STEP", "10"))
    fail_here = _fails_here()
    kind = _fail_kind

    if style == "logging" or kind == "handled-io":
        logging.basicConfig(format="%(asctime)s - %(name)s - %(levelname)s - %(message)s", level=logging.INFO)

    if kind == "hang-before-init" and fail_here:
        # Stuck before joining the process group (e.g. waiting on a lock or a slow mount).
        while True:
            time.sleep(3600)

    dist.init_process_group(backend="gloo", timeout=timedelta(seconds=pg_timeout))
    rank = dist.get_rank()
    world = dist.get_world_size()
    is_main = rank == 0

    if kind == "start-crash" and fail_here:
        raise RuntimeError(f"rank {rank}: could not open metrics writer under {args.output_dir}/runs: resource temporarily unavailable")

    if kind == "env-key" and fail_here:
        data_root = os.environ["DATA_ROOT"]
    else:
        data_root = os.environ.get("DATA_ROOT", "/mnt/public/project-a/data")

    if kind == "data-path" and fail_here:
        shard = os.path.join(data_root, "train", f"shard-{rank:05d}-of-{world:05d}.jsonl")
        with open(shard) as f:
            f.readline()

    torch.manual_seed(0)
    model = Net(with_unused_head=(kind == "unused-param"))
    manual_sync = os.environ.get("GRAD_SYNC") == "manual"
    # GRAD_SYNC=manual: no DDP wrapper, gradients averaged with explicit all_reduce calls.
    find_unused = os.environ.get("FIND_UNUSED") == "1"
    ddp_model = model if manual_sync else DDP(model, find_unused_parameters=find_unused)

    batch_size = 8
    ragged = kind == "collate" and fail_here
    dataset = SyntheticDataset(batch_size * world * max(total_steps, 1), ragged=ragged)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=0)
    uneven = kind == "uneven"
    if uneven and fail_here:
        # This rank's share of the data is shorter: a sampler that stops after FAIL_STEP - 1 batches.
        sampler = ShortSampler(sampler, (fail_step - 1) * batch_size)
    if ragged:
        loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=2, collate_fn=collate_tokens)
    elif kind == "loader-workers":
        loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=2)
    else:
        loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)

    lr = 5e-5 if style == "hf" else 0.05
    opt = torch.optim.SGD(ddp_model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    steps_per_epoch = len(loader)
    progress = Progress(style, total_steps, steps_per_epoch, lr, is_main)

    if kind == "block-before-first-batch" and fail_here:
        # Blocks forever before the first batch, e.g. on a dataset lock another job holds.
        while True:
            time.sleep(3600)

    step = 0
    epoch = 0
    if uneven:
        total_steps = len(loader)  # one pass over this rank's own loader
    while step < total_steps:
        sampler.set_epoch(epoch)
        for it, (x, y) in enumerate(loader):
            step += 1
            if fail_here and step == fail_step:
                if kind == "runtime":
                    raise RuntimeError(f"non-finite loss encountered at step {step} (loss=nan); stopping")
                if kind == "sigkill":
                    os.kill(os.getpid(), signal.SIGKILL)
                if kind == "stall":
                    time.sleep(3600)
                if kind == "transient":
                    marker = os.path.join(args.output_dir, f".fault-seen-rank{rank}")
                    if not os.path.exists(marker):
                        open(marker, "w").close()
                        raise RuntimeError(f"shard reader: connection reset by storage server while reading batch {it} (transient)")
                if kind == "handled-io":
                    write_metrics(args.output_dir, rank, step)
                if kind == "stall-io":
                    print(f"rank {rank}: reloading shard list from {data_root}/train", flush=True)
                    while True:
                        time.sleep(3600)
                if kind == "segv":
                    import ctypes

                    ctypes.string_at(0)  # reads address 0
                if kind == "abort":
                    os.abort()
                if kind == "bad-record":
                    raise ValueError(f"record {it * batch_size} of {data_root}/train/part-{rank:05d}: "
                                     "expected 16 features, got 15")
                if kind == "exit-1":
                    print(f"error: rank {rank}: label file {data_root}/labels.json has 3 classes, model expects 4",
                          file=sys.stderr, flush=True)
                    sys.exit(1)
                if kind == "file-lock":
                    import fcntl

                    lock_path = os.path.join(args.output_dir, "data-cache.lock")
                    print(f"rank {rank}: waiting for lock {lock_path}", flush=True)
                    with open(lock_path, "a") as lock:
                        fcntl.flock(lock, fcntl.LOCK_EX)
            if kind == "collective-mismatch" and step == fail_step:
                # Metric sync where one rank takes a different code path.
                t = torch.ones(4) * rank
                if fail_here and os.environ.get("ODD_COLLECTIVE") == "broadcast_object_list":
                    objs = [{"step": step, "rank": rank}]
                    dist.broadcast_object_list(objs, src=rank)
                elif fail_here:
                    out = [torch.zeros(4) for _ in range(world)]
                    dist.all_gather(out, t)
                else:
                    dist.all_reduce(t)
            opt.zero_grad()
            loss = loss_fn(ddp_model(x), y)
            if kind == "diverge" and fail_here and step >= fail_step:
                # The loss blows up and stays non-finite; nothing stops the run, so it trains on to its end.
                loss = loss * float("nan")
            loss.backward()
            if manual_sync:
                for p in model.parameters():
                    dist.all_reduce(p.grad)
                    p.grad /= world
            grad_norm = float(torch.nn.utils.clip_grad_norm_(ddp_model.parameters(), 10.0))
            opt.step()
            progress.update(step, epoch, it, loss.item(), grad_norm)
            time.sleep(step_sleep)
            if step >= total_steps:
                break
        epoch += 1
    progress.close()

    if os.environ.get("SAVE_CHECKPOINT") == "1" and is_main:
        torch.save(model.state_dict(), os.path.join(args.output_dir, "checkpoint.pt"))
    if not uneven:
        dist.barrier()
    if is_main:
        print(f"training finished: {total_steps} steps")
    dist.destroy_process_group()


# Kinds added for the restart, signal and "no rule knows" samples (at FAIL_STEP on FAIL_RANKS):
#   transient   RuntimeError, only the first time: a marker file in OUTPUT_DIR records that the
#               fault happened, so a restarted attempt trains to the end
#   handled-io  writing a metrics file fails (its directory is missing); the exception is caught and
#               logged with logging.exception, the directory created and the write retried
#   stall-io    prints that it reloads the shard list, then sleeps forever (a hung read)
#   uneven      the rank's sampler yields only FAIL_STEP - 1 batches; every rank trains one pass over
#               its loader and no rank calls a final barrier, so the short rank leaves cleanly
#   segv        dereferences a null pointer through ctypes (SIGSEGV)
#   abort       os.abort() (SIGABRT)
#   exit-1      prints `error: ...` to stderr and calls sys.exit(1) (no traceback)
#   bad-record  ValueError naming a malformed record of the rank's data part (a message that says
#               nothing of the stage it was raised in)
#   file-lock   prints that it waits for OUTPUT_DIR/data-cache.lock, then blocks in flock() on it
#   diverge     from FAIL_STEP on (not only at it) the loss is NaN before backward; DDP's gradient
#               all-reduce spreads the NaN gradients to every rank, training goes on to its normal end


class ShortSampler:
    """The first n indices of another sampler (a rank whose data shard is shorter)."""

    def __init__(self, sampler, n):
        self.sampler = sampler
        self.n = n

    def set_epoch(self, epoch):
        self.sampler.set_epoch(epoch)

    def __iter__(self):
        for k, i in enumerate(self.sampler):
            if k >= self.n:
                return
            yield i

    def __len__(self):
        return min(self.n, len(self.sampler))


def write_metrics(output_dir, rank, step, retries=2):
    """Append a metrics record; on an OSError log it with its traceback and retry."""
    path = os.path.join(output_dir, "metrics", f"rank{rank}.jsonl")
    for attempt in range(retries + 1):
        try:
            with open(path, "a") as f:
                f.write(f'{{"step": {step}}}\n')
            return
        except OSError:
            logger.exception("could not write metrics to %s (attempt %d/%d), retrying", path, attempt + 1,
                             retries + 1)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            time.sleep(0.5)


if __name__ == "__main__":
    if os.environ.get("RECORD_ERRORS") == "1":
        from torch.distributed.elastic.multiprocessing.errors import record

        main = record(main)
    main()
