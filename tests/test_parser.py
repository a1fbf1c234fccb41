"""Parsing real lines into events. Lines marked REAL are copied from sample_logs/; lines marked
SYNTHETIC are built here to pin an edge case no sample shows."""

from __future__ import annotations

import pytest

import logscan.scan.scanner
from conftest import SAMPLES
from logscan.scan import lineparse
from logscan.catalogue import Catalogue
from logscan.errors import ConfigError
from logscan.scan.finders import MATCHERS, ProgressFinder
from logscan.scan.interpret import LineJudge
from logscan.scan.lineparse import Candidates, parse_launch
from logscan.scan.prefixes import strip_prefixes
from logscan.scan.scanner import Scanner


def scan_text(tmp_path, text: str | bytes, name: str = "launch_ddp.log", chunk_size: int = 1 << 20):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return Scanner(Catalogue({}, {})).scan_file(str(path), name, chunk_size=chunk_size)


def envs(scan):
    return sorted(((e.rank, e.local_rank, e.world_size) for e in scan.envs), key=str)


# REAL: sample_logs/healthy-2x2/worker-0/launch_ddp.log, two processes writing one stdout.
INTERLEAVED = (
    "torchrun env:torchrun env: RANK= 1 LOCAL_RANK= 1 WORLD_SIZE= 4\n"
    " RANK= 0 LOCAL_RANK= 0 WORLD_SIZE= 4\n"
)


def test_interleaved_env_prints_are_both_recovered(tmp_path):
    scan = scan_text(tmp_path, INTERLEAVED)
    assert envs(scan) == [(0, 0, 4), (1, 1, 4)]
    assert scan.env_markers == 2


def test_interleaved_env_prints_under_kubectl_timestamps(tmp_path):
    # REAL: sample_logs/healthy-timestamps/logs/job-hts-worker-1.log
    scan = scan_text(tmp_path,
                     "2026-11-29T18:49:04.436260543Z torchrun env:torchrun env: RANK= 3 LOCAL_RANK= 1 WORLD_SIZE= 4\n"
                     "2026-11-29T18:49:04.436464657Z  RANK= 2 LOCAL_RANK= 0 WORLD_SIZE= 4\n")
    assert envs(scan) == [(2, 0, 4), (3, 1, 4)]


def test_tee_prefixed_env_prints(tmp_path):
    # REAL: sample_logs/healthy-tee-1x4/launch_ddp.log
    scan = scan_text(tmp_path, "".join(
        f"[default{i}]:torchrun env: RANK= {i} LOCAL_RANK= {i} WORLD_SIZE= 4\n" for i in range(4)))
    assert envs(scan) == [(i, i, 4) for i in range(4)]
    assert [e.where.local_rank for e in scan.envs] == [0, 1, 2, 3]


def test_env_print_variants(tmp_path):
    # SYNTHETIC: `RANK=5` without spaces, and a process run without torchrun (values None).
    scan = scan_text(tmp_path, "torchrun env: RANK=5 LOCAL_RANK=1 WORLD_SIZE=8\n"
                               "torchrun env: RANK= None LOCAL_RANK= None WORLD_SIZE= None\n")
    assert envs(scan) == sorted([(5, 1, 8), (None, None, None)], key=str)


def test_token_level_interleaving(tmp_path):
    # SYNTHETIC: unbuffered writes can split between a key and the next print's key.
    scan = scan_text(tmp_path, "torchrun env: RANK= 2 torchrun env: RANK= 3 LOCAL_RANK= 0\n"
                               " LOCAL_RANK= 1 WORLD_SIZE= 4 WORLD_SIZE= 4\n")
    assert envs(scan) == [(2, 0, 4), (3, 1, 4)]


def test_env_line_not_confused_with_other_rank_words(tmp_path):
    # SYNTHETIC: NODE_RANK= and free text mentioning RANK must not start an env print.
    scan = scan_text(tmp_path, "export NODE_RANK=1 for this Worker\nmy RANK= 3 is fine\n")
    assert scan.envs == []


