"""Parsers for the structured lines logscan understands natively, and the lines each one needs.

Each parser takes a prefix-stripped line body and returns fields or None; they know nothing of
rules. Each also declares, right above it (`@needs(Candidates(...))`), the lines it must be fed:
literals one of which every such line holds, and a pattern that confirms it. The scanner builds
its literal pre-filter and its confirm pattern from that registry (CANDIDATES) plus the
catalogue's keywords, so a parser added here is fed its lines without a second list to update.
Every candidate line reaches every parser, in file order (see logscan.scan.interpret).
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass
from datetime import datetime

from logscan.exit_signals import BY_DESCRIPTION, BY_NAME, parse_signal


@dataclass(frozen=True)
class Candidates:
    """Lines a parser needs. Every match of `pattern` holds one of `literals`: the literals find
    the lines fast, in bulk (logscan.scan.finders); the pattern then decides."""

    literals: tuple[bytes, ...]
    pattern: bytes
    parser: str = ""  # filled in by @needs: which parser asked for these lines


# The lines the native parsers need, in declaration order. Read at Scanner construction.
CANDIDATES: list[Candidates] = []


def needs(*candidates: Candidates):
    """Register the lines the decorated parser must be fed (see Candidates)."""

    def register(parser):
        declared = tuple(Candidates(c.literals, c.pattern, parser.__name__) for c in candidates)
        CANDIDATES.extend(declared)
        parser.candidates = declared
        return parser

    return register


def _literal(text: bytes) -> Candidates:
    """A line holding `text`. Only regex syntax is escaped (not spaces, as re.escape does), so the
    pattern also reads as a POSIX extended regex (bench/run_bench.py hands them to grep -E)."""
    return Candidates((text,), re.sub(rb"([.^$*+?{}\[\]()|\\])", rb"\\\1", text))


def _to_int(value: str | None) -> int | None:
    if value is None:
        return None
    value = value.strip().strip("'\"")
    try:
        return int(value)
    except ValueError:
        return None


# --- the launch line: `DDP launch: nnodes=2 node_rank=0 ... master=host:port` -----------------

LAUNCH = re.compile(r"DDP launch:(?P<rest>.*)")
_KEY_VALUE = re.compile(r"(?P<key>[A-Za-z_][\w.-]*)=(?P<value>\S*)")
_NODE_RANGE = re.compile(r"(?P<min>\d+):(?P<max>\d+)")


# What a launch line may claim before the claim is taken for damage or hostility: each Worker,
# GPU and process the model builds costs memory, and no real job comes near these.
LAUNCH_LIMITS = {"nnodes": 1 << 16, "node_rank": (1 << 16) - 1, "gpus_per_node": 1 << 10,
                 "total_procs": 1 << 26}


@needs(_literal(b"DDP launch:"))
def parse_launch(body: str) -> dict | None:
    """The launch line's fields; a number beyond LAUNCH_LIMITS is left out (None) and listed
    in `absurd` so the report can name it."""
    found = LAUNCH.search(body)
    if not found:
        return None
    fields = {m["key"]: m["value"] for m in _KEY_VALUE.finditer(found["rest"])}
    master = fields.get("master") or ""
    addr, port = master, None
    if master.startswith("["):  # [IPv6]:port
        close = master.find("]")
        addr = master[1:close] if close > 0 else master[1:]
        port = _to_int(master[close + 2:]) if close > 0 and master[close + 1:close + 2] == ":" else None
    elif ":" in master:
        head, _, tail = master.rpartition(":")
        if tail.isdigit():
            addr, port = head, int(tail)
    # An elastic launch may print torchrun's own `--nnodes` shape, `nnodes=MIN:MAX`: the job
    # then runs with any node count in that range, so nnodes is the most it waits for.
    elastic = _NODE_RANGE.fullmatch(fields.get("nnodes") or "")
    numbers = {key: _to_int(elastic["max"] if elastic and key == "nnodes" else fields.get(key))
               for key in LAUNCH_LIMITS}
    absurd = tuple((key, fields[key]) for key, value in numbers.items()
                   if value is not None and not 0 <= value <= LAUNCH_LIMITS[key])
    for key, _ in absurd:
        numbers[key] = None
    min_nnodes = _to_int(elastic["min"]) if elastic else None
    if min_nnodes is not None and (numbers["nnodes"] is None or not 0 < min_nnodes <= numbers["nnodes"]):
        min_nnodes = None
    return {
        **numbers,
        "min_nnodes": min_nnodes,
        "master_addr": addr or None,
        "master_port": port,
        "raw_fields": tuple(fields.items()),
        "absurd": absurd,
    }



# --- torchrun's own INFO lines about its node: launch configs and rendezvous results ------------

# At LOGLEVEL=INFO torchrun's agent logs two blocks that tell its node's place in the job, one
# `key=value` or `key : value` per line (each line with its own logger header in torch >= 2.3, only
# the first one in older releases):
#   torch/distributed/launcher/api.py, launch_agent (1.10 - 2.x; torchelastic's elastic_operator
#   before, tab-indented `\tmin_nodes: 2`): `Starting elastic_operator with launch configs:`, then
#   `  min_nodes : 2`, `  max_nodes : 2`, `  nproc_per_node : 2`, `  rdzv_backend : static`,
#   `  rdzv_endpoint : 10.0.0.1:29500`, `  rdzv_configs : {'timeout': 900, 'rank': 1}` (static
#   rendezvous only: run.py puts --node_rank there as `rank`).
#   torch/distributed/elastic/agent/server/api.py, _rendezvous, three shapes:
#   1.10 - 2.x: `[default] Rendezvous complete for workers. Result:`, then `  restart_count=0`,
#   `  master_addr=...`, `  master_port=...`, `  group_rank=1`, `  group_world_size=2`,
#   `  local_ranks=[0, 1]`, `  role_ranks=[2, 3]`, `  global_ranks=[2, 3]`, `  role_world_sizes=[4, 4]`,
#   `  global_world_sizes=[4, 4]` (and `  event_log_handler=null` in the newest);
#   1.9: `[default] Rendezvous complete for workers.` / `Result:` / `\tgroup_rank=1` ... and
#   `\tworkers={'local_ranks': [0, 1], 'global_ranks': [2, 3], 'role_ranks': [2, 3], 'world_size': 4,
#   'role_world_size': 4}`;
#   torchelastic 0.2: as 1.9 with `\trank stride=2` and `\tassigned global_ranks=[2, 3]`.
# A collector that joins a record's lines puts a whole block on one line: its fields are read there too.
AGENT_RESULT, AGENT_CONFIGS = "rendezvous result", "launch configs"
_RESULT_HEADER = "Rendezvous complete for workers"
_CONFIGS_HEADER = "with launch configs"
_RESULT_KEYS = ("restart_count|master_addr|master_port|group_rank|group_world_size|local_ranks|"
                "global_ranks|assigned global_ranks|global_world_sizes|workers")
_RESULT_VALUE = r"\[[^\]]*\]|\{[^}]*\}|[^\s,\[{][^\s,]*"
_RESULT_FIELD = re.compile(rf"(?<!\w)(?P<key>{_RESULT_KEYS})=(?P<value>{_RESULT_VALUE})")
_RESULT_LINE = re.compile(rf"[ \t]*(?P<key>{_RESULT_KEYS})=(?P<value>{_RESULT_VALUE})[ \t]*")
_CONFIGS_KEYS = "min_nodes|max_nodes|nproc_per_node|rdzv_backend|rdzv_endpoint|rdzv_configs"
_CONFIGS_FIELD = re.compile(rf"\b(?P<key>{_CONFIGS_KEYS})[ \t]*:[ \t]*(?P<value>\{{[^}}]*\}}|[^\s{{]\S*)")
_CONFIGS_LINE = re.compile(rf"[ \t]*(?P<key>{_CONFIGS_KEYS})[ \t]*:[ \t]*(?P<value>\{{[^}}]*\}}|\S+)[ \t]*")


@dataclass(frozen=True, slots=True)
class AgentBlockLine:
    """One line of an agent block: which block (AGENT_RESULT or AGENT_CONFIGS), whether the line
    opens one (its header), and the fields it holds as printed."""

    block: str
    opens: bool
    fields: tuple[tuple[str, str], ...]


@needs(_literal(_RESULT_HEADER.encode()), _literal(_CONFIGS_HEADER.encode()),
       Candidates((b"group_rank=", b"local_ranks=", b"global_ranks=", b"master_addr=", b"master_port=",
                   b"group_world_size=", b"global_world_sizes=", b"workers={"),
                  rb"(?:group_rank|local_ranks|global_ranks|master_addr|master_port|group_world_size"
                  rb"|global_world_sizes)=|workers=\{"),
       Candidates((b"min_nodes", b"max_nodes", b"nproc_per_node", b"rdzv_backend", b"rdzv_endpoint",
                   b"rdzv_configs"),
                  rb"(?:min_nodes|max_nodes|nproc_per_node|rdzv_backend|rdzv_endpoint|rdzv_configs)[ \t]*:"))
def parse_agent_block_line(body: str) -> AgentBlockLine | None:
    """A line of torchrun's launch configs or rendezvous result block (see above). A field line
    holds nothing but its field, so a script's own `group_rank=1 loss=...` print is not one."""
    if _RESULT_HEADER in body:
        fields = [(m["key"], m["value"]) for m in _RESULT_FIELD.finditer(body, body.index(_RESULT_HEADER))]
        return AgentBlockLine(AGENT_RESULT, True, tuple(fields))
    if _CONFIGS_HEADER in body and "elastic_operator" in body:
        fields = [(m["key"], m["value"]) for m in _CONFIGS_FIELD.finditer(body, body.index(_CONFIGS_HEADER))]
        return AgentBlockLine(AGENT_CONFIGS, True, tuple(fields))
    if (found := _RESULT_LINE.fullmatch(body)) is not None:
        return AgentBlockLine(AGENT_RESULT, False, ((found["key"], found["value"]),))
    if (found := _CONFIGS_LINE.fullmatch(body)) is not None:
        return AgentBlockLine(AGENT_CONFIGS, False, ((found["key"], found["value"]),))
    return None


