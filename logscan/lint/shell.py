"""A launch script or launch command, parsed with tree-sitter's bash grammar, and what the lint
rules ask of it: its commands, its assignments, the `set` options in force, and where a value
that reaches torchrun comes from.

The parse is bash's own view: a line continuation joins lines, a comment ends a command, and a
process substitution (`> >(tee -i log)`) is a redirection, not a pipe. Nothing is ever run.

Every walk over the tree is iterative and every question is answered in time linear in the
script (the assignments are indexed by name; a value is followed through at most
MAX_TRACE_DEPTH assignments and MAX_TRACE_STEPS references), so no script, however deep or
long, can exhaust the stack or take quadratic time.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from functools import cached_property

from logscan.diagnosis import Evidence
from logscan.errors import InputError
from logscan.limits import MAX_SCRIPT_NESTING

# What the platform injects into every Worker of a PyTorch DDP job.
PLATFORM_VARS = ("WORLD_SIZE", "RANK", "MASTER_ADDR", "MASTER_PORT")
# Commands that run the next word as the command (`exec torchrun ...`).
WRAPPERS = ("exec", "nohup", "command", "env", "time", "stdbuf")
PYTHONS = ("python", "python3")
LAUNCHER_MODULES = ("torch.distributed.run", "torch.distributed.launch")
LEGACY_MODULE = "torch.distributed.launch"
# A command substitution that counts the node's GPUs.
GPU_PROBES = ("nvidia-smi", "device_count", "rocm-smi")
_GUARDS = (":?", "?")
_DEFAULTS = (":-", "-", ":=", "=")
# How far a value is followed back: through this many assignments in a row, and this many
# references in all. A launch script's values take a handful of each; past them the value is
# told as coming from another command's output, which is what nothing here can read.
MAX_TRACE_DEPTH = 64
MAX_TRACE_STEPS = 4096
_SUBSTITUTIONS = ("command_substitution", "process_substitution")


def _parser():
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def text(node) -> str:
    return node.text.decode("utf-8", "replace")


def walk(node):
    """The node and everything below it, in source order; iterative, so no depth is too deep."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def _walk_outside_substitutions(node):
    """Like walk, but a command or process substitution is yielded without what is inside it."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        if node.type not in _SUBSTITUTIONS:
            stack.extend(reversed(node.children))


def _nodes_and_depth(root) -> tuple[list, int, object]:
    """(every node in source order, how deep the tree nests, the first node at that depth)."""
    nodes, deepest, where = [], 0, root
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        nodes.append(node)
        if depth > deepest:
            deepest, where = depth, node
        stack.extend((child, depth + 1) for child in reversed(node.children))
    return nodes, deepest, where


@dataclass(frozen=True)
class Leaf:
    """One thing a value comes from: a platform variable, a variable nothing sets, a literal, a
    GPU probe (`$(nvidia-smi ...)`) or another command's output."""
    kind: str              # platform | unset | literal | probe | command | special
    name: str              # the variable, the literal, or the command's text
    guarded: bool = False  # reached through ${VAR:?msg} or ${VAR:-default}
    default: bool = False  # a literal that is only a ${VAR:-default}


@dataclass(frozen=True)
class Origin:
    """Where a value comes from: its leaves, whether arithmetic combined them, and the lines
    that carried it (the assignments followed, in order)."""
    leaves: tuple[Leaf, ...]
    arithmetic: bool
    via: tuple[Evidence, ...]

    def platform(self, name: str) -> Leaf | None:
        return next((leaf for leaf in self.leaves if leaf.kind == "platform" and leaf.name == name), None)

    def of_kind(self, kind: str, *, defaults: bool = True) -> list[Leaf]:
        return [leaf for leaf in self.leaves if leaf.kind == kind and (defaults or not leaf.default)]

    @property
    def probed(self) -> bool:
        return bool(self.of_kind("probe"))


@dataclass(frozen=True)
class Option:
    """A launcher option as written: `--nnodes=2` or `--nnodes 2`."""
    name: str      # normalised: nnodes, node_rank, nproc_per_node, ...
    node: object   # the word holding the option (for its line)
    value: object  # the node of its value, or None for a flag
    value_text: str


@dataclass(frozen=True)
class _Value:
    """What a value's words hold, read once however often the value is followed: its
    references and substitutions (none inside a substitution), and whether arithmetic combines
    anything in it."""
    references: tuple
    substitutions: tuple[str, ...]
    arithmetic: bool


