"""Wrapper formats that put a tag, or a box, around every line.

- torchx (`torchx run` / `torchx log`, torchx.util.log_tee_helpers) puts `{role}/{replica_id} `
  before each line of a replica's log; its dist.ddp component runs torchrun with
  `--tee 3 --role ""`, so torchrun's tee header (tail_log: `[{role}{local_rank}]:`) is `[0]:`,
  and the agent's own lines read `[] worker group successfully finished ...`.
- A console box (rich's Panel and traceback, friendly_traceback's frame) draws `│ ` before each
  line, then pads it to a right border `│`.

The lines here are SYNTHETIC, built from those format strings (torchx's prefix, torch's tail_log
header and agent messages, a box's borders) around torch's own messages; none is copied from a log.
"""

from __future__ import annotations

import json

import pytest

from logscan.catalogue import load_catalogue
from logscan.scan.lineparse import parse_exception
from logscan.scan.prefixes import strip_prefixes
from logscan.scan.scanner import Scanner

CONNECT = "[c10d] The client socket has failed to connect to any network address of (05, 40323)."


@pytest.mark.parametrize("line, body, local_rank, pid", [
    # torchx's tag, then torchrun's tee header under `--role ""`, then c10d's C++ header
    (f"trainer/0 [1]:[E socket.cpp:610] {CONNECT}", CONNECT, 1, None),
    (f"trainer/1 [0]:[E socket.cpp:610] {CONNECT}", CONNECT, 0, None),
    # torchx's tag before the default role's header
    ("olmo2_cpt/0 [default3]:Epoch 0:   0%|          | 33/2383206", "Epoch 0:   0%|          | 33/2383206", 3, None),
    # torchx's tag in colour (torchx log on a terminal)
    ("\x1b[32mtrainer/0\x1b[0m [2]:Traceback (most recent call last):", "Traceback (most recent call last):", 2, None),
    # torchx on Ray: its tag, then Ray's actor prefix, then the agent's logger header
    ("ray/0 (CommandActor pid=494406) INFO:torch.distributed.elastic.agent.server.api:[] Starting worker group",
     "[] Starting worker group", None, 494406),
    ("ray/0 (CommandActor pid=494406)", "", None, 494406),
    # a pod's log of a torchx job: torchrun's header alone
    ("[3]:RuntimeError: CUDA error: out of memory", "RuntimeError: CUDA error: out of memory", 3, None),
    # the agent's own lines carry only torchx's tag
    ("trainer/0 torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
     "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", None, None),
])
def test_torchx_tags_and_the_unnamed_roles_tee_header_are_prefixes(line, body, local_rank, pid):
    stripped = strip_prefixes(line)
    assert (stripped.body, stripped.local_rank, stripped.pid) == (body, local_rank, pid)


@pytest.mark.parametrize("line", [
    # the ChildFailedError summary numbers its failures `[0]:`, `[1]:` on lines of their own
    "[0]:",
    "[1]:",
    # a markdown link's reference, a Keras progress bar, a metric's name
    "[1]: https://pytorch.org/docs/stable/elastic/errors.html",
    "1875/1875 [==============================] - 5s 2ms/step - loss: 0.2950",
    "train/loss 0.512",
    "step 3/10 loss=0.5",
])
def test_lines_that_only_look_like_those_tags_keep_their_text(line):
    stripped = strip_prefixes(line)
    assert (stripped.body, stripped.local_rank) == (line, None)


def test_the_failure_summary_of_a_torchx_job_still_reads_its_index_lines():
    # `trainer/0 [0]:` is torchx's tag before a summary index, not a tee header: it needs text after it
    assert strip_prefixes("trainer/0 [0]:").body == "[0]:"


def _scan(tmp_path, lines: list[str]):
    log = tmp_path / "trainer.log"
    log.write_text("\n".join(lines) + "\n")
    return Scanner(load_catalogue()).scan_file(str(log), "trainer.log")


