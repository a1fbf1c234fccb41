"""Log records glued into one line, and the records they are.

A paste into an issue or a chat loses its newlines: GitHub's rendering of a wrapped block and a
terminal's copy join the lines with runs of spaces, an old editor or a `\\r`-only copy with carriage
returns; and in a real log a tqdm bar that was never ended by a newline has the next record written
right after it (`| 0/2 [00:00<?, ?it/s]WARNING:torch.distributed...`). Read as one line, such a
line has one set of prefixes (the first record's), every rule matches it once, and every record in
it shares one place as evidence; read as its records, each says what it says.

A line is cut only before a known record start (_RECORD_AT_COLUMN_ONE, _INDENTED_RECORD: torch's
own logging headers of every era, `[rankN]:`, torchrun's failure summary rows, a traceback's header,
frames and exception line) that follows glue: two or more spaces, a carriage return, or the closing bracket of a
tqdm bar's counters; only where message text, not just the record's own prefixes, comes before the
glue (`[rank3]:   File "x.py", line 3` is one record: its frame is indented after its prefix); and
only where the record after it holds more than a prefix. Ordinary text is never cut: a record start
after a single space (a message quoting `WARNING:torch...`) or after any other text is left where
it is.

The record starts are those of torch's formatters and messages as tests/torch_source/formats.toml
lists them, read from the released wheels: `%(levelname)s:%(name)s:` (<= 2.0),
`[%(asctime)s] %(name)s: [%(levelname)s]` (2.1, 2.2), `{L}{mmdd hh:mm:ss}.{usec} {pid} {path}:{line}]`
(2.3 on), the C++ `[L file.cpp:N]` and `[Lmmdd hh:mm:ss.ns file.cpp:N]`, torch 1.9's torchrun
`[%(levelname)s] %(asctime)s %(module)s:`, and the summary template of errors/__init__.py.
"""

from __future__ import annotations

import re

from logscan.scan.prefixes import prefix_length

_LEVEL = rb"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)"
_DATE_TIME = rb"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}"

# Record starts that begin a line at its first column. torch's Python logging in each era
# (logger names and source paths under torch only: another library's `WARNING:root:` is not
# torch's record, and may well be quoted), torch's C++ logger, the `[rankN]:` torch 2.x puts
# before each line of a process's stderr, a traceback's header and its exception line.
# (torchrun --tee's `[defaultN]:` is left out: it begins every line of a tee'd log, and Hyperscan
# checking the glue before each made its pass 9% dearer on such a log.)
_RECORD_AT_COLUMN_ONE = (
    _LEVEL + rb":torch\.",                                                        # <= 2.0
    rb"\[" + _LEVEL + rb"\] " + _DATE_TIME + rb" \w+: ",                         # 1.9's torchrun
    rb"\[" + _DATE_TIME + rb"\] torch\.[\w.]*: \[" + _LEVEL + rb"\] ",           # 2.1, 2.2
    rb"[VIWEC]\d{4} \d{2}:\d{2}:\d{2}\.\d{6} +\d+ [^\]\s]*torch/[^\]\s]+:\d+\]",  # 2.3 on
    rb"\[[VIWEFC](?:\d{3,4} \d{2}:\d{2}:\d{2}\.\d+)? [^\]\s]+\.(?:cpp|cc|h|hpp):\d+\]",  # C++
    rb"\[rank\d+\]:",
    rb"Traceback \(most recent call last\):",
    # a traceback's last line, `ExcType: detail` (torchrun's ChildFailedError among them), as
    # lineparse.EXCEPTION names exception classes, a `:` after the name
    rb"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception):",
    rb"Root Cause \(first observed failure\):",
)
# Record starts that Python or torchrun indent by two spaces: a traceback's frame, the rows of
# torchrun's failure summary (keys padded to ten characters since 1.10, unpadded in 1.9: its
# `time: ` row is left out, `  time: 0.31` being on every line of detectron2's and mmengine's
# logs, which Hyperscan would then check at each). The glue before them keeps those two spaces
# for the record, which is how the parsers know them.
_INDENTED_RECORD = (
    rb'File "[^"\n]+", line \d+',
    rb"time      : \d{4}-\d{2}-\d{2}_",
    rb"host      : ",
    rb"rank      : -?\d+ \(local_rank: ",
    rb"exitcode  : -?\d+ \(",
    rb"error_file: ",
    rb"traceback : ",
    rb"exitcode: -?\d+ \(pid: ",
    rb"rank: \d+ \(local_rank: ",
)
_INDENT = b"  "
# The shell's report that the command in the foreground died of a signal, as a non-interactive bash
# prints it (`Terminated`, `Hangup`) after the command's last output: behind a tqdm bar that never
# ended its line. Only a bar's bracket or a carriage return is its glue: after a run of spaces the
# word is a column of a table (`State:   Terminated`).
_SHELL_REPORT = rb"(?:Terminated|Hangup)[ \t]*$"

