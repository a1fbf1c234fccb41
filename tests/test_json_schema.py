"""The JSON contract: the schema ships inside the package, and what `--format json` writes is
valid against it. Every real sample's report is validated where tests/test_golden_reports.py
makes it (`valid`, below); here, the schema itself, the command's own output, and the promises
the schema alone cannot state."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

import pytest
from jsonschema import Draft202012Validator

from conftest import SAMPLES

SCHEMA_FILE = ("schema", "diagnosis.schema.json")


@cache
def validator() -> Draft202012Validator:
    schema = json.loads(resources.files("logscan.render").joinpath(*SCHEMA_FILE).read_text("utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def valid(record: dict) -> dict:
    """`record`, once it is valid against the shipped schema (else the first error, and where)."""
    error = next(iter(sorted(validator().iter_errors(record), key=lambda e: list(e.path))), None)
    assert error is None, f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
    return record


def test_the_schema_ships_in_the_package_and_names_the_version_the_report_writes():
    from logscan.render.json_record import SCHEMA_VERSION

    assert validator().schema["properties"]["schema_version"] == {"const": SCHEMA_VERSION}


def test_the_commands_json_is_valid_and_leads_with_a_complete_root_cause(run_cli):
    result = run_cli("scan", str(SAMPLES / "collate-error"), "--format", "json")
    record = valid(json.loads(result.stdout))
    root = record["root_cause"]
    assert record["findings"][0] == root, result.stdout
    assert root["evidence"] and root["hint"] and root["fingerprint"].startswith("v3:"), root
    assert "error finding" not in record["verdict_reason"] and root["rule"] in record["verdict_reason"]


def test_a_record_that_breaks_the_contract_is_not_valid():
    from logscan.render import render
    from test_samples import diagnose

    record = json.loads(render("json", diagnose(SAMPLES / "crash-mid-training")))
    assert len(record["findings"]) > 1 and record["root_cause"]
    for broken in ({**record, "key": "x@None/None@sample_logs/a.log"},
                   {**record, "findings": record["findings"][1:] + record["findings"][:1]},
                   {**record, "root_cause": {**record["root_cause"], "fingerprint": None}}):
        assert list(validator().iter_errors(broken)), broken


def _ids_with_paths(record: dict) -> list[str]:
    ids = [f["fingerprint"] for f in record["findings"]] + [f["caused_by"] for f in record["findings"] if f["caused_by"]]
    ids += [k for w in record["workers"] for k in w["findings"]]
    return [i for i in ids if "/" in i or "None" in i]


@pytest.mark.parametrize("sample", ["platform-walltime-stall", "collate-error"])
def test_one_role_per_rank_and_the_roots_rank_is_never_a_cascade(sample):
    from logscan.render import render
    from test_samples import diagnose

    record = valid(json.loads(render("json", diagnose(SAMPLES / sample))))
    root = record["root_cause"]
    roles = {p["rank"]: p["role"] for p in record["processes"]}
    assert len(roles) == len(record["processes"])
    if root["rank"] is not None and root["rank"] in roles:
        assert roles[root["rank"]] == "root-cause", roles
    assert not _ids_with_paths(record)
