"""Issue 28 acceptance: a Korean context runs end to end on the embedded models and a dialogue is
kept. Observed before: SmolLM2 (trained on English) wrote `🌱 안우란자야 **🌱** ☎****** …` for
the Korean user, the judge spent three calls rejecting it, and the dialogue ended with no turn
("first_turn_rejected", filtered `no_dialogue`).

Real models, no clock: the test asserts what was written, never how fast. Seeds are fixed, and
the limits are the run's defaults for tries, so a machine that samples a little differently
still has ten tries at the opening."""

from __future__ import annotations

import re

import pytest

from convoscope.items import read_items
from convoscope.synth import (
    EmbeddedByLanguage,
    SynthSettings,
    default_filtered_path,
    embedded_choice,
    generate_dialogues_async,
    sample_contexts,
)

pytest.importorskip("llama_cpp")
HANGUL = re.compile(r"[\uac00-\ud7a3]")


@pytest.mark.slow
async def test_a_korean_context_runs_end_to_end_on_the_embedded_models_and_keeps_a_dialogue(tmp_path):
    from convoscope.models import EmbeddedModel

    opened: list[EmbeddedModel] = []

    def build(name: str) -> EmbeddedModel:
        opened.append(EmbeddedModel(name, n_threads=2))
        return opened[-1]

    roles = {role: EmbeddedByLanguage(role, build) for role in ("user", "judge", "chatbot")}
    out = tmp_path / "dialogues.jsonl"
    settings = SynthSettings(max_turns=4, user_max_tokens=48, chatbot_max_tokens=48)
    try:
        summary = await generate_dialogues_async(
            sample_contexts(1, ["ko"], seed=0), users={"embedded": roles["user"]}, judge=roles["judge"],
            chatbots={"embedded": roles["chatbot"]}, out=out, settings=settings)
    finally:
        for role in roles.values():
            await role.aclose()
    assert not default_filtered_path(out).exists(), read_items(default_filtered_path(out))[0].meta
    [item] = read_items(out)
    synth = item.meta["synth"]
    assert summary.written == 1 and summary.filtered == 0 and item.language == "ko"
    assert len(item.context) >= 2 and synth["filter"]["passed"]
    # the user writes Korean, and every turn names the model the benchmark chose for its role
    user_turns = [turn.text for turn in item.context if turn.speaker == "user"]
    assert all(HANGUL.search(text) for text in user_turns), user_turns
    chosen = {role: f"embedded:{embedded_choice('ko', role)}" for role in ("user", "chatbot")}
    assert synth["turn_models"] == [chosen["user"] if turn.speaker == "user" else chosen["chatbot"]
                                    for turn in item.context]
    # every refused attempt names its rule or the judge's failed check; the judge saw only what
    # the rules passed
    attempts = [attempt for log in synth["user_turns"] for attempt in log["attempts"]]
    assert all(attempt["model"] == chosen["user"] for attempt in attempts)
    for attempt in attempts:
        if attempt["checked_by"] == "rule" and not attempt["accepted"]:
            assert attempt["rule"] and attempt["feedback"]
    judged = sum(attempt["checked_by"] == "judge" for attempt in attempts)
    judge_calls = sum(usage.get("judge", {}).get("calls", 0)
                      for usage in (synth["usage"], synth["opening"]["usage"]))
    judge = embedded_choice("ko", "judge")
    if judge is None:  # no packaged model separated a check on the Korean examples
        assert synth["judge_model"] is None and judge_calls == judged == 0
        assert summary.judge_note.startswith("ko: no embedded judge")
    else:
        assert synth["judge_model"] == f"embedded:{judge}"
        assert judge_calls == judged * len(synth["settings"]["judge_thresholds"])
        assert "ko: " in next(iter(summary.judge_calibrations))  # calibrated on the Korean examples