class AgentBlockAssembler:
    """Agent blocks from their lines, per block kind and per agent (the pid torch's header names,
    where it does: two torchruns appending to one log interleave). A header opens a block; a
    field line fills the open block of its kind, or opens one when the header was cut away (a
    rotated log) or the field is already there (a block whose header was lost follows). A block
    is done when the next one of its kind opens, or at the end (`flush`)."""

    def __init__(self):
        self.open: dict[tuple[str, object], tuple[object, dict[str, str]]] = {}

    def feed(self, where, agent, line: AgentBlockLine) -> list[tuple[object, str, dict[str, str]]]:
        key = (line.block, agent)
        done = []
        current = self.open.get(key)
        if current is not None and (line.opens or any(name in current[1] for name, _ in line.fields)):
            done.append((current[0], line.block, current[1]))
            current = None
        if current is None:
            current = self.open[key] = (where, {})
        current[1].update(line.fields)
        return done

    def flush(self) -> list[tuple[object, str, dict[str, str]]]:
        rest = [(where, key[0], fields) for key, (where, fields) in self.open.items()]
        self.open = {}
        return rest


_INTEGER = re.compile(r"-?\d+")
_QUOTED_LIST = r"'{key}':\s*(\[[^\]]*\]|-?\d+)"


def _integers(value: str | None) -> list[int] | None:
    """`[2, 3]` → [2, 3]; None for no value or one that is not such a list."""
    if value is None or not value.startswith("["):
        return None
    return [int(n) for n in _INTEGER.findall(value)]


def _within_limit(key: str, value: int | None) -> int | None:
    """A number torchrun printed, or None when it is beyond what any job has (LAUNCH_LIMITS)."""
    return value if value is not None and 0 <= value <= LAUNCH_LIMITS[key] else None


def _host_port(endpoint: str | None) -> tuple[str | None, int | None]:
    """`10.0.0.1:29500`, `[::1]:29500` or a bare host (c10d's default port is not printed)."""
    if not endpoint:
        return None, None
    if endpoint.startswith("["):
        close = endpoint.find("]")
        tail = endpoint[close + 1:] if close > 0 else ""
        return endpoint[1:close] if close > 0 else endpoint[1:], _to_int(tail[1:]) if tail.startswith(":") else None
    head, colon, tail = endpoint.rpartition(":")
    if colon and tail.isdigit() and ":" not in head:
        return head or None, int(tail)
    return endpoint, None


def agent_block_facts(block: str, fields: dict[str, str]) -> dict:
    """What a whole block says of its node, in LaunchLine's terms (logscan.scan.events.AgentShape):
    node_rank, nnodes, min_nnodes, gpus_per_node, total_procs, first_rank, master_addr,
    master_port, rdzv_backend. A field the block did not print is None."""
    if block == AGENT_RESULT:
        workers = fields.get("workers", "")  # 1.9's dict of lists

        def from_workers(key: str) -> str | None:
            found = re.search(_QUOTED_LIST.format(key=key), workers)
            return found[1] if found else None

        global_ranks = _integers(fields.get("global_ranks") or fields.get("assigned global_ranks")
                                 or from_workers("global_ranks"))
        local_ranks = _integers(fields.get("local_ranks") or from_workers("local_ranks"))
        sizes = _integers(fields.get("global_world_sizes"))
        total = sizes[0] if sizes else _to_int(from_workers("world_size"))
        processes = len(local_ranks) if local_ranks else len(global_ranks) if global_ranks else None
        return {"node_rank": _within_limit("node_rank", _to_int(fields.get("group_rank"))),
                "nnodes": _within_limit("nnodes", _to_int(fields.get("group_world_size"))),
                "min_nnodes": None,
                "gpus_per_node": _within_limit("gpus_per_node", processes),
                "total_procs": _within_limit("total_procs", total),
                "first_rank": _within_limit("total_procs", min(global_ranks)) if global_ranks else None,
                "master_addr": fields.get("master_addr") or None,
                "master_port": _to_int(fields.get("master_port")),
                "rdzv_backend": None}
    lowest = _within_limit("nnodes", _to_int(fields.get("min_nodes")))
    most = _within_limit("nnodes", _to_int(fields.get("max_nodes")))
    backend = fields.get("rdzv_backend")
    # Static rendezvous is told the node's rank (`--node_rank`) as `rank` in its configs; other
    # backends assign group ranks themselves, whatever --node_rank said.
    static_rank = re.search(r"'rank':\s*(-?\d+)", fields.get("rdzv_configs", "")) if backend == "static" else None
    addr, port = _host_port(fields.get("rdzv_endpoint"))
    return {"node_rank": _within_limit("node_rank", int(static_rank[1])) if static_rank else None,
            "nnodes": most if most is not None and (lowest is None or lowest <= most) else None,
            "min_nnodes": lowest if lowest is not None and most is not None and 0 < lowest < most else None,
            "gpus_per_node": _within_limit("gpus_per_node", _to_int(fields.get("nproc_per_node"))),
            "total_procs": None, "first_rank": None,
            "master_addr": addr, "master_port": port, "rdzv_backend": backend}


# --- env prints: `torchrun env: RANK= 2 LOCAL_RANK= 0 WORLD_SIZE= 4`, or pieces of them ------

# `RANK=` must not be read inside `LOCAL_RANK=` or `NODE_RANK=`.
ENV_TOKEN = re.compile(
    r"(?<![A-Za-z_])(?P<key>LOCAL_RANK|RANK|WORLD_SIZE)\s*[=:]\s*(?P<value>-?\d+|None|'[^']*'|\"[^\"]*\")?")
ENV_MARKER = "torchrun env"
# A continuation piece of an interleaved env print holds nothing but env tokens.
_ENV_ONLY = re.compile(
    r"\s*(?:(?:torchrun env:?|(?<![A-Za-z_])(?:LOCAL_RANK|RANK|WORLD_SIZE)\s*[=:]\s*(?:-?\d+|None)?|[,;])\s*)+")


@needs(_literal(b"torchrun env"), _literal(b"LOCAL_RANK"), _literal(b"WORLD_SIZE"),
       # A piece holding only `RANK= 3` still counts; `NODE_RANK=` and free text do not.
       Candidates((b"RANK",), rb"(?<![A-Za-z_])RANK[ \t]*[=:]"))
def env_tokens(body: str) -> tuple[int, list[tuple[str, int | None]]] | None:
    """(number of `torchrun env` markers, [(key, value)]) for an env print or a piece of one."""
    markers = body.count(ENV_MARKER)
    if not markers and not _ENV_ONLY.fullmatch(body):
        return None
    tokens = [(m["key"], _to_int(m["value"])) for m in ENV_TOKEN.finditer(body)]
    if not tokens and not markers:
        return None
    return markers, tokens


class EnvAssembler:
    """Rebuilds env prints from tokens, including prints that interleaved inside one line.

    Several processes share one stdout: `torchrun env:torchrun env: RANK= 2 LOCAL_RANK= 0 ...`
    followed by ` RANK= 3 LOCAL_RANK= 1 ...` is two prints. Each token fills the oldest print
    still missing that key, so the pieces are reassembled in the order they were written.
    Prints come out in the order they began, each once it and every older one are complete.

    Each token costs O(1): per key, a queue of the open prints still missing it (oldest first).
    """

    KEYS = ("RANK", "LOCAL_RANK", "WORLD_SIZE")

    def __init__(self):
        self.open: deque[tuple[object, dict]] = deque()  # (where of first token, {key: value})
        self._missing: dict[str, deque[dict]] = {key: deque() for key in self.KEYS}

    def feed(self, where, tokens) -> list[tuple[object, dict]]:
        done = []
        for key, value in tokens:
            waiting = self._missing.get(key)
            if waiting:
                waiting.popleft()[key] = value
            else:
                record = {key: value}
                self.open.append((where, record))
                for other, queue in self._missing.items():
                    if other != key:
                        queue.append(record)
            while self.open and len(self.open[0][1]) == len(self.KEYS):
                done.append(self.open.popleft())
        return done

    def flush(self) -> list[tuple[object, dict]]:
        rest, self.open = list(self.open), deque()
        for queue in self._missing.values():
            queue.clear()
        return rest


# --- other launchers' and frameworks' own rank lines: the same facts as the env print -----------

# (kind of line, pattern): each names a process's rank, local rank or world size as the framework
# that printed it knew them. The kind is kept with the facts: a line only some scripts, releases or
# ranks print is evidence where it is, never required where it is not (logscan.findings.processes).
LIGHTNING_GLOBAL_KIND = "Lightning GLOBAL_RANK"
RANK_LINES = (
    # PyTorch Lightning, every rank, just before init_process_group: `initializing ddp: GLOBAL_RANK:
    # 1, MEMBER: 2/8` (pytorch_lightning 1.x, plugins/training_type/ddp.py and accelerators),
    # `initializing distributed: ...` (the 1.5 series), then `Initializing distributed: GLOBAL_RANK:
    # ...` (lightning 2.x, fabric/utilities/distributed.py).
    # MEMBER is the rank plus one over the world size.
    (LIGHTNING_GLOBAL_KIND, re.compile(
        r"\b[Ii]nitializing (?:ddp|distributed): GLOBAL_RANK: (?P<rank>\d+), "
        r"MEMBER: \d+/(?P<world>\d+)")),
    # Lightning's CUDA accelerator, every rank (accelerators/gpu.py in 1.x, cuda.py in 2.x):
    # `LOCAL_RANK: 1 - CUDA_VISIBLE_DEVICES: [0,1,2,3]`.
    ("Lightning LOCAL_RANK", re.compile(r"\bLOCAL_RANK: (?P<local>\d+) - CUDA_VISIBLE_DEVICES: \[")),
    # DeepSpeed's MPI discovery (deepspeed/comm/comm.py mpi_discovery; deepspeed/utils/distributed.py
    # before 0.6): `Discovered MPI settings of world_rank=5, local_rank=1, world_size=8, master_addr=...`.
    # Some releases log it on world rank 0 only.
    ("DeepSpeed MPI settings", re.compile(
        r"\bDiscovered MPI settings of world_rank=(?P<rank>\d+), local_rank=(?P<local>\d+), "
        r"world_size=(?P<world>\d+)")),
    # Ray Train's worker (ray/train/torch/config.py, _setup_torch_process_group): `Setting up process
    # group for: env:// [rank=0, world_size=4]`; every rank until about 2.5, rank 0 only since.
    ("Ray Train process group", re.compile(
        r"\bSetting up process group for: \S* ?\[rank=(?P<rank>\d+), world_size=(?P<world>\d+)\]")),
)


