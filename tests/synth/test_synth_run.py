"""Generation runs: one item per dialogue, shared openings, concurrency, resuming after a crash."""

from __future__ import annotations

import itertools
import json

import pytest
from synth_scripted import ScriptedModel, agents, role_of

from convoscope.items import read_items
from convoscope.synth import (
    SynthSettings,
    default_filtered_path,
    generate_dialogues_async,
    model_label,
    sample_contexts,
)

CONTEXTS = sample_contexts(3, ["en", "pt"], seed=5)
SETTINGS = SynthSettings(max_turns=4)


_ASKED = itertools.cycle(["What should I do?", "Is that expensive?", "Any cheaper option?",
                          "How long will it take?", "Can I do it alone?", "Who could help me?"])


def english_user(request):
    # Short (under 25 characters), so no single turn is identified as off-language by the loop's
    # rule (the whole user side still is, by the filter); in turn, so no turn repeats another.
    return next(_ASKED)


async def test_every_triple_becomes_one_item_and_the_opening_is_shared(tmp_path):
    model = agents(user_lines=english_user)
    out = tmp_path / "dialogues.jsonl"
    summary = await generate_dialogues_async(CONTEXTS, users={"u": model}, judge=model,
                                             chatbots={"a": model, "b": model}, out=out, settings=SETTINGS)
    assert summary.planned == 12 and summary.written == 12
    items = read_items(out) + read_items(default_filtered_path(out))
    assert sorted(item.id for item in items) == sorted(
        f"{c.id}.u.{bot}" for c in CONTEXTS for bot in ("a", "b"))
    # one opening per (context, user), shared by both chatbots
    assert model.calls("user-first") == 6
    first = {item.id: item.context[0].text for item in items}
    assert first["en-0001.u.a"] == first["en-0001.u.b"]
    # English user turns in Portuguese contexts are filtered, with the reason, not dropped
    kept = read_items(out)
    assert {item.language for item in kept} == {"en"}
    filtered = read_items(default_filtered_path(out))
    assert {item.language for item in filtered} == {"pt"}
    assert all(item.meta["synth"]["filter"]["reasons"] == ["user_language"] for item in filtered)
    item = kept[0]
    assert item.system in ("a", "b") and item.response is None
    assert item.meta["synth"]["context"]["id"] == item.id.split(".")[0]
    assert summary.usage["chatbot"].calls == 12 * 2


async def test_dialogues_run_concurrently(tmp_path):
    model = agents(user_lines=english_user)
    model.delay_s = 0.01
    await generate_dialogues_async(CONTEXTS[:2], users={"u": model}, judge=model,
                                   chatbots={"a": model, "b": model, "c": model},
                                   out=tmp_path / "d.jsonl", settings=SETTINGS, concurrency=4)
    assert model.max_in_flight > 1


async def test_an_interrupted_run_resumes_without_regenerating_finished_dialogues(tmp_path):
    out = tmp_path / "dialogues.jsonl"
    calls = {"n": 0}

    def crashing(request):
        calls["n"] += 1
        if calls["n"] == 40:
            return Killed()  # the run dies mid-way
        return english_user(request) if role_of(request).startswith("user") else (
            "Yes." if role_of(request) == "judge" else "No." if role_of(request) == "role" else "Nice!")
    first = ScriptedModel(crashing)
    with pytest.raises(Killed):
        await generate_dialogues_async(CONTEXTS, users={"u": first}, judge=first, chatbots={"a": first},
                                       out=out, settings=SETTINGS, concurrency=1)
    done_before = _ids(out) | _ids(default_filtered_path(out))
    assert 0 < len(done_before) < 6
    with out.open("a") as handle:  # a torn line, as a kill -9 during a write leaves it
        handle.write('{"id": "en-0009.u.a", "context": [')
    second = agents(user_lines=english_user)
    summary = await generate_dialogues_async(CONTEXTS, users={"u": second}, judge=second,
                                             chatbots={"a": second}, out=out, settings=SETTINGS)
    assert summary.already_done == len(done_before)
    assert summary.written == 6 - len(done_before)
    assert second.calls("user-first") == 6 - len(done_before)
    all_ids = [item.id for path in (out, default_filtered_path(out)) for item in read_items(path)]
    assert len(all_ids) == len(set(all_ids)) == 6


class Killed(Exception):
    """Stands for the process being stopped in the middle of a run."""


def _ids(path):
    if not path.exists():
        return set()
    return {json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()}


def test_model_labels():
    assert model_label("embedded") == "embedded"
    assert model_label("openai:llama3.1-8b@http://127.0.0.1:8000/v1") == "llama3.1-8b"
    assert model_label("llama=openai:llama3.1-8b@http://127.0.0.1:8000/v1") == "llama"
    assert model_label("embedded:/models/tiny-chat.gguf") == "tiny-chat"


async def test_dialogues_are_items_the_dialogue_issues_suite_applies_to(tmp_path):
    from convoscope.criteria import load_suite
    from convoscope.runs._run import applies

    model = agents(user_lines=english_user)
    out = tmp_path / "d.jsonl"
    await generate_dialogues_async(CONTEXTS[:1], users={"u": model}, judge=model, chatbots={"a": model},
                                   out=out, settings=SETTINGS)
    [item] = read_items(out)
    criteria = load_suite("dialogue-issues").criteria
    assert len(criteria) == 9 and all(applies(criterion, item) for criterion in criteria)
