"""Progress lines in the dress frameworks print them: torchtitan colours every field of its
metrics line (torchtitan/components/metrics.py, MetricsProcessor.log: `{color.red}step: {step}
{color.green}loss: {loss:7.4f} ...`, colours on by default). The lines here are built from that
format; the block search finds the edge lines in C whatever the block holds."""

from __future__ import annotations

import pytest

from logscan.scan.finders import ProgressFinder

PREFIX = "[rank0]:[titan] 2026-11-29 19:27:44,948 - root - INFO - "


@pytest.mark.parametrize("line", [
    PREFIX + "\x1b[31mstep: 12779  \x1b[32mloss:  3.37839  \x1b[38;2;180;60;0mgrad_norm:  0.2007\x1b[39m",
    PREFIX + "\x1b[32mloss:  3.10318  \x1b[34mtps: 6,217\x1b[39m",
])
def test_a_coloured_field_is_progress(line):
    assert ProgressFinder().is_progress_line(line.encode())


def test_the_edges_of_a_block_whose_ends_are_not_progress():
    noise = [f"{PREFIX}dataloader worker {i} fetched shard (warning: slow)".encode() for i in range(50)]
    steps = [(PREFIX + f"\x1b[31mstep: {i}  \x1b[32mloss:  3.1\x1b[39m").encode() for i in (7, 8, 9)]
    error = b"RuntimeError: step 10 failed"
    block = b"\n".join(noise + steps[:1] + noise + steps[1:] + [error] + noise) + b"\n"
    finder = ProgressFinder()
    first, last = finder.first(block), finder.last(block)
    assert block[first:].startswith(steps[0]) and block[last:].startswith(steps[2])


@pytest.mark.parametrize("line", [
    # slurmstepd's cancel line (src/slurmd/slurmstepd/req.c and step_terminate_monitor):
    # `*** STEP %u.%u ON %s CANCELLED AT %s ***`, with and without its `error:` label and reason
    "slurmstepd: error: *** STEP 494583.0 ON gpu-node-3 CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***",
    "slurmstepd-gpu-node-3: error: *** STEP 12.1 ON gpu-node-3 CANCELLED AT 2024-04-20T09:09:37 ***",
    # srun's own reports name job steps
    "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
    "srun: error: gpu-node-3: task 3: Exited with exit code 1 at step 12",
])
def test_slurms_job_steps_are_not_training_steps(line):
    """Synthetic lines from Slurm's format strings: a job step's id is no training step."""
    assert not ProgressFinder().is_progress_line(line.encode())


def test_a_training_step_line_is_still_progress():
    assert ProgressFinder().is_progress_line(b"step 12/100 loss 0.52")


@pytest.mark.parametrize("line, progress", [
    # DeepSpeed's wall_clock_breakdown after each optimizer step (engine.py's timer names: `forward_microstep`,
    # `fwd_microstep` from 0.9; the timers' `time (ms) | name: ms | ...` line)
    ("[2023-06-03 00:10:23,345] [INFO] [logging.py:96:log_dist] [Rank 0] rank=0 time (ms) | forward_microstep: "
     "1330.05 | backward_microstep: 4766.88 | step_microstep: 0.05", True),
    ("[2024-09-01 10:00:00,000] [INFO] [logging.py:128:log_dist] [Rank 0] time (ms) | fwd_microstep: 88.41 | "
     "bwd_microstep: 201.07 | step_microstep: 12.30", True),
    # its optimizer's start-up timing is no step
    ("[2024-09-01 09:59:00,000] [INFO] [utils.py:781:see_memory_usage] After initializing optimizer states", False),
])
def test_deepspeeds_step_timers_are_progress(line, progress):
    assert ProgressFinder().is_progress_line(line.encode()) is progress