# torch 1.9 and 1.10's elastic agent records each worker's end as an event, which its console handler
# prints as JSON (elastic/events, record): `{"name": "torchelastic.worker.status.FAILED", "source":
# "WORKER", "timestamp": 0, "metadata": {"run_id": ..., "global_rank": 0, "group_rank": 0, "worker_id":
# "16500", ...}}`: the global rank of the process with that pid.
WORKER_EVENT = re.compile(r'"name": "torchelastic\.worker\.status\.[A-Z]+".*?"global_rank": (?P<rank>\d+)'
                          r'.*?"worker_id": "(?P<pid>\d+)"')


@needs(_literal(b'"torchelastic.worker.status.'))
def parse_worker_event(body: str) -> tuple[int, int] | None:
    """(pid, global rank) of a torchelastic worker status event."""
    found = WORKER_EVENT.search(body) if "torchelastic.worker.status." in body else None
    return (int(found["pid"]), int(found["rank"])) if found is not None else None


@needs(_literal(b"GLOBAL_RANK: "), _literal(b" - CUDA_VISIBLE_DEVICES: ["),
       _literal(b"Discovered MPI settings of world_rank="), _literal(b"Setting up process group for: "))
def parse_rank_line(body: str) -> tuple[str, int | None, int | None, int | None] | None:
    """(kind, rank, local rank, world size) of a framework's rank line (RANK_LINES)."""
    for kind, pattern in RANK_LINES:
        found = pattern.search(body)
        if found is not None:
            named = found.groupdict()
            return kind, _to_int(named.get("rank")), _to_int(named.get("local")), _to_int(named.get("world"))
    return None


# Hugging Face Accelerate's state (PartialState/AcceleratorState.__repr__, src/accelerate/state.py),
# printed by scripts as `print(accelerator.state)` or logged (often on the main process only): one
# record over several lines, `Distributed environment: MULTI_GPU  Backend: nccl` (0.1x:
# `DistributedType.MULTI_GPU`, no backend), `Num processes: 8`, `Process index: 3` (not in 0.1),
# `Local process index: 1`, `Device: cuda:1`. Only the first line has a logger's header.
ACCELERATE_KIND = "Accelerate state"
ACCELERATE_MARKER = re.compile(r"\bDistributed environment: (?:DistributedType\.)?[A-Z][A-Z_]*\b")
_ACCELERATE_FIELD = re.compile(r"\s*(?P<key>Num processes|Process index|Local process index): (?P<value>\d+)\s*")
_ACCELERATE_KEYS = {"Num processes": "WORLD_SIZE", "Process index": "RANK", "Local process index": "LOCAL_RANK"}


@needs(_literal(b"Distributed environment: "), _literal(b"Num processes: "), _literal(b"rocess index: "))
def parse_accelerate_state(body: str) -> tuple[str, int | None] | None:
    """("marker", None) for the state's first line; (RANK, LOCAL_RANK or WORLD_SIZE, value) for
    one of its number lines, which mean something only inside a state print (StateAssembler)."""
    if ACCELERATE_MARKER.search(body):
        return "marker", None
    found = _ACCELERATE_FIELD.fullmatch(body)
    return (_ACCELERATE_KEYS[found["key"]], int(found["value"])) if found else None


class StateAssembler:
    """Accelerate's state prints from their lines. Several processes printing at once interleave
    the lines: each number line fills the oldest open print still missing that key, as
    EnvAssembler does. Only a marker opens a print, so a stray `Process index: 3` elsewhere is
    nothing. A print is done once it has all three numbers (0.1 prints no Process index: those
    are given out by `flush`)."""

    KEYS = ("RANK", "LOCAL_RANK", "WORLD_SIZE")

    def __init__(self):
        self.open: list[tuple[object, dict]] = []

    def feed(self, where, key: str, value: int | None) -> list[tuple[object, dict]]:
        if key == "marker":
            self.open.append((where, {}))
            return []
        waiting = next((i for i, (_, record) in enumerate(self.open) if key not in record), None)
        if waiting is None:
            return []
        first, record = self.open[waiting]
        record[key] = value
        if len(record) < len(self.KEYS):
            return []
        del self.open[waiting]
        return [(first, record)]

    def flush(self) -> list[tuple[object, dict]]:
        rest = [(where, record) for where, record in self.open if record]
        self.open = []
        return rest


# DeepSpeed's launcher (deepspeed/launcher/launch.py, one per node) logs the node's place in the job
# before it starts the node's processes: `WORLD INFO DICT: {'host0': [0, 1], 'host1': [0, 1]}`,
# `nnodes=2, num_local_procs=2, node_rank=1`, `global_rank_mapping=defaultdict(<class 'list'>,
# {'host0': [0, 1], 'host1': [2, 3]})`, `dist_world_size=4`. The second line is the node's launch line
# (nnodes, node_rank, processes on the node); dist_world_size is the launch's total_procs.
DEEPSPEED_LAUNCH = re.compile(r"\bnnodes=(?P<nnodes>\d+), num_local_procs=(?P<procs>\d+), node_rank=(?P<node_rank>\d+)")
DEEPSPEED_WORLD_SIZE = re.compile(r"\bdist_world_size=(?P<size>\d+)\s*$")


@needs(_literal(b"num_local_procs="), _literal(b"dist_world_size="))
def parse_deepspeed_launch(body: str) -> dict | int | None:
    """The fields of a launch line (as parse_launch gives them) for the launcher's
    `nnodes=..., num_local_procs=..., node_rank=...` line; the world size for `dist_world_size=N`."""
    if (size := DEEPSPEED_WORLD_SIZE.search(body)) is not None:
        return int(size["size"])
    found = DEEPSPEED_LAUNCH.search(body)
    if found is None:
        return None
    numbers = {"nnodes": int(found["nnodes"]), "node_rank": int(found["node_rank"]),
               "gpus_per_node": int(found["procs"]), "total_procs": None}
    absurd = tuple((key, str(value)) for key, value in numbers.items()
                   if value is not None and not 0 <= value <= LAUNCH_LIMITS[key])
    for key, _ in absurd:
        numbers[key] = None
    return {**numbers, "min_nnodes": None, "master_addr": None, "master_port": None,
            "raw_fields": (("nnodes", found["nnodes"]), ("num_local_procs", found["procs"]),
                           ("node_rank", found["node_rank"])),
            "absurd": absurd}


# --- Python tracebacks ----------------------------------------------------------------------

TRACEBACK_START = "Traceback (most recent call last)"
# What an exception is called whose traceback the log ends inside, before its exception line.
CUT_EXCEPTION = "an exception whose line the log cuts off (it ends inside its traceback)"
# dynamic_rendezvous.py's lines of a node already in its round: its heartbeat (`The node '%s' has failed to
# send a keep-alive heartbeat to the rendezvous '%s' due to an error of type %s.`) and its leaving (`... has
# failed to shutdown the rendezvous ...`, as torchrun does after stopping its processes): neither is a
# wait to join one.
RDZV_KEEP_ALIVE = "keep-alive heartbeat"
RDZV_SHUTDOWN = "has failed to shutdown the rendezvous"
CUT_AGENT_EXCEPTION = "an exception whose line the log cuts off (it ends inside torchrun's own traceback)"
# mp.spawn's parent raises from its join only once one of its processes failed: its own traceback, cut
# before its exception, still tells that
CUT_SPAWN_EXCEPTION = ("an error torch.multiprocessing.spawn saw in one of its processes (the log ends inside "
                       "spawn's own traceback, before it names which)")
CHAINED = ("During handling of the above exception", "The above exception was the direct cause",
           "Original Traceback")
# Frames of torchrun itself: a traceback holding one was raised by the agent, not a process. Its
# rendezvous and agent packages run in torchrun only (a training process's own rendezvous is
# torch/distributed/rendezvous.py).
AGENT_FRAMES = ('torch/distributed/run.py", line', 'bin/torchrun", line', 'torch/distributed/launch.py", line',
                'torch/distributed/elastic/rendezvous/', 'torch/distributed/elastic/agent/',
                # `accelerate launch` runs torchrun's launch in its own process (commands/launch.py,
                # multi_gpu_launcher: distrib_run.run(args))
                'accelerate/commands/launch.py", line',
                # horovodrun (horovod/runner/, horovod/run/ before 0.21) waits in its own process too
                'bin/horovodrun", line', 'horovod/runner/launch.py", line', 'horovod/runner/gloo_run.py", line',
                'horovod/runner/mpi_run.py", line', 'horovod/run/runner.py", line', 'horovod/run/gloo_run.py", line',
                'horovod/run/mpi_run.py", line')
