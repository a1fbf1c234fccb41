"""Issue 28: a line that holds several log records glued together is read as those records, so an
explicit error record counts wherever it stands in the line; ordinary lines are read as before.

The family of glued lines, by what joins the records:
(a) a run of spaces (GitHub's rendering of a wrapped block, a terminal's copy of a pasted log);
(b) nothing at all after a tqdm bar's counters (`| 0/2 [00:00<?, ?it/s]WARNING:torch...`): a bar
    never ended by a newline, the next record written right after it;
(c) a carriage return (a paste whose newlines became `\\r`).

Inputs are built from torch's format strings as tests/torch_source/formats.toml gives them (read
from the released wheels): `Sending process %s closing signal %s` (elastic/multiprocessing/api.py,
SubprocessContext._close), `failed (exitcode: %s) local_rank: %s (pid: %s) of binary: %s` (the
agent's failed line), torchrun's summary rows (errors/__init__.py, _FAILURE_FORMAT_TEMPLATE), and
each era's logger prefix (the "prefixes" family: `%(levelname)s:%(name)s:` up to 2.0,
`[%(asctime)s] %(name)s: [%(levelname)s]` in 2.1-2.2, `{L}{mmdd hh:mm:ss}.{usec} {thread or pid}
{path}:{line}]` from 2.3, torch 1.9's `[%(levelname)s] %(asctime)s %(module)s:`). PASTED is the shape
of a one-line paste from a public issue, its home path shortened.
"""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from conftest import POST_MORTEM_NOW
from logscan.catalogue import load_catalogue
from logscan.scan.glued import record_spans
from logscan.scan.scanner import Scanner

PASTED = (
    "Loading checkpoint shards:   0%|          | 0/2 [00:00<?, ?it/s]"
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 899505 closing signal SIGTERM"
    + " " * 32 +
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 899506 closing signal SIGTERM"
    + " " * 32 +
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 4 "
    "(pid: 899509) of binary: /home/x/bin/python"
    + " " * 102 +
    "Traceback (most recent call last):"
    + " " * 99 +
    'File "/home/x/bin/torchrun", line 33, in <module>')

API = "torch.distributed.elastic.multiprocessing.api"
API_PATH = "torch/distributed/elastic/multiprocessing/api.py"
# Each era's header of a record of torchrun's agent, by its level (formats.toml, "prefixes").
ERAS = {
    "1.9": lambda level: f"[{level}] 2021-06-29 12:05:40,111 api: ",
    "1.10-2.0": lambda level: f"{level}:{API}:",
    "2.1-2.2": lambda level: f"[2026-11-29 18:48:38,105] {API}: [{level}] ",
    "2.3-2.4": lambda level: f"{level[0]}1129 18:48:38.105000 140234567890112 {API_PATH}:833] ",
    "2.5-on": lambda level: f"{level[0]}1129 18:48:38.105000 4715 {API_PATH}:1002] ",
}
# What each era's header says of the record's time (None: the header gives none, or no year).
ERA_TIMES = {"1.9": datetime(2021, 6, 29, 12, 5, 40, 111000),
             "2.1-2.2": datetime(2026, 11, 29, 18, 48, 38, 105000)}


def closing(era: str, pid: int) -> str:
    return ERAS[era]("WARNING") + "Sending process %s closing signal %s" % (pid, "SIGTERM")


def failed(era: str, exitcode: int = -9, pid: int = 899509) -> str:
    return ERAS[era]("ERROR") + "failed (exitcode: %s) local_rank: %s (pid: %s) of binary: %s" % (
        exitcode, 4, pid, "/usr/bin/python3")


# A tqdm bar as std.py's format_meter draws it by default, redrawn after `\r`.
BAR = "\r  0%|          | 0/2 [00:00<?, ?it/s]\r 50%|#####     | 1/2 [00:01<00:01,  1.02s/it]"
GLUES = {
    "spaces": lambda records: (" " * 32).join(records),
    "tqdm": lambda records: "".join(BAR + record for record in records),
    "carriage-return": lambda records: "\r".join(records),
}


