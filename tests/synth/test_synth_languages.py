"""Issue 28: the embedded model of each role is chosen per dialogue language, every turn names
the model that wrote it, base models are prompted with a document in the target language, and
the completion-mode judge is calibrated on examples in the dialogue's language.

Scripted models (``synth_scripted``) stand in where the control flow is tested; the real
embedded models run in ``test_synth_korean.py``."""

from __future__ import annotations

import asyncio

import pytest
from synth_scripted import ScriptedModel, agents, role_of

from convoscope.errors import ConvoscopeError
from convoscope.items import Turn, read_items
from convoscope.models import GenerateRequest
from convoscope.synth import (
    EmbeddedByLanguage,
    SynthSettings,
    Usage,
    calibrate_judge,
    embedded_choice,
    filter_dialogue,
    generate_dialogues_async,
    opening_turn,
    sample_contexts,
)
from convoscope.synth._choice import FirstCallsInTurn

CONTEXTS = sample_contexts(1, ["en", "ko"], seed=4)
LINES = {"en": "Any tips for a rainy weekend at home?", "ko": "비 오는 주말에 집에서 뭐 하면 좋을까요?"}
LATER = {"en": "And what about board games?", "ko": "보드게임은 어때요?"}


def speaking(language_of_request):
    def reply(request):
        role = role_of(request)
        if role.startswith("user"):
            return (LINES if role == "user-first" else LATER)[language_of_request(request)]
        return "Yes." if role == "judge" else "No." if role == "role" else "Sounds nice!"
    return reply


def language_of(request):
    text = request.messages[1].content if request.messages else request.prompt
    return "ko" if "Korean" in text else "en"


def by_language(built):
    def build(name):
        built[name] = ScriptedModel(speaking(language_of), name=name)
        return built[name]
    return build


async def test_each_language_gets_its_chosen_model_and_every_turn_names_its_writer(tmp_path):
    built: dict[str, ScriptedModel] = {}
    users = EmbeddedByLanguage("user", by_language(built))
    bots = EmbeddedByLanguage("chatbot", by_language(built))
    out = tmp_path / "d.jsonl"
    await generate_dialogues_async(CONTEXTS, users={"embedded": users}, judge=None,
                                   chatbots={"embedded": bots}, out=out, settings=SynthSettings(max_turns=3))
    items = {item.language: item for item in read_items(out)}
    for language, item in items.items():
        synth = item.meta["synth"]
        user, bot = (f"scripted:{embedded_choice(language, role)}" for role in ("user", "chatbot"))
        assert synth["user_model"] == user and synth["chatbot_model"] == bot
        assert synth["turn_models"] == [user, bot, user][: len(item.context)] and len(item.context) == 3
        assert {a["model"] for log in synth["user_turns"] for a in log["attempts"]} == {user}
        assert item.id == f"{item.language}-0001.embedded.embedded"


async def test_a_language_can_be_given_another_model_and_unknown_models_are_refused(tmp_path):
    built: dict[str, ScriptedModel] = {}
    users = EmbeddedByLanguage("user", by_language(built), choice={"ko": "smollm2", "en": "gemma3-270m"})
    assert users.model_name("ko") == "smollm2" and users.model_name("en") == "gemma3-270m"
    assert users.model_name("ja") == embedded_choice("ja", "user")
    assert users.for_language("ko") is users.for_language("ko") and set(built) == {"smollm2"}
    with pytest.raises(ConvoscopeError, match="unknown embedded model 'gpt2'"):
        EmbeddedByLanguage("user", by_language(built), choice={"ko": "gpt2"})


async def test_a_base_model_continues_a_document_in_the_target_language_and_gets_no_feedback():
    korean = CONTEXTS[1]
    drafts = iter(["밥을 또 태웠어요ㅠ 이번 주만 세 번째예요. 뭐가 문제일까요?",  # copies an example
                   "챗봇: 네, 도와드릴게요.", LINES["ko"]])
    model = agents(user_lines=lambda request: next(drafts))
    settings = SynthSettings(prompting="completion")
    log, _, _ = await opening_turn(korean, user=model, judge=None, settings=settings, key="k")
    assert [a.rule for a in log.attempts] == ["copied_example", "speaker_label", None] and log.accepted
    prompts = [r.prompt for r in model.requests if role_of(r) == "user-first"]
    assert all(p.endswith("Message:") and "어른이 돼서 친구는" in p and korean.scene in p for p in prompts)
    assert "챗봇: 네" not in prompts[2] and "label" not in prompts[2]  # a base model reads no feedback
    assert all(r.stop == ("\n", "Person:", "Chatbot:") and r.messages is None for r in model.requests)