def test_a_torchx_jobs_store_connect_failures_are_told_per_local_rank(tmp_path):
    scan = _scan(tmp_path, [f"trainer/0 [1]:[E socket.cpp:610] {CONNECT}",
                            f"trainer/0 [0]:[E socket.cpp:610] {CONNECT}"])
    connects = [hit for hit in scan.hits if hit.rule_id == "connect-failed"]
    assert sorted(hit.where.local_rank for hit in connects) == [0, 1]


@pytest.mark.parametrize("line, rule", [
    ("ray/0 (CommandActor pid=494377) INFO:torch.distributed.elastic.agent.server.api:[] worker group "
     "successfully finished. Waiting 300 seconds for other agents to finish.", "worker-group-succeeded"),
    ("trainer/0 I1129 18:48:38.105000 4715 torch/distributed/elastic/agent/server/api.py:931] [] worker group "
     "successfully finished. Waiting 300 seconds for other agents to finish.", "worker-group-succeeded"),
    ("trainer/0 INFO:torch.distributed.elastic.agent.server.api:[] Rendezvous'ing worker group", "rendezvous-round"),
    ("trainer/0 WARNING:torch.distributed.elastic.agent.server.api:[] Worker group FAILED. 2/3 attempts left; "
     "will restart worker group", "worker-group-restart"),
])
def test_the_agents_lines_under_an_empty_role_are_read(tmp_path, line, rule):
    scan = _scan(tmp_path, [line])
    assert rule in {hit.rule_id for hit in scan.hits}


BOX_WIDTH = 100


def _boxed(text: str, right: bool = True) -> str:
    """A line as a console panel draws it: `│ `, the text, padding, `│`."""
    return f"│ {text.ljust(BOX_WIDTH)} │" if right else f"│ {text}"


@pytest.mark.parametrize("text", [
    '  File "/opt/venv/lib/python3.8/site-packages/torch/distributed/launcher/api.py", line 245, in launch_agent',
    "    raise ChildFailedError(",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
    "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3",
])
@pytest.mark.parametrize("right", [True, False])
def test_a_boxed_line_is_read_between_its_borders(text, right):
    assert strip_prefixes(_boxed(text, right)).body == text


def test_an_exception_in_a_box_is_an_exception():
    found = parse_exception(strip_prefixes(_boxed("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:")).body)
    assert found == ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError", "")


@pytest.mark.parametrize("line", [
    # loguru's diagnose arrows under a frame, a table's inner column, a bar drawn with `|`
    "           │               │   │     └ 2",
    "| distributed init (rank 5): env://",
    "  | Name   | Type   | Params",
    "Epoch 1: 100%|██████████| 50/50 [00:05<00:00,  9.10it/s]",
])
def test_lines_with_a_bar_that_is_no_left_border_keep_it(line):
    assert strip_prefixes(line).body == line


def test_a_boxed_torchrun_failure_is_a_failure(run_cli, tmp_path):
    """torchrun's exit traceback inside a panel, cut right after its exception line."""
    log = tmp_path / "launch.log"
    log.write_text("\n".join([
        _boxed("Traceback (most recent call last):"),
        _boxed('  File "/opt/venv/lib/python3.8/site-packages/torch/distributed/launcher/api.py", line 245, '
               "in launch_agent"),
        _boxed("    raise ChildFailedError("),
        _boxed("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:", right=False),
    ]) + "\n")
    report = json.loads(run_cli("scan", str(log), "--isolated", "--format", "json").stdout)
    assert report["verdict"] == "FAILED"
    assert "ChildFailedError" in report["root_cause"]["message"]


@pytest.mark.parametrize("line, body", [
    # pytest's failure report (_pytest/_code/code.py: fail_marker `E` + the source's indent)
    ("E       -- Process 3 terminated with the following error:", "-- Process 3 terminated with the following error:"),
    ("E       RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:957, unhandled system error, NCCL version 21.0.3",
     "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:957, unhandled system error, NCCL version 21.0.3"),
    ("E   torch.multiprocessing.spawn.ProcessRaisedException: ",
     "torch.multiprocessing.spawn.ProcessRaisedException: "),
])
def test_pytests_fail_marker_is_a_prefix(line, body):
    assert strip_prefixes(line).body == body


