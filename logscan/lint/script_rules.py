"""The lint rules: each takes what was read (LintInput) and its own catalogue entry, and returns
findings. Severity, hint and docs live in the entry (rules/lint-*.toml); the message is written
here, from what the rule found."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from logscan.catalogue import Rule
from logscan.diagnosis import Evidence, Finding
from logscan.lint.pyscript import HYPHEN, UNDERSCORE, TrainScript
from logscan.lint.shell import Launcher, ShellSource, text, walk

# torchrun's option, the platform variable it must come from, and torchrun's default without it.
PLATFORM_ARGS = (
    ("nnodes", "WORLD_SIZE", "1: every Worker trains alone"),
    ("node_rank", "RANK", "0 on every Worker"),
    ("master_addr", "MASTER_ADDR", "127.0.0.1: every Worker waits on itself"),
    ("master_port", "MASTER_PORT", "29500, not the platform's port"),
)
# No GPU server the platform offers has more GPUs in one Worker than this.
MAX_GPUS_PER_WORKER = 8
# --nproc_per_node values with which torchrun counts the node's devices itself.
NODE_COUNTED = ("gpu", "cuda", "auto", "xpu")
EVIDENCE_LIMIT = 4


@dataclass(frozen=True)
class LintInput:
    scripts: tuple[ShellSource, ...]
    command: ShellSource | None
    train_scripts: tuple[TrainScript, ...]

    @property
    def shells(self) -> tuple[ShellSource, ...]:
        return ((self.command,) if self.command is not None else ()) + self.scripts

    @property
    def legacy_launcher(self) -> bool:
        return any(launcher.legacy for shell in self.shells for launcher in shell.launchers)


def finding(rule: Rule, message: str, evidence: Iterable[Evidence]) -> Finding:
    kept = tuple(dict.fromkeys(evidence))[:EVIDENCE_LIMIT]
    return Finding(rule=rule.id, severity=rule.severity, message=message, hint=rule.hint,
                   stage=rule.stage, evidence=kept)


def _option_evidence(shell: ShellSource, launcher: Launcher, name: str, origin=None) -> list[Evidence]:
    option = launcher.options.get(name)
    first = shell.evidence(option.node if option is not None else launcher.command)
    return [first, *(origin.via if origin is not None else ())]


# -- the platform's WORLD_SIZE --------------------------------------------------------------

def world_size_misused(inp: LintInput, rule: Rule) -> list[Finding]:
    out: dict[tuple[str, int], Finding] = {}

    def add(evidence: Evidence, message: str, *more: Evidence) -> None:
        out.setdefault((evidence.file, evidence.line), finding(rule, message, [evidence, *more]))

    for shell in inp.shells:
        for name, node in shell.exported:
            if name == "WORLD_SIZE":
                add(shell.evidence(node), "`export WORLD_SIZE` hands the platform's Worker count to the "
                    "training processes, where WORLD_SIZE means the number of processes")
        for command in shell.commands:
            for assignment in shell.prefix_assignments(command):
                if text(assignment).split("=", 1)[0] == "WORLD_SIZE":
                    add(shell.evidence(assignment), f"`{text(assignment)}` sets WORLD_SIZE for "
                        f"`{shell.argv(command)[0]}`: the training processes would take a Worker "
                        "count for their process count")
        for assignment in shell.assignments:
            target = assignment.child_by_field_name("name")
            if target is not None and text(target) == "WORLD_SIZE":
                add(shell.evidence(assignment), f"`{text(assignment)}` changes WORLD_SIZE, which the "
                    "platform exported: every process started after it sees the new value")
        for launcher in shell.launchers:
            kind, origin = nproc_kind(shell, launcher)
            if kind == "world-size":
                add(*_option_evidence(shell, launcher, "nproc_per_node", origin)[:1],
                    "--nproc_per_node comes from the platform's WORLD_SIZE, the number of Workers, "
                    "not the number of GPUs in this Worker",
                    *origin.via)
    for script in inp.train_scripts:
        for line in script.world_size_writes:
            add(script.evidence(line), "the training script sets os.environ['WORLD_SIZE'] itself: "
                "the processes torchrun started would disagree with it on the world size")
    return list(out.values())


# -- torchrun's Worker arguments ---------------------------------------------------------------

def _platform_args(launcher: Launcher):
    """(option, platform variable, torchrun's default) that this launcher must take from the
    platform. With a c10d rendezvous endpoint, the endpoint stands for the master's address and
    port, and node ranks are assigned by the rendezvous."""
    options = launcher.options
    c10d = "rdzv_endpoint" in options or options.get("rdzv_backend") and \
        options["rdzv_backend"].value_text == "c10d"
    for name, var, default in PLATFORM_ARGS:
        if "rdzv_endpoint" in options and name in ("master_addr", "master_port"):
            yield "rdzv_endpoint", var, "none"
        elif c10d and name == "node_rank" and name not in options:
            continue
        else:
            yield name, var, default


def torchrun_arg_not_from_platform(inp: LintInput, rule: Rule) -> list[Finding]:
    out = []
    for shell in inp.shells:
        for launcher in shell.launchers:
            if "standalone" in launcher.options:
                out.append(finding(rule, "torchrun --standalone runs a one-Worker rendezvous on each "
                                   "Worker: the platform's Workers never meet",
                                   [shell.evidence(launcher.options["standalone"].node)]))
                continue
            for name, var, default in _platform_args(launcher):
                option = launcher.options.get(name)
                if option is None:
                    out.append(finding(rule, f"torchrun has no --{name}, so the platform's {var} is "
                                       f"not used: torchrun defaults to {default}",
                                       [shell.evidence(launcher.command)]))
                    continue
                origin = shell.origin(option.value) if option.value is not None else None
                if origin is None or origin.platform(var):
                    continue
                unset = [leaf.name for leaf in origin.of_kind("unset")]
                literals = [leaf.name for leaf in origin.of_kind("literal")]
                if unset:
                    why = f"reads ${unset[0]}, which nothing here sets"
                    if inp.command is None:
                        why += " (if the launch command sets it, lint them together: --command)"
                elif literals and len(literals) == len(origin.leaves):
                    why = f"is hard-coded to {literals[0]!r}"
                else:
                    why = f"comes from `{option.value_text}`"
                out.append(finding(rule, f"--{name} {why}; it must come from the platform's {var}",
                                   _option_evidence(shell, launcher, name, origin)))
    return out


def platform_var_unguarded(inp: LintInput, rule: Rule) -> list[Finding]:
    out = []
    for shell in inp.shells:
        for launcher in shell.launchers:
            for name, var, _ in _platform_args(launcher):
                option = launcher.options.get(name)
                if option is None or option.value is None:
                    continue
                origin = shell.origin(option.value)
                leaf = origin.platform(var)
                if leaf is not None and not leaf.guarded:
                    out.append(finding(rule, f"--{name} takes the platform's {var} with no "
                                       f"`${{{var}:?...}}` guard: if it is empty, torchrun gets an empty "
                                       f"--{name}", _option_evidence(shell, launcher, name, origin)))
    return out


# -- set -euo pipefail -------------------------------------------------------------------------

def missing_strict_mode(inp: LintInput, rule: Rule) -> list[Finding]:
    out = []
    for shell in inp.shells:
        on = shell.set_options()
        missing = [flag for flag in ("e", "u", "pipefail") if flag not in on]
        if not missing:
            continue
        named = {"e": "-e", "u": "-u", "pipefail": "-o pipefail"}
        sets = [s for s in shell.statements if s.type == "command" and shell.argv(s)[0] == "set"]
        where = shell.evidence(sets[0]) if sets else shell.first_line()
        out.append(finding(rule, f"{shell.display} does not set {', '.join(named[m] for m in missing)} "
                           "(the guide starts with `set -euo pipefail`)", [where]))
    return out


# -- the exit status the platform sees ------------------------------------------------------

def _runs_training(shell: ShellSource, command) -> bool:
    return command in shell.launcher_commands or shell.invokes_script(command)


def _status_var(shell: ShellSource, node) -> tuple[str | None, bool]:
    """`rc=$?` or `rc=${PIPESTATUS[0]}`: (rc, whether it is PIPESTATUS)."""
    if node.type != "variable_assignment":
        return None, False
    value = text(node).split("=", 1)[1]
    if "PIPESTATUS" in value or value.strip("\"'") in ("$?", "${?}"):
        return text(node.child_by_field_name("name")), "PIPESTATUS" in value
    return None, False


def _exits_with(shell: ShellSource, node, var: str | None = None) -> str | None:
    """`exit N`/`return N`: its argument ('' for none) when it keeps a status (var, $?, PIPESTATUS
    or non-zero)."""
    if node.type != "command":
        return None
    name, words = shell.argv(node)
    if name == "false":
        return "1"
    if name not in ("exit", "return"):
        return None
    arg = text(words[0]) if words else "$?"
    if arg.strip("\"'") == "0":
        return None
    if arg.strip("\"'").isdigit() or "?" in arg or "PIPESTATUS" in arg or (var and var in arg):
        return arg
    return None


def _kept(shell: ShellSource, after: list, pipe: bool) -> bool:
    """The training's status is saved right after it and returned at the end."""
    if not after:
        return False
    if after[0].type == "command" and _exits_with(shell, after[0]) is not None:
        return not pipe or "PIPESTATUS" in text(after[0])
    var, from_pipestatus = _status_var(shell, after[0])
    if var is None or (pipe and not from_pipestatus):
        return False
    return _exits_with(shell, after[-1], var) is not None


def exit_status_masked(inp: LintInput, rule: Rule) -> list[Finding]:
    out = []
    for shell in inp.shells:
        training = [(stmt, c) for stmt in shell.statements for c in walk(stmt)
                    if c.type == "command" and _runs_training(shell, c)]
        if not training:
            continue
        stmt, command = training[-1]
        on = shell.set_options(before=stmt)
        after = shell.statements[shell.statements.index(stmt) + 1:]
        problem, handled, captured, at = None, False, None, stmt
        node = command
        while node != stmt and node.parent is not None and problem is None:
            parent = node.parent
            if parent.type in ("if_statement", "while_statement", "until_statement", "elif_clause"):
                handled = True  # the script tests the status itself
                break
            if parent.type == "pipeline" and "pipefail" not in on:
                parts = parent.named_children
                if parts[-1] != node and not _kept(shell, after, pipe=True):
                    at = parts[-1]
                    problem = (f"the training is piped into `{text(parts[-1]).strip()}` without "
                               "`set -o pipefail`: the pipeline's status is the last command's")
            elif parent.type == "list" and len(parent.children) == 3 and node == parent.children[0] \
                    and text(parent.children[1]) == "||":
                right = parent.children[2]
                captured, _ = _status_var(shell, right)
                kept = _exits_with(shell, right) is not None or (
                    captured is not None and bool(after) and _exits_with(shell, after[-1], captured) is not None)
                if not kept:
                    at = right
                    problem = f"`|| {text(right)}` replaces the training's failing status"
            elif parent.type == "negated_command":
                problem = "`!` inverts the training's status"
            node = parent
        if problem is None and not handled and captured is None and after and "e" not in on \
                and not _kept(shell, after, pipe=False):
            last = after[-1]
            at = after[0]
            problem = (f"`{text(after[0]).strip()}` runs after the training without `set -e`, and the "
                       f"last command (`{text(last).strip()}`, line {shell.line_of(last)}) decides the "
                       "exit status the platform sees")
        if problem is not None:
            out.append(finding(rule, problem, [shell.evidence(at), shell.evidence(stmt)]))
    return out


# -- GPUs per Worker ---------------------------------------------------------------------------

def nproc_kind(shell: ShellSource, launcher: Launcher):
    """What --nproc_per_node is: (kind, origin). Kinds: ok, missing, world-size (the platform's
    Worker count), total (Workers × GPUs), too-many (more than a Worker can have), fixed (a number
    in the script), per-worker (chosen by RANK), not-from-node (from elsewhere)."""
    option = launcher.options.get("nproc_per_node")
    if option is None or option.value is None:
        return "missing", None
    origin = shell.origin(option.value)
    if origin.platform("RANK"):
        return "per-worker", origin
    if origin.platform("WORLD_SIZE"):
        return ("total" if origin.arithmetic or origin.probed else "world-size"), origin
    if origin.probed:
        return "ok", origin
    literals = origin.of_kind("literal")
    numbers = [int(leaf.name) for leaf in literals if leaf.name.isdigit()]
    if any(n > MAX_GPUS_PER_WORKER for n in numbers):
        return "too-many", origin
    if len(literals) == len(origin.leaves):
        if all(leaf.name in NODE_COUNTED for leaf in literals):
            return "ok", origin
        return "fixed", origin
    return "not-from-node", origin


def _nproc_findings(inp: LintInput, rule: Rule, message_of) -> list[Finding]:
    """A finding for each torchrun launch whose --nproc_per_node `message_of(kind, origin,
    option)` has a message for (see nproc_kind); None means nothing to say."""
    out = []
    for shell in inp.shells:
        for launcher in shell.launchers:
            kind, origin = nproc_kind(shell, launcher)
            message = message_of(kind, origin, launcher.options.get("nproc_per_node"))
            if message is not None:
                out.append(finding(rule, message,
                                   _option_evidence(shell, launcher, "nproc_per_node", origin)))
    return out


def _exceeds_message(kind, origin, option) -> str | None:
    if kind == "total":
        return ("--nproc_per_node is the whole job's process count (Workers × GPUs): "
                "each Worker would start that many processes")
    if kind == "too-many":
        n = max(int(leaf.name) for leaf in origin.of_kind("literal") if leaf.name.isdigit())
        return (f"--nproc_per_node can be {n}, more than the {MAX_GPUS_PER_WORKER} GPUs a "
                "Worker has at most")
    return None


def _not_from_node_message(kind, origin, option) -> str | None:
    if kind == "missing":
        return "torchrun has no --nproc_per_node: it starts one process per Worker"
    if kind == "fixed":
        return (f"--nproc_per_node is fixed at {option.value_text!r}: a Worker spec with "
                "another GPU count gets the wrong number of processes")
    if kind == "per-worker":
        return ("--nproc_per_node depends on the Worker's RANK: a custom per-Worker GPU "
                "count, which DDP scripts rarely handle")
    if kind == "not-from-node":
        unset = [leaf.name for leaf in origin.of_kind("unset")]
        source = f"${unset[0]}, which nothing here sets" if unset else f"`{option.value_text}`"
        return f"--nproc_per_node comes from {source}, not from the GPUs the Worker has"
    return None


def nproc_exceeds_gpus(inp: LintInput, rule: Rule) -> list[Finding]:
    return _nproc_findings(inp, rule, _exceeds_message)


def gpu_count_not_from_node(inp: LintInput, rule: Rule) -> list[Finding]:
    return _nproc_findings(inp, rule, _not_from_node_message)


# -- the training script -----------------------------------------------------------------------

def local_rank_argparse(inp: LintInput, rule: Rule) -> list[Finding]:
    out = []
    legacy = inp.legacy_launcher
    for script in inp.train_scripts:
        lines = [line for option, line in script.local_rank_options if option == UNDERSCORE]
        if not lines or any(option == HYPHEN for option, _ in script.local_rank_options):
            continue
        if legacy and not script.parse_known_args:
            message = ("argparse knows only --local_rank, and torch.distributed.launch (torch >= 2.0) "
                       "passes --local-rank=N: every process stops with `unrecognized arguments`")
        elif not script.reads_local_rank_env:
            message = ("argparse knows only --local_rank and the script never reads LOCAL_RANK: "
                       "torchrun passes no --local_rank (it sets LOCAL_RANK), so every process keeps "
                       "the default")
        else:
            continue
        out.append(finding(rule, message, [script.evidence(lines[0])]))
    return out