def test_launch_line_real_and_variants():
    # REAL
    line = "DDP launch: nnodes=2 node_rank=0 gpus_per_node=2 total_procs=4 master=127.0.0.1:29510"
    fields = parse_launch(line)
    assert (fields["nnodes"], fields["node_rank"], fields["gpus_per_node"], fields["total_procs"],
            fields["master_addr"], fields["master_port"]) == (2, 0, 2, 4, "127.0.0.1", 29510)
    # SYNTHETIC: other key order, extra keys, IPv6 masters.
    fields = parse_launch("DDP launch: master=[fd00::1]:29500 node_rank=1 job=x nnodes=2 "
                          "total_procs=8 gpus_per_node=4")
    assert (fields["node_rank"], fields["master_addr"], fields["master_port"]) == (1, "fd00::1", 29500)
    fields = parse_launch("DDP launch: nnodes=2 node_rank=1 master=fd00::1:29500")
    assert (fields["master_addr"], fields["master_port"]) == ("fd00::1", 29500)


def test_prefixes_are_stripped_and_kept():
    stamped = strip_prefixes("2026-11-29T18:49:02.725360776Z DDP launch: nnodes=2")
    assert stamped.body == "DDP launch: nnodes=2"
    assert stamped.time.isoformat() == "2026-11-29T18:49:02.725360+00:00"
    glog = strip_prefixes("W1129 18:47:14.308000 4215 torch/distributed/run.py:874] Setting OMP")
    assert glog.body == "Setting OMP"
    c10d = strip_prefixes("[W1129 17:56:21.458368607 socket.cpp:207] [c10d] The hostname")
    assert c10d.body == "[c10d] The hostname"
    ranked = strip_prefixes("[rank3]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] boom")
    assert (ranked.rank, ranked.body) == (3, "boom")
    pylog = strip_prefixes("2026-11-29 18:49:08,789 - train - INFO - epoch 0 iter 0 loss 1.56")
    assert pylog.time is not None and "iter 0" in pylog.body
    assert strip_prefixes("\x1b[32mstep 3\x1b[0m").body == "step 3"
    assert strip_prefixes("train: 10%\rtrain: 20%\r").body == "train: 20%"


def test_progress_first_and_last_per_block(tmp_path):
    text = "DDP launch: nnodes=1 node_rank=0 gpus_per_node=1 total_procs=1 master=h:1\n" + \
        "".join(f"step {i}/100 loss 2.0\n" for i in range(100))
    scan = scan_text(tmp_path, text)
    assert [p.where.line for p in scan.progress] == [2, 101]


def test_progress_styles(tmp_path):
    # REAL lines of each style, from the healthy samples.
    for line in ("{'loss': '1.4212', 'grad_norm': '0.83', 'learning_rate': '5e-05', 'epoch': '0.25'}",
                 "2026-11-29 18:49:08,789 - train - INFO - epoch 0 iter 0 loss 1.56",
                 "[default0]:train:  10%|█         | 3/30 [00:00<00:02, 13.00it/s, loss=1.3688][default0]:",
                 "step 3/40 loss 2.3141"):
        assert scan_text(tmp_path, line + "\n").progress, line


def test_line_numbers_survive_block_boundaries(tmp_path):
    text = "".join(f"noise line {i}\n" for i in range(1000)) + INTERLEAVED + "tail\n"
    for chunk in (7, 64, 4096):
        scan = scan_text(tmp_path, text, chunk_size=chunk)
        assert [e.where.line for e in scan.envs] == [1001, 1002], chunk
        assert scan.lines == 1003


def test_torchrun_failure_summary(tmp_path):
    # SYNTHETIC, in the shape of torch-messages.md's summary block.
    scan = scan_text(tmp_path, """Root Cause (first observed failure):
[0]:
  time      : 2026-11-29_17:58:31
  host      : job-7f3a-worker-1
  rank      : 3 (local_rank: 1)
  exitcode  : -9 (pid: 14750)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 14750
""")
    (exit_,) = scan.exits
    assert (exit_.rank, exit_.local_rank, exit_.exitcode, exit_.host, exit_.root_cause) == (
        3, 1, -9, "job-7f3a-worker-1", True)