def spans_text(line: str) -> list[str] | None:
    raw = line.encode()
    spans = record_spans(raw)
    return None if spans is None else [raw[a:b].decode() for a, b in spans]


def scan_file(tmp_path, text: str):
    path = tmp_path / "paste.log"
    path.write_text(text)
    return Scanner(load_catalogue()).scan_file(str(path), "paste.log")


def diagnose(run_cli, tmp_path, text: str) -> dict:
    (tmp_path / "paste.log").write_text(text)
    result = run_cli("scan", tmp_path / "paste.log", "--format", "json", "--isolated",
                     "--now", POST_MORTEM_NOW)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


# --- the paste of the issue --------------------------------------------------------------------

def test_the_pasted_line_is_read_as_its_six_records():
    assert spans_text(PASTED) == [
        "Loading checkpoint shards:   0%|          | 0/2 [00:00<?, ?it/s]",
        f"WARNING:{API}:Sending process 899505 closing signal SIGTERM",
        f"WARNING:{API}:Sending process 899506 closing signal SIGTERM",
        f"ERROR:{API}:failed (exitcode: -9) local_rank: 4 (pid: 899509) of binary: /home/x/bin/python",
        "Traceback (most recent call last):",
        '  File "/home/x/bin/torchrun", line 33, in <module>',  # the frame keeps its indent
    ]


@pytest.mark.parametrize("matcher", ["hyperscan", "python"])
def test_the_pasted_line_is_the_kill_it_reports(run_cli, tmp_path, monkeypatch, matcher):
    """Read as one line, the two SIGTERM records (torchrun stopping siblings: a cascade) and the
    kill shared one place, and the kill was taken for their cascade: INCONCLUSIVE. Read as its
    records, the kill is the root cause, its own record the evidence, on the paste's line 1."""
    if matcher == "hyperscan":
        pytest.importorskip("hyperscan")
    monkeypatch.setenv("LOGSCAN_MATCHER", matcher)
    report = diagnose(run_cli, tmp_path, PASTED + "\n")
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    root = report["root_cause"]
    assert root["rule"] == "worker-killed"
    assert "pid 899509 (local_rank 4)" in root["message"]
    finding = next(f for f in report["findings"] if f["rule"] == "worker-killed")
    assert [(e["line"], e["text"]) for e in finding["evidence"]] == [
        (1, f"ERROR:{API}:failed (exitcode: -9) local_rank: 4 (pid: 899509) of binary: /home/x/bin/python")]


def test_each_record_of_the_paste_is_read_with_its_own_prefix(tmp_path):
    scan = scan_file(tmp_path, PASTED + "\n")
    assert [(e.local_rank, e.exitcode, e.where.line) for e in scan.exits] == [(4, -9, 1)]
    stopped = [h.group("pid") for h in scan.hits if h.rule_id == "sibling-terminated"]
    assert stopped == ["899505", "899506"]  # both SIGTERMs, where one line told only its first
    assert scan.lines == 1


# --- (a), (b), (c) in every era ------------------------------------------------------------------

@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("glue", ["spaces", "carriage-return"])
def test_records_glued_by_spaces_or_carriage_returns_are_cut_apart(era, glue):
    records = [closing(era, 14751), closing(era, 14752), failed(era)]
    assert spans_text(GLUES[glue](records)) == records


@pytest.mark.parametrize("era", ERAS)
def test_a_record_written_after_a_tqdm_bar_is_cut_from_the_bar(era):
    assert spans_text(GLUES["tqdm"]([failed(era)])) == [BAR, failed(era)]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("glue", GLUES)
def test_a_glued_kill_behind_torchruns_sigterms_is_worker_killed(run_cli, tmp_path, era, glue):
    """torchrun's teardown as the paste shows it: the SIGTERMs it sent to the siblings, its
    report of the process the kernel killed, then its own traceback's first lines, glued into one
    line in any way and in any era's format. Read whole, the kill shared its line with the
    SIGTERMs (a cascade), or only the last `\\r` segment was read."""
    line = GLUES[glue]([closing(era, 14751), closing(era, 14752), failed(era),
                        "Traceback (most recent call last):",
                        '  File "/usr/bin/torchrun", line 33, in <module>'])
    report = diagnose(run_cli, tmp_path, line + "\n")
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert report["root_cause"]["rule"] == "worker-killed"


