"""The only code that talks to language models: one async interface, several backends."""

from convoscope.models._base import (
    EndpointUnreachable,
    GenerateRequest,
    Generation,
    Message,
    Model,
    ModelError,
    UsageTotals,
)
from convoscope.models._cache import CachedModel, ResponseCache, cache_key
from convoscope.models._capabilities import Capabilities, CapabilityProbe, capability_notes, route_notes
from convoscope.models._embedded import (
    DEFAULT_EMBEDDED,
    EMBEDDED_MODELS,
    INSTALL_HINT,
    EmbeddedModel,
    embedded_model_path,
)
from convoscope.models._openai import OpenAIModel
from convoscope.models._otel import run_span, task_context
from convoscope.models._registry import endpoint_options, model_from_spec, open_model, register_backend

__all__ = [
    "DEFAULT_EMBEDDED",
    "EMBEDDED_MODELS",
    "CachedModel",
    "Capabilities",
    "CapabilityProbe",
    "EmbeddedModel",
    "EndpointUnreachable",
    "INSTALL_HINT",
    "GenerateRequest",
    "Generation",
    "Message",
    "Model",
    "ModelError",
    "OpenAIModel",
    "ResponseCache",
    "UsageTotals",
    "cache_key",
    "capability_notes",
    "route_notes",
    "embedded_model_path",
    "endpoint_options",
    "model_from_spec",
    "open_model",
    "register_backend",
    "run_span",
    "task_context",
]