def test_exception_in_rank_prefixed_traceback(tmp_path):
    scan = scan_text(tmp_path, "[rank1]: Traceback (most recent call last):\n"
                               "[rank1]:   File \"train.py\", line 3, in <module>\n"
                               "[rank1]: ModuleNotFoundError: No module named 'foo'\n")
    (exc,) = scan.exceptions
    assert (exc.where.rank, exc.exc_type, exc.detail) == (1, "ModuleNotFoundError", "No module named 'foo'")
    assert not exc.agent


def test_progress_patterns_with_leading_global_flags(tmp_path):
    # SYNTHETIC: `(?i)` is valid alone, and used to fail once joined to the other patterns.
    finder = ProgressFinder(("(?i)epoch \\d+", "Batch \\d+"))
    assert finder.is_progress_line(b"EPOCH 3 done") and finder.is_progress_line(b"Batch 4")
    assert not finder.is_progress_line(b"BATCH 4")  # the flag stays inside its own pattern
    assert ProgressFinder(("(?x) epoch \\d+  # a comment",)).is_progress_line(b"epoch12")
    assert ProgressFinder(("(?i)(?s)a.b",)).is_progress_line(b"A\nB")
    path = tmp_path / "launch_ddp.log"
    path.write_bytes(b"EPOCH 1 loss=nan\nnoise\nEPOCH 2\n")
    scan = Scanner(Catalogue({}, {}), ("(?i)epoch \\d+",)).scan_file(str(path), "x")
    assert [p.where.line for p in scan.progress] == [1, 3]


def test_progress_patterns_that_name_a_group_alike_both_count():
    # SYNTHETIC: `re` could not join these into one expression; each runs on its own now.
    finder = ProgressFinder(("(?P<n>epoch) \\d+", "(?P<n>batch) \\d+"))
    assert finder.is_progress_line(b"epoch 1") and finder.is_progress_line(b"batch 2")


def test_a_user_progress_pattern_is_searched_line_by_line():
    """`^` is the start of each line, as for the rule patterns: searched over a whole block, it
    was the start of the block only, and `^training finished` never matched."""
    # REAL: sample_logs/healthy-2x2, whose rank 0 ends with `training finished: 30 steps`.
    path = SAMPLES / "healthy-2x2" / "worker-0" / "launch_ddp.log"
    scan = Scanner(Catalogue({}, {}), ("^training finished",)).scan_file(str(path), "x")
    assert [p.where.text for p in scan.progress] == ["step 1/30 loss 1.5568",
                                                      "training finished: 30 steps"]
    default = Scanner(Catalogue({}, {})).scan_file(str(path), "x")
    assert default.progress[-1].where.text == "step 30/30 loss 1.4118"


def test_a_user_progress_pattern_that_does_not_compile_is_a_config_error():
    with pytest.raises(ConfigError, match="does not compile"):
        ProgressFinder(("(unclosed",))


@pytest.mark.parametrize("matcher", MATCHERS)
def test_a_parser_registered_with_a_literal_is_fed_its_line(tmp_path, monkeypatch, matcher):
    """A parser declares its lines next to it (lineparse.needs); the scanner then finds them and
    hands them, as native lines, to the judge of what a line can tell the interpreter (which
    reads every parse the interpreter makes), with no other list to update."""
    if matcher != "python":
        pytest.importorskip(matcher)
    monkeypatch.setattr(lineparse, "CANDIDATES", list(lineparse.CANDIDATES))

    @lineparse.needs(Candidates((b"zebra crossing",), rb"zebra crossing \d+"))
    def parse_zebra(body):
        return body

    assert parse_zebra.candidates[0].parser == "parse_zebra"
    judged = []

    class Recording(LineJudge):
        def judge(self, raw, native):
            judged.append((raw, native))
            return super().judge(raw, native)

    monkeypatch.setattr(logscan.scan.scanner, "LineJudge", Recording)
    path = tmp_path / "launch_ddp.log"
    path.write_bytes(b"noise\n[rank0]: zebra crossing 7\nzebra crossing x\nstep 1\n")
    Scanner(Catalogue({}, {}), matcher=matcher).scan_file(str(path), "x")
    # the literal finds (the pure-Python finder also the line without a number), the pattern decides
    assert [raw for raw, native in judged if native] == [b"[rank0]: zebra crossing 7"]


