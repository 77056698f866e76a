"""The user-judge regeneration loop, its limits, the end signal and the turn cap (scripted model)."""

from __future__ import annotations

import itertools

from synth_scripted import ScriptedModel, agents, role_of

from convoscope.synth import (
    SynthSettings,
    clean_user_text,
    continue_dialogue,
    opening_turn,
    read_yes_no,
    rule_feedback,
    sample_contexts,
)

CONTEXT = sample_contexts(1, ["en"], seed=3)[0]
# Distinct user messages for scripted users: numbered copies of one message are near copies,
# which the repeat rule refuses.
QUESTIONS = ["What should I do about it?", "Is it worth asking a neighbour?", "Would a timer help?",
             "How often is too often?", "Any cheap tools for this?", "Should I call someone?",
             "What would you try first?", "Does the season matter?", "Is morning better than evening?"]


async def test_opening_turn_is_regenerated_with_feedback_until_accepted():
    verdicts = iter(["No. Too formal for a chat.", "No. Mentions the scene word for word.", "Yes."])
    model = agents(user_lines=lambda r: f"draft {len(model.requests)}", judge_says=lambda r: next(verdicts))
    log, usage, error = await opening_turn(CONTEXT, user=model, judge=model, settings=SynthSettings(),
                                           key="k")
    assert error is None and log.accepted and len(log.attempts) == 3
    assert [a.accepted for a in log.attempts] == [False, False, True]
    assert log.attempts[0].feedback == "Too formal for a chat."
    # The second try is written knowing the first try and the judge's feedback on it.
    second_prompt = [r for r in model.requests if role_of(r) == "user-first"][1].messages[1].content
    assert log.attempts[0].text in second_prompt and "Too formal for a chat." in second_prompt
    assert usage.roles["user"].calls == 3 and usage.roles["judge"].calls == 3


async def test_opening_turn_gives_up_after_its_limit():
    counter = itertools.count()
    model = agents(judge_says=lambda r: f"No. Not natural, reason {next(counter)}.")
    settings = SynthSettings(first_turn_attempts=4)
    log, _, _ = await opening_turn(CONTEXT, user=model, judge=model, settings=settings, key="k")
    assert not log.accepted and len(log.attempts) == 4 and not log.stopped_early
    assert model.calls("user-first") == 4 and model.calls("judge") == 4
    default_limit, _, _ = await opening_turn(CONTEXT, user=model, judge=model, settings=SynthSettings(),
                                             key="k2")
    assert len(default_limit.attempts) == 10  # seed 001's limit for the opening turn


async def test_a_judge_that_rejects_everything_identically_stops_the_turn_early():
    model = agents(judge_says=lambda r: "No. Not natural.")
    log, _, _ = await opening_turn(CONTEXT, user=model, judge=model, settings=SynthSettings(), key="k")
    assert not log.accepted and log.stopped_early
    assert len(log.attempts) == 3 and model.calls("judge") == 3  # not the 10 tries allowed
    settings = SynthSettings(identical_rejections_stop=5)
    longer, _, _ = await opening_turn(CONTEXT, user=model, judge=model, settings=settings, key="k2")
    assert len(longer.attempts) == 5 and longer.stopped_early


async def test_a_later_turn_that_never_passes_ends_the_dialogue_after_five_tries():
    counter = itertools.count()

    def judge(request):
        return "Yes." if "(no messages yet)" in request.messages[1].content or "chatbot:" not in \
            request.messages[1].content else f"No. Sounds like an assistant ({next(counter)})."
    asked = itertools.cycle(QUESTIONS)
    model = agents(judge_says=judge, user_lines=lambda r: next(asked))
    log, _, _ = await opening_turn(CONTEXT, user=model, judge=model, settings=SynthSettings(), key="k")
    result = await continue_dialogue(log, CONTEXT, user=model, judge=model, chatbot=model,
                                     settings=SynthSettings(), key="k.u.b")
    assert result.end == "turn_rejected"
    assert [turn.speaker for turn in result.turns] == ["user", "chatbot"]
    assert len(result.user_turns) == 2 and len(result.user_turns[1].attempts) == 5


async def test_the_end_signal_ends_the_dialogue_and_keeps_the_goodbye():
    lines = iter(["My basil keeps dying, any idea why?", "Oh, I water it daily.",
                  "Thanks, I'll try that! END_OF_DIALOGUE"])
    model = agents(user_lines=lambda r: next(lines))
    log, _, _ = await opening_turn(CONTEXT, user=model, judge=model, settings=SynthSettings(), key="k")
    result = await continue_dialogue(log, CONTEXT, user=model, judge=model, chatbot=model,
                                     settings=SynthSettings(), key="k.u.b")
    assert result.end == "end_signal"
    assert [t.speaker for t in result.turns] == ["user", "chatbot", "user", "chatbot", "user"]
    assert result.turns[-1].text == "Thanks, I'll try that!"
    assert result.user_turns[-1].ended