@pytest.mark.parametrize("line, progress", [
    # mmengine's CheckpointHook (mmengine/hooks/checkpoint_hook.py: after_train_epoch's
    # `Saving checkpoint at {runner.epoch + 1} epochs`, after_train_iter's `... {runner.iter + 1} iterations`)
    ("11/19 23:23:52 - mmengine - INFO - Saving checkpoint at 486 epochs", True),
    ("2024/03/01 10:00:00 - mmengine - INFO - Saving checkpoint at 2000 iterations", True),
    # the Hugging Face Trainer's _save_checkpoint: `Saving model checkpoint to {output_dir}`, output_dir
    # ending in `checkpoint-{global_step}`; its final save_model names no step
    ("[INFO|trainer.py:3210] 2024-05-02 11:02:03,456 >> Saving model checkpoint to out/checkpoint-500", True),
    ("[INFO|trainer.py:3210] 2024-05-02 12:02:03,456 >> Saving model checkpoint to out", False),
    # fairseq's checkpoint_utils.save_checkpoint, lower case before 0.10
    ("2021-03-04 05:06:07 | INFO | fairseq.checkpoint_utils | Saved checkpoint checkpoints/checkpoint1.pt "
     "(epoch 1 @ 1200 updates, score 5.1) (writing took 3.2 seconds)", True),
    ("| saved checkpoint checkpoints/checkpoint_1_1000.pt (epoch 1 @ 1000 updates) (writing took 1.0 seconds)",
     True),
    # torchtune's checkpointer at an epoch's end (torchtune/training/checkpointing/_checkpointer.py)
    ("Model checkpoint of size 4.66 GiB saved to /mnt/out/epoch_0/ft-model-00003-of-00030.safetensors", True),
    # torchvision's references' MetricLogger.log_every header (and DeiT's, MAE's: the same utils.py)
    ("[01:34:12.610327] Epoch: [0]  [10/1504]  lr: 0.000000  closs: 1.5367 (1.5368)  time: 5.0133  data: 0.1277",
     True),
    ("Epoch: [3]  [   0/5005]  eta: 2:01:03  lr: 0.1  img/s: 512.3  acc1: 0.0000 (0.0000)", True),
    ("Test:  [ 0/79]  eta: 0:00:30  acc1: 78.1 (78.1)", False),
    # pytorch/examples' ImageNet ProgressMeter (`Epoch: [{}]` + `[{:4d}/{}]`) and Swin Transformer's main.py
    ("Epoch: [19][ 300/7922]\tTime  0.412 ( 0.398)\tData  0.001 ( 0.003)\tLoss 2.1e+00 (2.2e+00)", True),
    ("[2022-05-01 10:00:00 swin_tiny_patch4_window7_224] (main.py 229): INFO Train: [0/300][4050/5004]\t"
     "eta 0:08:41 lr 0.000081\ttime 0.5416 (0.5463)\tloss 3.2572 (3.3279)\tgrad_norm 1.0323 (nan)", True),
    ("[2022-05-01 10:00:00 swin_tiny_patch4_window7_224] (main.py 280): INFO Test: [0/98]\tTime 2.101 (2.101)", False),
    # torchtune's checkpointer in earlier releases (`hf_model_{part}_{epoch}.pt`, sizes in GB)
    ("Model checkpoint of size 4.60 GB saved to /tmp/Llama-3.2-90B-Vision-Instruct/hf_model_0001_0.pt", True),
    # a checkpoint loaded is getting ready, not a step taken
    ("11/19 08:00:00 - mmengine - INFO - Load checkpoint from work_dirs/epoch_485.pth", False),
    ("loaded checkpoint checkpoints/checkpoint_last.pt (epoch 3 @ 4000 updates)", False),
])
def test_a_checkpoint_saved_after_steps_is_progress(line, progress):
    """Synthetic lines from each framework's format string (named beside each)."""
    assert ProgressFinder().is_progress_line(line.encode()) is progress


def test_a_checkpoint_save_is_found_in_a_block():
    block = b"noise line\n" * 20 + b"11/19 23:23:52 - mmengine - INFO - Saving checkpoint at 486 epochs\n" \
        + b"[rank4]: Traceback (most recent call last):\n"
    finder = ProgressFinder()
    assert finder.first(block) == finder.last(block) == 20 * len(b"noise line\n")


@pytest.mark.parametrize("line", [
    # an inference engine capturing its CUDA graphs before an RL rollout (tqdm bars with these descriptions):
    # SGLang's cuda_graph_runner, vLLM's model runner
    "Capturing batches (avail_mem=5.42 GB):   4%|| | 1/23 [00:00<00:12,  1.81it/s]",
    "Capturing CUDA graph shapes:  43%|████▎     | 29/67 [00:12<00:16,  2.30it/s]",
])
def test_an_engine_capturing_its_cuda_graphs_is_getting_ready(line):
    """Synthetic bar states in tqdm's format with each engine's description."""
    assert not ProgressFinder().is_progress_line(line.encode())


