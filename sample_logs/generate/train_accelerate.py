"""A small Hugging Face Accelerate job for the sample logs (CPU, gloo), started by torchrun through a
launch script: Accelerator() reads torchrun's environment.

Environment (the generator sets it per scenario):
  TRAIN_STEPS   optimizer steps (default 30)
  STEP_SLEEP    seconds per step (default 0.05)
  FAIL_KIND     none | runtime (raises at FAIL_STEP) | env-key (a variable the image does not set, before training)
  FAIL_RANKS    comma-separated global ranks (default "1")
  FAIL_STEP     step of a step-bound failure (default 10)
"""
import logging
import os
import time

import torch
from accelerate import Accelerator
from accelerate.logging import get_logger
from torch.utils.data import DataLoader, TensorDataset

STEPS = int(os.environ.get("TRAIN_STEPS", "30"))
STEP_SLEEP = float(os.environ.get("STEP_SLEEP", "0.05"))
FAIL_KIND = os.environ.get("FAIL_KIND", "none")
FAIL_STEP = int(os.environ.get("FAIL_STEP", "10"))
FAILS_HERE = os.environ.get("RANK") in os.environ.get("FAIL_RANKS", "1").split(",")

logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", datefmt="%m/%d/%Y %H:%M:%S",
                    level=logging.INFO)
logger = get_logger(__name__)


def main():
    accelerator = Accelerator(cpu=True)
    logger.info(accelerator.state, main_process_only=False)
    if FAIL_KIND == "env-key" and FAILS_HERE:
        os.environ["DATASET_ROOT"]
    world = accelerator.num_processes
    data = TensorDataset(torch.randn(8 * STEPS * world, 16), torch.randn(8 * STEPS * world, 1))
    model = torch.nn.Linear(16, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model, optimizer, loader = accelerator.prepare(model, optimizer, DataLoader(data, batch_size=8, shuffle=True))
    logger.info("***** Running training *****")
    logger.info(f"  Num examples = {len(data)}")
    logger.info(f"  Total optimization steps = {STEPS}")
    for step, (x, y) in enumerate(loader):
        if FAIL_KIND == "runtime" and FAILS_HERE and step == FAIL_STEP:
            raise ValueError(f"Expected input batch_size (8) to match target batch_size (4) at step {step}.")
        time.sleep(STEP_SLEEP)
        loss = torch.nn.functional.mse_loss(model(x), y)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step % 5 == 0:
            logger.info(f"step {step}/{STEPS} loss {loss.item():.4f}")
    accelerator.wait_for_everyone()
    logger.info("Training completed.")
    accelerator.end_training()


if __name__ == "__main__":
    main()
