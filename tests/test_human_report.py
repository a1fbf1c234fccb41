"""The terminal report (issue 13): it fits 80 and 120 columns on every real sample, never splits a
path letter by letter, is concise by default (-v shows every evidence line), shows each hint once,
and for a hang shows where each waiting rank stopped."""

from __future__ import annotations

import re
from functools import cache

import pytest

from conftest import SAMPLES, sample_dirs
from conftest import render_human
from logscan.render.human import shorten_path


@cache
def diagnosed(name: str):
    from test_samples import diagnose

    return diagnose(SAMPLES / name)


def _paths(d) -> set[str]:
    return {p for w in d.workers for p in w.files}


@pytest.mark.parametrize("sample", [p.name for p in sample_dirs()])
def test_fits_80_and_120_columns(sample):
    d = diagnosed(sample)
    for width, verbose in ((80, False), (80, True), (120, False)):
        report = render_human(d, width=width, verbose=verbose, timeline=True)
        lines = report.splitlines()
        too_long = [line for line in lines if len(line) > width]
        assert not too_long, f"{sample} at {width}: {too_long[0]!r}"
        assert not any(line != line.rstrip() for line in lines), "no trailing blanks"
        for path in _paths(d):
            # whole, or shortened from the left on one line: never folded over several lines
            name = path.rsplit("/", 1)[-1]
            assert path in report or re.search(r"…\S*" + re.escape(name), report), (sample, width, path)
        # a Worker table row never holds a lone path fragment (the old one-letter column)
        assert not [line for line in lines if re.fullmatch(r" {20,}\S{1,6}", line)], sample


def test_pipe_keeps_every_line_whole():
    d = diagnosed("restart-loop")
    report = render_human(d, verbose=True)  # no width: a pipe or a file
    for e in (e for f in d.findings for e in f.evidence):
        assert e.text.strip() in report
    assert "\x1b" not in report


def test_concise_by_default_and_verbose_shows_all():
    d = diagnosed("restart-loop")
    concise, verbose = (render_human(d, width=120, verbose=v) for v in (False, True))
    # the root cause with its best evidence line and its hint, once
    assert "root cause: crash-before-first-batch (node 0, rank 0)" in concise
    assert "launch_ddp.log:52" in concise and "launch_ddp.log:129" not in concise
    assert "launch_ddp.log:129" in verbose
    hints = [f.hint for f in d.findings if f.hint]
    for hint in set(hints):
        assert concise.count(hint[:40]) <= 1 and verbose.count(hint[:40]) <= 1, hint
    # one line per folded cascade; gloo's sign-off not repeated five times
    folded = [f for f in d.findings if f.is_consequence]
    assert sum(line.lstrip().startswith("↳") for line in concise.splitlines()) == len(folded)
    assert concise.count("GLHF") <= 2
    assert "[cause: other]" not in verbose and "cause: other" not in verbose
    assert len(concise.splitlines()) < len(verbose.splitlines())


def test_hang_shows_where_each_waiting_rank_stopped():
    d = diagnosed("stall-mid-training")
    report = render_human(d, width=100)
    root, section = report.split("Where the waiting ranks stopped", 1)
    section = section.split("\nTimeline", 1)[0]
    for p in d.processes:
        if p.rank != d.root_cause.rank:
            assert f"rank {p.rank} (node {p.node_rank})" in section
    # the straggler is not one of the waiting ranks: the root cause shows its last line, its env
    # print (it never reached the collective), then the waiting ranks' timeout
    assert "rank 1 (node 0)" not in section and "torchrun env: RANK= 1" not in section
    block = root.split("root cause:", 1)[1]
    assert block.index("rank 1 stopped here") < block.index("torchrun env: RANK= 1") \
        < block.index("the ranks that waited for it") < block.index("[rank0]: RuntimeError")
    assert "exitcode" not in block


def test_timeline_marks_the_root_cause_and_missing_workers():
    report = render_human(diagnosed("missing-worker"), width=80, timeline=True)
    timeline = report.split("Timeline", 1)[1]
    assert "in stage order" in report
    assert re.search(r"node 2 .*no log, root cause", timeline)
    timed = render_human(diagnosed("healthy-timestamps"), width=120, timeline=True)
    assert "on the clock: 2026-11-29 19:18:25" in timed


@pytest.mark.parametrize("path, room, want", [
    ("a/b/c.log", 20, "a/b/c.log"),
    ("restart-loop/worker-0/launch_ddp.log", 24, "…/launch_ddp.log"),
    ("x" * 40, 10, "…" + "x" * 9),
])
def test_shorten_path_from_the_left(path, room, want):
    got = shorten_path(path, room)
    assert len(got) <= room and got.endswith(path[-min(len(path), 5):])
    if len(path) <= room:
        assert got == path
    assert got == want


def test_independent_is_a_validated_catalogue_field(tmp_path):
    """`independent = true`: a rule whose finding needs its own fix is never folded as a cascade
    (masked-exit-code: the launch command). The root-cause pass reads it."""
    from logscan.catalogue import load_catalogue, parse_rule
    from logscan.errors import RuleFileError

    assert load_catalogue().rules["masked-exit-code"].independent
    data = {"id": "x-rule", "kind": "code", "severity": "error", "stage": "exit", "summary": "s",
            "hint": "h", "independent": "yes",
            "docs": {k: "t" for k in ("what", "why", "example", "fix")}}
    with pytest.raises(RuleFileError, match="independent"):
        parse_rule(tmp_path / "x.toml", data)


def test_at_80_columns_no_path_is_broken_mid_token(tmp_path, monkeypatch):
    # A real sample copied under long directory names (synthetic placement, real lines), with a
    # file that is not a log, so that the report's note names long paths too.
    import shutil

    from logscan.config import parse_time
    from logscan.diagnose.pipeline import diagnose_paths
    from logscan.settings import Settings
    from conftest import POST_MORTEM_NOW

    deep = tmp_path / "shared-outputs-of-the-training-platform-team" / "experiment-2026-12-01-baseline-run-000042"
    shutil.copytree(SAMPLES / "self-sigkill", deep, ignore=shutil.ignore_patterns("expected.json"))
    (deep / "worker-1" / "model.ckpt").write_bytes(b"\x00\x01 not a log")
    monkeypatch.chdir(tmp_path)
    d = diagnose_paths([str(deep.relative_to(tmp_path))], Settings(now=parse_time(POST_MORTEM_NOW)))
    report = render_human(d, width=80, verbose=True)
    assert d.inputs or d.skipped
    def bare(token: str) -> str:
        return re.sub(r":\d+$", "", token.strip(",:()[]"))

    whole = {bare(t) for t in [*_paths(d), *d.skipped, *(t for f in d.findings for e in f.evidence
                                                           for t in e.text.split())]}
    shown = {bare(token) for line in report.splitlines() for token in line.split() if "/" in token}
    broken = [token for token in shown if token not in whole and not token.startswith("…")]
    assert not broken, report
    assert max(len(line) for line in report.splitlines()) <= 80
