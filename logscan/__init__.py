"""Diagnose PyTorch DDP jobs launched with torchrun from their per-Worker launch logs."""

__version__ = "0.1.0"
