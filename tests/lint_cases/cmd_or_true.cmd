# Written for the logscan lint tests (tests/test_lint.py): NOT a real launch command.
# fires lint-exit-status-masked: `|| true` after the training
set -euo pipefail
mkdir -p "$OUTPUT_DIR"
bash /mnt/public/project-a/launch_ddp.sh > >(tee -i "$OUTPUT_DIR/launch_ddp.log") 2>&1 || true
