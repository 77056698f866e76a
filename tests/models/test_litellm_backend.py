"""The LiteLLM backend against the real llama.cpp server through LiteLLM's OpenAI-compatible
route, in chat and completion modes: no key, no network; its banner off, its sessions closed."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from installed import import_path
from patience import PATIENT, PATIENT_S

from convoscope import Criterion
from convoscope.models import GenerateRequest, Message, ModelError, open_model

# Not importorskip: importing litellm here, before convoscope's backend sets
# LITELLM_LOCAL_MODEL_COST_MAP, made it fetch its price table from the network at collection.
pytestmark = [pytest.mark.slow, pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                                                   reason="litellm is not installed")]


SCHEMA = {"type": "object", "properties": {"score": {"enum": [1, 2, 3]}}, "required": ["score"]}
ROOT = Path(__file__).parents[2]


def _spec(llama_server):
    base_url, alias = llama_server
    return f"litellm:openai/{alias}@{base_url}"


async def test_a_chat_call_through_litellm_returns_text_usage_and_the_served_model(llama_server):
    model = open_model(_spec(llama_server), **PATIENT)
    try:
        generation = await model.generate(GenerateRequest(
            messages=(Message(role="user", content="Say hello."),), max_tokens=8))
    finally:
        await model.aclose()
    assert generation.text
    assert generation.prompt_tokens > 0 and generation.completion_tokens > 0
    assert generation.model.startswith("litellm:openai/smollm2@http://127.0.0.1:")
    assert generation.served_model


async def test_completion_mode_reads_next_token_logprobs_through_litellm(llama_server):
    model = open_model(_spec(llama_server))
    try:
        generation = await model.generate(GenerateRequest(
            prompt="Counting: 1, 2, 3, 4,", max_tokens=1, next_token_candidates=("5", "6", "7")))
    finally:
        await model.aclose()
    assert generation.next_token_logprobs and "5" in generation.next_token_logprobs


async def test_a_rubric_judge_scores_through_litellm(llama_server):
    from convoscope import Item, Turn
    from convoscope.judges import RubricJudge

    criterion = Criterion.model_validate({
        "name": "polite", "question": "Is the response polite?", "definition": "Courteous wording.",
        "scale": {"kind": "range", "minimum": 1, "maximum": 3}})
    model = open_model(_spec(llama_server))
    try:
        verdict = await RubricJudge(model, mode="completion")(
            Item(id="i1", context=(Turn(speaker="user", text="hi"),), response="Hello, how can I help?"),
            criterion)
    finally:
        await model.aclose()
    assert verdict.value in (1, 2, 3)
    assert verdict.rater.startswith("model:litellm:openai/smollm2@")


def test_a_known_price_fills_the_cost():
    """LiteLLM's packaged price table is read locally (no network): a priced model's call gets a
    cost from its token counts; a local model without a price stays unknown."""
    from convoscope.models._litellm import LiteLLMModel

    priced = LiteLLMModel("gpt-4o-mini", api_key_env=None)
    data = {"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 100}, "model": "gpt-4o-mini"}
    request = GenerateRequest(messages=(Message(role="user", content="x"),))
    cost = priced._generation(data, request, {}, 0.1).cost
    assert cost == pytest.approx(1000 * 0.15e-6 + 100 * 0.6e-6, rel=0.5)


async def test_a_dead_endpoint_is_a_model_error_after_retries():
    model = open_model("litellm:openai/x@http://127.0.0.1:9/v1", timeout=1, deadline=5, max_retries=1,
                       backoff_s=0.01)
    with pytest.raises(ModelError, match="litellm:openai/x@http://127.0.0.1:9/v1"):
        await model.generate(GenerateRequest(messages=(Message(role="user", content="hi"),), max_tokens=4))


async def test_chat_mode_probes_what_the_server_takes_instead_of_trusting_litellms_table(llama_server):
    # Before: LiteLLM's table says openai/* takes json_schema, the server refused it with a
    # validation error that was retried as transient, and every chat item was a model_error.
    model = open_model(_spec(llama_server), max_retries=1)
    try:
        generation = await model.generate(GenerateRequest(
            messages=(Message(role="user", content="Rate 'great food' from 1 to 3 as JSON."),),
            json_schema=SCHEMA, max_tokens=12))
    finally:
        await model.aclose()
    assert generation.structured_output == "json_object"  # json_schema refused, once, not retried
    assert json.loads(generation.text)["score"] in (1, 2, 3)
    assert model.capability_note is None and model.probe.known.logprobs


def test_a_chat_run_through_litellm_scores_without_banner_or_unclosed_sessions(llama_server, tmp_path):
    """The CLI as a user runs it, warnings shown: items scored, no "Give Feedback / Get Help"
    banner (the probe's refused request used to print one), no "Unclosed client session" at exit."""
    criteria = tmp_path / "criteria.yaml"
    criteria.write_text("name: tasty\nquestion: Does the answer praise the food?\n"
                        "definition: Praise of food.\nscale: {kind: binary}\nask_reason: false\n")
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "response": "The pasta was wonderful."}) + "\n")
    env = {**os.environ, "PYTHONWARNINGS": "default", "PYTHONPATH": import_path()}
    done = subprocess.run(
        [sys.executable, "-m", "convoscope", "judge", str(items), "--criteria-file", str(criteria),
         "--judge", _spec(llama_server), "--mode", "chat", "--max-tokens", "30", "--timeout", "600",
         "--deadline", "1200", "--store", str(tmp_path / "run.db")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=PATIENT_S)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Give Feedback" not in output and "Unclosed client session" not in output
    assert "unclosed" not in done.stderr.lower(), done.stderr
    from convoscope.store import Store

    store = Store(tmp_path / "run.db")
    try:
        (verdict,) = store.verdicts()
    finally:
        store.close()
    assert verdict.value in (0, 1) and verdict.rater == f"model:{_spec(llama_server)}"


async def test_a_timed_out_call_halves_the_in_flight_limit_as_on_the_native_route(canned_proxy):
    """Issue 35, observation 3. Before: a timeout did not count as congestion on the LiteLLM route
    (only a 429 did), so a chat run against a one-slot llama.cpp server kept eight requests queued
    there, each timing out behind the others, until every call ended at the deadline (0/8)."""
    from faultproxy import Fault

    canned_proxy.always(Fault.hang(60))
    model = open_model(f"litellm:openai/smollm2@{canned_proxy.base_url}", timeout=1, deadline=30,
                       max_retries=0, max_concurrency=8)
    try:
        with pytest.raises(ModelError, match="gave up after retries"):
            await model.generate(GenerateRequest(prompt="Say hi:", max_tokens=2))
    finally:
        await model.aclose()
    assert len(canned_proxy.requests) == 1  # and sent once: no retries underneath ours
    assert model._limit.limit == 1


def _cli_run(spec: str, mode: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    criteria = tmp_path / "criteria.yaml"
    criteria.write_text("name: tasty\nquestion: Does the answer praise the food?\n"
                        "definition: Praise of food.\nscale: {kind: binary}\nask_reason: false\n")
    items = tmp_path / "items.jsonl"
    texts = ["The pasta was wonderful.", "Service was slow.", "Great soup!", "Cold fries.",
             "Loved the dessert.", "Too noisy.", "Fresh bread, thanks.", "The bill was wrong."]
    items.write_text("".join(json.dumps({"id": f"i{n}", "response": text}) + "\n"
                             for n, text in enumerate(texts)))
    env = {**os.environ, "PYTHONWARNINGS": "default", "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "convoscope", "judge", str(items), "--criteria-file", str(criteria),
         "--judge", spec, "--mode", mode, "--store", str(tmp_path / f"{mode}.db"), *extra],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=PATIENT_S)


def _row(done: subprocess.CompletedProcess[str], name: str) -> str:
    line = next(line for line in done.stdout.splitlines() if f"│ {name} " in line)
    return line.split(name, 1)[1].strip(" │|")


def test_completion_mode_leaves_no_unclosed_session_and_names_its_route(canned_proxy, tmp_path):
    """Before: 8 items in completion mode printed 7 "Unclosed client session" warnings (LiteLLM
    opened an aiohttp session for every text completion and closed none)."""
    done = _cli_run(f"litellm:openai/smollm2@{canned_proxy.base_url}", "completion", tmp_path,
                    "--max-unscored", "1")  # the canned answer is no score
    assert done.returncode == 0, done.stdout + done.stderr
    assert "unclosed" not in (done.stdout + done.stderr).lower(), done.stderr
    # The canned answer is no score (parse failures): what counts here is that 8 calls were made.
    assert _row(done, "model calls") == "8" and _row(done, "failed calls") == "0"
    assert "litellm (openai, own client)" in " ".join(done.stdout.split())


@pytest.mark.parametrize("mode", ["chat", "completion"])
def test_eight_items_score_against_llama_cpp_in_both_modes_without_warnings(llama_server, mode, tmp_path):
    """Issue 35, observation 3, against the real server: every item scored, nothing unclosed,
    the route in the summary. Generous timeouts: the server answers one request at a time and a
    loaded machine is slow; what failed before was not speed but the retries underneath."""
    done = _cli_run(_spec(llama_server), mode, tmp_path, "--timeout", "600", "--deadline", "3000")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert _row(done, "scored") == "8", output
    assert "unclosed" not in output.lower() and "Give Feedback" not in output
    assert "litellm (openai, own client)" in " ".join(done.stdout.split())
