"""Line prefixes added by collectors, loggers and torchrun: stripped before matching, kept as data.

A line may carry several, in this order or another: a container runtime's record (Docker's
json-file `{"log": ...}` wrapper, unwrapped first; CRI's `<time> stdout F `), `kubectl logs
--timestamps` time, torchrun's `[default0]:` (--tee) or `[rank3]:` (child stderr), a launcher's
stream or process tag (`[stderr]`, OpenMPI's `[1,3]<stderr>:`, Ray's `(pid=123)`), glog or c10d
headers, Python logging headers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import json
import re

from logscan.scan.clock import yearless_time

# Linux's highest possible pid (PID_MAX_LIMIT, 2**22): the number in the header of torch 2.3 and
# 2.4's formatter is the thread id (pthread_self, an address, far above it), the same in every
# process, so it tells no process apart; from 2.5 on it is the pid.
PID_MAX_LIMIT = 1 << 22

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")

PREFIX = re.compile(
    r"""
      (?P<rfc3339>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)[ \t]+
        # CRI (containerd, CRI-O) log files: `<time> <stream> <F|P> `; P marks a partial record
        (?:(?P<cri_stream>stdout|stderr)[ ](?P<cri_tag>[FP])(?:[ ]|$))?
    # Google Cloud Logging's entries as its console and `gcloud logging read` show them (Vertex AI,
    # GKE, Cloud Run): the severity before the time, then the entry's labels (`[resource.labels.
    # taskName: workerpool0-0]`, a Vertex replica)
    | (?:DEFAULT|DEBUG|INFO|NOTICE|WARNING|ERROR|CRITICAL|ALERT|EMERGENCY)[ ]
        (?P<cloud_time>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)[ \t]+
    | \[(?:resource\.)?labels\.[\w.]{1,60}:[ ][^\]\s]{1,100}\][ ]?
    | \[(?P<stream>stdout|stderr)\][ \t]?
    # a Markdown quote (`> `) before each line of a log pasted into an issue or a reply that quotes
    # one; quotes nest (`> > `), and a quoted empty line is a bare `>`
    | >(?:[ ]|$)
    # a console box's left border (rich's Panel and traceback, friendly_traceback's frame): every
    # line `│ ` + text + padding + `│`; the right border goes too (strip_prefixes)
    | (?P<box>│)[ ]
    # the test harnesses of transformers and accelerate (testing_utils `_stream_subprocess`:
    # `print(label, line)` with label `stdout:` / `stderr:`)
    | (?:stdout|stderr):[ ]
    # pytest's report of a failed test: each line of the exception it caught marked `E` + the
    # source's indent (_pytest/_code/code.py, FormattedExcinfo.fail_marker + indent[1:]: `E       `)
    | E[ ]{3,}
    # OpenMPI --tag-output (`[jobid,rank]<stderr>:`) and its bare stream tag
    | (?:\[\d+,(?P<mpi_rank>\d+)\])?<(?:stdout|stderr)>:[ \t]?
    # Ray's worker prefix: `(pid=123)`, `(RayTrainWorker pid=123, ip=10.0.0.2)`, and SkyPilot's in
    # Ray's form, `(node-1 pid=23066, ip=172.31.23.131)`; before an empty line it ends the line
    | \((?:[\w.-]+[ ])?pid=(?P<ray_pid>\d+)(?:,[ ]ip=[\d.:a-f]+)?\)(?:[ ]|$)
    # Metaflow's runtime before each line of a task's output (runtime.py, Task.log: `[%s (pid %s)] `
    # with the task's path run/step/task_id, `[%s] ` without a pid), then, for a task run on AWS
    # Batch, the job's id (a step is a Python method: its name an identifier); the pid is the step's own process, whose pipes every process it started
    # writes through, so it names no training process
    | \[[\w.-]+/[A-Za-z_]\w*/[\w-]+(?:[ ]\(pid[ ]\d+\))?\][ ](?:\[[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\][ ])?
    # Google Cloud Build's tag of a build step's output: `Step #4: `, `Step #0 - "train": `
    | Step[ ]\#\d{1,4}(?:[ ]-[ ]"[^"]{0,80}")?:[ ]
    # torchx's `{role}/{replica_id} ` (torchx.util.log_tee_helpers, `torchx run` and `torchx log`):
    # the role is the script's or module's name, so a letter starts it (Keras' `1875/1875 [===`
    # is a progress bar, not a tag)
    | [A-Za-z_][\w.-]*/\d{1,5}[ ]
    # srun --label: the task id, padded to the width of the step's highest id: `%*d: ` (` 3: `),
    # `%0*d: ` in older releases (`03: `), `P%u %*d: ` for a heterogeneous job's component. A
    # padded number, or 0 (no process has pid 0), is a label; an unpadded one is read below.
    | (?:P(?P<het_component>\d{1,4})[ ])?(?P<srun_label>[ ]{1,6}\d{1,6}|0\d{0,6}):[ ]
    # pdsh's `host: ` (DeepSpeed's multi-node runner) before a traceback's frame or source line,
    # whose indent then reads as Python wrote it; the header and the exception line behind such a
    # tag are found as glued text (lineparse._GLUE), and other words ending in `:` are left alone
    | [A-Za-z][\w.-]*:[ ](?=[ ]{2}File[ ]"|[ ]{4}\S)
    # Python logging's %(process)d in a field of its own: `[pid 1234] `, `1234: `
    | \[pid[ ](?P<log_pid>\d+)\][ \t]?
    | (?P<colon_pid>\d{1,7}):[ ]
    # torchrun --tee: `[{role}{local_rank}]:` (tail_log's header, `[${role_name}${local_rank}]:`):
    # `[default0]:`, torchx's role `[trainer3]:`, and `[0]:` under torchx's dist.ddp, which runs torchrun
    # with `--role ""`. A bare `[N]:` needs text right after it: alone on its line it is the
    # ChildFailedError summary's failure index. A template (TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE)
    # that puts `|${local_rank}` last (`[trainer0|0]:`, `[group/5|1]:`) names the local rank there.
    | \[(?:(?:default|trainer|worker|learner)(?P<tee_local>\d+)(?:\|(?P<tee_local_last>\d+))?\]:[ \t]?
        |(?P<tee_unnamed>\d{1,5})\]:(?=\S))
    # (`[Rank7]:` as verl's workers print it)
    | \[[Rr]ank(?P<rank>\d+)\]:[ \t]?
    # torch's C++ logger (c10d, ProcessGroup*), and its Python formatter since 2.3: the level's
    # letter (V for DEBUG, C for CRITICAL too), month and day (the C++ logger does not pad the
    # month: `[W105 ...` is 5 January), time. The C++ fraction is CLOCK_MONOTONIC's nanoseconds
    # (c10/util/Logging.cpp), not the clock's: only the seconds are the time.
    | \[(?P<c10d_level>[VIWEFC])(?P<c10d_md>\d{3,4})[ ](?P<c10d_time>\d{2}:\d{2}:\d{2})(?:\.\d+)?
        (?:[ ]\d+)?[ ][^\]\s]+:\d+\][ \t]?
    | \[[VIWEFC][ ][^\]\s]+:\d+\][ \t]?
    # torch's Python formatter: the field after the time is the thread id (2.3, 2.4) or the pid
    | (?P<glog_level>[VIWEFC])(?P<glog_md>\d{4})[ ](?P<glog_time>\d{2}:\d{2}:\d{2})
        (?:\.(?P<glog_fraction>\d+))?[ ]+(?P<glog_process>\d+)[ ][^\]\s]+:\d+\][ \t]?
    | \[(?P<pylog_bracket>\d{4}-\d{2}-\d{2}[ ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)\][ ]
        (?:[\w.]+:[ ])?(?:\[\w+\][ ])?
    # a logger's or a collector's date and time, to the minute where it keeps no seconds, and where
    # a paste indents it
    | [ \t]*(?P<pylog>\d{4}-\d{2}-\d{2}[ ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)(?:[ ]+[-|:][ ]+|[ ]+)
    | (?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:[ \t]?
    # vLLM's logger (vllm/logger.py: `%(levelname)s %(asctime)s %(filename)s:%(lineno)d] `, the file in
    # brackets from 0.6: `[%(filename)s:%(lineno)d] `; datefmt `%m-%d %H:%M:%S`), as SGLang's alike
    | (?:DEBUG|INFO|WARNING|ERROR|CRITICAL)[ ]\d{2}-\d{2}[ ]\d{2}:\d{2}:\d{2}(?:\.\d+)?[ ]
        (?:\[[\w.-]+:\d+\]|[\w.-]+:\d+\])[ ]
    # torch 1.9's torchrun: `[INFO] 2021-06-29 12:04:55,391 api: `
    | \[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\][ ]
        (?P<pylog_level_first>\d{4}-\d{2}-\d{2}[ ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)[ ][\w.]+:[ ]
    """,
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class Stripped:
    body: str
    rank: int | None = None
    local_rank: int | None = None
    time: datetime | None = None  # a YearlessTime when the line's header gives no year
    pid: int | None = None       # the process a launcher's tag or logging's field names
    # the pid in the header of torch's formatter (2.5 on): the agent's on its own lines, so it
    # groups lines but names no training process
    header_pid: int | None = None
    partial: bool = False        # a CRI partial record: the line goes on in the next record
    task: int | None = None      # the Slurm task id srun --label put before the line
    # an unpadded `N: `: a pid, or srun's label where the step has fewer than ten tasks (the file
    # tells which: logscan.scan.interpret)
    bare_number: int | None = None


# Docker's json-file driver: one JSON object a line, the line itself under "log" (with its "\n").
_DOCKER_LOG = '{"log":'


_JSON_STRING = re.compile(r'"((?:[^"\\]|\\.)*)("?)')
_RECORD_TIME = re.compile(r'"time":"([^"]+)"')


def _unwrap_docker(line: str) -> tuple[str, str | None]:
    """(the logged line, its record's time) of a json-file record; other lines as they are.

    A record cut short (evidence keeps a line's first characters) still gives what it holds."""
    if not line.startswith(_DOCKER_LOG):
        return line, None
    try:
        record = json.loads(line)
    except ValueError:
        record = None
    if isinstance(record, dict) and isinstance(record.get("log"), str):
        stamp = record.get("time")
        return record["log"].rstrip("\n"), stamp if isinstance(stamp, str) else None
    found = _JSON_STRING.match(line, len(_DOCKER_LOG))
    if found is None:
        return line, None
    escaped = found[1][:-1] if found[1].endswith("\\") and not found[2] else found[1]
    try:
        text = json.loads(f'"{escaped}"')
    except ValueError:  # a \u escape cut in half
        text = escaped.replace('\\"', '"')
    stamp = _RECORD_TIME.search(line, found.end())
    return text.rstrip("\n"), stamp[1] if stamp else None


def _parse_rfc3339(text: str) -> datetime | None:
    # Python 3.11 takes at most microseconds: trim nanoseconds before parsing.
    main, dot, rest = text.partition(".")
    if dot:
        digits = "".join(ch for ch in rest if ch.isdigit())
        zone = rest[len(digits):]
        text = f"{main}.{digits[:6]}{zone}"
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def _parse_plain(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace(",", "."))
    except ValueError:
        return None


def clean(text: str) -> str:
    """Remove colour codes and keep what the last carriage return left on screen."""
    if "\x1b" in text:
        text = ANSI.sub("", text)
    if "\r" in text:
        parts = [part for part in text.split("\r") if part.strip()]
        text = parts[-1] if parts else ""
    return text


# Ray's log deduplication (ray/_private/ray_logging.py, 2.x): a line its workers printed alike, told
# once behind one worker's prefix with ` [repeated {n}x across cluster]` after it.
RAY_DEDUP = re.compile(r" \[repeated \d+x across cluster\]$")

# The right border of a line boxed by a console panel: the padding to it, and any space after.
BOX_RIGHT = re.compile(r"[ \t]+│[ \t]*$")


# A bracketed number before a prefix logscan knows: a log viewer's line number pasted with the line
# (`[80746] [rank0]:[E321 ...`), or a logger's `[%(process)d] `. Only skipped when a known prefix
# follows, so `[12] items done` stays as it is.
NUMBER_TAG = re.compile(r"\[\d{1,9}\][ \t]+")


def _prefix_matches(body: str):
    """The prefixes at the start of `body`, in order, as matches of PREFIX."""
    pos = 0
    if (tag := NUMBER_TAG.match(body)) is not None and PREFIX.match(body, tag.end()):
        pos = tag.end()
    while (match := PREFIX.match(body, pos)) and match.end() != pos:
        pos = match.end()
        yield match


def prefix_length(text: str) -> int:
    """How many characters of `text` its prefixes take (0 when it has none); `text` as it is,
    neither unwrapped nor cleaned of colour codes."""
    end = 0
    for match in _prefix_matches(text):
        end = match.end()
    return end


def strip_prefixes(line: str) -> Stripped:
    line, record_time = _unwrap_docker(line)
    body = clean(line)
    rank = local_rank = pid = header_pid = task = bare_number = None
    stamp: datetime | None = _parse_rfc3339(record_time) if record_time else None
    yearless = None  # a header's month, day and time: kept only when no full time is there
    partial = boxed = False
    pos = 0
    for match in _prefix_matches(body):
        pos = match.end()
        groups = match.groupdict()
        if groups["rank"] is not None:
            rank = int(groups["rank"])
        elif groups["mpi_rank"] is not None:
            rank = int(groups["mpi_rank"])
        elif (tee := groups["tee_local_last"] or groups["tee_local"] or groups["tee_unnamed"]) is not None:
            local_rank = int(tee)
        elif groups["ray_pid"] is not None:
            pid = int(groups["ray_pid"])
        elif groups["srun_label"] is not None:
            task = int(groups["srun_label"])
        elif (number := groups["log_pid"] or groups["colon_pid"]) is not None:
            if groups["colon_pid"] is not None and pid is None:
                bare_number = int(number)
            pid = pid if pid is not None else int(number)
        elif groups["glog_process"] is not None and int(groups["glog_process"]) <= PID_MAX_LIMIT:
            header_pid = int(groups["glog_process"])
        if groups["cri_tag"] == "P":
            partial = True
        boxed = boxed or groups["box"] is not None
        if stamp is None:
            if groups["rfc3339"] or groups["cloud_time"]:
                stamp = _parse_rfc3339(groups["rfc3339"] or groups["cloud_time"])
            elif groups["pylog"]:
                stamp = _parse_plain(groups["pylog"])
            elif groups["pylog_bracket"] or groups["pylog_level_first"]:
                stamp = _parse_plain(groups["pylog_bracket"] or groups["pylog_level_first"])
            elif yearless is None and groups["glog_md"]:
                yearless = yearless_time(groups["glog_md"], groups["glog_time"], groups["glog_fraction"])
            elif yearless is None and groups["c10d_md"]:
                yearless = yearless_time(groups["c10d_md"], groups["c10d_time"])
    body = body[pos:]
    if boxed:
        body = BOX_RIGHT.sub("", body)
    if pid is not None and body.endswith("across cluster]"):
        body = RAY_DEDUP.sub("", body)
    return Stripped(body=body, rank=rank, local_rank=local_rank, time=stamp or yearless,
                    pid=pid, header_pid=header_pid, partial=partial, task=task, bare_number=bare_number)
