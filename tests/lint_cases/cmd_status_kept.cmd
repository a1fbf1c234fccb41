# Written for the logscan lint tests (tests/test_lint.py): NOT a real launch command.
# quiet for lint-exit-status-masked: the upload runs, the training status is kept and returned
set -uo pipefail
rc=0
bash /mnt/public/project-a/launch_ddp.sh > >(tee -i "$OUTPUT_DIR/launch_ddp.log") 2>&1 || rc=$?
cp -r "$OUTPUT_DIR" "$UPLOAD_DIR/"
exit $rc
