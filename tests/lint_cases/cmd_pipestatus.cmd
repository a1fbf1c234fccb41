# Written for the logscan lint tests (tests/test_lint.py): NOT a real launch command.
# quiet for lint-exit-status-masked: piped into tee, the status taken from PIPESTATUS
bash /mnt/public/project-a/launch_ddp.sh 2>&1 | tee "$OUTPUT_DIR/launch_ddp.log"
exit "${PIPESTATUS[0]}"