@pytest.mark.parametrize("line", [
    # torch.hub.download_url_to_file's bar (tqdm, unit="B", unit_scale=True), behind Ray's dedup note
    " 71%|███████▏  | 69.9M/97.8M [00:00<00:00, 256MB/s] [repeated 9x across cluster]",
    # huggingface_hub's file bar (unit="B", unit_scale=True, unit_divisor=1024), its description the file
    "model-00001-of-00004.safetensors:  45%|████▌     | 2.24G/4.98G [00:10<00:12, 218MB/s]",
    # the rate not known yet
    "pytorch_model.bin:   3%|▎         | 10.5M/338M [00:00<00:05, ?B/s]",
    # a scaled rate below a kilobyte and one in kilobytes
    "config.json: 100%|██████████| 1.42k/1.42k [00:00<00:00, 1.04kB/s]",
    "vocab.txt:  50%|█████     | 116k/232k [00:01<00:01, 98.0 kB/s]",
])
def test_a_bar_counting_bytes_is_a_transfer_not_training(line):
    """Synthetic bar states in tqdm's format_meter layout (`[{elapsed}<{remaining}, {rate_fmt}]`)
    with the byte unit the downloaders give it, their descriptions naming no download."""
    assert not ProgressFinder().is_progress_line(line.encode())


@pytest.mark.parametrize("line", [
    "Epoch 3:  45%|████▌     | 450/1000 [05:28<06:41,  1.37it/s, v_num=12, train_loss=2.310]",
    " 12%|█▏        | 120/1000 [01:02<07:40,  1.91s/it]",
])
def test_a_bar_counting_batches_is_still_progress(line):
    assert ProgressFinder().is_progress_line(line.encode())


@pytest.mark.parametrize("line, progress", [
    # Lightning resuming from a ModelCheckpoint file (default name `{epoch}-{step}`, metric names
    # inserted: `epoch=5119-step=2700280.ckpt`; a monitored metric after it)
    ("Restoring states from the checkpoint path at /ckpt/epoch=5119-step=2700280.ckpt", False),
    ("Loading model from /runs/7/epoch=3-step=1000-val_loss=0.50.ckpt", False),
    # ModelCheckpoint telling of a save after training steps names the step on its own too
    ("Epoch 0, global step 100: 'val_loss' reached 0.52000 (best 0.52000), saving model to "
     "'/ckpt/epoch=0-step=100.ckpt' as top 1", True),
    # a step told as a field, dashes before it or not
    ("train-step 100 loss 2.3", True),
    ("step=100 loss=2.3", True),
])
def test_a_checkpoint_file_name_is_no_step_taken(line, progress):
    """Synthetic lines: Lightning's ModelCheckpoint file names (callbacks/model_checkpoint.py,
    format_checkpoint_name with auto_insert_metric_name) and its `Epoch {e}, global step {s}:`
    save message; Trainer's `Restoring states from the checkpoint path at {path}`."""
    assert ProgressFinder().is_progress_line(line.encode()) is progress


@pytest.mark.parametrize("line", [
    # TRL's SFTTrainer._prepare_dataset map descriptions, and the Hugging Face examples' (run_clm.py)
    "Converting train dataset to ChatML: 100%|██████████| 32/32 [00:00<00:00, 7169.37 examples/s]",
    "Packing train dataset:  50%|█████     | 16/32 [00:00<00:00, 160.00 examples/s]",
    "Grouping texts in chunks of 1024:  40%|████      | 4/10 [00:01<00:02,  2.90ba/s]",
    # the datasets library's own unit, whatever the description (` examples`; ` ba` before 2.0)
    " 12%|█▏        | 10/81 [00:00<00:04, 17.20 examples/s]",
    " 12%|█▏        | 10/81 [00:04<00:30,  2.35s/ examples]",
    "> Running it:   1%|          | 1/81 [00:04<06:15,  4.70 ba/s]",
])
def test_a_bar_preparing_a_dataset_is_no_training(line):
    """Synthetic bar states in tqdm's format_meter layout with TRL's and the examples' map
    descriptions (trl/trainer/sft_trainer.py, transformers/examples/pytorch/language-modeling/run_clm.py)
    and the datasets library's units (arrow_dataset.py: `unit=" examples"`)."""
    assert not ProgressFinder().is_progress_line(line.encode())


@pytest.mark.parametrize("line", [
    "2022-05-22 03:38:53,957 - mmcv - INFO - Reducer buckets have been rebuilt in this iteration.",
    "INFO:torch.nn.parallel.distributed:Reducer buckets have been rebuilt in this iteration.",
    "[1,mpirank:3,algo-1]<stderr>:INFO:root:Reducer buckets have been rebuilt in this iteration.",
])
def test_ddp_rebuilding_its_buckets_is_a_step_taken(line):
    """Synthetic lines from DDP's forward (nn/parallel/distributed.py: `logger.info("Reducer buckets
    have been rebuilt in this iteration.")`, once, at the second training iteration) and mmcv's
    wrapper (print_log, logger 'mmcv'): the first iteration's backward, and its all-reduce, ran."""
    assert ProgressFinder().is_progress_line(line.encode())