# Glue, then a record start. `re` finds each place; whether it is a cut is decided in
# record_spans (what comes before the glue).
GLUED_RECORD = re.compile(
    rb"(?P<glue>  +|\r|\])(?:(?P<indented>" + b"|".join(_INDENTED_RECORD) + rb")|(?P<shell>" + _SHELL_REPORT
    + rb")|" + b"|".join(_RECORD_AT_COLUMN_ONE) + rb")")
# The same places for Hyperscan (no named groups; two spaces are where a longer run ends): the
# candidate-line matcher marks the lines that hold one in its one pass, so only those are cut.
GLUED_RECORD_MARK = (rb"(?:  |\r|\])(?:" + b"|".join(_INDENTED_RECORD + _RECORD_AT_COLUMN_ONE)
                     + rb")|[\r\]]" + _SHELL_REPORT)
# A container runtime's json-file record (`{"log":"...\n",...}`) is JSON: cut, it would no longer
# unwrap (logscan.scan.prefixes), so it is read whole.
_JSON_FILE_RECORD = b'{"log":'

# The end of a tqdm bar's counters: `[elapsed<remaining, rate{postfix}]`, or `[elapsed, rate]`
# when the total is unknown (tqdm std.py format_meter's default bar format). Read on the text
# before a `]` glue, which must end a bar's counters.
_TQDM_COUNTERS_END = re.compile(rb"\[\d+:\d{2}(?::\d{2})?(?:<[\d:?]+)?, [^\[\]\n]*\]\Z")
_TQDM_LOOKBACK = 200  # bytes: the counters, the rate and a postfix of a few values
_PREFIXES_WITHIN = 1024  # bytes at a line's or a record's start that its prefixes may take


def record_spans(line: bytes) -> list[tuple[int, int]] | None:
    """The (start, end) of each record in `line`, a whole line without its newline, when it holds
    records glued together (see the module docstring); None when it is one record, as nearly every
    line is. The glue itself belongs to no record, but for the two spaces an indented record keeps
    and the bracket that ends a tqdm bar."""
    if line.startswith(_JSON_FILE_RECORD):
        return None
    cuts = []
    record_begin, own_prefix = 0, None  # the record being read, and where its prefixes end
    for found in GLUED_RECORD.finditer(line):
        glue, (glue_start, glue_end) = found["glue"], found.span("glue")
        if found["shell"] is not None and glue not in (b"]", b"\r"):
            continue
        if glue == b"]":  # the bracket is the bar's
            if _TQDM_COUNTERS_END.search(line, max(0, glue_end - _TQDM_LOOKBACK), glue_end) is None:
                continue
            before_end, record_start = glue_end, glue_end
        elif glue == b"\r":
            before_end, record_start = glue_start, glue_end
        else:
            before_end = glue_start
            record_start = glue_end - len(_INDENT) if found["indented"] else glue_end
        if own_prefix is None:
            own_prefix = _prefix_end(line, record_begin)
        if before_end <= own_prefix or not line[own_prefix:before_end].strip():
            continue  # only the record's own prefixes before it: its message, indented
        if not _has_message(line, record_start):
            continue  # a prefix with nothing after it (torchrun --tee's, ending a bar's line)
        cuts.append((before_end, record_start))
        record_begin, own_prefix = record_start, None
    if not cuts:
        return None
    spans, start = [], 0
    for before_end, record_start in cuts:
        spans.append((start, before_end))
        start = record_start
    spans.append((start, len(line)))
    # A record cut out of the line ends at its first carriage return: a logger ends a record
    # with a newline, so what follows a `\r` in it is a line of its own whose newline was lost
    # (read whole, the `\r` would hide the record behind it). The line's first stretch keeps
    # its `\r`s: a tqdm bar's redraws, of which the last is what was on screen.
    records = spans[:1] + [piece for span in spans[1:] for piece in _carriage_return_pieces(line, span)]
    return [(a, b) for a, b in records if line[a:b].strip()]


def _carriage_return_pieces(line: bytes, span: tuple[int, int]):
    start, end = span
    while (cr := line.find(b"\r", start, end)) >= 0:
        yield start, cr
        start = cr + 1
    yield start, end


def _prefix_end(line: bytes, start: int) -> int:
    """Where the prefixes (a collector's time, `[rank3]:`, a logging header) of the line or record
    that begins at `start` end. Prefixes are ASCII: their length in characters is their length in
    bytes (each other byte decodes to one replacement character)."""
    window = line[start:start + _PREFIXES_WITHIN].decode("ascii", "replace")
    return start + prefix_length(window)


def _has_message(line: bytes, start: int) -> bool:
    """Whether the record that begins at `start` holds more than prefixes (looked at as far as
    its prefixes may go, and as far again)."""
    return bool(line[_prefix_end(line, start):start + 2 * _PREFIXES_WITHIN].strip())
