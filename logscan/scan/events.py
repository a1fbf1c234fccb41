"""What the parser extracts from log lines. Plain frozen records: no rule logic lives here."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from logscan.diagnosis import Where


# Where a Worker's launch shape comes from (LaunchLine.source).
LAUNCH_LINE = "launch line"
TORCHRUN_LINES = "torchrun's INFO lines"


@dataclass(frozen=True, slots=True)
class LaunchLine:
    where: Where
    nnodes: int | None
    node_rank: int | None
    gpus_per_node: int | None
    total_procs: int | None
    master_addr: str | None
    master_port: int | None
    raw_fields: tuple[tuple[str, str], ...] = ()
    absurd: tuple[tuple[str, str], ...] = ()  # fields beyond what any job has (left out above)
    # `nnodes=MIN:MAX` (an elastic launch): the fewest nodes it runs with; nnodes is then MAX
    min_nnodes: int | None = None
    # Where the facts come from: LAUNCH_LINE (the guide's line, or another launcher's), or
    # torchrun's own INFO lines standing in for a launch line nobody printed (AgentShape).
    source: str = LAUNCH_LINE
    # The global rank of the node's local rank 0, where torchrun's rendezvous result says it.
    first_rank: int | None = None
    # (field, launch line's value, torchrun's value): where the node's own torchrun logged
    # another shape than its launch line claims (logscan.model.build).
    disputed: tuple[tuple[str, object, object], ...] = ()


@dataclass(frozen=True, slots=True)
class AgentShape:
    """One block of torchrun's agent's INFO logging about its node (logscan.scan.lineparse,
    parse_agent_block_line): its launch configs or a rendezvous result. `block` names which; the
    fields are LaunchLine's, None where the block does not tell them."""

    where: Where  # the block's first line
    block: str
    node_rank: int | None
    nnodes: int | None
    min_nnodes: int | None
    gpus_per_node: int | None
    total_procs: int | None
    first_rank: int | None
    master_addr: str | None
    master_port: int | None
    rdzv_backend: str | None
    raw_fields: tuple[tuple[str, str], ...] = ()


def format_master(addr: str | None, port: int | None) -> str:
    """`host:port`, with an IPv6 address in brackets."""
    addr = addr or "?"
    return f"[{addr}]:{port}" if ":" in addr else f"{addr}:{port}"


# The guide's debugging print, `torchrun env: RANK= 5 LOCAL_RANK= 1 WORLD_SIZE= 8`: every process of
# a script that has it prints it.
TORCHRUN_ENV = "torchrun env"


@dataclass(frozen=True, slots=True)
class EnvPrint:
    """What the launcher gave one training process (its rank, local rank, world size), as the
    process printed it: the guide's env print, or a framework's own rank line (`source` names the
    line's kind, as logscan.scan.lineparse.RANK_LINES does; None where the line does not say)."""

    where: Where
    rank: int | None
    local_rank: int | None
    world_size: int | None
    source: str = TORCHRUN_ENV

    @property
    def process_key(self):
        """What tells this process apart from the other processes of its round: a second line
        with the same key is a new process. The guide's print by its local rank (as always); a
        framework's line by its own kind and what it names, since one process prints several
        kinds (Lightning's GLOBAL_RANK line names no local rank, its LOCAL_RANK line no rank)."""
        if self.source == TORCHRUN_ENV:
            return self.local_rank
        return (self.source, self.local_rank, self.rank if self.local_rank is None else None)


@dataclass(frozen=True, slots=True)
class Progress:
    """A line showing a process got past its first batch."""

    where: Where


@dataclass(frozen=True, slots=True)
class SignalHit:
    """A line matched by a catalogue pattern (a signature rule or a signal)."""

    rule_id: str
    where: Where
    groups: tuple[tuple[str, str], ...] = ()

    def group(self, name: str) -> str | None:
        for key, value in self.groups:
            if key == name:
                return value
        return None


@dataclass(frozen=True, slots=True)
class PythonException:
    """The last line of a Python traceback: `ExcType: detail`."""

    where: Where
    exc_type: str
    detail: str
    # Catalogue signals seen inside the same traceback (crash causes such as a collate frame).
    traceback_signals: tuple[str, ...] = ()
    # Signals on the exception line itself (a store timeout, a lost peer...).
    line_signals: tuple[str, ...] = ()
    # Raised by torchrun itself (its own frames in the traceback), not by a training process.
    agent: bool = False
    # Quoted by torchrun's failure summary from the process's error file: a copy of a traceback
    # the process may also have printed itself.
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class ProcessExit:
    """One entry of torchrun's failure summary, or its `failed (exitcode: N) local_rank: L` line."""

    where: Where
    rank: int | None
    local_rank: int | None
    exitcode: int | None
    host: str | None = None
    time: datetime | None = None
    root_cause: bool = False
    # Reported by a torchrun that logs none of the processes it stops (torch 1.9).
    silent_stops: bool = False
    # The Slurm task ids srun's report names (`tasks 0-57,59-63`): a node's torchrun each, or
    # a process srun started itself.
    tasks: tuple[int, ...] = ()
    # A launcher's report of one of the training processes it started, which may not say which one.
    training_process: bool = False
    # The launcher's report says the process failed and is cut off before its exit code.
    exitcode_cut: bool = False
    # torchrun's report of its first failure (its Root Cause entry) is cut off before it began: `where` is
    # the report's other failures' heading.
    root_entry_cut: bool = False
    # The end of torchrun itself, by a signal that crashes (its faulthandler stack, the shell's report
    # of its command), not of a process it started...
    of_launcher: bool = False
    # ...in its exit barrier, which it enters once every process of its group exited 0
    in_exit_barrier: bool = False


@dataclass(kw_only=True)
class EventLists:
    """The events of one file, or of one Worker's files, each kind in line order."""

    launches: list[LaunchLine] = field(default_factory=list)
    envs: list[EnvPrint] = field(default_factory=list)
    progress: list[Progress] = field(default_factory=list)
    hits: list[SignalHit] = field(default_factory=list)
    exceptions: list[PythonException] = field(default_factory=list)
    exits: list[ProcessExit] = field(default_factory=list)
    agent_shapes: list[AgentShape] = field(default_factory=list)
    env_markers: int = 0


@dataclass
class FileScan(EventLists):
    """Everything one scan of one file produced."""

    path: str
    display: str
    size: int = 0
    lines: int = 0
    mtime: float | None = None
    compressed: bool = False
    truncated: str | None = None
    leading_nul: int = 0
    expansion: float = 0.0  # decompressed / compressed size, for a compressed file
    local_rank: int | None = None  # the one process whose output the file is (a --log-dir copy)
    read_error: str | None = None
    first_time: datetime | None = None
    last_time: datetime | None = None
    last_line: Where | None = None
    tail_lines: list[Where] = field(default_factory=list)  # its last lines, last_line last
    rule_timeouts: list[str] = field(default_factory=list)
    # Lines of the catalogue's known-harmless entries: apart from `hits`, so that no rule and no
    # part of the job model ever reads them as something that happened.
    harmless: list[SignalHit] = field(default_factory=list)
    # line number → how many copies of it the line stands for, where the scan kept one line of a
    # run of identical ones (scanner._RepeatRuns); a line not named stands for itself alone
    repeats: dict[int, int] = field(default_factory=dict)
