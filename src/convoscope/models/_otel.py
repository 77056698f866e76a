"""OpenTelemetry spans for judging runs (extra ``otel``; off unless asked for).

A run is one span, ``convoscope.run``, and every model call a child span named by the GenAI
semantic conventions (``chat smollm2``, ``text_completion smollm2``) that carries:

* what was called: ``gen_ai.operation.name``, ``gen_ai.system`` and ``gen_ai.provider.name``
  (``openai``, ``anthropic``, ``llama_cpp``, LiteLLM's provider), ``gen_ai.request.model`` (the
  model's own name, never a URL or a key), ``server.address`` / ``server.port``, token counts and
  the served model;
* which judgement it served: ``convoscope.run_id``, ``convoscope.item_id``,
  ``convoscope.criterion``, ``convoscope.task_key`` and ``convoscope.judge`` (the rater, URLs
  left out), set by the run engine through :func:`task_context`;
* whether the response cache answered it (``convoscope.cached``).

Spans go to the tracer provider given (``trace=provider``) or else the global one the
application configured; convoscope configures none and sends nothing itself.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

from convoscope.models._base import GenerateRequest, Generation, Model, ModelError

_TASK: ContextVar[dict[str, str] | None] = ContextVar("convoscope_task", default=None)
_URL = re.compile(r"@[a-z][a-z0-9+.-]*://\S*?(?=[\[#]|$)")
_TRACED = [0]  # how many TracedModels were made: none, and nothing reads what task_context sets


def tracing() -> bool:
    """Whether any model call is traced in this process (a :class:`TracedModel` exists): until
    one does, the engine does not set the task's attributes for every call (issue 39)."""
    return _TRACED[0] > 0


@contextlib.contextmanager
def task_context(**attributes: str) -> Iterator[None]:
    """Within this block, model-call spans carry these attributes as ``convoscope.<name>``
    (the engine sets run_id, item_id, criterion, task_key and judge for each task). Costs one
    context-variable write when tracing is off."""
    if "judge" in attributes:
        attributes["judge"] = without_urls(attributes["judge"])
    token = _TASK.set({f"convoscope.{key}": value for key, value in attributes.items()})
    try:
        yield
    finally:
        _TASK.reset(token)


@contextlib.contextmanager
def run_span(trace: Any, **attributes: Any) -> Iterator[Any]:
    """The parent span of a run when ``trace`` is set (True: the global tracer provider; or a
    provider); yields the span (or None) so the run id can be added once known."""
    if not trace:
        yield None
        return
    tracer = _tracer(None if trace is True else trace)
    if "judge" in attributes:
        attributes["judge"] = without_urls(str(attributes["judge"]))
    with tracer.start_as_current_span("convoscope.run") as span:
        span.set_attributes({f"convoscope.{key}": value for key, value in attributes.items()})
        yield span


def without_urls(text: str) -> str:
    """A rater without the endpoint URLs in it: ``model:openai:m@http://host/v1`` -> ``model:openai:m``."""
    return _URL.sub("", text)


def describe(model: Model) -> dict[str, Any]:
    """The GenAI attributes of a model (looking through the cache and other wrappers)."""
    backend: Any = model
    while hasattr(backend, "inner") and not hasattr(backend, "provider"):
        backend = backend.inner
    provider = str(getattr(backend, "provider", "") or backend.name.partition(":")[0])
    name = str(getattr(backend, "model", "") or backend.name.partition(":")[2].partition("@")[0])
    attributes: dict[str, Any] = {"gen_ai.system": provider, "gen_ai.provider.name": provider,
                                  "gen_ai.request.model": name.removeprefix(f"{provider}/")}
    url = getattr(backend, "base_url", None) or getattr(backend, "api_base", None)
    if url:
        parts = urlsplit(url)
        if parts.hostname:
            attributes["server.address"] = parts.hostname  # no user, password or query
            attributes["server.port"] = parts.port or (443 if parts.scheme == "https" else 80)
    return attributes


def _tracer(provider: Any) -> Any:
    try:
        from opentelemetry import trace
    except ImportError:
        raise ModelError("tracing needs OpenTelemetry: pip install 'convoscope[otel]'") from None
    return trace.get_tracer("convoscope", tracer_provider=provider)


class TracedModel:
    """Wraps a model; every ``generate`` runs inside a span (see the module docstring)."""

    def __init__(self, model: Model, *, tracer_provider: Any = None) -> None:
        from opentelemetry import trace

        self.inner = model
        self._tracer = _tracer(tracer_provider)
        _TRACED[0] += 1
        self._status, self._error = trace.Status, trace.StatusCode.ERROR
        self._described = describe(model)

    @property
    def name(self) -> str:
        return self.inner.name

    async def generate(self, request: GenerateRequest) -> Generation:
        operation = "chat" if request.messages is not None else "text_completion"
        model = self._described["gen_ai.request.model"]
        with self._tracer.start_as_current_span(f"{operation} {model}") as span:
            span.set_attributes({**self._described, **(_TASK.get() or {}), "gen_ai.operation.name": operation,
                                 "gen_ai.request.max_tokens": request.max_tokens,
                                 "gen_ai.request.temperature": request.temperature})
            try:
                generation = await self.inner.generate(request)
            except ModelError as error:
                span.set_status(self._status(self._error, str(error)[:200]))
                span.set_attribute("error.type", "ModelError")
                raise
            attributes: dict[str, Any] = {
                "gen_ai.usage.input_tokens": generation.prompt_tokens,
                "gen_ai.usage.output_tokens": generation.completion_tokens,
                "convoscope.cached": generation.cached, "convoscope.latency_s": generation.latency_s}
            if generation.served_model:
                attributes["gen_ai.response.model"] = generation.served_model
            if generation.finish_reason:
                attributes["gen_ai.response.finish_reasons"] = (generation.finish_reason,)
            if generation.cost is not None:
                attributes["convoscope.cost"] = generation.cost
            span.set_attributes(attributes)
            return generation

    async def aclose(self) -> None:
        await self.inner.aclose()
