"""The only code that talks to language models."""

from convoscope.models._base import (
    GenerateRequest,
    Generation,
    Message,
    Model,
    ModelError,
    UsageTotals,
)

__all__ = ["GenerateRequest", "Generation", "Message", "Model", "ModelError", "UsageTotals"]