# torch.multiprocessing.spawn's parent waiting for its processes (spawn.py: spawn, start_processes,
# ProcessContext.join); a spawned process's own traceback runs through spawn.py's `_wrap` instead.
SPAWN_PARENT_FRAME = re.compile(r'multiprocessing/spawn\.py", line \d+, in (?:join|start_processes|spawn)\b')
# What only a launcher raises, reporting a process's end: torchrun's agent (its traceback whatever
# frames of it a rotation cut away), and torch.multiprocessing.spawn's parent (spawn.py,
# ProcessContext.join, 1.8 on), whose ProcessRaisedException quotes the process's own traceback
# below it (SPAWN_QUOTE).
AGENT_EXCEPTIONS = ("ChildFailedError", "ProcessRaisedException",
                    # torchrun's rendezvous (elastic/rendezvous/api.py): only its agent raises these
                    "RendezvousError", "RendezvousClosedError", "RendezvousTimeoutError",
                    "RendezvousConnectionError", "RendezvousStateError", "RendezvousGracefulExitError")
# The quote's head in mp.spawn's message: "\n\n-- Process %d terminated with the following error:\n"
# then the process's traceback; %d is the index `fn(i, ...)` got, a local rank (also before 1.8,
# when the parent raised a plain Exception with the same message).
SPAWN_QUOTE = re.compile(r"-- Process (?P<index>\d+) terminated with the following error:\s*")
# An exception's class: one named as Python names them (`...Error`, `...Exception`, `...Interrupt`,
# `...Exit`), or one of the builtins that are not (`raise Exception(...)` is common in scripts).
EXCEPTION = re.compile(
    r"(?P<exc>(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Interrupt|Exit)(?:\([A-Za-z_][\w.]*\))?|Exception"
    r"|StopIteration|StopAsyncIteration))(?::[ ]?(?P<detail>.*))?")
# (a wrapper names the exception it carries in brackets: Ray's `ray.exceptions.RayTaskError(OutOfMemoryError):
# ray::WorkerDict.update_actor() ...`, the task's own exception re-raised where the driver waits for it)


# Text glued in front of a line by a tool no prefix rule knows (`[worker-3] [stderr] `, a pdsh
# host `node-1: `, `<12>|`): up to four tags without spaces, each ending in `]`, `>`, `)`, `|` or
# `:`. Only the two lines that open and close a traceback are looked for behind them.
_GLUE = re.compile(r"(?:[^\s\]>)|:]{0,60}[\]>)|:][ \t]*){1,4}")
_GLUE_TAG_END = re.compile(r"[\]>)|:][ \t]*")
_GLUE_SPAN = 160


# Another process's traceback header written into the same line (ranks writing one stderr at once):
# `Traceback (most recent call last):`, or two of them interleaved character by character,
# `TTrraacceebbaacckk  ((mmoosstt  rreecceenntt  ccaallll  llaasstt))::`. Its end, `last):` with each
# character once or more, is where a process's own line may begin.
_HEADER_END = re.compile(r"l+a+s+t+\s*\)+\s*:+[ \t]*")


def _glued_starts(body: str):
    """Where the line may begin after glued tags: 0, then the end of each tag, left to right;
    then after each traceback header's end."""
    yield 0
    found = _GLUE.match(body)
    if found is not None and found.end() <= _GLUE_SPAN:
        for tag_end in _GLUE_TAG_END.finditer(body, 0, found.end()):
            yield tag_end.end()
    if "):" in body or "))::" in body:
        for header_end in _HEADER_END.finditer(body):
            yield header_end.end()


# torchrun's summary quotes a process's error file: `  traceback : Traceback (most recent call
# last):`, then its frames and exception line indented two spaces more than Python prints them.
_SUMMARY_TRACEBACK = re.compile(r"\s*traceback\s*:\s*" + re.escape(TRACEBACK_START))
SUMMARY_INDENT = "  "


# rich.traceback (installed by accelerate, typer and others) draws the traceback in a box:
# `╭──── Traceback (most recent call last) ────╮`, frames as `│ /path/x.py:12 in main │`, then the
# exception line below the box as Python prints it.
RICH_BOX_TOP = "╭"


# The header glued behind another write with nothing between, ending the line: a process's stderr
# behind a bar its stdout left without a newline (mmcv's ProgressBar: `[   ] 0/5000, elapsed: 0s,
# ETA:Traceback (most recent call last):`). Only at the line's end: a quote of a traceback (a JSON
# field's `"Traceback (most recent call last):\n  File ...`) goes on after it.
_HEADER_ENDS_LINE = TRACEBACK_START + ":"


@needs(_literal(b"Traceback (most recent"))
def is_traceback_start(body: str) -> bool:
    return (any(body.startswith(TRACEBACK_START, start) for start in _glued_starts(body))
            or ("call last):" in body and body.rstrip().endswith(_HEADER_ENDS_LINE))
            or _SUMMARY_TRACEBACK.match(body) is not None
            or body.lstrip().startswith(RICH_BOX_TOP) and TRACEBACK_START in body)


# A frame of a Python traceback as Python prints it (traceback.py's `  File "{}", line {}, in {}`).
FRAME = re.compile(r'\s+File "[^"]+", line \d+, in ')


def is_frame_line(body: str) -> bool:
    """A traceback's frame (`  File "x.py", line 3, in f`) or its source line: indented. Asked
    only of lines a signal matched, so it needs no candidate literal of its own."""
    return body[:1] in (" ", "\t")


# Python's hook for an exception it cannot raise (a `__del__`, a weakref callback, an atexit
# function: PyErr_WriteUnraisable) prints `Exception ignored in: <obj>` (`Exception ignored in
# atexit callback: <fn>` from 3.12), then the traceback: the process went on, nothing failed.
@needs(_literal(b"Exception ignored in"))
def is_ignored_exception(body: str) -> bool:
    return body.lstrip().startswith("Exception ignored in")


# `Original Traceback (most recent call last):` (a DataLoader worker's) is fed by the literal above.
@needs(_literal(b"During handling of the above"), _literal(b"The above exception was"))
def is_chained(body: str) -> bool:
    """A traceback that continues the one before it (`During handling of the above ...`)."""
    return any(phrase in body for phrase in CHAINED)


@needs(*(_literal(frame.encode()) for frame in AGENT_FRAMES), _literal(b'multiprocessing/spawn.py", line '))
def is_agent_frame(body: str) -> bool:
    """A frame of a launcher's own process: torchrun's agent, or mp.spawn's parent."""
    if "torch" not in body and "horovod" not in body and "accelerate/" not in body:
        return False  # (every AGENT_FRAMES path, and spawn's, names one of these; most lines none)
    return any(frame in body for frame in AGENT_FRAMES) or (
        'multiprocessing/spawn.py", line ' in body and SPAWN_PARENT_FRAME.search(body) is not None)


def is_spawn_parent_frame(body: str) -> bool:
    """A frame of mp.spawn's parent waiting for its processes (asked of agent frames only)."""
    return SPAWN_PARENT_FRAME.search(body) is not None


def is_agent_exception(exc_type: str) -> bool:
    """`torch.distributed.elastic.multiprocessing.errors.ChildFailedError`: torchrun's own."""
    return exc_type.rsplit(".", 1)[-1] in AGENT_EXCEPTIONS


@needs(_literal(b" terminated with the following error:"))
def parse_spawn_quote(body: str) -> int | None:
    """The local rank whose traceback mp.spawn's exception quotes from the next line on."""
    found = SPAWN_QUOTE.fullmatch(body.strip() + " ")
    return int(found["index"]) if found is not None else None


def _exception_name_end(name: bytes) -> Candidates:
    """Lines where `name` may end an exception's class as EXCEPTION reads it: a `:` follows, or
    nothing but white space to the line's end; or a byte after which the body may differ from
    the raw line (a colour code, a JSON escape, non-ASCII white space). A line that only quotes
    the word (`text="..Error.."`) is not fed."""
    return Candidates((name,), re.escape(name) + rb"[\t\x0b\x0c\r\x1c-\x20]*(?::|\\|\x1b|[\x80-\xff]|$)")


# What a paste wraps a line in to stress it: bold, and a code span.
MARKDOWN_WRAPS = ("**", "__", "`")


@needs(*(_exception_name_end(name) for name in (b"Error", b"Exception", b"Interrupt", b"Exit",
                                                 b"StopIteration", b"StopAsyncIteration")),
       Candidates((b"Error(",), rb"Error\([A-Za-z_][\w.]*\):"))
def parse_exception(body: str) -> tuple[str, str] | None:
    """The last line of a traceback, `ExcType: detail`: (type, detail), also after glued tags, and
    inside a paste's markdown emphasis or code span (`**RuntimeError: ...**`)."""
    text = body.rstrip()
    for mark in MARKDOWN_WRAPS:
        if text.startswith(mark) and text.endswith(mark) and len(text) > 2 * len(mark):
            text = text[len(mark):-len(mark)]
            break
    for start in _glued_starts(text):
        if (found := EXCEPTION.fullmatch(text, start)) is not None:
            return found["exc"], (found["detail"] or "").strip()
    return None


# THC (torch <= 1.10) checked every CUDA call with __THCudaCheck (aten/src/THC/THCGeneral.cpp), which
# prints `THCudaCheck FAIL file=%s line=%i error=%i : %s` to stderr (once per process) and then raises,
# through _THError, `RuntimeError: cuda runtime error (%d) : %s at %s:%d`. The line is that exception
# announced: a pasted excerpt often holds it alone. (`THCudaCheckWarn FAIL` only warns.)
THC_CHECK_FAIL = re.compile(
    r"\bTHCudaCheck FAIL file=(?P<file>\S+) line=(?P<line>\d+) error=(?P<error>\d+) : (?P<message>.*\S)")