@pytest.mark.parametrize("era", ERAS)
def test_a_glued_record_has_the_time_its_own_header_gives(tmp_path, era):
    """A record after a tqdm bar carries its own header: its time is its own (the line began
    with the bar, which has none)."""
    scan = scan_file(tmp_path, GLUES["tqdm"]([failed(era)]) + "\n")
    (exit_,) = scan.exits
    assert exit_.where.text == failed(era)
    if era in ERA_TIMES:
        assert exit_.where.time == ERA_TIMES[era]
    elif era.startswith("2."):  # glog's header: month, day and time, no year
        assert (exit_.where.time.month, exit_.where.time.day) == (11, 29)


# --- torchrun's summary rows, tracebacks and per-process prefixes --------------------------------

SUMMARY_ROWS = [  # _FAILURE_FORMAT_TEMPLATE, filled
    "[0]:",
    "  time      : 2026-11-29_17:58:31",
    "  host      : job-7f3a-worker-1",
    "  rank      : 3 (local_rank: 1)",
    "  exitcode  : -9 (pid: 14750)",
    "  error_file: <N/A>",
    "  traceback : Signal 9 (SIGKILL) received by PID 14750",
]


def test_a_pasted_summary_block_is_read_as_its_rows(run_cli, tmp_path):
    """The failure summary pasted as one line, each row after spaces: the rows are records, and
    the kill is that of global rank 3, as the rank row says."""
    line = "Root Cause (first observed failure):" + "".join(" " * 20 + row.strip() for row in SUMMARY_ROWS)
    # `[0]:` starts no record (any text may hold it): it stays with the header before it
    assert spans_text(line) == ["Root Cause (first observed failure):" + " " * 20 + "[0]:",
                                *SUMMARY_ROWS[1:]]
    report = diagnose(run_cli, tmp_path, line + "\n")
    assert (report["root_cause"]["rule"], report["root_cause"]["rank"]) == ("worker-killed", 3)


def test_a_rank_prefixed_traceback_pasted_as_one_line_is_the_ranks_crash(run_cli, tmp_path):
    """torch 2.x puts `[rankN]:` on every line a process writes to stderr; pasted as one line,
    each is a record of that rank, and the exception ends that rank's traceback."""
    line = "    ".join([
        "[rank1]: Traceback (most recent call last):",
        '[rank1]:   File "/workspace/train.py", line 88, in <module>',
        "[rank1]:     loss.backward()",
        "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered",
    ])
    assert len(spans_text(line)) == 4
    report = diagnose(run_cli, tmp_path, line + "\n")
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert report["root_cause"]["rank"] == 1
    assert "illegal memory access" in report["root_cause"]["message"]


def test_a_traceback_pasted_as_one_line_ends_in_its_exception(run_cli, tmp_path):
    """Python's traceback without torch's prefixes, its newlines turned into spaces: header,
    frame (with its source line, which starts no record) and exception line."""
    line = ('Traceback (most recent call last):      File "/workspace/train.py", line 88, in <module>'
            "        loss.backward()    RuntimeError: CUDA error: an illegal memory access was encountered")
    assert spans_text(line) == [
        "Traceback (most recent call last):",
        '  File "/workspace/train.py", line 88, in <module>        loss.backward()',
        "RuntimeError: CUDA error: an illegal memory access was encountered"]
    report = diagnose(run_cli, tmp_path, line + "\n")
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert "illegal memory access" in report["root_cause"]["message"]


def test_torchruns_own_exception_glued_after_its_last_frame_is_a_record():
    """A frame's source line starts no record (it is any code), so it stays with its frame."""
    frame = ('  File "/usr/lib/python3/site-packages/torch/distributed/launcher/api.py", line 263, '
             "in launch_agent      raise ChildFailedError(")
    exception = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: "
    assert spans_text(frame + "  " + exception) == [frame, exception]


