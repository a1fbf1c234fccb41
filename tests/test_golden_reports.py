"""The JSON report of every real sample, compared with the committed one in tests/golden/.

Each sample is diagnosed from sample_logs/ with its name as PATH (paths are shown as typed), so the
goldens show `healthy-2x2/worker-0/launch_ddp.log` wherever the checkout lives. A change that
alters any sample's report shows up here as a diff to review. After a deliberate
change, rewrite the files with `LOGSCAN_UPDATE_GOLDEN=1 python -m pytest tests/test_golden_reports.py`
and review `git diff tests/golden`. The same variable rewrites the other formats' goldens
(tests/test_golden_formats.py, tests/golden/formats/).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import sample_dirs

GOLDEN = Path(__file__).resolve().parent / "golden"


def _report(sample: Path) -> str:
    from logscan.render import render
    from test_json_schema import valid
    from test_samples import diagnose

    # from sample_logs/, PATH = the sample's name; the report as `--format json` writes it
    record = valid(json.loads(render("json", diagnose(sample))))
    # A Worker's last activity falls back to its file's mtime, which a fresh clone sets anew.
    for worker in record["workers"]:
        for key in ("last_activity", "last_known"):
            worker[key] = "(masked)" if worker[key] else None
    return json.dumps(record, indent=2, ensure_ascii=True) + "\n"


@pytest.mark.parametrize("sample", sample_dirs(), ids=lambda p: p.name)
def test_sample_report_is_unchanged(sample):
    golden = GOLDEN / f"{sample.name}.json"
    got = _report(sample)
    if os.environ.get("LOGSCAN_UPDATE_GOLDEN"):
        golden.write_text(got)
    assert golden.exists(), f"no golden report for {sample.name}: run with LOGSCAN_UPDATE_GOLDEN=1"
    assert got == golden.read_text(), f"{sample.name}: report changed (see module docstring)"