@needs(_literal(b"THCudaCheck FAIL"))
def parse_thc_check(body: str) -> tuple[str, str] | None:
    """The exception a `THCudaCheck FAIL` line announces: ("RuntimeError", "cuda runtime error
    (N) : MESSAGE at FILE:LINE"), as THError words it."""
    found = THC_CHECK_FAIL.search(body)
    if found is None:
        return None
    return "RuntimeError", (f"cuda runtime error ({found['error']}) : {found['message']} "
                            f"at {found['file']}:{found['line']}")


# A CUDA error told on a C++ line, with no Python exception line of its own: NCCL's watchdog thread
# ends on what it caught (ProcessGroupNCCL.cpp, ncclCommWatchdog: `[Rank N] NCCL watchdog thread
# terminated with exception: ` << e.what() up to 2.1, after logPrefix()'s `[PG 0 Rank N] ` in 2.2 and
# 2.3, `Process group watchdog thread terminated with exception: ` from 2.4), and std::terminate
# prints an uncaught c10::Error as `  what():  CUDA error: ...`. Either takes the process down; the
# message is c10's CUDA check (c10_cuda_check_implementation): `CUDA error: %s`.
CUDA_ERROR_TOLD = re.compile(
    r"(?:watchdog thread terminated with exception|^\s*what\(\)):\s+(?P<message>CUDA error: .*\S)")
# The rank the watchdog's line names in its prefix (logPrefix(): `[Rank N] ` up to 2.1, the default
# group's `[PG 0 Rank N] ` or `[PG ID 0 PG GUID 0(default_pg) Rank N] ` later): the global rank, as
# collective-timeout-line reads it.
# The default group's logPrefix() before its rank (2.2 on): `PG 0 `, `PG 0 (default_pg) `, `PG ID 0 PG
# GUID 0(default_pg) `; the rank after it is the global one.
DEFAULT_GROUP_PREFIX = r"PG ID 0 PG GUID 0\(default_pg\) |PG 0 (?:\(default_pg\) )?"
WATCHDOG_RANK = re.compile(rf"\[(?:{DEFAULT_GROUP_PREFIX})?Rank (?P<rank>\d+)\] "
                           r"(?:NCCL|Process group) watchdog thread terminated")


# The default group's logPrefix() with its prefix (`[PG 0 Rank N] ` ...): its N is the global rank,
# whatever a group-less `[Rank N]` of older releases or of a subgroup would be.
DEFAULT_GROUP_RANK = re.compile(rf"\[(?:{DEFAULT_GROUP_PREFIX})Rank (?P<rank>\d+)\]")


def default_group_rank(body: str) -> int | None:
    """The global rank the default group's logPrefix() names in a line, if it names one."""
    found = DEFAULT_GROUP_RANK.search(body) if "PG " in body else None
    return int(found["rank"]) if found is not None else None


def watchdog_rank(body: str) -> int | None:
    """The global rank a watchdog thread's last line names, if it names one."""
    found = WATCHDOG_RANK.search(body) if "watchdog thread terminated" in body else None
    return int(found["rank"]) if found is not None else None


# torchrun's error handler (elastic/multiprocessing/errors/error_handler.py, 1.9 and 1.10) logs the
# error it records as JSON, one field a line: `[ERROR] ... error_handler: {`, then `  "message": {`,
# then `    "message": "MemoryError: std::bad_alloc",`: the failed process's exception (copied from its
# error file) or torchrun's own.
ERROR_HANDLER_MESSAGE = re.compile(r'\s*"message": "(?P<text>(?:[^"\\]|\\.)*)",?\s*')


# Ray's driver logs a task's exception no one waited for (ray/_private/worker.py): `Unhandled error
# (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): ` then the RayTaskError's text (`ray::Task() (pid=...)`),
# the remote traceback after it without its header.
RAY_UNHANDLED = re.compile(r"Unhandled error \(suppress with '?RAY_IGNORE_UNHANDLED_ERRORS=1'?\): (?P<detail>.*\S)")
# Ray's raylet on a worker process that died under a task (`(raylet) A worker died or was killed while
# executing a task by an unexpected system error. ... Worker exit type: SYSTEM_ERROR Worker exit detail:
# ...`): the event Ray raises to the caller as WorkerCrashedError.
# ProcessGroupGloo's constructor logs the error it then throws (ProcessGroupGloo.cpp, logAndThrow:
# `Gloo connectFullMesh failed with ` + the transport's error); its glog header is a prefix, so the body
# begins with it. The Python exception it becomes is told after the traceback, when the lines hold it.
GLOO_MESH_FAILED = re.compile(r"^\s*(?P<detail>Gloo connectFullMesh failed with .*\S)")
GLOO_LOGGED = "RuntimeError (ProcessGroupGloo's log of it; its raise is not in view)"
# Hydra (hydra/core/utils.py, JobReturn.return_value) writes `Error executing job with overrides: [...]`
# to stderr when the task function raised, then re-raises; its run_and_report prints the traceback
# after it. The line says an exception ended the job; which one, the lines after it tell.
HYDRA_JOB_FAILED = re.compile(r"^\s*Error executing job with overrides: \[")
HYDRA_RAISED = "an exception (Hydra reports its job raised one; the exception's own line is not in view)"
# detectron2's training loop (detectron2/engine/train_loop.py, TrainerBase.train) logs
# `logger.exception("Exception during training:")` and re-raises: the traceback follows it.
TRAINER_LOGGED = re.compile(r"\bException during training:\s*$")
TRAINER_RAISED = "an exception (its trainer logged one during training; the exception's own line is not in view)"
# argparse's error (argparse.py, ArgumentParser.error): the usage, then `%(prog)s: error: %(message)s`,
# then exit(2). prog is the script's file name (`train.py`, `__main__.py` under `python -m` before
# 3.14, `python -m module` from 3.14); the launchers' own parsers (torch.distributed.launch's
# `launch.py`, `run.py`, `torchrun`) fail the launch, not a process, and are launch-env-missing's.
# A GPU kernel's failed assertion (CUDA's device-side __assert_fail: `file.cu:N: kernel: block: [...],
# thread: [...] Assertion `cond` failed.`; HIP's `file.hip:N: kernel: Device-side assertion `cond' failed.`):
# the process's CUDA context is lost, and it raises `CUDA error: device-side assert triggered` at its next
# synchronisation, if the log goes on that far.
KERNEL_ASSERT = re.compile(r"\.(?:cuh?|hip)(?::\d+)?\b.*?(?:Assertion `[^`]+`|Device-side assertion `[^']+') failed")
DEVICE_ASSERT = ("RuntimeError", "CUDA error: device-side assert triggered")
# A DataLoader worker's own signal handler (torch/csrc/DataLoader.cpp, SIGNAL_HANDLER): `ERROR: Unexpected
# bus error encountered in worker. This might be caused by insufficient shared memory (shm).`, `... segmentation
# fault ...`, `... floating-point exception ...`; the worker dies, and the training process raises when it
# next asks it for a batch (`DataLoader worker (pid N) is killed by signal: Bus error.`).
DATALOADER_WORKER_SIGNAL = re.compile(
    r"ERROR: Unexpected (?P<what>bus error|segmentation fault|floating-point exception) encountered in worker\.")
ARGPARSE_ERROR = re.compile(r"^\s*(?P<prog>[\w.-]+\.py|python3? -m [\w.]+): error: (?P<detail>.*\S)")
ARGPARSE_EXIT = "SystemExit"
_LAUNCHER_PROGS = ("launch.py", "run.py", "python -m torch.distributed.launch", "python -m torch.distributed.run")
# Ray Tune's word that trials failed: tune.py's `logger.error("Trials did not complete: %s", trials)` (or its
# TuneError, when raise_on_failed_trial), and the console output's (2.5 on) `Trial {name} errored after {n}
# iterations at {date}. ...` (`Training errored after ...` for a Trainer's single trial). The trial's own
# error is in its error.txt, or in its worker's lines above.
RAY_TRIALS_FAILED = re.compile(r"\bTrials did not complete: (?P<trials>\[[^\]]*\]?)"
                               r"|\b(?P<what>Trial \S+|Training) errored after (?P<n>\d+) iterations\b"
                               # its controller's DEBUG line as the trial fails (tune_controller.py)
                               r"|\bSetting status for trial (?P<trial>\S+) from \w+ to ERROR\b")
# Ray's cause of an actor's death (gcs, actor_died_error_context: `The actor is dead because its worker
# process has died. Worker exit type: {type} Worker exit detail: {detail}`), alone or under the
# ActorDiedError that carries it; an exit the actor's code asked for (INTENDED_USER_EXIT,
# INTENDED_SYSTEM_EXIT) is no failure.
RAY_ACTOR_DEAD = re.compile(r"\bThe actor is dead because its worker process has died\.(?: Worker exit type: "
                            r"(?P<type>\w+)(?: Worker exit detail: (?P<detail>[^.]*\.))?)?")
RAY_ACTOR_DIED = "ray.exceptions.ActorDiedError"
RAY_WORKER_DIED = re.compile(r"A worker died or was killed while executing (?:a|the) task by an unexpected system "
                             r"error\.(?:.*?Worker exit detail: (?P<detail>[^.]*\.))?")


@needs(_literal(b"THCudaCheck FAIL"), _literal(b"thread terminated with exception: CUDA error"),
       _literal(b"what():  CUDA error"), _literal(b"what(): CUDA error"),
       # only a line that is the field alone: a JSON logger's `{"message": "step 3", ...}` is every line
       Candidates((b'"message": "',), rb'^[ \t]*"message": "'),
       _literal(b"Unhandled error (suppress with"), _literal(b"A worker died or was killed while executing"),
       _literal(b"Error executing job with overrides: ["), _literal(b"Gloo connectFullMesh failed with "),
       _literal(b": error: "), _literal(b"` failed"), _literal(b"' failed"),
       _literal(b"encountered in worker."), _literal(b"Trials did not complete: "), _literal(b" errored after "),
       _literal(b"Exception during training:"), _literal(b"The actor is dead because its worker process has died"),
       _literal(b" to ERROR"))
