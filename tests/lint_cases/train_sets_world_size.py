# Written for the logscan lint tests (tests/test_lint.py): NOT a real training script.
# fires lint-world-size-misused: re-exports WORLD_SIZE (as sample_logs/generate/train_entry.py)
import os

os.environ["WORLD_SIZE"] = os.environ["NNODES"]
