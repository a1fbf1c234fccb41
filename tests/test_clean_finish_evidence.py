"""A run that prints no progress line is still known to have finished when torchrun's agent says
every process exited 0 (LOGLEVEL=INFO): `[default] worker group successfully finished` and
`Local worker group finished (SUCCEEDED)`.

The agent lines are built from torch's format strings (agent/server/api.py `_invoke_run` and
`_exit_barrier`, tests/torch_source/formats.toml), each with its era's logger prefix; the launch
line and banner come from the real healthy-2x2 run.
"""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES

ERAS = {
    "torch 1.13-2.0": ("INFO:torch.distributed.elastic.agent.server.api:", "SUCCEEDED"),
    "torch 2.5+": ("I1129 18:48:38.105000 {pid} torch/distributed/elastic/agent/server/api.py:931] ",
                   "WorkerState.SUCCEEDED"),
}


def worker_log(node: int, prefix: str, state: str, finished: bool = True) -> str:
    real = (SAMPLES / "healthy-2x2" / f"worker-{node}" / "launch_ddp.log").read_text().splitlines()
    head = [line for line in real if "DDP launch:" in line or "OMP_NUM_THREADS" in line][:2]
    prefix = prefix.format(pid=4715 + node)
    agent = [f"{prefix}[default] Starting worker group"]
    if finished:
        agent += [f"{prefix}[default] worker group successfully finished. Waiting 300 seconds for other "
                  f"agents to finish.",
                  f"{prefix}Local worker group finished ({state}). Waiting 300 seconds for other agents "
                  f"to finish"]
    return "\n".join(head + agent) + "\n"


def scan(run_cli, job):
    return json.loads(run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW).stdout)


@pytest.mark.parametrize("era", sorted(ERAS))
def test_the_agents_word_that_every_process_exited_0_is_a_finish(run_cli, tmp_path, era):
    prefix, state = ERAS[era]
    for node in (0, 1):
        (tmp_path / f"worker-{node}").mkdir()
        (tmp_path / f"worker-{node}" / "launch_ddp.log").write_text(worker_log(node, prefix, state))
    (tmp_path / "job_status").write_text("succeeded\n")
    report = scan(run_cli, tmp_path)
    assert report["verdict"] == "HEALTHY", report["verdict_reason"]
    assert "exited 0" in report["verdict_reason"] and report["findings"] == []


def test_one_worker_without_that_word_is_not_a_finish(run_cli, tmp_path):
    prefix, state = ERAS["torch 2.5+"]
    for node in (0, 1):
        (tmp_path / f"worker-{node}").mkdir()
        (tmp_path / f"worker-{node}" / "launch_ddp.log").write_text(
            worker_log(node, prefix, state, finished=node == 0))
    assert scan(run_cli, tmp_path)["verdict"] != "HEALTHY"


# A framework's own word that its loop ended, followed by its teardown (a last bar, the metrics
# dict): synthetic lines from Lightning's fit_loop.py and transformers' trainer.py format strings.
FRAMEWORK_ENDS = {
    "Lightning max_epochs": ["Epoch 2: 100%|##########| 50/50 [00:09<00:00,  5.21it/s, loss=0.31, v_num=7]",
                             "`Trainer.fit` stopped: `max_epochs=3` reached.",
                             "Epoch 2: 100%|##########| 50/50 [00:09<00:00,  5.20it/s, loss=0.31, v_num=7]"],
    "Lightning max_steps": ["INFO:lightning.pytorch.utilities.rank_zero:`Trainer.fit` stopped: `max_steps=900` reached.",
                            "wandb: Waiting for W&B process to finish... (success)."],
    "HF Trainer": ["{'loss': 0.4123, 'learning_rate': 1e-06, 'epoch': 2.99}",
                   "[INFO|trainer.py:2406] 2026-11-29 18:52:10,114 >> ",
                   "",
                   "Training completed. Do not forget to share your model on huggingface.co/models =)",
                   "",
                   "{'train_runtime': 812.4, 'train_samples_per_second': 44.1, 'train_loss': 0.52, 'epoch': 3.0}"],
}


@pytest.mark.parametrize("era", sorted(FRAMEWORK_ENDS))
def test_a_framework_s_end_of_training_followed_by_teardown_is_a_finished_run(run_cli, tmp_path, era):
    (tmp_path / "paste.log").write_text("\n".join(FRAMEWORK_ENDS[era]) + "\n")
    report = scan(run_cli, tmp_path / "paste.log")
    assert report["verdict"] == "HEALTHY", report["verdict_reason"]
    assert report["findings"] == []