def parse_announced(body: str) -> tuple[str, str] | None:
    """The exception a line tells when no Python exception line does: a `THCudaCheck FAIL`
    (parse_thc_check), a CUDA error that ended NCCL's watchdog thread or was left uncaught
    (`c10::Error`, the class c10's CUDA check throws), the error torchrun's error handler logs, a
    Ray task's exception its driver logs as unhandled, a Ray worker's death its raylet logs, or
    Hydra's word that its job raised (HYDRA_RAISED: the exception itself is told after it, if at all),
    detectron2's trainer's (TRAINER_RAISED, alike),
    argparse's error, after which the script exits with status 2 (ARGPARSE_EXIT), a GPU kernel's failed
    assertion, which the process raises as a device-side assert (DEVICE_ASSERT), a DataLoader worker's
    death by a signal its handler reports (DATALOADER_WORKER_SIGNAL), Ray Tune's word that trials
    failed (RAY_TRIALS_FAILED), or Ray's cause of an actor's death (RAY_ACTOR_DEAD)."""
    if (thc := parse_thc_check(body)) is not None:
        return thc
    if '"message": "' in body and (logged := ERROR_HANDLER_MESSAGE.fullmatch(body)) is not None:
        try:
            text = json.loads(f'"{logged["text"]}"')
        except ValueError:
            return None
        found = EXCEPTION.fullmatch(text.strip())
        return (found["exc"], (found["detail"] or "").strip()) if found is not None else None
    # (a substring first: this is asked of every line the interpreter reads)
    if "Unhandled error" in body and (unhandled := RAY_UNHANDLED.search(body)) is not None:
        return "ray.exceptions.RayTaskError", unhandled["detail"]
    if "connectFullMesh" in body and (mesh := GLOO_MESH_FAILED.match(body)) is not None:
        return GLOO_LOGGED, mesh["detail"]
    if "Error executing job" in body and HYDRA_JOB_FAILED.match(body) is not None:
        return HYDRA_RAISED, ""
    if "Exception during training:" in body and TRAINER_LOGGED.search(body) is not None:
        return TRAINER_RAISED, ""
    if " failed" in body and "ssertion `" in body and KERNEL_ASSERT.search(body) is not None:
        return DEVICE_ASSERT
    if "encountered in worker." in body and (worker := DATALOADER_WORKER_SIGNAL.search(body)) is not None:
        return "RuntimeError", f"a DataLoader worker died of an unexpected {worker['what']}"
    if ": error: " in body and (argparse := ARGPARSE_ERROR.match(body)) is not None \
            and argparse["prog"] not in _LAUNCHER_PROGS:
        return ARGPARSE_EXIT, f"2 (argparse: {argparse['detail']})"
    if (" did not complete: " in body or " errored after " in body or " to ERROR" in body) and (
            tune := RAY_TRIALS_FAILED.search(body)) is not None:
        told = (f"Trials did not complete: {tune['trials']}" if tune["trials"] is not None
                else f"{tune['what']} errored after {tune['n']} iterations" if tune["what"] is not None
                else f"trial {tune['trial']} failed (its status set to ERROR)")
        return "ray.tune.error.TuneError", told
    if "The actor is dead" in body and (dead := RAY_ACTOR_DEAD.search(body)) is not None and not (
            dead["type"] or "").startswith("INTENDED_"):
        said = f" (Worker exit type: {dead['type']})" if dead["type"] else ""
        return RAY_ACTOR_DIED, f"the actor is dead because its worker process has died{said}" + (
            f": {dead['detail']}" if dead["detail"] else "")
    if "A worker died" in body and (died := RAY_WORKER_DIED.search(body)) is not None:
        return "ray.exceptions.WorkerCrashedError", died["detail"] or "a worker died or was killed while executing a task"
    found = CUDA_ERROR_TOLD.search(body)
    return ("c10::Error", found["message"]) if found is not None else None


# NCCL's debug header (debug.cc: `%s:%d:%d [%d] `, host, pid, thread id and CUDA device) before each of
# its INFO and WARN lines, and its INFO line of a communicator formed (init.cc: `comm %p rank %d nranks
# %d cudaDev %d busId %lx ...`): the process's rank in that communicator, its global rank in the world's.
NCCL_HEADER = re.compile(r"(?:^|\s)(?P<host>[\w.-]+):(?P<pid>\d+):\d+ \[\d+\] ")
NCCL_COMM_RANK = re.compile(r"\bNCCL INFO comm 0x[0-9a-f]+ rank (?P<rank>\d+) nranks (?P<nranks>\d+)\b")


def nccl_process(body: str) -> tuple[str, int] | None:
    """The host and pid of NCCL's debug header on a line, if it has one."""
    found = NCCL_HEADER.search(body) if " [" in body else None
    return (found["host"], int(found["pid"])) if found is not None else None


# torch's NCCL error (ProcessGroupNCCL, getNcclErrorDetailStr) ends with `Last error:` and NCCL's last
# WARN message (ncclGetLastError) on the line after it, a message no rule's keyword finds there: the
# scanner keeps that line, and the interpreter reads it behind its head, as one line.
LAST_ERROR_HEAD = "Last error:"


@needs(_literal(LAST_ERROR_HEAD.encode()))
def is_last_error_head(body: str) -> bool:
    return LAST_ERROR_HEAD in body and body.rstrip().endswith(LAST_ERROR_HEAD)


# --- torchrun's failure summary: a block of `key : value` lines per failed process -------------

SUMMARY_FIELD = re.compile(
    r"\s*(?P<key>time|host|rank|exitcode|error_file|traceback|msg)\s*:\s?(?P<value>.*)")
SUMMARY_ROOT = "Root Cause (first observed failure)"
# torch 1.9's table: `Root Cause:` first, `Other Failures:` after, fields unpadded, `msg: "..."`
SUMMARY_ROOT_1_9 = "Root Cause:"
SUMMARY_FAILURES = ("Failures:", "Other Failures:")
FAILED_LINE = re.compile(
    # the pid may be cut off with the rest of the line (a paste, an excerpt), or wrapped onto the
    # next row (rich's log handler puts its source column first: `local_rank: 0 (pid:      api.py:672`)
    r"failed \(exitcode: (?P<exitcode>-?\d+)\) local_rank: (?P<local_rank>\d+)(?: \(pid: (?P<pid>\d+)\)|\b)")
# The same line whose local rank a paste lost: wrapped after its exit code (`failed (exitcode: -6)`
# then ` local_rank: 0 (pid: 223) ...` on the next line), or damaged (`failed (exitcode: -9)
# local_rankroot/...`). torchrun's agent logs it (elastic/multiprocessing/api.py) as the line's start.
FAILED_LINE_DAMAGED = re.compile(r"(?:^|multiprocessing\.api:|\] )failed \(exitcode: (?P<exitcode>-?\d+)\)(?: local_rank(?!: \d)|\s*$)")
# Other launchers' report of a process's end, read as torchrun's failed line: DeepSpeed's launcher
# (deepspeed/launcher/launch.py, sigkill_handler) logs `{cmd} exits with return code = {code}`, the
# command a list holding `'--local_rank=N'`; before 0.6 it, and torch.distributed.launch before 1.9,
# raised subprocess.CalledProcessError, `Command '[...]' returned non-zero exit status 1.` or
# `... died with <Signals.SIGKILL: 9>.` (the command is the last spawned one's: _only_local_rank).
LAUNCHER_EXIT = re.compile(
    # (a paste may close the line with a quote or a code span's backtick)
    r"exits with return code = (?P<exitcode>-?\d+)[\s`'\".]*$"
    # (a paste may have the command edited out: `Command XXXXX (my script params) died with ...`)
    r"|Command (?:'\[.*\]'|\S.*?) (?:returned non-zero exit status (?P<status>\d+)|died with <Signals\.\w+: (?P<signal>\d+)>)")
# Of DeepSpeed's sigkill_handler's messages (`Killing subprocess N`, `Main process received SIGTERM,
# exiting`, `{cmd} exits with return code = N`) only that report begins with its command, a list:
# cut off before its end, as pastes and excerpts cut the long command, it still says a process
# failed, its exit code unknown. (Its ERROR level is in the prefix the body is read without.)
LAUNCHER_EXIT_CUT = re.compile(r"\[launch\.py:\d+:sigkill_handler\] \[")
# Slurm's srun reports the end of each task it launched (src/srun/launch.c, _task_finish) as
# `srun: error: {hosts}: {task|tasks} {ids}: Exited with exit code {code}`, `...: {strsignal}` with
# ` (core dumped)` when it dumped core, or `...: Out Of Memory` when its cgroup OOM-killed the step's
# tasks (SIGKILL). The ids are bit_fmt's ranges of the step's task ids: `58`, `0-57,59-63`. No local
# rank: a task is a node's torchrun, or a process srun started itself.
SRUN_TASK_EXIT = re.compile(
    r"\bsrun: error: (?P<host>\S+): tasks? (?P<tasks>[\d,\-\[\]]+): (?:Exited with exit code (?P<status>\d+)"
    r"|(?P<oom>Out Of Memory)|(?P<signal>[A-Z][a-z][a-z0-9 ]*?)(?: \(core dumped\))?)\s*$")
# torch.multiprocessing.spawn (mp.spawn, start_processes) reports a process that exited without an
# error file (spawn.py, ProcessContext.join) by its index, which is the index `fn(i, ...)` got: a
# local rank. `ProcessExitedException: process 0 terminated with signal SIGKILL`, `... with exit
# code 1`, `... with signal <Unknown signal 40>` (2.x); the oldest releases raise a plain Exception.
_SPAWN_EXIT_HEAD = r"(?:\bProcessExitedException|^Exception): process (?P<index>\d+) terminated with"
SPAWN_EXIT = re.compile(
    _SPAWN_EXIT_HEAD + r" (?:exit code (?P<status>-?\d+)|signal (?:(?P<name>SIG[A-Z0-9]+)|<Unknown signal (?P<number>\d+)>))")