@pytest.mark.parametrize("line, body", [
    # a glog header that lost its brackets (one space after its level), a word that begins with E,
    # and torch's Python formatter's header (stripped as that, not as pytest's)
    ("E ProcessGroupNCCL.cpp:828 Rank 1 Watchdog caught collective operation timeout",
     "E ProcessGroupNCCL.cpp:828 Rank 1 Watchdog caught collective operation timeout"),
    ("Epoch 3: 100%|##########| 40/40", "Epoch 3: 100%|##########| 40/40"),
    ("E1129 18:47:52.096000 4351 torch/distributed/elastic/multiprocessing/api.py:1002] failed", "failed"),
])
def test_lines_that_begin_with_an_e_are_not_pytests(line, body):
    assert strip_prefixes(line).body == body


def test_a_capitalised_rank_prefix_is_a_rank_prefix():
    """verl's workers print `[Rank7]:` before torch's lines, behind Ray's actor prefix (synthetic line)."""
    stripped = strip_prefixes("(WorkerDict pid=66442) [Rank7]:[E506 14:16:14.487575902 ProcessGroupNCCL.cpp:629] "
                              "[Rank 3] Watchdog caught collective operation timeout")
    assert stripped.rank == 7 and stripped.body.startswith("[Rank 3] Watchdog caught")


def test_rays_deduplication_note_is_no_part_of_the_line():
    """Ray 2.x prints a line its workers printed alike once, with ` [repeated {n}x across cluster]`
    after it (ray/_private/ray_logging.py); synthetic lines in that format."""
    from logscan.scan.prefixes import strip_prefixes

    line = ("(AsyncVLLMInferenceEngine pid=31037) RuntimeError: NCCL error: unhandled system error "
            "(run with NCCL_DEBUG=INFO for details) [repeated 4x across cluster]")
    assert strip_prefixes(line).body.endswith("for details)")
    # without Ray's prefix the words are the line's own
    assert strip_prefixes("note [repeated 4x across cluster]").body.endswith("cluster]")


def test_a_traceback_source_line_quoting_a_message_is_no_event(run_cli, tmp_path):
    """A frame's source line names the words of the message it raises (`raise RuntimeError(f"NCCL
    error: {error_str}")`, vLLM's pynccl wrapper): only the exception line below it is the error."""
    from conftest import paste_report

    text = ('Traceback (most recent call last):\n  File "pynccl_wrapper.py", line 260, in NCCL_CHECK\n'
            '    raise RuntimeError(f"NCCL error: {error_str}")\n'
            "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)\n")
    report = paste_report(run_cli, tmp_path, text)
    assert report["root_cause"]["message"] == "NCCL reported an error: unhandled system error"
    assert "{error_str}" not in str(report["findings"])


@pytest.mark.parametrize("line, body", [
    # a task's line as the runtime logs it (`[%s (pid %s)] ` % (path, pid)) after its time
    ("2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] OSError: [Errno 28] No space left on device",
     "OSError: [Errno 28] No space left on device"),
    # the runtime's own line about a task (`[%s] ` % path)
    ("2023-04-29 06:01:13.102 [177/train/578] Task failed.", "Task failed."),
    # a task on AWS Batch: its job's id after the task's path
    ("2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160]   File \"x.py\", line 3, in f",
     '  File "x.py", line 3, in f'),
])
def test_metaflows_task_path_is_a_prefix(line, body):
    """Metaflow's runtime (runtime.py, Task.log) heads each line of a task's output with
    `[%s (pid %s)] ` (the task's path run_id/step/task_id), `[%s] ` without a pid; synthetic lines."""
    assert strip_prefixes(line).body == body


@pytest.mark.parametrize("line", ["[a/b] c", "[docs/api/index.html] moved", "see [1/2/3 (pid x)] here"])
def test_bracketed_paths_that_are_no_task_path_keep_their_text(line):
    assert strip_prefixes(line).body == line


CLOUD_LOGGING = "ERROR 2025-07-25T19:28:34.134390639Z [resource.labels.taskName: workerpool0-0] "


