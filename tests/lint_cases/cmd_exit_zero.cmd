# Written for the logscan lint tests (tests/test_lint.py): NOT a real launch command.
# fires lint-exit-status-masked: an echo and `exit 0` after the training, without set -e
mkdir -p "$OUTPUT_DIR"
bash /mnt/public/project-a/launch_ddp.sh > >(tee -i "$OUTPUT_DIR/launch_ddp.log") 2>&1
echo "training done"; exit 0
