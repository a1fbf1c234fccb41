"""Diagnose PyTorch DDP jobs launched with torchrun from their per-Worker launch logs.

The packages are the pipeline, each importing only those before it (tests/test_layout.py):

    files      PATHs → the job's log files, read as blocks of whole lines
    scan       lines → events (prefixes stripped, candidate lines found, interpreted)
    model      events → per-Worker facts → the job model; each process's failures
    findings   the job model → findings: the rules that are code
    diagnose   findings → the Diagnosis: root cause, verdict, stage marks, fingerprints
    render     the Diagnosis → text in each format
    sweep      many run directories, incrementally; lint: launch scripts before a run
    cli        the commands

Below them all, the kernel every stage shares: errors, vocabulary (the words: verdicts,
severities, stages, formats), limits (defaults and limits), exit_signals, rule_ids, catalogue
(the rules in rules/), config, expectations and settings (what a run was asked), and diagnosis
(the Diagnosis contract).
"""

__version__ = "0.1.0"
