"""Where alerts go and what they hold: the webhook URL from the environment or a private config
file (never required on the command line, where every user of the machine sees it), and the POST
body as Slack, Microsoft Teams or a receiver of one's own reads it. Real samples, a local server."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES
from logscan.errors import ConfigError
from logscan.settings import WEBHOOK_VARIABLE, Settings
from logscan.sweep.alerts import payload_for, shaped
from logscan.vocabulary import WebhookPayload


@pytest.fixture
def outputs(tmp_path):
    root = tmp_path / "outputs"
    shutil.copytree(SAMPLES / "crash-mid-training-prod", root / "run-1", ignore=shutil.ignore_patterns("expected.json"))
    return root


def test_the_url_comes_from_the_environment_and_the_command_line_wins():
    assert Settings.resolve({}, env={WEBHOOK_VARIABLE: "https://hooks.example/a"}).webhook_url == "https://hooks.example/a"
    assert Settings.resolve({"webhook_url": "https://other.example/b"},
                            env={WEBHOOK_VARIABLE: "https://hooks.example/a"}).webhook_url == "https://other.example/b"
    assert Settings.resolve({}, env={}).webhook_url is None


def test_a_config_file_may_hold_the_url_only_when_no_one_else_can_read_it(tmp_path):
    config = tmp_path / "logscan.toml"
    config.write_text('webhook-url = "https://hooks.example/secret"\n')
    config.chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        Settings.resolve({}, {"webhook-url": "https://hooks.example/secret"}, config, env={})
    config.chmod(0o600)
    assert Settings.resolve({}, {"webhook-url": "https://hooks.example/secret"}, config,
                            env={}).webhook_url == "https://hooks.example/secret"
    # The environment, set by whoever runs the sweep, wins over the file.
    assert Settings.resolve({}, {"webhook-url": "https://hooks.example/secret"}, config,
                            env={WEBHOOK_VARIABLE: "https://env.example/x"}).webhook_url == "https://env.example/x"


@pytest.mark.parametrize("url, payload", [
    ("https://hooks.slack.com/services/T0/B0/x", WebhookPayload.SLACK),
    ("https://contoso.webhook.office.com/webhookb2/abc", WebhookPayload.TEAMS),
    ("https://prod-12.westeurope.logic.azure.com:443/workflows/abc/triggers/manual/paths/invoke", WebhookPayload.TEAMS),
    ("https://alerts.example.com/logscan", WebhookPayload.JSON),
    ("https://hooks.slack.com.evil.example/x", WebhookPayload.JSON),
])
def test_the_payload_follows_the_service_behind_the_url(url, payload):
    assert payload_for(url) == payload
    assert payload_for(url, WebhookPayload.JSON) == WebhookPayload.JSON


def test_a_teams_card_turns_no_log_text_into_a_link():
    card = shaped({"text": "logscan: new failure: FAILED run: [click me](https://evil.example)\n- second"},
                  WebhookPayload.TEAMS)
    blocks = card["attachments"][0]["content"]["body"]
    assert card["attachments"][0]["contentType"] == "application/vnd.microsoft.card.adaptive"
    assert "](" not in json.dumps(blocks) and [b["text"][:7] for b in blocks] == ["logscan", "- secon"]


@pytest.mark.parametrize("payload, keys", [
    ("slack", {"text"}),
    ("json", {"text", "job_id", "change", "verdict", "root_cause", "summary"}),
    ("teams", {"type", "summary", "attachments"}),
])
def test_a_sweep_posts_the_payload_asked_for_with_the_url_from_the_environment(
        run_cli, outputs, tmp_path, webhook_server, monkeypatch, payload, keys):
    url, received = webhook_server
    monkeypatch.setenv(WEBHOOK_VARIABLE, url)
    result = run_cli("sweep", outputs, "--state", tmp_path / "s.db", "--now", POST_MORTEM_NOW,
                     "--webhook-payload", payload)
    assert result.exit_code == 0, result.output
    assert len(received) == 1 and set(received[0]) == keys, received
    assert url not in result.output


def test_watch_posts_each_new_failure_as_the_sweep_does(run_cli, outputs, webhook_server, monkeypatch):
    url, received = webhook_server
    monkeypatch.setenv(WEBHOOK_VARIABLE, url)
    result = run_cli("watch", outputs / "run-1", "--interval", "0.05", "--for", "30s", "--webhook-payload", "json")
    assert result.exit_code == 1, result.output
    (alert,) = received
    assert alert["change"] == "failed" and alert["root_cause"] == "crash-during-training"
    assert alert["text"].startswith("logscan: new failure: FAILED ") and "rank 1" in alert["text"]


def test_watch_says_an_alert_it_could_not_deliver_and_exits_by_the_job(run_cli, outputs):
    result = run_cli("watch", outputs / "run-1", "--interval", "0.05", "--for", "30s",
                     "--webhook", "http://127.0.0.1:9/nothing-listens")
    assert result.exit_code == 1, result.output
    assert "1 alert(s) kept" in result.output or "not delivered" in result.output, result.output
