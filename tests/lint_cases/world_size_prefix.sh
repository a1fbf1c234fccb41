#!/usr/bin/env bash
# Written for the logscan lint tests (tests/test_lint.py): NOT a real launch script.
# fires lint-world-size-misused: a prefix assignment hands WORLD_SIZE to python
set -euo pipefail
WORLD_SIZE=$WORLD_SIZE python /mnt/public/project-a/train.py --output_dir /tmp/out
