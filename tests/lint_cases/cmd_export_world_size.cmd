# Written for the logscan lint tests (tests/test_lint.py): NOT a real launch command.
# fires lint-world-size-misused: the launch command exports WORLD_SIZE
set -euo pipefail
export WORLD_SIZE=$WORLD_SIZE
bash /mnt/public/project-a/launch_ddp.sh > >(tee -i "$OUTPUT_DIR/launch_ddp.log") 2>&1
