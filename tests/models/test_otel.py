"""OpenTelemetry spans (issue 27, observation 5): a run span is the parent of every model-call
span; each call says which judgement it served (item, criterion, task key, run, judge) and what
it called (provider, model name without URL or credentials); cache hits and errors are marked."""

from __future__ import annotations

import pytest
from scripted_server import ScriptedServer, chat_reply

import convoscope as cs
from convoscope.models import GenerateRequest, Generation, Message, ModelError, open_model, register_backend

sdk = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

REQUEST = GenerateRequest(messages=(Message(role="user", content="hi"),), max_tokens=5)


@pytest.fixture
def spans():
    """A tracer provider of this test's own (not the process-wide one) and its finished spans."""
    exporter = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


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


async def test_every_call_is_a_span_and_cache_hits_say_so(tmp_path, spans):
    provider, exporter = spans
    model = open_model("otel-scripted:ok", cache=tmp_path / "cache.db", trace=provider)
    await model.generate(REQUEST)
    await model.generate(REQUEST)
    await model.aclose()
    finished = exporter.get_finished_spans()
    assert [span.name for span in finished] == ["chat ok"] * 2
    assert finished[0].attributes["gen_ai.usage.input_tokens"] == 7
    assert [span.attributes["convoscope.cached"] for span in finished] == [False, True]


async def test_a_failed_call_is_an_error_span_and_tracing_is_off_by_default(spans):
    provider, exporter = spans
    with pytest.raises(ModelError):
        await open_model("otel-scripted:fail", trace=provider).generate(REQUEST)
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code == trace.StatusCode.ERROR and span.attributes["error.type"] == "ModelError"
    from convoscope.models._otel import TracedModel

    assert not isinstance(open_model("otel-scripted:ok"), TracedModel)


async def test_a_run_span_is_the_parent_and_each_call_says_which_judgement_it_served(tmp_path, spans):
    # Before: spans carried no item, criterion, task key or run id, had no parent, and
    # gen_ai.request.model held the whole spec with its URL.
    provider, exporter = spans
    ok = (200, chat_reply('{"ok": true}'), {})
    answer = (200, chat_reply('{"score": 2}'), {})
    server = ScriptedServer([ok, ok, answer, answer])
    try:
        items = [cs.Item(id="a", response="Fine."), cs.Item(id="b", response="Good.")]
        criterion = cs.Criterion(name="tasty", question="Tasty?", definition="Taste.",
                                 scale=cs.Scale(kind="range", minimum=1, maximum=3))
        spec = f"openai:gpt-mini@{server.base_url}"
        result = await cs.judge_async(items, [criterion], spec, store=tmp_path / "run.db", cache_path=None,
                                      concurrency=1, model_options={"trace": provider})
    finally:
        server.close()
    run, *calls = sorted(exporter.get_finished_spans(), key=lambda span: span.name != "convoscope.run")
    assert run.name == "convoscope.run" and run.parent is None
    assert run.attributes["convoscope.run_id"] == result.run_id
    assert run.attributes["convoscope.judge"] == "model:openai:gpt-mini"
    assert len(calls) == 2 and all(call.parent.span_id == run.context.span_id for call in calls)
    keys = _task_keys(items, criterion, spec)
    for call in calls:
        attributes = dict(call.attributes)
        assert call.name == "chat gpt-mini"
        assert attributes["convoscope.task_key"] == keys[attributes["convoscope.item_id"]]
        assert attributes["convoscope.run_id"] == result.run_id
        assert attributes["convoscope.criterion"] == "tasty"
        assert attributes["convoscope.judge"] == "model:openai:gpt-mini"
        assert (attributes["gen_ai.system"], attributes["gen_ai.request.model"]) == ("openai", "gpt-mini")
        assert attributes["server.address"] == "127.0.0.1" and attributes["gen_ai.operation.name"] == "chat"
        assert not any("http" in str(value) for value in attributes.values())
    assert {call.attributes["convoscope.item_id"] for call in calls} == {"a", "b"}


def test_the_model_name_never_carries_a_url_or_credentials():
    from convoscope.models._otel import describe, without_urls

    model = open_model("openai:gpt-mini@http://user:secret@127.0.0.1:9/v1?key=hidden")
    described = describe(model)
    assert described["gen_ai.request.model"] == "gpt-mini" and described["server.address"] == "127.0.0.1"
    assert not any("secret" in str(value) or "hidden" in str(value) for value in described.values())
    assert describe(open_model("embedded:smollm2"))["gen_ai.system"] == "llama_cpp"
    rater = "model:openai:m@http://h:1/v1[completion]#strict"
    assert without_urls(rater) == "model:openai:m[completion]#strict"


def _task_keys(items, criterion, spec):
    """Each item's task key as the run engine plans it (what the spans must carry)."""
    from convoscope.runs import as_specs, build_judge, plan_tasks

    judge, _ = build_judge(as_specs(spec))
    return {task.item.id: task.key for task in plan_tasks(items, [criterion], judge).tasks}