# The same report cut off before how the process ended (a paste, an excerpt).
SPAWN_EXIT_CUT = re.compile(_SPAWN_EXIT_HEAD + r"\s*$")
# A test harness's report of the launcher it ran (transformers' and accelerate's testing_utils,
# execute_subprocess_async): `RuntimeError: '{cmd}' failed with returncode {code}`, then the
# workers' stderr. It names no process: like srun's, it tells the end of the launcher it started.
HARNESS_EXIT = re.compile(r"'[^']*' failed with returncode (?P<status>-?\d+)")
# A process's own report, from a signal handler, that a signal is killing it: Open MPI's
# (opal/util/stacktrace.c: `[host:pid] *** Process received signal ***`, then `Signal: %s (%d)`),
# UCX's (ucs/debug/debug.c: `Caught signal %d (%s`). The process dies of that signal once the
# handler returns. (Python's faulthandler, `Fatal Python error: Segmentation fault`, is left out: it
# is as often torchrun's own end as a training process's, which only the frames after it tell.)
NATIVE_SIGNAL = re.compile(r"(?:^|\]\s*)Signal: (?P<words>[A-Z][\w ]+?) \((?P<number>\d+)\)\s*$"
                           r"|\bCaught signal (?P<caught>\d+) \("
                           # Abseil's failure signal handler (failure_signal_handler.cc: `*** %s received at
                           # time=%ld%s ***`, `*** Signal %d received at ...`), linked into gRPC, Ray and XLA, and
                           # glog's (`*** SIGSEGV (@0x0) received by PID %d (TID 0x..) ...`)
                           r"|^\*\*\* (?:(?P<named>SIG[A-Z0-9]+)|Signal (?P<absl>\d+)) (?:received at time=\d+"
                           r"|\(@0x[0-9a-f]+\) received by PID \d+)")
# Python's faulthandler on a fatal signal (Modules/faulthandler.c, faulthandler_fatal_error): `Fatal
# Python error: ` and the signal's name from its table (Segmentation fault, Floating point exception,
# Aborted, Bus error, Illegal instruction), then each thread's stack. The process dies of that
# signal; whose process it was, its frames tell (torchrun's agent has its own: interpret drops the
# report when they follow).
FAULTHANDLER_FATAL = re.compile(
    r"^\s*Fatal Python error: (?P<words>Segmentation fault|Floating point exception|Aborted|Bus error"
    r"|Illegal instruction)\s*$")
# bash's report of a command a signal ended (its job status: `launch.sh: line 184: 2324239 Aborted
# (core dumped) litgpt pretrain ...`, the signal's strsignal words padded to a column). A training
# command's end is a process's death by that signal; a launcher's (torchrun, the deprecated launcher)
# is the launcher's own, which its own lines tell (see the death-signal and error-line signals). The
# error-line signal's keywords feed these lines (`Segmentation fault`, `Aborted`, `Killed`).
SHELL_KILLED_COMMAND = re.compile(
    r"^\S+: line \d+: +\d+ (?P<words>Segmentation fault|Aborted|Killed)(?: +\(core dumped\))? +(?P<command>\S.*)$")
# The same report for the shell's own foreground command, bash and zsh in a terminal: `Killed` alone on
# its line. The command was the one the user ran (a launcher is seldom what the OOM killer picks: its
# processes hold the memory), killed by SIGKILL.
BARE_KILLED = "Killed"
TORCHRUN_COMMAND = re.compile(r"\btorchrun\b|torch\.distributed\.(?:run|launch)\b")
LAUNCHER_COMMANDS = re.compile(TORCHRUN_COMMAND.pattern + r"|\b(?:deepspeed|accelerate|srun|mpirun)\b|^(?:\S*/)?(?:ba|z)?sh\b")
# torch.multiprocessing.spawn's join (2.2 on) terminates the processes still alive only once one of
# them exited with an error ("An error occurred. Clean-up all processes before returning."):
# `Terminating process %s via signal SIGTERM`. Unlike torchrun's closing signal, it never follows a
# stop from outside.
SPAWN_TERMINATING = re.compile(r"\bTerminating process \d+ via signal SIGTERM\b")
# Open MPI's launcher (mpirun, mpiexec; prterun from 5.0) on the first process that failed:
# `mpirun detected that one or more processes exited with non-zero status, ... The first process to
# do so was:`, then `  Process name: [[jobfam,job],vpid]` and `  Exit code:    N` (the vpid is the
# process's MPI rank); on one a signal ended: `mpirun noticed that process rank R with PID P on node
# H exited on signal S (Name).`. Horovod's gloo runner (horovod/runner/gloo_run.py) words its failure as
# the first, the process named by its rank alone (`Process name: 0`), and before it reports each
# process that ended badly: `Process {idx} exit with status code {ec}.`, idx the slot's rank and ec the
# shell's status (137: SIGKILL).
# Open MPI's help text before that block when a process ended badly (orte/prte errmgr,
# help-errmgr-base.txt [normal-termination-but]: `Primary job  terminated normally, but %d process%s
# returned` / `a non-zero exit code. Per user-direction, the job has been aborted.`), and the block's own
# first line (`%s detected that one or more processes exited with non-zero status`): a process failed,
# its rank and exit code in the block after them, if a paste kept it.
MPI_FAILED_TOLD = re.compile(r"\bPrimary job +terminated normally, but \d+ process(?:es)? returned\b"
                             r"|\b(?:mpirun|mpiexec|prterun|orterun)(?:\.\w+)? detected that one or more processes exited with non-zero")
MPI_PROCESS_NAME = re.compile(r"^\s*Process name: (?:\[\[[\d.]+,\d+\],(?P<rank>\d+)\]|(?P<slot_rank>\d+))\s*$")
HOROVOD_PROCESS_EXIT = re.compile(r"\bProcess (?P<rank>\d+) exit with status code (?P<code>-?\d+)\.")
MPI_EXIT_CODE = re.compile(r"^\s*Exit code:\s+(?P<code>-?\d+)\s*$")
MPI_SIGNALLED = re.compile(r"\b(?:mpirun|mpiexec|prterun) noticed that process rank (?P<rank>\d+) with PID \S+ "
                           r"on node (?P<host>\S+) exited on signal (?P<signal>\d+)\b")
# (a pasted PID may be blanked out: `with PID xxxxxx`). A process that called MPI_Abort (Open MPI's
# help-mpi-api.txt, [mpi-abort]: `MPI_ABORT was invoked on rank %d in communicator %s` and, on the next
# line, `with errorcode %d.`; a mailer or a paste may join the two) ended the job with that code.
MPI_ABORTED = re.compile(r"\bMPI_ABORT was invoked on rank (?P<rank>\d+) in communicator\b"
                         r"(?:.*\bwith errorcode (?P<code>-?\d+)\.)?")
MPI_ABORT_CODE = re.compile(r"^\s*with errorcode (?P<code>-?\d+)\.\s*$")
# A step has at most this many task ids worth spelling out: a longer list is no step srun ran.
MAX_STEP_TASKS = 1 << 20
_TASK_RANGE = re.compile(r"(\d+)(?:-(\d+))?")


def srun_task_ids(text: str) -> tuple[int, ...]:
    """The task ids srun names (bit_fmt's `3`, `0-57,59-63`, `0,2-3`), ascending; () when the
    text is not of that form or names more than a step holds."""
    ids: set[int] = set()
    for piece in text.split(","):
        found = _TASK_RANGE.fullmatch(piece)
        if found is None:
            return ()
        first = int(found[1])
        last = int(found[2]) if found[2] is not None else first
        if last < first or len(ids) + last - first + 1 > MAX_STEP_TASKS:
            return ()
        ids.update(range(first, last + 1))
    return tuple(sorted(ids))


_LOCAL_RANK_ARGUMENT = re.compile(r"--local[_-]rank[= ](?P<local_rank>\d+)")


def _only_local_rank(body: str) -> int | None:
    """The local rank a launcher's report of a process's end names for certain: 0, or none.

    torch.distributed.launch (before 1.9, `raise CalledProcessError(returncode=process.returncode,
    cmd=cmd)`) and DeepSpeed's launcher (`logger.error(f"{cmd} exits with return code = ...")`)
    quote `cmd`, the variable their spawning loop left behind: the command of the last process
    they started, whichever one failed. Its `--local_rank=N` is the node's highest local rank;
    only when that is 0 was the failed process the node's only one."""
    found = _LOCAL_RANK_ARGUMENT.search(body)
    return 0 if found is not None and int(found["local_rank"]) == 0 else None
_SUMMARY_RANK = re.compile(r"(-?\d+)(?:\s*\(local_rank:\s*(\d+)\))?")
_SUMMARY_CODE = re.compile(r"-?\d+")


@dataclass(frozen=True, slots=True)
class SummaryLine:
    """One line of the failure summary. kind: "root" (`Root Cause ...`), "failures", "failed"
    (value: (local_rank, exitcode) of a `failed (exitcode: N) local_rank: L` line, or of another
    launcher's report of a process's end; local_rank None where it names none), or a field
    name: time (datetime | None), host (str), rank ((rank, local_rank | None) | None),
    exitcode (int | None), error_file or traceback (str)."""

    kind: str
    value: object = None
    # srun's report of a task's end: the host and the task ids it names
    host: str | None = None
    tasks: tuple[int, ...] = ()
    # the report is of a training process, whether or not it says which (DeepSpeed's launcher)
    training_process: bool = False
    # the report says a process failed, and is cut off before its exit code
    exitcode_cut: bool = False
    # faulthandler's report, whose stack after it says whose process it was
    fault_dump: bool = False
    # the global rank a launcher's report names (Open MPI's process rank)
    rank: int | None = None
    # torch 1.9's report: its torchrun stops a failed group's other processes without a line
    silent_stops: bool = False
    # the end of the launcher itself (the shell's report of its command)
    of_launcher: bool = False


