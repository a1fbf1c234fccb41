"""`logscan lint`: pre-flight rules on a launch script, the platform launch command and the
training script, read and never run. The result is a LintDiagnosis, which every renderer takes.

SCRIPT_RULES maps each lint rule's id to its code; the rule's catalogue entry is a
`kind = "lint"` file in rules/ (severity, hint, docs). A test checks that the two agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from logscan.catalogue import Catalogue, Rule, check_selection, selected
from logscan.diagnosis import Diagnosis
from logscan.diagnose.fingerprint import verdict_fingerprint, with_fingerprints
from logscan.diagnose.placement import location
from logscan.errors import InputError
from logscan.files.reader import NotRegularFile, open_regular
from logscan.limits import MAX_SCRIPT_BYTES
from logscan.lint import rule_ids as ids
from logscan.lint import script_rules
from logscan.lint.script_rules import LintInput
from logscan.lint.pyscript import read_train_script
from logscan.lint.shell import ShellSource
from logscan.vocabulary import RuleKind, Severity, Verdict

COMMAND_LABEL = "<launch command>"

SCRIPT_RULES = {
    ids.WORLD_SIZE_MISUSED: script_rules.world_size_misused,
    ids.ARG_NOT_FROM_PLATFORM: script_rules.torchrun_arg_not_from_platform,
    ids.PLATFORM_VAR_UNGUARDED: script_rules.platform_var_unguarded,
    ids.MISSING_STRICT_MODE: script_rules.missing_strict_mode,
    ids.EXIT_STATUS_MASKED: script_rules.exit_status_masked,
    ids.NPROC_EXCEEDS_GPUS: script_rules.nproc_exceeds_gpus,
    ids.GPU_COUNT_NOT_FROM_NODE: script_rules.gpu_count_not_from_node,
    ids.LOCAL_RANK_ARGPARSE: script_rules.local_rank_argparse,
}


@dataclass(frozen=True)
class LintDiagnosis(Diagnosis):
    """A Diagnosis whose findings are lint findings: FAILED on an error finding, else HEALTHY.
    It has no Workers and no root cause (the scripts did not run); its summary counts what was
    found in them."""

    def summary(self) -> str:
        if not self.findings:
            return f"{self.job}: no problems found"
        count = len(self.findings)
        kinds = ", ".join(_counted(n, severity) for severity in Severity
                          if (n := sum(f.severity == severity for f in self.findings)))
        first = self.findings[0]
        more = f" (and {count - 1} more)" if count > 1 else ""
        return f"{self.job}: {_counted(count, 'problem')} ({kinds}): {first.rule}: {first.message}{more}"


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def lint_rules(catalogue: Catalogue) -> dict[str, Rule]:
    return {r.id: r for r in catalogue.rules.values() if r.kind == RuleKind.LINT}


def read_script(path: str) -> str:
    """A script's text. Only a regular file is read (a FIFO would block, /dev/zero never ends),
    and no more of it than a script can be."""
    try:
        with open_regular(path) as handle:
            data = handle.read(MAX_SCRIPT_BYTES + 1)
    except NotRegularFile:
        raise InputError(f"{path}: not a regular file (a FIFO, device or directory): "
                         "lint reads script files") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    _check_size(path, len(data))
    return data.decode("utf-8", errors="replace")


def _check_size(display: str, size: int) -> None:
    if size > MAX_SCRIPT_BYTES:
        raise InputError(f"{display}: larger than {MAX_SCRIPT_BYTES >> 20} MiB: not a script "
                         "lint reads")


def read_input(scripts: Sequence[str], command: str | None, train_scripts: Sequence[str] = (),
               command_label: str = COMMAND_LABEL) -> LintInput:
    """Parse what was given: the command first, since the scripts inherit what it exports. The
    command's evidence cites `command_label` (its file, when it was read from one)."""
    if not scripts and command is None and not train_scripts:
        raise InputError("nothing to lint: give a launch script, --command or --train-script")
    if command is not None:
        _check_size(command_label, len(command.encode("utf-8", "replace")))
    parsed_command = ShellSource(command_label, command) if command is not None else None
    return LintInput(
        scripts=tuple(ShellSource(path, read_script(path), env=parsed_command) for path in scripts),
        command=parsed_command,
        train_scripts=tuple(read_train_script(path, read_script(path)) for path in train_scripts))


def lint(inp: LintInput, catalogue: Catalogue, select: Sequence[str] = (),
         ignore: Sequence[str] = ()) -> LintDiagnosis:
    rules = lint_rules(catalogue)
    check_selection(select, ignore, rules, what="lint rule id")
    findings = []
    for rule_id, rule in rules.items():
        if not selected(rule_id, select, ignore) or rule_id not in SCRIPT_RULES:
            continue
        findings += SCRIPT_RULES[rule_id](inp, rule)
    findings.sort(key=lambda f: f.sort_key)
    errors = [f for f in findings if f.severity == Severity.ERROR]
    names = [s.display for s in inp.shells] + [t.display for t in inp.train_scripts]
    job = "lint " + ", ".join(names)
    findings = [replace(f, location=location(f, (), job)) for f in with_fingerprints(findings)]
    lines = sum(len(s.lines) for s in inp.shells) + sum(len(t.lines) for t in inp.train_scripts)
    data = sum(len(s.data) for s in inp.shells) + sum(len("\n".join(t.lines)) for t in inp.train_scripts)
    return LintDiagnosis(
        job=job, workers=(), processes=(), findings=tuple(findings),
        root_cause=None, first_failure=None, reached_first_batch=False, missing_node_ranks=(),
        missing_ranks=(), verdict=Verdict.FAILED if errors else Verdict.HEALTHY,
        verdict_reason=(f"{len(errors)} error finding(s)" if errors
                        else f"no error finding in {len(names)} file(s)"),
        verdict_fingerprint=verdict_fingerprint(Verdict.FAILED if errors else Verdict.HEALTHY),
        files_scanned=len(names), lines_scanned=lines, bytes_scanned=data)