async def test_a_base_model_chatbot_sees_the_dialogue_and_an_example_never_the_context(tmp_path):
    model = agents(user_lines=lambda request: LINES["ko"])
    out = tmp_path / "d.jsonl"
    await generate_dialogues_async(CONTEXTS[1:], users={"u": model}, judge=None, chatbots={"b": model},
                                   out=out, settings=SynthSettings(max_turns=2, prompting="completion"))
    [request] = [r for r in model.requests if role_of(r) == "chatbot"]
    assert request.prompt.endswith(f"Person: {LINES['ko']}\nChatbot:")
    assert "취미 모임이나" in request.prompt and CONTEXTS[1].scene not in request.prompt


async def test_the_completion_judge_is_calibrated_on_examples_in_each_dialogue_language(tmp_path):
    judge = agents()
    settings = SynthSettings(judge_mode="completion", max_turns=2)
    summary = await generate_dialogues_async(CONTEXTS, users={"u": agents(user_lines=lambda r: LINES[
        language_of(r)])}, judge=judge, chatbots={"b": agents()}, out=tmp_path / "d.jsonl", settings=settings)
    assert set(summary.judge_calibrations) == {"en: scripted:scripted", "ko: scripted:scripted"}
    asked = [r.prompt for r in judge.requests if role_of(r) == "check"]
    assert any("고양이" in prompt for prompt in asked) and any("cat wakes me" in prompt for prompt in asked)
    assert summary.judge_calibration is None and "ko: scripted:scripted:" in summary.judge_note
    _, usage = await calibrate_judge(agents(), language="xx")  # a language without examples: English
    assert usage.calls == 18


async def test_a_completion_mode_judge_is_not_asked_the_role_question():
    """Its bare yes/no there is noise; the turns met the role rules instead (issue 28)."""
    judge = agents(role_says="Yes.")
    dialogue = [Turn(speaker="user", text=LINES["en"]), Turn(speaker="chatbot", text="Read a book!")]
    result = await filter_dialogue(dialogue, "en", judge=judge, usage=Usage(), key="k",
                                   settings=SynthSettings(judge_mode="completion", judge_thresholds={}))
    assert result.passed and judge.calls("role") == 0 and "role rules" in result.role_feedback
    asked = await filter_dialogue(dialogue, "en", judge=judge, usage=Usage(), key="k",
                                  settings=SynthSettings())
    assert asked.reasons == ("role_reversal",) and judge.calls("role") == 1


async def test_first_calls_of_two_models_never_overlap_later_calls_may():
    gate = FirstCallsInTurn()
    models = [ScriptedModel(lambda r: "hi", name=name, delay_s=0.02) for name in ("a", "b")]
    live = {"now": 0, "most": 0}

    class Watched:
        def __init__(self, inner):
            self.inner, self.name = inner, inner.name

        async def generate(self, request):
            live["now"] += 1
            live["most"] = max(live["most"], live["now"])
            try:
                return await self.inner.generate(request)
            finally:
                live["now"] -= 1

    gated = [gate.wrap(Watched(model)) for model in models]
    request = GenerateRequest(prompt="x", max_tokens=1)
    await asyncio.gather(*(model.generate(request) for model in gated))
    assert live["most"] == 1  # both were first calls: one after the other
    await asyncio.gather(*(model.generate(request) for model in gated))
    assert live["most"] == 2


async def test_a_language_without_an_embedded_judge_is_checked_by_the_rules_alone(tmp_path, monkeypatch):
    """Where no packaged model separated a check on the language's examples, the table names no
    judge: no calibration, no judge call, and the run says why."""
    from convoscope.synth import _choice

    table = {"models": {}, "default": {"user": "a", "judge": None, "chatbot": "a"},
             "languages": {"en": {"user": "a", "judge": "a", "chatbot": "a"}}}
    monkeypatch.setattr(_choice, "_table", lambda: table)
    built: dict[str, ScriptedModel] = {}
    roles = {role: EmbeddedByLanguage(role, by_language(built)) for role in ("user", "judge", "chatbot")}
    summary = await generate_dialogues_async(
        CONTEXTS, users={"e": roles["user"]}, judge=roles["judge"], chatbots={"e": roles["chatbot"]},
        out=tmp_path / "d.jsonl", settings=SynthSettings(max_turns=2, judge_mode="completion"))
    assert list(summary.judge_calibrations) == ["en: scripted:a"]  # Korean was not calibrated
    assert summary.judge_note.startswith("ko: no embedded judge")
    korean = next(item for item in read_items(tmp_path / "d.jsonl") if item.language == "ko")
    assert korean.meta["synth"]["judge_model"] is None
    assert "no judge" in korean.meta["synth"]["filter"]["role_feedback"]
    with pytest.raises(ConvoscopeError, match="no chatbot model for 'ko'"):
        table["default"]["chatbot"] = None
        EmbeddedByLanguage("chatbot", by_language(built)).for_language("ko")