# --- ordinary lines: read as before ----------------------------------------------------------------

@pytest.mark.parametrize("line", [
    # many spaces, no record start after them (detectron2, mmengine, Megatron-LM)
    "[11/29 18:00:01 d2.utils.events]:  eta: 1:02:03  iter: 1199  total_loss: 1.2  loss_cls: 0.3"
    "    time: 0.3  last_time: 0.3  data_time: 0.01  last_data_time: 0.01   lr: 0.02  max_mem: 10250M",
    "2026/11/29 18:00:01 - mmengine - INFO - Epoch(train)  [3][ 50/7330]  base_lr: 1.0e-02 lr: 1.0e-02"
    "  eta: 1 day, 2:03:04  time: 0.4  data_time: 0.01  memory: 10250  loss: 1.2",
    " iteration       10/     100 | consumed samples:          640 | elapsed time per iteration (ms): 812.3 |",
    # a step line quoting a record start inside its message, after one space
    f"step 12/100 loss 2.31 note: saw WARNING:{API}:Sending process 1 closing signal SIGTERM earlier",
    "INFO train: retrying after Traceback (most recent call last): was logged by the loader",
    "INFO data: sample 1094 skipped, reader said ValueError: bad utf-8",
    # a record start after many spaces, but only the line's own prefixes before them: its
    # message is indented (a rank's traceback frame, a container runtime's or kubectl's time)
    '[rank3]:   File "/workspace/train.py", line 88, in <module>',
    '[default0]:  File "/workspace/train.py", line 88, in <module>',
    '2026-12-01T19:00:00.123456789Z stderr F   File "train.py", line 3, in main',
    '2026-12-01T19:00:00.123456789Z   File "train.py", line 3, in main',
    # torchrun's own summary rows, each on its line: indented from the first column
    "  exitcode  : -9 (pid: 14750)",
    "  traceback : Signal 9 (SIGKILL) received by PID 14750",
    # tqdm bars: redrawn after `\r`, or ended by text that starts no record
    "Epoch 3:  45%|####5     | 450/1000 [05:28<06:41,  1.37it/s, v_num=12, train_loss=2.310]"
    "\rEpoch 3:  46%|####6     | 460/1000 [05:29<06:40,  1.37it/s, v_num=12, train_loss=2.300]",
    "  0%|          | 0/2 [00:00<?, ?it/s]",
    "100%|##########| 2/2 [00:05<00:00,  2.50s/it]done",
    # torchrun --tee's prefix after a bar, with nothing after it
    "[default0]:train:   3%|#         | 1/30 [00:00<00:00, 130.66it/s, loss=1.5568][default0]:",
    # a bracket that ends no tqdm bar, right before a record start
    "sample[3]Traceback (most recent call last):",
    # another library's logging, not torch's
    "step 3 done" + " " * 8 + "WARNING:root:disk almost full",
    # the shell's words as a column of a table, after spaces, or inside a message
    "    State:          Terminated",
    "Epoch 3: 46%|####6     | 460/1000 [05:29<06:40,  1.37it/s] Terminated early by user request",
    # a container runtime's json-file record stays whole
    '{"log":"step 3   WARNING:torch.distributed.run:x\\n","stream":"stderr","time":"2026-12-01T19:00:00Z"}',
])
def test_an_ordinary_line_is_one_record(line):
    assert record_spans(line.encode()) is None


def test_an_ordinary_log_is_read_as_before(tmp_path):
    """A log of such lines and an error of its own: each line is a line, as without glue."""
    text = "\n".join([
        "[11/29 18:00:01 d2.utils.events]:  eta: 1:02:03  iter: 1199  total_loss: 1.2    time: 0.3",
        f"step 12/100 loss 2.31 note: saw WARNING:{API}:Sending process 1 closing signal SIGTERM",
        "[rank1]: Traceback (most recent call last):",
        '[rank1]:   File "/workspace/train.py", line 88, in <module>',
        "[rank1]: ValueError: bad label",
    ]) + "\n"
    scan = scan_file(tmp_path, text)
    assert [(e.exc_type, e.where.line, e.where.rank) for e in scan.exceptions] == [("ValueError", 5, 1)]
    assert [h.where.line for h in scan.hits if h.rule_id == "sibling-terminated"] == [2]