@pytest.mark.parametrize("line, body", [
    (CLOUD_LOGGING + "Traceback (most recent call last):", "Traceback (most recent call last):"),
    ("INFO 2025-07-25T19:28:30.000000000Z step 10 loss 2.3", "step 10 loss 2.3"),
    # a severity word not before a time is the line's own
    ("ERROR something went wrong", "ERROR something went wrong"),
])
def test_cloud_loggings_severity_time_and_labels_are_a_prefix(line, body):
    """Google Cloud Logging's entries as its console shows them (`SEVERITY TIMESTAMP [labels] text`);
    synthetic lines in that form."""
    assert strip_prefixes(line).body == body


@pytest.mark.parametrize("ending, message", [
    (['File "/opt/conda/lib/python3.9/multiprocessing/process.py", line 108, in run', "self._target(*self._args, *"],
     "cuts off"),
    (['File "/opt/conda/lib/python3.9/multiprocessing/process.py", line 108, in run'], "cuts off"),
    # a line after a frame's source line is no frame's: the traceback ended, its exception line unread
    (['File "x.py", line 3, in f', "f()", "Training resumed"], None),
    (['File "train.py", line 12, in main', "load(path)", "FileNotFoundError: [Errno 2] No such file or directory: 'x'"],
     "FileNotFoundError"),
])
def test_a_traceback_whose_lines_lost_their_indent_is_read(run_cli, tmp_path, ending, message):
    """Cloud Logging trims each entry, a traceback's indent with it (synthetic lines in its form)."""
    from conftest import paste_report

    lines = ["Process SpawnProcess-3:1:", "Traceback (most recent call last):",
             'File "/opt/conda/lib/python3.9/multiprocessing/process.py", line 315, in _bootstrap', "self.run()",
             *ending]
    report = paste_report(run_cli, tmp_path, "".join(CLOUD_LOGGING + line + "\n" for line in lines))
    if message is None:
        assert report["verdict"] != "FAILED"
    else:
        assert report["verdict"] == "FAILED" and message in report["root_cause"]["message"]


@pytest.mark.parametrize("line, body, local_rank", [
    # torchrun's tee header under a role of its own (`[${role_name}${local_rank}]:`), torchx's `trainer`
    ("[trainer3]:node:1958:1958 [3] NCCL INFO NCCL_SOCKET_IFNAME set to eth2",
     "node:1958:1958 [3] NCCL INFO NCCL_SOCKET_IFNAME set to eth2", 3),
    # a prefix template with the local rank last (`[${role_name}${rank}|${local_rank}]:`)
    ("[trainer0|0]:ncclInternalError: Internal check failed.", "ncclInternalError: Internal check failed.", 0),
    ("[worker12|4]:step 3 loss 2.1", "step 3 loss 2.1", 4),
    # a script's own bracketed words keep their text
    ("[epoch1]: loss 0.3", "[epoch1]: loss 0.3", None),
])
def test_torchruns_tee_header_under_a_named_role_is_a_prefix(line, body, local_rank):
    """torchrun's tail_log header (synthetic lines in its default form and a template's)."""
    stripped = strip_prefixes(line)
    assert (stripped.body, stripped.local_rank) == (body, local_rank)


def test_a_signature_line_under_a_tee_header_names_its_local_rank(run_cli, tmp_path):
    from conftest import paste_report

    report = paste_report(run_cli, tmp_path, "[trainer1|1]:ncclInternalError: Internal check failed.\n")
    assert report["root_cause"]["rule"] == "nccl-error"
    assert "(local_rank 1 on " in report["root_cause"]["message"]


@pytest.mark.parametrize("line, body", [
    ("ERROR 04-07 00:57:46 ray_utils.py:45] Attribute busid of node nic not found", "Attribute busid of node nic not found"),
    ("INFO 12-01 10:00:01 [parallel_state.py:1004] rank 3 in world size 8 is assigned as DP rank 0",
     "rank 3 in world size 8 is assigned as DP rank 0"),
    # a level and a date the logger's form does not go on with keep their words
    ("ERROR 04-07 the run failed", "ERROR 04-07 the run failed"),
])
def test_vllms_log_header_is_a_prefix(line, body):
    """vLLM's logging format (vllm/logger.py, in both its forms); synthetic lines."""
    assert strip_prefixes(line).body == body