def test_config_prints_are_not_progress():
    """Lines as training scripts print their config (from sample_logs/healthy-config-print and
    HF Trainer's banner) must not count as a step done; real progress lines still do."""
    from logscan.scan.finders import ProgressFinder

    finder = ProgressFinder()
    for line in ("steps=30", "max_steps: 1000", "  Total optimization steps = 30",
                 "num_train_epochs=3", "eval_steps 500",
                 "train:   0%|          | 0/2000 [00:00<?, ?it/s]"):
        assert not finder.is_progress_line(line.encode()), line
    for line in ("step 5/30 loss 1.4855", "global_step=12", "steps 12 done",
                 "train:   1%|          | 14/2000 [00:00<00:17, 114.64it/s]",
                 "{'loss': 1.52, 'grad_norm': 0.9, 'epoch': 0.1}", "iteration 100/ 1000 |"):
        assert finder.is_progress_line(line.encode()), line


def test_an_over_long_line_keeps_its_head_and_its_last_state(tmp_path):
    """Synthetic: a tqdm bar redrawn 5,000 times on one line, longer than a read block."""
    from logscan.files.reader import line_blocks

    bar = "".join(f"\rtrain: {i * 100 // 5000:3d}%| | {i}/5000" for i in range(5001))
    path = tmp_path / "bar.log"
    path.write_text("first\n" + bar + "\nlast\n")
    lines = b"".join(line_blocks(str(path), chunk_size=4096, max_line=8192)).split(b"\n")
    assert lines[0] == b"first" and lines[2] == b"last"
    assert lines[1].endswith(b"5000/5000") and len(lines[1]) <= 8192 + 1


@pytest.mark.parametrize("matcher", MATCHERS)
def test_a_long_redrawn_candidate_line_keeps_its_last_state(tmp_path, monkeypatch, matcher):
    """Synthetic: a bar redrawn with \\r past MAX_RAW bytes, then an error on the same line. The
    interpreter must see what was last on screen, not only the line's head."""
    monkeypatch.setenv("LOGSCAN_MATCHER", matcher)
    bar = "".join(f"\r{k // 10:3d}%|#####     | {k}/1000 [00:10<00:10, 4.00it/s]" for k in range(1, 400))
    scan = scan_text(tmp_path, "step 1/10 loss 1\n" + bar + "\rRuntimeError: CUDA error: boom\n")
    assert [(e.exc_type, e.detail) for e in scan.exceptions] == [("RuntimeError", "CUDA error: boom")]


def test_bars_of_getting_ready_are_not_progress():
    """The bars a job shows before its first batch (Hugging Face loading and datasets, as they
    print) are not training progress; training bars still are."""
    from logscan.scan.finders import ProgressFinder

    finder = ProgressFinder()
    for line in ("Loading checkpoint shards:  50%|█████     | 1/2 [00:03<00:03,  3.21s/it]",
                 "Downloading shards:  50%|█████     | 1/2 [00:41<00:41, 41.2s/it]",
                 "Map:  12%|█▏        | 1200/10000 [00:01<00:09, 911.23 examples/s]",
                 "Map (num_proc=8):  40%|████      | 4000/10000 [00:02<00:03, 1833.10 examples/s]",
                 "Generating train split:  50%|█████     | 5000/10000 [00:00<00:00, 41234.1 examples/s]",
                 "Tokenizing:  30%|███       | 300/1000 [00:01<00:02, 290.1it/s]",
                 "Preparing test set...:  45%|████▍     | 30/67 [27:15<23:13, 37.65s/it]",
                 "Preparing dataset: 100%|██████████| 67/67 [01:02<00:00,  1.07it/s]"):
        assert not finder.is_progress_line(line.encode()), line
    for line in ("Epoch 0:  12%|█▏        | 120/1000 [00:10<01:15, 11.7it/s, loss=0.512, v_num=0]",
                 "  3%|▎         | 1/30 [00:01<00:30,  1.05s/it]",
                 "train:   1%|          | 14/2000 [00:00<00:17, 114.64it/s]",
                 "Epoch 0/9 ━━━━━━━━━━━━━━━━━━━━ 120/1000 0:00:10 • 0:01:15 11.70it/s v_num: 0 train_loss: 0.512"):
        assert finder.is_progress_line(line.encode()), line
