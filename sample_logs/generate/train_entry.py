"""Entry point used as TRAIN_SCRIPT in the world-size-leak sample.

Re-exports the job shape for the training code: WORLD_SIZE is set from NNODES, which the start-up
command saved from the platform's WORLD_SIZE (the number of Workers), and then train.py is exec'd.
"""
import os
import sys

os.environ["WORLD_SIZE"] = os.environ["NNODES"]
here = os.path.dirname(os.path.abspath(__file__))
os.execv(sys.executable, [sys.executable, os.path.join(here, "train.py")] + sys.argv[1:])