@dataclass(eq=False)
class Launcher:
    """torchrun or `python -m torch.distributed.run|launch`, with its options."""
    command: object
    legacy: bool
    options: dict[str, Option] = field(default_factory=dict)


class ShellSource:
    """One shell text: a launch script or the platform launch command. `env` is the source whose
    exported variables this one inherits (the launch command, for a script)."""

    def __init__(self, display: str, source: str, env: "ShellSource | None" = None):
        self.display = display
        self.source = source
        self.data = source.encode("utf-8", "replace")
        self.lines = source.splitlines()
        self.env = env
        self.tree = _parser().parse(self.data)
        self.root = self.tree.root_node
        self._values: dict[object, _Value] = {}
        self._origins: dict[object, Origin] = {}
        # Every node, walked once: the questions below filter this list.
        self.nodes, depth, deep = _nodes_and_depth(self.root)
        if depth > MAX_SCRIPT_NESTING:
            raise InputError(f"{display}:{self.line_of(deep)}: nested more than {MAX_SCRIPT_NESTING} "
                             "levels deep: not a launch script logscan can read")
        if self.root.has_error:
            bad = next((n for n in self.nodes if n.type == "ERROR" or n.is_missing), self.root)
            raise InputError(f"{display}:{bad.start_point[0] + 1}: cannot parse this shell line: "
                             f"{self.line_text(bad.start_point[0] + 1).strip()[:80]!r}")

    # -- places ------------------------------------------------------------------------------
    def line_text(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def line_of(self, node) -> int:
        return node.start_point[0] + 1

    def evidence(self, node) -> Evidence:
        line = self.line_of(node)
        return Evidence(self.display, line, self.line_text(line))

    def first_line(self) -> Evidence:
        line = next((i for i, t in enumerate(self.lines, 1) if t.strip()), 1)
        return Evidence(self.display, line, self.line_text(line))

    # -- structure ---------------------------------------------------------------------------
    @cached_property
    def statements(self) -> list:
        """Top-level statements, in order (comments left out)."""
        return [c for c in self.root.named_children if c.type != "comment"]

    @cached_property
    def commands(self) -> list:
        return [n for n in self.nodes if n.type == "command"]

    def argv(self, command) -> tuple[str, list]:
        """(name, argument nodes) of a command, past wrappers such as `exec` and `env VAR=x`."""
        name_node = command.child_by_field_name("name")
        words = [c for c in command.named_children
                 if c.type not in ("variable_assignment", "command_name", "comment", "file_redirect",
                                   "herestring_redirect")]
        name = text(name_node) if name_node is not None else ""
        while name in WRAPPERS and words:
            while words and ("=" in text(words[0]).split("/")[0] or text(words[0]).startswith("-")):
                words = words[1:]
            if not words:
                break
            name, words = text(words[0]), words[1:]
        return name.rsplit("/", 1)[-1], words

    def prefix_assignments(self, command) -> list:
        """`VAR=value cmd`: the assignments that only this command sees (and `env VAR=value`)."""
        found = [c for c in command.named_children if c.type == "variable_assignment"]
        name_node = command.child_by_field_name("name")
        if name_node is not None and text(name_node).rsplit("/", 1)[-1] == "env":
            found += [c for c in command.named_children
                      if c.type != "command_name" and "=" in text(c) and not text(c).startswith("-")
                      and text(c).split("=", 1)[0].isidentifier()]
        return found

    @cached_property
    def assignments(self) -> list:
        """Every assignment that sets a shell variable (not a prefix of one command), in order."""
        return [n for n in self.nodes if n.type == "variable_assignment"
                and n.parent is not None and n.parent.type != "command"]

    @cached_property
    def _assignments_by_name(self) -> dict[str, tuple[list[int], list]]:
        """name → (start bytes, assignments) in source order: the last one before a point is one
        bisection away."""
        index: dict[str, tuple[list[int], list]] = {}
        for n in self.assignments:
            target = n.child_by_field_name("name")
            if target is not None:
                starts, nodes = index.setdefault(text(target), ([], []))
                starts.append(n.start_byte)
                nodes.append(n)
        return index

    @cached_property
    def exported_names(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.exported)

    @cached_property
    def exported(self) -> list:
        """(name, node) for each variable an `export`/`declare -x` names."""
        out = []
        for n in self.nodes:
            if n.type != "declaration_command" or not n.children:
                continue
            head = text(n.children[0])
            flags = "".join(text(c) for c in n.named_children if c.type == "word" and text(c).startswith("-"))
            if head == "export" or (head in ("declare", "typeset") and "x" in flags):
                for c in n.named_children:
                    if c.type == "variable_name":
                        out.append((text(c), c))
                    elif c.type == "variable_assignment":
                        out.append((text(c.child_by_field_name("name")), c))
        return out

    def set_options(self, before=None) -> set[str]:
        """Options turned on by top-level `set` (and the shebang) before a node: e, u, pipefail."""
        on: set[str] = set()
        if self.lines and self.lines[0].startswith("#!"):
            for word in self.lines[0].split()[1:]:
                if word.startswith("-") and not word.startswith("--"):
                    on |= {c for c in word[1:] if c in "eu"}
        for stmt in self.statements:
            if before is not None and stmt.start_byte >= before.start_byte:
                break
            if stmt.type != "command":
                continue
            name, words = self.argv(stmt)
            if name != "set":
                continue
            args = [text(w) for w in words]
            for i, arg in enumerate(args):
                if arg.startswith("-") and not arg.startswith("--"):
                    on |= {c for c in arg[1:] if c in "eu"}
                    if "o" in arg[1:] and i + 1 < len(args):
                        on |= _long_option(args[i + 1])
                elif arg.startswith("+") and arg[1:] and "o" not in arg:
                    on -= set(arg[1:])
        return on

    # -- launchers ---------------------------------------------------------------------------
    @cached_property
    def launchers(self) -> list[Launcher]:
        out = []
        for command in self.commands:
            name, words = self.argv(command)
            legacy = False
            if name in PYTHONS or name.startswith("python3."):
                args = [text(w) for w in words]
                module = next((args[i + 1] for i, a in enumerate(args[:-1]) if a == "-m"), None)
                if module not in LAUNCHER_MODULES:
                    continue
                legacy = module == LEGACY_MODULE
                words = words[args.index(module) + 1:]
            elif name != "torchrun":
                continue
            out.append(Launcher(command, legacy, self._options(words)))
        return out

    @cached_property
    def launcher_commands(self) -> frozenset:
        return frozenset(launcher.command for launcher in self.launchers)

    def _options(self, words) -> dict[str, Option]:
        options: dict[str, Option] = {}
        i = 0
        while i < len(words):
            word = words[i]
            raw = text(word)
            if not raw.startswith("--"):
                break  # the training script: what follows is its own arguments
            head, eq, _ = raw.partition("=")
            name = head[2:].replace("-", "_")
            if eq:
                value, value_text = word, raw.split("=", 1)[1]
            elif name in _FLAGS or i + 1 >= len(words):
                value, value_text = None, ""
            else:
                i += 1
                value, value_text = words[i], text(words[i])
            options.setdefault(name, Option(name, word, value, _unquote(value_text)))
            i += 1
        return options

    def invokes_script(self, command) -> bool:
        """`bash launch_ddp.sh`, `sh x.sh`, `./x.sh`: the command runs a launch script."""
        name, words = self.argv(command)
        if name.endswith(".sh"):
            return True
        return name in ("bash", "sh") and any(text(w).strip("'\"").endswith(".sh") for w in words)

    # -- where a value comes from -----------------------------------------------------------
    def origin(self, node) -> Origin:
        """Follow a value (an option's word) back through the assignments before it. Each rule
        asks of the same options: each is followed once."""
        found = self._origins.get(node)
        if found is None:
            trace = _Trace([], [], MAX_TRACE_STEPS)
            arithmetic = self._trace(node, node.start_byte, False, trace, frozenset(), 0, skip_prefix=True)
            found = Origin(tuple(dict.fromkeys(trace.leaves)), arithmetic, tuple(dict.fromkeys(trace.via)))
            self._origins[node] = found
        return found

    def _value(self, node) -> _Value:
        found = self._values.get(node)
        if found is None:
            inside = list(_walk_outside_substitutions(node))
            found = _Value(
                references=tuple(n for n in inside if n.type in ("simple_expansion", "expansion", "variable_name")
                                 and _is_reference(n)),
                substitutions=tuple(text(n) for n in inside if n.type in _SUBSTITUTIONS),
                arithmetic=any(n.type in ("arithmetic_expansion", "binary_expression") for n in walk(node)))
            self._values[node] = found
        return found

    def _trace(self, node, at: int, guarded: bool, trace: "_Trace", seen: frozenset, depth: int,
               skip_prefix=False) -> bool:
        value = self._value(node)
        arithmetic = value.arithmetic
        for body in value.substitutions:
            kind = "probe" if any(p in body for p in GPU_PROBES) else "command"
            trace.leaves.append(Leaf(kind, body, guarded))
        for ref in value.references:
            if trace.exhausted(depth):
                trace.leaves.append(Leaf("command", text(ref), guarded))
                break
            name, op, default = _reference(ref)
            if name is None:
                trace.leaves.append(Leaf("special", text(ref), guarded))
                continue
            here_guarded = guarded or op in _GUARDS or op in _DEFAULTS
            if default is not None:
                if self._has_reference(default):
                    arithmetic |= self._trace(default, at, guarded, trace, seen, depth + 1)
                else:
                    trace.leaves.append(Leaf("literal", _unquote(text(default)), guarded, default=True))
            arithmetic |= self._resolve(name, at, here_guarded, trace, seen, depth)
        if not value.references and not value.substitutions:
            literal = text(node)
            if skip_prefix and literal.startswith("--") and "=" in literal:
                literal = literal.split("=", 1)[1]
            trace.leaves.append(Leaf("literal", _unquote(literal), guarded))
        return arithmetic

    def _resolve(self, name: str, at: int, guarded: bool, trace: "_Trace", seen: frozenset,
                 depth: int) -> bool:
        assignment = self._last_assignment(name, at)
        if assignment is not None and (self.display, assignment.start_byte) not in seen:
            seen = seen | {(self.display, assignment.start_byte)}
            trace.via.append(self.evidence(assignment))
            value = assignment.child_by_field_name("value")
            if value is None:
                trace.leaves.append(Leaf("literal", "", guarded))
                return False
            return self._trace(value, assignment.start_byte, guarded, trace, seen, depth + 1)
        if self.env is not None and name in self.env.exported_names:
            return self.env._resolve(name, len(self.env.data), guarded, trace, seen, depth)
        trace.leaves.append(Leaf("platform" if name in PLATFORM_VARS else "unset", name, guarded))
        return False

    def _has_reference(self, node) -> bool:
        value = self._value(node)
        return bool(value.substitutions) or any(r.type != "variable_name" for r in value.references)

    def _last_assignment(self, name: str, at: int):
        """The last assignment to `name` that starts before byte `at`, or None."""
        starts, nodes = self._assignments_by_name.get(name, ((), ()))
        before = bisect_left(starts, at)
        return nodes[before - 1] if before else None


@dataclass
class _Trace:
    """What one origin() gathers, and the references it may still follow."""
    leaves: list
    via: list
    steps_left: int

    def exhausted(self, depth: int) -> bool:
        self.steps_left -= 1
        return self.steps_left < 0 or depth > MAX_TRACE_DEPTH


_FLAGS = {"standalone", "no_python", "use_env", "module", "m", "run_path", "redirects_tee"}


def _long_option(name: str) -> set[str]:
    return {"errexit": {"e"}, "nounset": {"u"}, "pipefail": {"pipefail"}}.get(name, set())


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _is_reference(node) -> bool:
    """A `$VAR`/`${VAR...}`, or a bare name inside `$(( ))`."""
    if node.type in ("simple_expansion", "expansion"):
        return node.parent is None or node.parent.type not in ("expansion",)
    parent = node.parent
    if parent is None or parent.type in ("simple_expansion", "expansion", "variable_assignment",
                                         "subscript", "declaration_command", "for_statement"):
        return False
    inside = parent
    while inside is not None and inside.type not in ("arithmetic_expansion", "program"):
        inside = inside.parent
    return inside is not None and inside.type == "arithmetic_expansion"


def _reference(node) -> tuple[str | None, str | None, object]:
    """(variable, operator, default-word node) of one reference; a special ($?, $1, ${A[0]}):
    (None, None, None)."""
    if node.type == "variable_name":
        return text(node), None, None
    name = next((c for c in node.named_children if c.type == "variable_name"), None)
    if name is None:
        return None, None, None
    op = None
    default = None
    for i, child in enumerate(node.children):
        if not child.is_named and text(child) in _GUARDS + _DEFAULTS:
            op = text(child)
            rest = [c for c in node.children[i + 1:] if c.is_named]
            if op in _DEFAULTS and rest:
                default = rest[0]
            break
    return text(name), op, default

