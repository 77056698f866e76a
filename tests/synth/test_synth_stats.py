"""Per-language statistics on hand-made dialogues whose figures are easy to count."""

from __future__ import annotations

import math

import pytest

from convoscope.items import Item, Turn
from convoscope.synth import stats_table, synth_stats


def dialogue(item_id, language, texts, *, passed=True, attempts=(1,), opening_key="o1"):
    turns = tuple(Turn(speaker="user" if i % 2 == 0 else "chatbot", text=t) for i, t in enumerate(texts))
    logs = [{"position": 0, "accepted": True, "ended": False,
             "attempts": [{"text": "x", "accepted": n == count - 1, "checked_by": "judge"}
                          for n in range(count)]} for count in attempts]
    usage = {"chatbot": {"calls": 2, "cache_hits": 1, "prompt_tokens": 100, "completion_tokens": 20}}
    opening = {"key": opening_key, "usage": {"user": {"calls": 1, "cache_hits": 0, "prompt_tokens": 50,
                                                      "completion_tokens": 10}}}
    return Item(id=item_id, context=turns, language=language, system="bot", meta={"synth": {
        "user_turns": logs, "usage": usage, "opening": opening,
        "filter": {"passed": passed, "reasons": [] if passed else ["user_language"]}}})


def test_counts_lengths_acceptance_and_usage():
    items = [
        dialogue("1", "en", ["Any tips for sleeping better?", "Keep a regular bedtime.", "Thanks a lot!"],
                 attempts=(1, 3)),
        dialogue("2", "en", ["Is tea better than coffee?", "Both are fine in moderation."],
                 attempts=(2,), opening_key="o2"),
        dialogue("3", "en", ["Hola amigo", "Hello!"], passed=False, opening_key="o1"),
        dialogue("4", "zh", ["我今天很累", "早点休息吧"], opening_key="o3"),
    ]
    en, zh = synth_stats(items)
    assert (en.language, en.dialogues, en.filtered) == ("en", 2, 1)
    assert en.avg_turns == pytest.approx(2.5)
    assert en.avg_utterance_length == pytest.approx((5 + 4 + 3 + 5 + 5) / 5)
    assert en.avg_user_utterance_length == pytest.approx((5 + 3 + 5) / 3)
    assert en.length_unit == "words" and zh.length_unit == "characters"
    assert zh.avg_utterance_length == pytest.approx(5.0)
    # judged attempts in en: 1 + 3 + 2 + 1 (the filtered one) = 7, of which 4 accepted
    assert en.judge_acceptance == pytest.approx(4 / 7)
    assert en.regenerations_per_turn == pytest.approx((0 + 2 + 1 + 0) / 4)
    # three dialogues x 2 chatbot calls; openings o1 (shared by 1 and 3) and o2 counted once each
    assert en.model_calls == 3 * 2 + 2 and en.cache_hits == 3
    assert en.prompt_tokens == 300 + 100 and en.completion_tokens == 60 + 20
    assert en.mtld > 0 and not math.isnan(zh.mtld)
    table = stats_table([en, zh])
    assert table.count("\n") == 3 and "| en | 2 | 1 |" in table


def test_items_not_written_by_synth_are_refused():
    with pytest.raises(ValueError, match="no meta.synth"):
        synth_stats([Item(id="x", context=(Turn(speaker="a", text="hi"),))])
