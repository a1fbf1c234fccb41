# Written for the logscan lint tests (tests/test_lint.py): NOT a real launch command.
# quiet: the launch command saves WORLD_SIZE as NNODES for a script that reads $NNODES
set -euo pipefail
export NNODES=${WORLD_SIZE:?platform WORLD_SIZE is required}
bash /mnt/public/project-a/launch_ddp.sh > >(tee -i "$OUTPUT_DIR/launch_ddp.log") 2>&1
