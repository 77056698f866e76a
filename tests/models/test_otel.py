"""OpenTelemetry spans around model calls: one per call, cache hits marked, errors recorded."""

from __future__ import annotations

import pytest

from convoscope.models import GenerateRequest, Generation, Message, ModelError, open_model, register_backend

sdk = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

EXPORTER = InMemorySpanExporter()
PROVIDER = sdk.TracerProvider()  # our own, not the process-wide one other code may have set
PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))


def _traced(spec, **options):
    from convoscope.models._otel import TracedModel

    model = open_model(spec, trace=True, **options)
    assert isinstance(model, TracedModel)  # open_model(trace=True) wraps the (cached) model
    return TracedModel(model.inner, tracer_provider=PROVIDER)


class FakeScriptedModel:
    """A scripted stand-in (no model runs): answers "ok", or fails when asked to."""

    def __init__(self, rest: str, **_: object) -> None:
        self.fail = rest == "fail"
        self.name = f"scripted:{rest}"

    async def generate(self, request: GenerateRequest) -> Generation:
        if self.fail:
            raise ModelError("scripted failure")
        return Generation(text="ok", model=self.name, prompt_tokens=7, completion_tokens=1)

    async def aclose(self) -> None:
        pass


register_backend("otel-scripted", FakeScriptedModel)
REQUEST = GenerateRequest(messages=(Message(role="user", content="hi"),), max_tokens=5)


async def test_every_call_is_a_span_and_cache_hits_say_so(tmp_path):
    EXPORTER.clear()
    model = _traced("otel-scripted:ok", cache=tmp_path / "cache.db")
    await model.generate(REQUEST)
    await model.generate(REQUEST)
    await model.aclose()
    spans = EXPORTER.get_finished_spans()
    assert [span.name for span in spans] == ["convoscope.generate"] * 2
    assert spans[0].attributes["gen_ai.usage.input_tokens"] == 7
    assert [span.attributes["convoscope.cached"] for span in spans] == [False, True]


async def test_a_failed_call_is_an_error_span_and_tracing_is_off_by_default():
    EXPORTER.clear()
    with pytest.raises(ModelError):
        await _traced("otel-scripted:fail").generate(REQUEST)
    (span,) = EXPORTER.get_finished_spans()
    assert span.status.status_code == trace.StatusCode.ERROR
    from convoscope.models._otel import TracedModel

    assert not isinstance(open_model("otel-scripted:ok"), TracedModel)
