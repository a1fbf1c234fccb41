"""A small PyTorch Lightning DDP job for the sample logs (CPU, gloo), started by torchrun through a
launch script: Lightning reads torchrun's environment (TorchElasticEnvironment).

Environment (the generator sets it per scenario):
  TRAIN_STEPS   optimizer steps in the one epoch (default 30)
  STEP_SLEEP    seconds per step (default 0.05)
  FAIL_KIND     none | runtime (training_step raises at FAIL_STEP) | data-path (a missing file before fit)
  FAIL_RANKS    comma-separated global ranks (default "1")
  FAIL_STEP     step of a step-bound failure (default 10)
  PROGRESS_BAR  1: Lightning's progress bar (default 0: a log line every 5 steps from rank 0)
"""
import os
import time

import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader, TensorDataset

STEPS = int(os.environ.get("TRAIN_STEPS", "30"))
STEP_SLEEP = float(os.environ.get("STEP_SLEEP", "0.05"))
FAIL_KIND = os.environ.get("FAIL_KIND", "none")
FAIL_STEP = int(os.environ.get("FAIL_STEP", "10"))
FAILS_HERE = os.environ.get("RANK") in os.environ.get("FAIL_RANKS", "1").split(",")


class Regression(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(16, 1)

    def training_step(self, batch, batch_idx):
        if FAIL_KIND == "runtime" and FAILS_HERE and batch_idx == FAIL_STEP:
            raise RuntimeError(f"shape mismatch in loss at step {batch_idx}: expected [8, 1], got [8, 2]")
        time.sleep(STEP_SLEEP)
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.layer(x), y)
        if batch_idx % 5 == 0 and self.global_rank == 0 and os.environ.get("PROGRESS_BAR") != "1":
            print(f"epoch {self.current_epoch} step {batch_idx}/{STEPS} loss {loss.item():.4f}", flush=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    if FAIL_KIND == "data-path" and FAILS_HERE:
        open("/data/shards/train-00000.parquet", "rb")
    world = int(os.environ["WORLD_SIZE"])
    nodes = world // int(os.environ["LOCAL_WORLD_SIZE"])
    data = TensorDataset(torch.randn(8 * STEPS * world, 16), torch.randn(8 * STEPS * world, 1))
    trainer = pl.Trainer(accelerator="cpu", devices=int(os.environ["LOCAL_WORLD_SIZE"]), num_nodes=nodes,
                         strategy="ddp", max_epochs=1, logger=False, enable_checkpointing=False,
                         enable_progress_bar=os.environ.get("PROGRESS_BAR") == "1")
    # No line of the script's own after fit: Lightning's `Trainer.fit` stopped line is the run's end.
    trainer.fit(Regression(), DataLoader(data, batch_size=8))


if __name__ == "__main__":
    main()
