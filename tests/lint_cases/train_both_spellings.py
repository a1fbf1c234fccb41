# Written for the logscan lint tests (tests/test_lint.py): NOT a real training script.
# quiet for lint-local-rank-argparse: both spellings, default from LOCAL_RANK
import argparse
import os

parser = argparse.ArgumentParser()
parser.add_argument("--local-rank", "--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()
