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


DESTROY_WARNING = ("[rank0]:[W616 21:29:33.762196891 ProcessGroupNCCL.cpp:1496] Warning: WARNING: "
                   "destroy_process_group() was not called before program exit, which can leak resources. "
                   "For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown "
                   "(function operator())")


def _paste(run_cli, tmp_path, lines: list[str]) -> dict:
    (tmp_path / "paste.log").write_text("\n".join(lines) + "\n")
    return json.loads(run_cli("scan", tmp_path / "paste.log", "--isolated", "--format", "json",
                              "--now", POST_MORTEM_NOW).stdout)


@pytest.mark.parametrize("end", [
    "06-16 21:29:32 [TRAIN] [Rank 0] [INFO] [train.py:535] Training finished, exiting ...",
    "2026-12-01 10:00:00,000 INFO trainer: training complete",
])
def test_a_scripts_end_of_run_line_before_its_teardown_lines_is_a_finish(run_cli, tmp_path, end):
    """The script's end line, then its memory summary and the interpreter's exit warning (torch
    2.4+'s format string in ProcessGroupNCCL.cpp's destructor, under the `[rank0]:` prefix): the run
    ended; the warning's rank prefix shows a process of a distributed world (synthetic lines)."""
    report = _paste(run_cli, tmp_path, ["start training on 1 rank(s)", end, "Max memory: 12.08 GB",
                                        DESTROY_WARNING])
    assert report["verdict"] == "HEALTHY", report["verdict_reason"]


@pytest.mark.parametrize("after", [
    # an error after the end line
    ["Traceback (most recent call last):", '  File "train.py", line 9, in <module>',
     "RuntimeError: checkpoint upload failed"],
    # more lines than teardown
    [f"evaluating shard {i}" for i in range(8)],
    # more of the run
    ["step 31/30 loss 0.2"],
])
def test_an_end_of_run_line_followed_by_more_than_teardown_is_no_finish(run_cli, tmp_path, after):
    report = _paste(run_cli, tmp_path, ["start training", "Training finished, exiting ...", *after, DESTROY_WARNING])
    assert report["verdict"] != "HEALTHY", report["verdict_reason"]


@pytest.mark.parametrize("bars", [
    # Lightning's sanity check (its evaluation loops' bars: `Sanity Checking DataLoader 0`, `Validation`, ...)
    ["Sanity Checking DataLoader 0:  50%|#####     | 1/2 [00:00<00:00,  1.39it/s]",
     "Sanity Checking DataLoader 0: 100%|##########| 2/2 [00:00<00:00,  2.76it/s]",
     "Epoch 0:   0%|          | 1/62733 [00:00<2:37:08,  6.65it/s]"],
    ["Epoch 3: 100%|##########| 40/40 [00:10<00:00,  3.9it/s, loss=0.31]",
     "Validation DataLoader 0: 100%|##########| 8/8 [00:01<00:00,  6.2it/s]"],
    # a lone bar state at its total, no redraw of it in view (an unnamed data-preparation tqdm)
    ["100%|##########| 28/28 [00:03<00:00,  8.1it/s]", "INFO     Loaded AE: <All keys matched successfully>"],
    # ultralytics' validation after epoch 2 of 10 (its metrics' header as the bar's description;
    # YOLOv5's says `Labels` and `mAP@.5`)
    ["      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size",
     "       2/10      4.35G      1.394      4.212       1.26         28        640: 100%|##########| 28/28 [00:17<00:00,  1.63it/s]",
     "                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): 100%|##########| 4/4 [00:03<00:00,  1.13it/s]",
     "                   all        223        241    0.00193      0.536     0.0725     0.0396"],
    ["     2/299     3.12G   0.04436   0.06284   0.02086        93       640: 100%|##########| 74/74 [00:21<00:00,  3.43it/s]",
     "               Class     Images     Labels          P          R     mAP@.5 mAP@.5:.95: 100%|##########| 8/8 [00:01<00:00,  5.26it/s]"],
    # mmcv's ProgressBar of an evaluation
    ["2026-12-01 10:00:00,000 - mmdet - INFO - Epoch [2][50/50]\tlr: 2.000e-02, loss: 0.9123",
     "[>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>] 500/500, 25.0 task/s, elapsed: 20s, ETA:     0s"],
    # YOLOX's unnamed evaluation bar after an epoch (yolox/core/trainer.py after_iter's `epoch: {}/{},
    # iter: {}/{}, ...`; the COCO evaluator's tqdm over the test set, then its own lines)
    ["2026-12-01 10:00:00 | INFO     | yolox.core.trainer:252 - epoch: 5/80, iter: 7300/7311, mem: 20417Mb, "
     "iter_time: 0.311s, total_loss: 4.855",
     "2026-12-01 10:00:05 | INFO     | yolox.core.trainer:318 - Save weights to ./YOLOX_outputs/yolox_x",
     "100%|##########| 4440/4440 [41:34<00:00,  1.78it/s]",
     "2026-12-01 10:41:40 | INFO     | yolox.evaluators.coco_evaluator:172 - Evaluate in main process..."],
    # TRL's SFTTrainer preparing its dataset (its maps' descriptions; the datasets library's unit ` examples`)
    ["Converting train dataset to ChatML: 100%|##########| 32/32 [00:00<00:00, 7169.37 examples/s]",
     "Adding EOS to train dataset: 100%|##########| 32/32 [00:00<00:00, 8160.12 examples/s]",
     "Tokenizing train dataset: 100%|##########| 32/32 [00:00<00:00, 1023.55 examples/s]",
     "Truncating train dataset: 100%|##########| 32/32 [00:00<00:00, 9521.60 examples/s]"],
    ["100%|##########| 81/81 [00:04<00:00, 17.2 examples/s]"],
    # an iteration at its epoch's end (mmcv's and mmengine's iteration logs, Swin's, the ImageNet example's)
    ["2026-12-01 10:00:00,000 - mmdet - INFO - Epoch [2][50/50]\tlr: 2.000e-02, loss: 0.9123"],
    ["[2022-05-01 10:00:00 swin_tiny] (main.py 229): INFO Train: [3/300][5004/5004]\teta 0:00:00 lr 0.000081"],
    ["Epoch: [3][5005/5005]\tTime  0.412 ( 0.398)\tLoss 2.1e+00 (2.2e+00)"],
    ["12/01 10:00:00 - mmengine - INFO - Epoch(train)  [2][100/100]  lr: 2.0000e-02  loss: 0.9123"],
], ids=["lightning-sanity", "lightning-validation", "unnamed", "ultralytics-val", "yolov5-val", "mmcv-eval",
        "yolox-eval-after-iterations", "trl-dataset-maps", "datasets-unit", "mmcv-epoch-end", "swin-epoch-end",
        "imagenet-example-epoch-end", "mmengine-epoch-end"])
