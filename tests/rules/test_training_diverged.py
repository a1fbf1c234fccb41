"""training-diverged: the loss stayed nan or inf, or fp16 loss scaling skipped nearly every step,
while the processes went on running.

The edge cases are SYNTHETIC lines, from the format strings of apex's scaler (`Gradient overflow.
Skipping step, loss scaler {} reducing loss scale to {}`), DeepSpeed's loss scaler (`[deepspeed]
OVERFLOW! Rank {} Skipping step. Attempted loss scale: {}, reducing to {}`) and engine (`step={},
skipped={}, lr=...`), and the samples' own progress styles (`step N/M loss X`, the HF Trainer's dict).
"""

from __future__ import annotations

import pytest

from conftest import paste_report
from rule_spec import real_sample_tests

RULE = "training-diverged"
FIRES_ON = [
    "diverged-nan-hf-prod",
    "diverged-nan-plain-prod",
]
QUIET_ON = [
    "healthy-2x2",
    "hf-trainer-healthy-prod",
    # a run that stopped on its non-finite loss: crash-during-training, cause non-finite-loss
    "crash-mid-training",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)


def _plain(losses):
    return [f"step {i}/30 loss {loss}" for i, loss in enumerate(losses, 1)]


APEX = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {}"
DEEPSPEED = ("[2023-05-01 10:00:{:02d},000] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 "
             "Skipping step. Attempted loss scale: {}, reducing to {}")
DEEPSPEED_COUNTS = ("[2021-11-26 03:07:16,494] [INFO] [logging.py:69:log_dist] [Rank 0] step={}, skipped={}, "
                    "lr=[0.001, 0.001], mom=[0.0, 0.0]")
HF = "{{'loss': {}, 'learning_rate': 0.001, 'epoch': {:.2f}}}"
# torchrun's agent once every process of its group exited 0 (elastic/agent/server/api.py)
GROUP_FINISHED = ("INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully finished. "
                  "Waiting 300 seconds for other agents to finish.\n")


@pytest.mark.parametrize("lines, said", [
    (_plain(["2.31", "2.10", "nan", "nan", "nan", "nan"]), "the loss was nan on the last 4 steps"),
    ([HF.format("6.2645", 0.02)] + [HF.format("'nan'", 0.04 * i) for i in range(2, 6)], "the loss was nan"),
    ([APEX.format(65536.0 / 2 ** i) for i in range(1, 20)], "the scale falling to 0.125"),
    ([APEX.format(s) for s in ("2.041281525984782e-202", "1.020640762992391e-202", "5.103203814961955e-203")],
     "the scale falling to 5.103203814961955e-203"),
    ([DEEPSPEED.format(i, 1, 1) for i in range(4)], "at its minimum scale of 1"),
    (["step 1999/24128 loss 0.0", DEEPSPEED_COUNTS.format(2000, 1995)], "skipped 1995 of its 2000 steps"),
], ids=["plain-nan", "hf-nan", "apex-below-1", "apex-tiny", "deepspeed-at-minimum", "deepspeed-counts"])
def test_a_run_that_stopped_learning_diverged(run_cli, tmp_path, lines, said):
    """Its run over (torchrun's agent: every process exited 0), the job failed: its training did."""
    report = paste_report(run_cli, tmp_path, "\n".join(lines) + "\n" + GROUP_FINISHED)
    assert report["verdict"] == "FAILED"
    assert report["root_cause"]["rule"] == RULE and said in report["root_cause"]["message"]


@pytest.mark.parametrize("lines", [
    _plain(["2.31", "2.10", "nan", "nan", "nan", "nan"]),
    [HF.format("6.2645", 0.02)] + [HF.format("'nan'", 0.04 * i) for i in range(2, 6)],
], ids=["plain-nan", "hf-nan"])
def test_a_run_still_going_with_its_loss_diverged_is_warned_of_not_failed(run_cli, tmp_path, lines):
    """The logs stop while the run goes on: nothing has failed yet, its training is diverging."""
    report = paste_report(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["verdict"] == "INCONCLUSIVE" and "loss diverged" in report["verdict_reason"]
    [diverged] = [f for f in report["findings"] if f["rule"] == RULE]
    assert diverged["severity"] == "warning" and "the run goes on" in diverged["message"]


@pytest.mark.parametrize("lines", [
    # a spike the run came back from
    _plain(["2.31", "nan", "nan", "nan", "1.92", "1.85"]),
    # fewer than three
    _plain(["2.31", "nan", "nan"]),
    # loss scaling finding its scale at the start of an fp16 run
    [APEX.format(s) for s in (32768.0, 16384.0, 8192.0, 4096.0)] + _plain(["2.31", "2.20"]),
    [DEEPSPEED.format(i, 2 ** (16 - i), 2 ** (15 - i)) for i in range(4)],
    # a few skipped steps of many
    [DEEPSPEED_COUNTS.format(2000, 12)],
    # a nan grad norm is a skipped fp16 step's, and an eval loss is no training loss
    [HF.format("1.0234", 0.1).replace("}", ", 'grad_norm': nan}")] * 4 + ["{'eval_loss': nan, 'epoch': 1.0}"] * 3,
], ids=["recovered", "two", "apex-warmup", "deepspeed-warmup", "deepspeed-few", "grad-norm-eval"])
def test_a_run_still_learning_did_not_diverge(run_cli, tmp_path, lines):
    report = paste_report(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert all(f["rule"] != RULE for f in report["findings"]), report["findings"]