# torch 1.9's warning for each failed process without an error file (elastic/multiprocessing/errors/
# __init__.py, _no_error_file_warning_msg): `Child process {pid} (local_rank {rank}) FAILED (exitcode
# {exitcode})`, its `rank` the key of ChildFailedError.failures: the global rank, whatever it says.
CHILD_PROCESS_FAILED = re.compile(r"\bChild process (?P<pid>\d+) \(local_rank (?P<rank>\d+)\) FAILED \(exitcode (?P<exitcode>-?\d+)\)")


@needs(_literal(b"Root Cause"), _literal(b"Failures:"), _literal(b"Child process "),
       # `  exitcode  : 1 (pid: 6442)`. The literals are the gap and colon, which ordinary text
       # rarely holds; `rank ` or `time ` would be on every `[rank 0]` or `step time` line.
       Candidates((b" :", b"\t:"), rb"\b(?:time|host|rank|exitcode|traceback)[ \t]+:"),
       _literal(b"error_file:"),
       _literal(b"(exitcode: "),
       _literal(b"exits with return code = "), _literal(b"returned non-zero exit status"),
       _literal(b"died with <Signals."), _literal(b":sigkill_handler] ["), _literal(b"srun: error: "), _literal(b"' failed with returncode "),
       _literal(b" terminated with exit code "), _literal(b" terminated with signal "),
       Candidates((b" terminated with",), rb"process [0-9]+ terminated with[ \t]*$"),
       _literal(b" terminated with the following error:"),
       _literal(b"Signal: "), _literal(b"Caught signal "), _literal(b"Fatal Python error: "),
       _literal(b" received at time="), Candidates((b") received by PID ",), rb"\*\*\* SIG[A-Z0-9]+ \(@0x[0-9a-f]+\) received by PID "),
       Candidates((b"Process name: ",), rb"^[ \t]*Process name: (?:\[\[|[0-9]+[ \t]*$)"),
       _literal(b" noticed that process rank "), _literal(b" exit with status code "),
       _literal(b"Primary job "), _literal(b" detected that one or more processes"),
       _literal(b"MPI_ABORT was invoked on rank "), _literal(b"with errorcode "),
       # `  Exit code:    1` below Open MPI's process name (the context decides whose it is)
       Candidates((b"Exit code:",), rb"^[ \t]*Exit code:[ \t]+-?[0-9]+[ \t]*$"),
       Candidates((b"Killed",), rb"^[ \t]*Killed[ \t]*$"),
       # torch 1.9 pads no field: `  exitcode: 1 (pid: 14750)`, `  rank: 0 (local_rank: 0)`
       Candidates((b"exitcode: ", b"rank: ", b"time: "),
                  rb"^[ \t]+(?:exitcode: -?[0-9]+ \(pid: |rank: [0-9]+ \(local_rank: |time: [0-9]{4}-)"))
def parse_summary_line(body: str) -> SummaryLine | None:
    if SUMMARY_ROOT in body or body.strip() == SUMMARY_ROOT_1_9:
        return SummaryLine("root")
    if body.strip() in SUMMARY_FAILURES:
        return SummaryLine("failures", body.strip())
    if (failed := FAILED_LINE.search(body)) is not None:
        return SummaryLine("failed", (int(failed["local_rank"]), int(failed["exitcode"])))
    if (failed := FAILED_LINE_DAMAGED.search(body)) is not None:
        return SummaryLine("failed", (None, int(failed["exitcode"])), training_process=True)
    if (ended := LAUNCHER_EXIT.search(body)) is not None:
        code = int(ended["exitcode"] or ended["status"] or f"-{ended['signal']}")
        return SummaryLine("failed", (_only_local_rank(body), code), training_process=True)
    if ":sigkill_handler] [" in body and LAUNCHER_EXIT_CUT.search(body) is not None:
        return SummaryLine("failed", (_only_local_rank(body), None), training_process=True, exitcode_cut=True)
    if "Child process " in body and (child := CHILD_PROCESS_FAILED.search(body)) is not None:
        return SummaryLine("failed", (None, int(child["exitcode"])), rank=int(child["rank"]), silent_stops=True)
    if (spawned := SPAWN_EXIT.search(body)) is not None and (code := _spawn_exit_code(spawned)) is not None:
        return SummaryLine("failed", (int(spawned["index"]), code))
    if " terminated with" in body and (spawned := SPAWN_EXIT_CUT.search(body)) is not None:
        return SummaryLine("failed", (int(spawned["index"]), None), exitcode_cut=True)
    if (quoting := parse_spawn_quote(body)) is not None:
        # the process raised: spawn's _wrap queued its traceback and called sys.exit(1)
        return SummaryLine("failed", (quoting, 1))
    if (task := SRUN_TASK_EXIT.search(body)) is not None and (code := _srun_exit_code(task)) is not None:
        return SummaryLine("failed", (None, code), task["host"], srun_task_ids(task["tasks"]))
    if (harness := HARNESS_EXIT.search(body)) is not None:
        return SummaryLine("failed", (None, int(harness["status"])))
    if body.strip() == BARE_KILLED:
        return SummaryLine("failed", (None, -BY_DESCRIPTION[BARE_KILLED]), training_process=True)
    if (shell := SHELL_KILLED_COMMAND.match(body.strip())) is not None:
        code = -BY_DESCRIPTION[shell["words"]]
        if not LAUNCHER_COMMANDS.search(shell["command"]):
            return SummaryLine("failed", (None, code), training_process=True)
        if shell["words"] != "Killed" and TORCHRUN_COMMAND.search(shell["command"]):
            # torchrun crashing (a kill is a stop from outside, which its own lines tell)
            return SummaryLine("failed", (None, code), of_launcher=True)
    if "Process name: " in body and (mpi := MPI_PROCESS_NAME.match(body)) is not None:
        return SummaryLine("mpi-process", int(mpi["rank"] or mpi["slot_rank"]))
    if " exit with status code " in body and (horovod := HOROVOD_PROCESS_EXIT.search(body)) is not None:
        return SummaryLine("failed", (None, int(horovod["code"])), training_process=True, rank=int(horovod["rank"]))
    if ("Primary job " in body or " detected that one or more processes" in body) and MPI_FAILED_TOLD.search(body):
        return SummaryLine("failed", (None, None), training_process=True, exitcode_cut=True)
    if "Exit code:" in body and (mpi := MPI_EXIT_CODE.match(body)) is not None:
        return SummaryLine("mpi-exit", int(mpi["code"]))
    if "MPI_ABORT was invoked on rank " in body and (mpi := MPI_ABORTED.search(body)) is not None:
        if mpi["code"] is not None:
            return SummaryLine("failed", (None, int(mpi["code"])), training_process=True, rank=int(mpi["rank"]))
        return SummaryLine("mpi-process", int(mpi["rank"]))
    if "with errorcode " in body and (mpi := MPI_ABORT_CODE.match(body)) is not None:
        return SummaryLine("mpi-exit", int(mpi["code"]))
    if " noticed that process rank " in body and (mpi := MPI_SIGNALLED.search(body)) is not None:
        return SummaryLine("failed", (None, -int(mpi["signal"])), mpi["host"], training_process=True,
                           rank=int(mpi["rank"]))
    if "Fatal Python error: " in body and (fatal := FAULTHANDLER_FATAL.match(body)) is not None:
        return SummaryLine("failed", (None, -BY_DESCRIPTION[fatal["words"]]), training_process=True,
                           fault_dump=True)
    if ("Signal: " in body or "Caught signal " in body or " received " in body) and (
            native := NATIVE_SIGNAL.search(body.strip())) is not None:
        number = native["number"] or native["caught"] or native["absl"] or parse_signal(native["named"])
        if number is not None:
            return SummaryLine("failed", (None, -int(number)), training_process=True)
    field_match = SUMMARY_FIELD.fullmatch(body)
    if field_match is None:
        return None
    name, value = field_match["key"], field_match["value"].strip()
    if name == "time":
        return SummaryLine(name, parse_summary_time(value))
    if name == "rank":
        ranks = _SUMMARY_RANK.match(value)
        return SummaryLine(name, (int(ranks[1]), int(ranks[2]) if ranks[2] else None) if ranks else None)
    if name == "exitcode":
        code = _SUMMARY_CODE.match(value)
        return SummaryLine(name, int(code[0]) if code else None)
    return SummaryLine(name, value)


def summary_of_1_9(body: str) -> bool:
    """An exitcode field of torch 1.9's table (`  exitcode: 1 (pid: N)`; 1.10 on pad the key to ten
    characters). That release's torchrun stops a failed group's other processes without a word: its
    `Sending process N closing signal SIGTERM` line came in 1.10."""
    return body.lstrip().startswith("exitcode:")


def _spawn_exit_code(spawned: re.Match) -> int | None:
    if spawned["status"] is not None:
        return int(spawned["status"])
    number = int(spawned["number"]) if spawned["number"] else parse_signal(spawned["name"])
    return -number if number is not None else None


def _srun_exit_code(task: re.Match) -> int | None:
    """A task's end as srun tells it, as an exit status: N, or -N for signal N."""
    if task["status"] is not None:
        return int(task["status"])
    number = BY_DESCRIPTION.get(task["signal"]) if task["signal"] else BY_NAME["SIGKILL"].number
    return -number if number is not None else None


def parse_summary_time(value: str) -> datetime | None:
    try:
        return datetime.strptime(value.strip(), "%Y-%m-%d_%H:%M:%S")
    except ValueError:
        return None