def test_a_bar_at_its_total_that_is_not_the_runs_is_no_finish(run_cli, tmp_path, bars):
    """tqdm's format_meter lines, with Lightning's bar descriptions (synthetic)."""
    report = _paste(run_cli, tmp_path, bars)
    assert report["verdict"] != "HEALTHY", report["verdict_reason"]


def test_a_training_bar_redrawn_to_its_total_is_a_finish(run_cli, tmp_path):
    redraws = "\r".join(f"{p}%|{'#' * (p // 10):10}| {p * 3}/300 [00:{p // 4:02d}<00:10,  9.1it/s]"
                        for p in (10, 50, 100))
    report = _paste(run_cli, tmp_path, [redraws])
    assert report["verdict"] == "HEALTHY", report["verdict_reason"]


HF_TRAINING_DONE = ["100%|##########| 4/4 [00:02<00:00,  1.95it/s][INFO|trainer.py:1341] 2021-05-20 20:16:41,214 >> ",
                    "{'train_runtime': 2.185, 'train_samples_per_second': 1.831, 'epoch': 1.0}",
                    "Training completed. Do not forget to share your model on huggingface.co/models =)"]


@pytest.mark.parametrize("after", [
    # the Trainer's evaluate() (`***** Running Evaluation *****`) after its example script's `*** Evaluate ***`
    ["INFO:__main__:*** Evaluate ***",
     "[INFO|trainer.py:2115] 2021-05-20 20:16:41,690 >> ***** Running Evaluation *****",
     "[INFO|trainer.py:2117] 2021-05-20 20:16:41,690 >>   Num examples = 200"],
    # its predict()
    ["[INFO|trainer.py:2115] 2021-05-20 20:16:41,690 >> ***** Running Prediction *****",
     "[INFO|trainer.py:2117] 2021-05-20 20:16:41,690 >>   Num examples = 200"],
    # detectron2's inference_on_dataset
    ["[05/20 20:16:42 d2.evaluation.evaluator]: Start inference on 125 batches"],
])
def test_training_ended_then_more_of_the_run_begun_is_no_finish(run_cli, tmp_path, after):
    """Training's end, then evaluation or prediction beginning and the log stopping: the process
    had not ended (synthetic lines from trainer.py's and detectron2's evaluator.py's format strings)."""
    report = _paste(run_cli, tmp_path, [*HF_TRAINING_DONE, "", *after])
    assert report["verdict"] != "HEALTHY", report["verdict_reason"]


def test_ultralytics_word_that_its_epochs_completed_then_its_final_validation_cut_is_no_finish(run_cli, tmp_path):
    """`{n} epochs completed in {h:.3f} hours.` (ultralytics' and YOLOv5's trainers) ends training; the
    validation of best.pt that follows, cut, is more of the run (synthetic lines)."""
    done = ["     10/10      4.35G      1.101      1.912       1.16         28        640: 100%|##########| 28/28 "
            "[00:17<00:00,  1.63it/s]", "", "10 epochs completed in 0.006 hours."]
    assert _paste(run_cli, tmp_path, done)["verdict"] == "HEALTHY"
    validating = done + ["Validating runs/detect/train/weights/best.pt...",
                         "                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): "
                         "100%|##########| 8/8 [00:02<00:00,  3.27it/s]"]
    assert _paste(run_cli, tmp_path, validating)["verdict"] != "HEALTHY"


def test_training_ended_then_evaluation_that_ended_is_a_finish(run_cli, tmp_path):
    """The Trainer's log_metrics header (`***** eval metrics *****`) ends the evaluation it began."""
    report = _paste(run_cli, tmp_path, [
        *HF_TRAINING_DONE, "[INFO|trainer.py:2115] 2021-05-20 20:16:41,690 >> ***** Running Evaluation *****",
        "***** eval metrics *****", "  epoch                   =        1.0", "  eval_loss               =     0.6921"])
    assert report["verdict"] == "HEALTHY", report["verdict_reason"]
