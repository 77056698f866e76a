"""OpenTelemetry spans around model calls (extra ``otel``; off unless asked for).

Each call is one span, ``convoscope.generate``, with the GenAI semantic-convention attributes
(model, token counts) plus whether the response cache answered it. Spans go to whatever tracer
provider the application configured; convoscope configures none and sends nothing itself.
"""

from __future__ import annotations

from typing import Any

from convoscope.models._base import GenerateRequest, Generation, Model, ModelError


class TracedModel:
    """Wraps a model; every ``generate`` runs inside a span."""

    def __init__(self, model: Model, *, tracer_provider: Any = None) -> None:
        try:
            from opentelemetry import trace
        except ImportError:
            raise ModelError("tracing needs OpenTelemetry: pip install 'convoscope[otel]'") from None
        self.inner = model
        # The global provider unless one is given (an application may keep its own).
        self._tracer = trace.get_tracer("convoscope", tracer_provider=tracer_provider)
        self._status = trace.Status
        self._error = trace.StatusCode.ERROR

    @property
    def name(self) -> str:
        return self.inner.name

    async def generate(self, request: GenerateRequest) -> Generation:
        with self._tracer.start_as_current_span("convoscope.generate") as span:
            span.set_attribute("gen_ai.request.model", self.name)
            span.set_attribute("gen_ai.request.max_tokens", request.max_tokens)
            span.set_attribute("gen_ai.request.temperature", request.temperature)
            span.set_attribute("convoscope.mode", "chat" if request.messages is not None else "completion")
            try:
                generation = await self.inner.generate(request)
            except ModelError as error:
                span.set_status(self._status(self._error, str(error)[:200]))
                raise
            attributes: dict[str, Any] = {
                "gen_ai.usage.input_tokens": generation.prompt_tokens,
                "gen_ai.usage.output_tokens": generation.completion_tokens,
                "convoscope.cached": generation.cached, "convoscope.latency_s": generation.latency_s}
            if generation.served_model:
                attributes["gen_ai.response.model"] = generation.served_model
            if generation.cost is not None:
                attributes["convoscope.cost"] = generation.cost
            span.set_attributes(attributes)
            return generation

    async def aclose(self) -> None:
        await self.inner.aclose()
