"""Batch APIs (OpenAI, Anthropic) and batch files for offline runners: half the price, answers within a
day, through the same resumable run (docs/batch.md). Above ``models/`` and ``store/``: the batch
ledger lives in the verdict store, and a :class:`BatchModel` wraps a live model."""

from convoscope.batch._api import BatchService, FileBatches, batch_service
from convoscope.batch._model import (
    BATCH_DISCOUNT,
    DEFERRED,
    LIMITS,
    BatchFiles,
    BatchLimits,
    BatchModel,
    batch_limits,
    batch_model,
)
from convoscope.batch._open import open_model

__all__ = [
    "BATCH_DISCOUNT",
    "DEFERRED",
    "LIMITS",
    "BatchFiles",
    "BatchLimits",
    "BatchModel",
    "BatchService",
    "FileBatches",
    "batch_limits",
    "batch_model",
    "batch_service",
    "open_model",
]