# --- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    " " * 70000 + f"ERROR:{API}:failed (exitcode: -9) local_rank: 0 (pid: 1) of binary: x\n",
    ("x  " + ERAS["2.5-on"]("ERROR")) * 3000 + "\n",
    ("a  Traceback (most recent call last):" * 5000) + "\n",
    "\r".join(["\r" + ERAS["1.10-2.0"]("ERROR")] * 2000) + "\n",
    ("  " + "[rank99999999999999999999]: RuntimeError: x") * 100 + "\n",
    "b]" * 30000 + f"[00:00<?, ?it/s]ERROR:{API}:" + "\xff\xfe" * 100 + "\n",
])
def test_damaged_glued_lines_give_a_diagnosis_never_a_traceback(run_cli, tmp_path, text):
    (tmp_path / "paste.log").write_text(text, errors="surrogateescape")
    result = run_cli("scan", tmp_path / "paste.log", "--isolated", "--now", POST_MORTEM_NOW)
    assert result.exit_code in (0, 1), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception


@pytest.mark.parametrize("matcher", ["hyperscan", "python"])
@pytest.mark.parametrize("glued, word", [
    ("Epoch 1:  29%|##4       | 9413/32393 [3:28:18<8:28:33,  1.33s/it, loss=3.23, v_num=9]Terminated ",
     "SIGTERM"),
    ("Epoch 1:  29%|##4       | 9413/32393 [3:28:18<8:28:33,  1.33s/it, loss=3.23]\rHangup", "SIGHUP"),
])
def test_the_shells_signal_report_behind_a_tqdm_bar_is_the_stop(run_cli, tmp_path, monkeypatch, matcher, glued,
                                                                  word):
    """A non-interactive bash prints `Terminated` (`Hangup`) when the command in the foreground died
    of that signal; behind a bar that never ended its line it is glued to the bar (bash's
    strsignal words; the bar is tqdm's default format_meter)."""
    if matcher == "hyperscan":
        pytest.importorskip("hyperscan")
    monkeypatch.setenv("LOGSCAN_MATCHER", matcher)
    bars = "".join(f"Epoch 1:  {i}%|#         | {i * 90}/32393 [0:{i:02d}:00<8:28:33,  1.33s/it, loss=3.2{i}]\n"
                   for i in range(1, 4))
    report = diagnose(run_cli, tmp_path, bars + glued + "\n")
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert report["root_cause"]["rule"] == "stopped-from-outside"
    assert word in report["root_cause"]["message"]


@pytest.mark.parametrize("bar", [
    # mmcv's ProgressBar (mmcv/utils/progressbar.py: `[{}] {}/{}, elapsed: {}s, ETA:`), its line left open
    "[                                                  ] 0/5000, elapsed: 0s, ETA:",
    # a script's `print("Evaluating...", end="")`
    "Evaluating...",
])
def test_a_traceback_header_glued_behind_an_open_line_starts_a_traceback(run_cli, tmp_path, bar):
    """Synthetic: a process's stderr written behind a line its stdout left without a newline."""
    from conftest import paste_report

    text = ("Epoch [1][14650/14659] lr: 0.02000, loss: 0.5\n" + bar + "Traceback (most recent call last):\n"
            '  File "tools/train.py", line 159, in <module>\n    main()\n'
            "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    report = paste_report(run_cli, tmp_path, text)
    assert report["verdict"] == "FAILED"
    assert "illegal memory access" in report["root_cause"]["message"]


def test_a_quoted_traceback_header_that_goes_on_starts_nothing():
    from logscan.scan.lineparse import is_traceback_start

    assert not is_traceback_start('"py_callstack": "Traceback (most recent call last):\\n  File \\"x.py\\"')
    assert is_traceback_start("ETA:Traceback (most recent call last):  ")