@pytest.mark.parametrize("line, progress", [
    # Google Cloud Build's tag before each line of a build step's output (`Step #%d: `, with the
    # step's id when it has one: `Step #%d - "%s": `)
    ('Step #4: code: 3', False),
    ('Step #0 - "train": message: "The replica workerpool1-1 exited with a non-zero status of 1."', False),
    ('Step #4: step 120/500 loss=2.31', True),
    ("optimizer step #12 took 0.8s", True),
])
def test_a_build_steps_tag_is_no_training_step(line, progress):
    """Synthetic lines in Cloud Build's step-tag format."""
    assert ProgressFinder().is_progress_line(line.encode()) is progress


@pytest.mark.parametrize("line, progress", [
    ("  0%|                                                      | 5/13945 [05:55<253:35:40, 65.49s/it]", True),
    ("  0%|          | 0/13945 [00:00<?, ?it/s]", False),
    ("Map:   0%|          | 12/5000 [00:00<00:40, 120.0 examples/s]", False),
])
def test_a_bar_at_zero_percent_with_steps_counted_is_progress(line, progress):
    """Synthetic tqdm states: 5 of 13945 rounds to 0% and still counts 5 steps taken."""
    assert ProgressFinder().is_progress_line(line.encode()) is progress


@pytest.mark.parametrize("line, progress", [
    # fairseq's simple log format at an epoch's end (progress_bar.py, `' | '.join(key + ' ' + value)`)
    ("2021-03-01 10:00:00 | INFO | train | epoch 001 | loss 9.123 | ppl 557.2 | wps 12345 | ups 3.3 | "
     "wpb 3456 | num_updates 100 | lr 1e-05", True),
    # pytorch/examples' word_language_model (`'| epoch {:3d} | {:5d}/{:5d} batches | ... | loss {:5.2f} | ppl'`)
    ("| epoch   1 |   200/ 2983 batches | lr 5.00 | ms/batch 45.06 | loss  5.45 | ppl   232.39", True),
    ("| epoch   3 |   400/ 2983 batches | lr 5.00 | ms/batch 45.06 | loss   nan | ppl      nan", True),
    # a table of settings that names a loss function, and a pipe before prose
    ("| loss | cross_entropy |", False),
    ("| loss scaling is dynamic", False),
])
def test_a_loss_among_fields_a_pipe_parts_is_progress(line, progress):
    """Synthetic lines from those format strings."""
    assert ProgressFinder().is_progress_line(line.encode()) is progress


@pytest.mark.parametrize("line, progress", [
    # WeNet's executor (`TRAIN Batch {}/{} loss {:.6f} loss_att ... lr {:.8f} rank {}`)
    ("2022-03-23 23:57:28,855 DEBUG TRAIN Batch 0/185100 loss 4.577072 loss_att 4.222489 lr 0.00065741 rank 0", True),
    # lit-gpt's finetune loop (`iter {} step {}: loss {:.4f}, iter time: ...`)
    ("iter 16 step 1: loss nan, train time: 1405.01ms", True),
    # Swin Transformer's checkpoint save after an epoch (`{save_path} saved !!!`)
    ("[2024-07-27 03:34:14 swin_tiny] (utils.py 101): INFO output/ckpt_epoch_29.pth saved !!!", True),
    ("[2024-07-27 03:34:14 swin_tiny] (utils.py 99): INFO output/ckpt_epoch_29.pth saving......", False),
    # an evaluation loop's meters (pytorch/examples' ImageNet ProgressMeter, `Test: `)
    ("Test: [ 0/49]   Time  5.806 ( 5.806)    Loss 9.5338e-01 (9.5338e-01)    Acc@1  75.10 ( 75.10)", False),
    # a loss function's name and an integer setting are no loss logged
    ("criterion: label smoothing loss 0", False),
    ("using loss weights 1 1 2", False),
])
def test_a_loss_field_and_an_epochs_saved_checkpoint_are_progress(line, progress):
    """Synthetic lines from those format strings."""
    assert ProgressFinder().is_progress_line(line.encode()) is progress


@pytest.mark.parametrize("line, progress", [
    # detectron2's CommonMetricPrinter before any step (`lr: N/A`), as its hooks write it when training
    # raised at once, and after steps
    ("[02/16 08:16:42 d2.utils.events]:  iter: 0    lr: N/A  max_mem: 2371M", False),
    ("[02/16 08:17:42 d2.utils.events]:  eta: 0:10:00  iter: 19  total_loss: 2.345  time: 0.5  lr: 0.00039962  max_mem: 2371M",
     True),
])
def test_a_metrics_line_of_a_loop_that_never_stepped_is_no_progress(line, progress):
    """Synthetic lines in detectron2's CommonMetricPrinter format."""
    assert ProgressFinder().is_progress_line(line.encode()) is progress
