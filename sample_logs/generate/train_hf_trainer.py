"""A small Hugging Face Trainer job for the sample logs (CPU, gloo), started by torchrun through a
launch script: the Trainer reads torchrun's environment and wraps the model in DDP itself. The model
is built from a tiny config (nothing downloaded); its progress is the Trainer's own: a tqdm bar and
the `{'loss': ...}` dicts, from rank 0.

Environment (the generator sets it per scenario):
  TRAIN_STEPS   max_steps (default 30)
  FAIL_KIND     none | runtime (the collator raises at FAIL_STEP on FAIL_RANKS) | cuda-device (the
                script asks for a GPU the node does not have, before the Trainer)
  FAIL_RANKS    comma-separated global ranks (default "1")
  FAIL_STEP     batch at which a step-bound failure happens (default 10)
"""
import os
import sys
import tempfile

import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

STEPS = int(os.environ.get("TRAIN_STEPS", "30"))
FAIL_KIND = os.environ.get("FAIL_KIND", "none")
FAIL_STEP = int(os.environ.get("FAIL_STEP", "10"))
FAILS_HERE = os.environ.get("RANK") in os.environ.get("FAIL_RANKS", "1").split(",")


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 8 * STEPS * int(os.environ["WORLD_SIZE"])

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return {"input_ids": torch.randint(0, 100, (16,), generator=g), "labels": torch.tensor(i % 2)}


class Collator:
    def __init__(self):
        self.batches = 0

    def __call__(self, features):
        self.batches += 1
        if FAIL_KIND == "runtime" and FAILS_HERE and self.batches == FAIL_STEP:
            raise ValueError("Unable to create tensor, you should probably activate truncation and/or padding "
                             "with 'padding=True' 'truncation=True' to have batched tensors with the same length.")
        return {k: torch.stack([f[k] for f in features]) for k in features[0]}


def main():
    if FAIL_KIND == "cuda-device" and FAILS_HERE:
        torch.zeros(1).to(f"cuda:{os.environ['LOCAL_RANK']}")
    config = BertConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=32, num_labels=2)
    args = TrainingArguments(output_dir=os.environ.get("OUTPUT_DIR") or tempfile.mkdtemp(), max_steps=STEPS,
                             per_device_train_batch_size=8, logging_steps=5, save_strategy="no", report_to=[],
                             use_cpu=True, ddp_backend="gloo", dataloader_num_workers=0, disable_tqdm=False)
    trainer = Trainer(model=BertForSequenceClassification(config), args=args, train_dataset=Tokens(),
                      data_collator=Collator())
    trainer.train()


if __name__ == "__main__":
    sys.argv = sys.argv[:1]  # the launch script's --output_dir is for the other scripts
    main()