async def test_the_turn_cap_counts_utterances_and_the_chatbot_sees_only_the_dialogue():
    questions = iter(QUESTIONS)
    model = agents(user_lines=lambda r: next(questions))
    settings = SynthSettings(max_turns=6)
    log, _, _ = await opening_turn(CONTEXT, user=model, judge=model, settings=settings, key="k")
    result = await continue_dialogue(log, CONTEXT, user=model, judge=model, chatbot=model,
                                     settings=settings, key="k.u.b")
    assert result.end == "turn_cap" and len(result.turns) == 6
    bot_requests = [r for r in model.requests if role_of(r) == "chatbot"]
    assert len(bot_requests) == 3
    for request in bot_requests:
        seen = " ".join(message.content for message in request.messages)
        assert CONTEXT.scene not in seen and CONTEXT.persona not in seen
        assert [m.role for m in request.messages[1:]] == ["user", "assistant"] * \
            ((len(request.messages) - 2) // 2) + ["user"]
    assert result.usage.roles["chatbot"].calls == 3


async def test_rule_checks_reject_without_a_judge_call():
    lines = iter(["Hi, I'm PersonX and I need help.", "", "Could you suggest a quick dinner?"])
    model = agents(user_lines=lambda r: next(lines))
    log, _, _ = await opening_turn(CONTEXT, user=model, judge=model, settings=SynthSettings(), key="k")
    assert [a.checked_by for a in log.attempts] == ["rule", "rule", "judge"]
    assert model.calls("judge") == 1 and log.accepted
    assert rule_feedback("Bye! END_OF_DIALOGUE", opening=True, end_signal="END_OF_DIALOGUE")
    assert rule_feedback("END_OF_DIALOGUE", opening=False, end_signal="END_OF_DIALOGUE") is None


async def test_without_a_judge_the_first_clean_attempt_is_kept():
    model = agents()
    log, usage, _ = await opening_turn(CONTEXT, user=model, judge=None, settings=SynthSettings(), key="k")
    assert log.accepted and len(log.attempts) == 1 and "judge" not in usage.roles


async def test_an_unreadable_judge_answer_counts_as_a_rejection():
    answers = iter(["Maybe, hard to say.", "Yes."])
    model = agents(judge_says=lambda r: next(answers))
    log, _, _ = await opening_turn(CONTEXT, user=model, judge=model, settings=SynthSettings(), key="k")
    assert log.attempts[0].unreadable and not log.attempts[0].accepted and log.accepted


async def test_model_errors_end_the_dialogue_as_data():
    from convoscope.models import ModelError

    def reply(request):
        return ModelError("server down") if role_of(request) == "chatbot" else "Yes."
    model = ScriptedModel(reply)
    log, _, _ = await opening_turn(CONTEXT, user=model, judge=model, settings=SynthSettings(), key="k")
    result = await continue_dialogue(log, CONTEXT, user=model, judge=model, chatbot=model,
                                     settings=SynthSettings(), key="k.u.b")
    assert result.end == "chatbot_error" and "server down" in result.error
    assert result.usage.roles["chatbot"].errors == 1


def test_reading_yes_no_and_cleaning_user_text():
    assert read_yes_no("Yes.") == (True, "")
    assert read_yes_no("**No.** Too long, keep it short.") == (False, "Too long, keep it short.")
    assert read_yes_no("Nope")[0] is None
    assert clean_user_text('User: "Any advice on sourdough?"') == "Any advice on sourdough?"


async def test_request_seeds_differ_between_attempts():
    model = agents(judge_says=lambda r: "No. again")
    await opening_turn(CONTEXT, user=model, judge=model, settings=SynthSettings(first_turn_attempts=3),
                       key="k")
    seeds = [r.seed for r in model.requests if role_of(r) == "user-first"]
    assert len(set(seeds)) == 3


async def test_the_seed_sampling_settings_reach_each_role():
    model = agents(judge_says=lambda r: "Yes.")
    log, _, _ = await opening_turn(CONTEXT, user=model, judge=model, settings=SynthSettings(), key="k")
    await continue_dialogue(log, CONTEXT, user=model, judge=model, chatbot=model,
                            settings=SynthSettings(max_turns=3), key="k.u.b")
    first = next(r for r in model.requests if role_of(r) == "user-first")
    later = next(r for r in model.requests if role_of(r) == "user-next")
    chatbot = next(r for r in model.requests if role_of(r) == "chatbot")
    assert (first.temperature, first.presence_penalty, first.top_p) == (1.5, 0.6, None)
    assert (later.temperature, later.top_p, later.presence_penalty) == (0.9, 0.95, None)
    assert (chatbot.temperature, chatbot.top_p) == (0.9, 0.95)
