"""Big jobs stay linear and readable. No timing here (bench/scale_bench.py draws the curve): these
pin the structures that keep each step linear, on small inputs, and what the reports say of big
jobs. Jobs are built by bench/make_scale_logs.py from the samples' own lines (SYNTHETIC)."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

from logscan.findings.base import HANDFUL, plural
from logscan.scan.lineparse import EnvAssembler
from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _make_scale_logs():
    spec = importlib.util.spec_from_file_location("make_scale_logs", BENCH / "make_scale_logs.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_scale_logs", module)
    spec.loader.exec_module(module)
    return module


def _diagnose(path):
    return diagnose_paths([str(path)], Settings(processes=1))


# --- the env-print assembler: O(1) per token, the same prints as the plain scan ---------------

def _reference(stream):
    """The assembler as first written: each token fills the oldest open print lacking its key."""
    open_, out = [], []
    for where, tokens in stream:
        for key, value in tokens:
            for _, record in open_:
                if key not in record:
                    record[key] = value
                    break
            else:
                open_.append((where, {key: value}))
            while open_ and len(open_[0][1]) == 3:
                out.append(open_.pop(0))
    return out + open_


def test_env_assembler_matches_the_plain_scan_on_interleaved_pieces():
    rng = random.Random(9)
    keys = EnvAssembler.KEYS
    for _ in range(200):
        stream = []
        for line in range(rng.randint(1, 40)):
            tokens = [(rng.choice(keys), rng.randint(0, 9)) for _ in range(rng.randint(0, 4))]
            stream.append((line, tokens))
        assembler = EnvAssembler()
        got = [done for where, tokens in stream for done in assembler.feed(where, tokens)]
        assert got + assembler.flush() == _reference(stream)


def test_env_assembler_keeps_only_open_prints_and_their_missing_keys():
    assembler = EnvAssembler()
    for rank in range(10_000):  # prints without WORLD_SIZE stay open until the file ends
        assert assembler.feed(rank, [("RANK", rank), ("LOCAL_RANK", rank % 8)]) == []
    assert len(assembler.open) == 10_000
    # A RANK token finds no open print lacking RANK without looking at any of them.
    assert not assembler._missing["RANK"] and not assembler._missing["LOCAL_RANK"]
    assert len(assembler._missing["WORLD_SIZE"]) == 10_000
    assert len(assembler.flush()) == 10_000 and not assembler._missing["WORLD_SIZE"]


# --- one-line messages: a handful of ranks, then a count ---------------------------------------

def test_a_message_names_a_handful_of_ranks_then_a_count():
    assert HANDFUL == 4
    assert plural(list(range(0, 1024, 2)), "rank", "ranks") == "ranks 0, 2, 4, 6 and 508 more"
    assert plural([*range(49), *range(50, 64)], "rank", "ranks") == "ranks 0-48, 50-63"
    assert plural(["a.log", "b.log", "c.log", "d.log", "e.log"], "log", "logs") == \
        "logs a.log, b.log, c.log, d.log and 1 more"


# --- big jobs: the right root, bounded messages, every Worker placed -------------------------

def test_a_shared_log_of_many_workers_gives_each_its_own_lines(tmp_path):
    job = _make_scale_logs().build("shared", tmp_path / "shared", workers=40, lines=40 * 20, gpus=4)
    d = _diagnose(job)
    assert [w.ranks for w in d.workers] == [tuple(range(4 * n, 4 * n + 4)) for n in range(40)]
    assert all(len(f.message) < 300 for f in d.findings), [f.message for f in d.findings]


def test_the_cascade_of_a_big_job_names_the_rank_that_raised(tmp_path):
    job = _make_scale_logs().build("workers", tmp_path / "w", workers=64, lines=30, gpus=4)
    d = _diagnose(job)
    assert (d.root_cause.rule, d.root_cause.node_rank, d.root_cause.rank) == ("crash-during-training", 48, 193)
    assert len(d.summary()) < 300 and all(len(f.message) < 400 for f in d.findings)


def test_many_workers_waiting_in_rendezvous_keep_messages_one_line(tmp_path):
    job = _make_scale_logs().build("rendezvous", tmp_path / "r", workers=300, gpus=8)
    d = _diagnose(job)
    assert d.root_cause.rule == "missing-worker" and d.missing_node_ranks == (300,)
    assert all(w.findings for w in d.workers)
