"""Issue 17: what made the smallest synth run take 53 minutes and produce nothing, one test each.

Scripted models (``ScriptedModel``: replies scripted per request) check the control flow; the
completion-mode judge tests run the real embedded model.
"""

from __future__ import annotations

import itertools

import pytest
from synth_scripted import ScriptedModel, agents, role_of

from convoscope.models import GenerateRequest, Generation
from convoscope.synth import (
    SynthSettings,
    opening_turn,
    rule_feedback,
    sample_contexts,
    threshold_between,
    whole_sentences,
)

CONTEXT = sample_contexts(1, ["en"], seed=3)[0]
PT_CONTEXT = sample_contexts(1, ["pt"], seed=3)[0]
RAMBLE = " ".join(f"and then I thought about plant number {i}" for i in range(61))  # 488 words


def user_prompts(model):
    return [r.messages[1].content for r in model.requests if role_of(r).startswith("user")]


async def test_a_rejected_attempt_is_quoted_capped_and_summarised_not_pasted_whole():
    drafts = iter([RAMBLE, "Any tips for a rainy weekend at home?"])
    def judge(request):
        return "No. Far too long." if "number 60" in request.messages[1].content else "Yes."
    model = agents(user_lines=lambda r: next(drafts), judge_says=judge)
    settings = SynthSettings(max_user_words=1000)  # let the judge (not the length rule) reject it
    await opening_turn(CONTEXT, user=model, judge=model, settings=settings, key="k")
    second = user_prompts(model)[1]
    shown = " ".join(RAMBLE.split()[:25])
    assert f"{shown} … (cut; 488 words in all)" in second and "number 4 " not in second
    assert "Far too long." in second
    assert len(second) < len(RAMBLE) / 3


async def test_the_opening_is_bounded_and_ends_at_the_end_of_its_line():
    model = agents()
    settings = SynthSettings(user_max_tokens=512)  # the CLI's --max-tokens default
    await opening_turn(CONTEXT, user=model, judge=model, settings=settings, key="k")
    opening = next(r for r in model.requests if role_of(r) == "user-first")
    assert opening.max_tokens == 64 and opening.stop == ("\n",)
    assert rule_feedback(RAMBLE, opening=True, end_signal="END", max_words=60).startswith("it is too long")


class LengthCutModel(ScriptedModel):
    """ScriptedModel whose every answer is reported as cut off by the token limit."""

    async def generate(self, request: GenerateRequest) -> Generation:
        generation = await super().generate(request)
        return generation.model_copy(update={"finish_reason": "length"})


async def test_a_message_cut_by_the_token_limit_keeps_its_whole_sentences_or_is_rejected():
    assert whole_sentences("I need a gift for my aunt. She likes tea and") == "I need a gift for my aunt."
    assert whole_sentences("no sentence end at all") == ""
    lines = iter(["Any tips for a rainy weekend? I was thinking of", "we could maybe go to the"])
    model = LengthCutModel(lambda r: next(lines) if role_of(r).startswith("user") else "Yes.")
    log, _, _ = await opening_turn(CONTEXT, user=model, judge=model, settings=SynthSettings(), key="k")
    assert log.accepted and log.attempts[0].text == "Any tips for a rainy weekend?"
    lines = iter(["we could maybe go to the", "Is a museum a good idea?"])
    log, _, _ = await opening_turn(CONTEXT, user=model, judge=model, settings=SynthSettings(), key="k2")
    assert log.attempts[0].feedback.startswith("it was cut off") and log.accepted


async def test_rules_reject_other_languages_repeats_and_copied_labels_without_a_judge_call():
    lines = iter(["I would like some advice about my small garden, please.",
                  "Situation: a neighbour parks in front of the driveway.",
                  "Alguém tem dicas para cuidar de um jardim pequeno?"])
    model = agents(user_lines=lambda r: next(lines))
    log, _, _ = await opening_turn(PT_CONTEXT, user=model, judge=model, settings=SynthSettings(), key="k")
    assert [a.checked_by for a in log.attempts] == ["rule", "rule", "judge"] and log.accepted
    assert "'en'" in log.attempts[0].feedback and "label" in log.attempts[1].feedback
    assert model.calls("judge") == 1
    assert rule_feedback("Any news?", opening=False, end_signal="END", earlier=["any news"]) == \
        "it repeats an earlier message word for word"


async def test_identical_rule_rejections_also_stop_early():
    model = agents(user_lines=lambda r: "Hi PersonX, what should I cook?")
    log, _, _ = await opening_turn(CONTEXT, user=model, judge=model, settings=SynthSettings(), key="k")
    assert log.stopped_early and len(log.attempts) == 3 and model.calls("user-first") == 3


def test_a_check_is_used_only_when_its_examples_separate():
    assert threshold_between([0.6, 0.7], [0.2, 0.4]) == pytest.approx(0.5)
    assert threshold_between([0.6, 0.3], [0.2, 0.4]) is None  # overlap: the judge cannot do it
    assert threshold_between([0.31], [0.31]) is None
    assert threshold_between([], [0.1]) is None


async def test_a_completion_judge_left_with_no_usable_check_makes_no_call():
    model = agents()
    settings = SynthSettings(judge_mode="completion", judge_thresholds={})
    log, usage, _ = await opening_turn(CONTEXT, user=model, judge=model, settings=settings, key="k")
    assert log.accepted and log.attempts[0].checked_by == "rule"
    assert model.calls("judge") == 0 and "judge" not in usage.roles


def test_the_cli_gives_each_role_its_own_embedded_instance_and_shares_http_models(tmp_path):
    from convoscope.cli._synth import _RoleModels
    from convoscope.models import ResponseCache

    store = ResponseCache(tmp_path / "cache.db")
    assert len(store) == 0 and not store  # the empty cache that used to be dropped
    models = _RoleModels(store)
    user, judge, bot = (models.get("embedded:smollm2", role) for role in ("user", "judge", "chatbot"))
    assert len({id(user), id(judge), id(bot)}) == 3
    assert models.get("smol=embedded:smollm2", "user") is user
    http = "openai:m@http://127.0.0.1:9/v1"
    assert models.get(http, "user") is models.get(http, "chatbot")
    assert type(user).__name__ == "CachedModel"  # an empty cache is still used
    # the plain spec: the model chosen per language, one instance per role and model
    routed = [models.get("embedded", role) for role in ("user", "chatbot")]
    assert type(routed[0]).__name__ == "EmbeddedByLanguage"
    assert routed[0] is models.get("smol=embedded", "user")
    english = [model.for_language("en") for model in routed]
    assert english[0] is not english[1] and type(english[0]).__name__ == "CachedModel"
    assert english[0].name == "embedded:" + routed[0].model_name("en")
    store.close()


async def test_different_rejections_still_use_every_try():
    counter = itertools.count()
    model = agents(judge_says=lambda r: f"No. Reason {next(counter)}.")
    log, _, _ = await opening_turn(CONTEXT, user=model, judge=model,
                                   settings=SynthSettings(first_turn_attempts=5), key="k")
    assert len(log.attempts) == 5 and not log.stopped_early
