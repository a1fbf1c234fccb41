"""The finished Diagnosis: after the root-cause pass one frozen record holds the root cause (one of
its findings), and per finding what every report shows — title, level, role, location,
fingerprint — so no renderer and no sweep works any of it out again."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from conftest import SAMPLES

# Rules that leave processes or Workers waiting, as their catalogue files say (`hang = true`).
HANGS = {"hang-in-rendezvous", "hang-before-first-batch", "collective-timeout", "stall-during-training",
         "hang-ended-from-outside"}


def test_which_rules_are_hangs_is_catalogue_data():
    from logscan.catalogue import load_catalogue

    assert {r.id for r in load_catalogue(()).rules.values() if r.hang} == HANGS


@pytest.mark.parametrize("sample", ["crash-mid-training", "platform-walltime-stall", "launch-mismatch",
                                    "healthy-2x2", "collective-mismatch"])
def test_the_record_holds_its_root_cause_and_each_findings_facts(sample):
    from test_samples import diagnose

    d = diagnose(SAMPLES / sample)
    roots = [f for f in d.findings if f.is_root]
    assert roots == ([d.root_cause] if d.root_cause else []) and (d.fails or not roots)
    for f in d.findings:
        assert re.fullmatch(r"v3:[0-9a-f]{32}", f.fingerprint) and f.location is not None
        assert f.title == f"{f.heading}: {f.message}" and f.heading.startswith(f.rule)
        assert f.hang == (f.rule in HANGS)
        if f.caused_by is not None:
            assert f.caused_by == d.root_cause.fingerprint and f.is_consequence and f.level == "note"
    assert len({f.fingerprint for f in d.findings}) == len(d.findings)
    assert all(k in {f.fingerprint for f in d.findings} for w in d.workers for k in w.findings)


@pytest.mark.parametrize("sample", ["stall-mid-training", "platform-walltime-stall", "stall-mid-training-torch2.4"])
def test_the_stragglers_rank_has_one_role_the_root_causes(sample):
    """torchrun SIGTERMed the straggler after the others timed out: its failure is a consequence
    of the stall, yet its rank's one role is the root cause's."""
    from test_samples import diagnose

    d = diagnose(SAMPLES / sample)
    straggler = next(p for p in d.processes if p.rank == d.root_cause.rank)
    assert straggler.role == "root-cause", d.processes
    assert all(p.role != "root-cause" for p in d.processes if p is not straggler)


def test_the_sweep_tells_a_hang_by_the_catalogues_word_and_keeps_quiet_on_an_older_fingerprint():
    from logscan.sweep.changes import Change, change_of, root_fingerprint
    from test_samples import diagnose

    stalled = diagnose(SAMPLES / "platform-walltime-stall")
    crashed = diagnose(SAMPLES / "crash-mid-training")
    assert stalled.root_cause.hang and not crashed.root_cause.hang
    assert change_of(None, None, stalled, alerted=False) == Change.HUNG
    assert change_of(None, None, crashed, alerted=False) == Change.FAILED
    # the same flag, not a rule-name prefix: a root that is no hang by its catalogue entry is a failure
    unhung = replace(stalled, root_cause=replace(stalled.root_cause, hang=False))
    assert change_of(None, None, unhung, alerted=False) == Change.FAILED
    assert root_fingerprint(crashed) == crashed.root_cause.fingerprint
    # a fingerprint an older logscan stored (no version) cannot match: not told again for that alone
    assert change_of("FAILED", "582b4bcd6a42fd70f93a02c91d67b69c", crashed, alerted=False) is None
    assert change_of("FAILED", "v3:" + "0" * 32, crashed, alerted=False) == Change.ROOT_CAUSE_CHANGED


def test_every_format_has_one_renderer_and_its_report_file_option():
    """A format is its module's `render`, one entry of the registry: the --FORMAT-output options
    and the settings' check follow from Format, which the registry covers exactly."""
    from logscan.cli.options import ReportFiles, report_field
    from logscan.render import RENDERERS
    from logscan.vocabulary import Format
    from dataclasses import fields

    assert list(RENDERERS) == list(Format)
    assert [f.name for f in fields(ReportFiles)] == [report_field(fmt) for fmt in Format]
