"""`logscan sweep`: every job under shared output directories, read incrementally, each change
told once.

The package is a flat set of nouns:

- tree: the directories walked into jobs (run directories, logscan.files.jobroots), by name and stat
  only: an unchanged file is never opened;
- reading: one job's files brought up to date from where the last sweep stopped, and its
  diagnosis rebuilt from the stored surveys (what the parser extracted) plus the new bytes;
- state: the SQLite file beside a lock: files, jobs, alerted fingerprints, an outbox, history;
- series, history: which runs are one job run again, and the templates of each series' latest
  healthy runs, which a failed run's novel lines are ranked against;
- changes: what changed since the last sweep, and the finding fingerprint that dedupes it;
- engine: one sweep from walk to commit, one job per transaction, then delivery of the outbox;
- report, metrics, alerts, fleet: what is written (terminal, JSON, Prometheus, webhook, summary
  and export).
"""
