"""The ids of the lint rules, as the code names them; each is a `kind = "lint"` file in rules/
(rules/lint-<id>.toml), and a test checks that the two agree."""

from __future__ import annotations

WORLD_SIZE_MISUSED = "lint-world-size-misused"
ARG_NOT_FROM_PLATFORM = "lint-torchrun-arg-not-from-platform"
PLATFORM_VAR_UNGUARDED = "lint-platform-var-unguarded"
MISSING_STRICT_MODE = "lint-missing-strict-mode"
EXIT_STATUS_MASKED = "lint-exit-status-masked"
NPROC_EXCEEDS_GPUS = "lint-nproc-exceeds-gpus"
GPU_COUNT_NOT_FROM_NODE = "lint-gpu-count-not-from-node"
LOCAL_RANK_ARGPARSE = "lint-local-rank-argparse"
