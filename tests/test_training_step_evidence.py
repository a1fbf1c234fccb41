"""The stage from torch's own words: a warning torch prints only inside a training step (signal
training-step-warning) places a later failure of the process that printed it during training,
and only that process's. Real samples crash-training-silent and crash-first-batch-silent print no
progress line at all; the synthetic variants below are copies of them with lines removed or
unprefixed, and say so."""

from __future__ import annotations

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES, sample_copy, torch_source_entries
from logscan.catalogue import load_catalogue
from logscan.diagnose.pipeline import diagnose_paths
from logscan.scan.prefixes import strip_prefixes
from logscan.settings import Settings
from logscan.config import parse_time

SIGNAL = "training-step-warning"
# formats.toml entries (family evidence) of warnings printed only inside a training step
TRAINING_STEP_ENTRIES = ("find-unused-warning", "grad-strides-warning", "layout-contract-warning",
                         "create-graph-warning")
LOG = "worker-0/launch_ddp.log"


def _root(job):
    got = diagnose_paths([str(job)], Settings(now=parse_time(POST_MORTEM_NOW)))
    assert got.root_cause is not None, got.verdict_reason
    return got.root_cause.rule, got.root_cause.node_rank, got.root_cause.rank


def _line(sample_dir, prefix, needle):
    """The one line of worker-0's log that starts with prefix and holds needle."""
    (line,) = [x for x in (sample_dir / LOG).read_text().splitlines()
               if x.startswith(prefix) and needle in x]
    return line


FIND_UNUSED = "find_unused_parameters=True was specified"


@pytest.mark.parametrize("line", [line for entry in torch_source_entries()
                                  if entry["id"] in TRAINING_STEP_ENTRIES for line in entry["examples"]])
def test_every_release_wording_of_the_family_fires(line):
    """Lines built from torch's format strings (tests/torch_source/formats.toml), with each
    release's prefix: each member of the family is the signal's."""
    signal = load_catalogue().signals[SIGNAL]
    assert signal.match(strip_prefixes(line).body) is not None, line


def test_every_family_member_is_in_formats_toml():
    ids = {entry["id"] for entry in torch_source_entries() if entry["family"] == "evidence"}
    assert set(TRAINING_STEP_ENTRIES) <= ids


def test_the_crashing_rank_s_own_warning_places_its_crash_during_training():
    assert _root(SAMPLES / "crash-training-silent") == ("crash-during-training", 0, 1)


def test_without_its_warning_the_same_crash_is_before_the_first_batch(tmp_path):
    """Synthetic: crash-training-silent with rank 1's warning line removed. Rank 0's warning in the
    same file says nothing of rank 1, and nothing else says that rank 1 was training."""
    warning = _line(SAMPLES / "crash-training-silent", "[rank1]:", FIND_UNUSED)
    job = sample_copy(tmp_path, "crash-training-silent", LOG, warning, "")
    assert _root(job) == ("crash-before-first-batch", 0, 1)


def test_other_ranks_warnings_do_not_place_a_rank_that_printed_none():
    assert _root(SAMPLES / "crash-first-batch-silent") == ("crash-before-first-batch", 0, 1)


def _unprefixed(job, rank):
    """The rank's warning line as releases before 2.3 print it: `[W reducer.cpp:N] Warning: ...`,
    no rank prefix."""
    path = job / LOG
    lines = path.read_text().splitlines(keepends=True)
    out = []
    for x in lines:
        if x.startswith(f"[rank{rank}]:[W") and FIND_UNUSED in x:
            x = "[W reducer.cpp:1300] Warning: " + x.split("] Warning: ", 1)[1]
        out.append(x)
    path.write_text("".join(out))


def test_unprefixed_warnings_of_every_process_of_the_worker_place_its_crash(tmp_path):
    """Synthetic: both warnings of worker 0 without their rank prefix (torch 2.0's form). Each
    process prints it once; two of them on a Worker of two processes say that both were training."""
    job = sample_copy(tmp_path, "crash-training-silent")
    _unprefixed(job, 0)
    _unprefixed(job, 1)
    assert _root(job) == ("crash-during-training", 0, 1)


def test_one_unprefixed_warning_on_a_worker_of_two_places_nobody(tmp_path):
    """Synthetic: rank 1's warning removed and rank 0's unprefixed. One rank-less warning on a
    Worker of two processes may be the other process's."""
    warning = _line(SAMPLES / "crash-training-silent", "[rank1]:", FIND_UNUSED)
    job = sample_copy(tmp_path, "crash-training-silent", LOG, warning, "")
    _unprefixed(job, 0)
    assert _root(job) == ("crash-before-first-batch", 0, 1)


def test_torch_2_0_s_unprefixed_warnings_place_the_crash_in_a_real_run():
    """torch 2.0.1 prints `[W reducer.cpp:1300] Warning: ...` without a rank, twice on worker 0:
    one per process of that Worker."""
    assert _root(SAMPLES / "crash-training-silent-torch2.0") == ("crash-during-training", 0, 1)


def test_quiet_where_ddp_did_find_unused_parameters():
    """A real run with find_unused_parameters=True and an unused head: DDP prints no warning, and
    nothing in the logs is the signal's."""
    signal = load_catalogue().signals[SIGNAL]
    lines = [line for log in sorted((SAMPLES / "healthy-unused-param-found").rglob("*.log"))
             for line in log.read_text().splitlines()]
    assert any(line.startswith("step 30/30") for line in lines)
    assert [line for line in lines if signal.match(strip_prefixes(line).body) is not None] == []
