"""Issue 38, observation 7: synth kept a Korean dialogue of symbol soup and one where the chatbot
repeats the user word for word (0 of 6 ko/ja/zh dialogues filtered). The dialogue check now reads
the text layer, in every script."""

from __future__ import annotations

import pytest

from convoscope.items import Turn
from convoscope.synth import SynthSettings
from convoscope.synth._agents import Usage
from convoscope.synth._filters import filter_dialogue

SETTINGS = SynthSettings(check_role=False)


def _dialogue(*pairs: tuple[str, str]) -> list[Turn]:
    return [Turn(speaker=speaker, text=text) for speaker, text in pairs]


@pytest.mark.parametrize(("language", "turns"), [
    ("ko", _dialogue(("user", "(소) (가) (가) (나)"), ("chatbot", "무엇을 도와드릴까요?"))),
    ("ja", _dialogue(("user", "[あ] [い] [う] [え]"), ("chatbot", "ご用件は何でしょうか。"))),
    ("zh", _dialogue(("user", "（好）（的）（吗）（呢）"), ("chatbot", "请问有什么可以帮您？"))),
    ("hi", _dialogue(("user", "(क) (ख) (ग) (घ)"), ("chatbot", "मैं आपकी क्या मदद कर सकता हूँ?"))),
])
async def test_a_dialogue_of_symbol_soup_is_filtered_in_any_script(language: str, turns: list[Turn]) -> None:
    result = await filter_dialogue(turns, language, judge=None, settings=SETTINGS, usage=Usage(), key="k")
    assert not result.passed and "symbol_soup" in result.reasons


@pytest.mark.parametrize(("language", "said"), [
    ("ko", "배송이 언제 도착하나요?"), ("ja", "配送はいつ届きますか？"), ("zh", "快递什么时候到？"),
    ("th", "พัสดุจะมาถึงเมื่อไหร่ครับ"),
])
async def test_a_chatbot_that_echoes_the_user_word_for_word_is_filtered(language: str, said: str) -> None:
    turns = _dialogue(("user", said), ("chatbot", said.rstrip("?？") + " "))
    result = await filter_dialogue(turns, language, judge=None, settings=SETTINGS, usage=Usage(), key="k")
    assert not result.passed and "echo" in result.reasons


@pytest.mark.parametrize(("language", "turns"), [
    ("ko", _dialogue(("user", "배송이 언제 도착하나요?"), ("chatbot", "내일 오후에 도착할 예정입니다."))),
    ("ja", _dialogue(("user", "配送はいつ届きますか？"), ("chatbot", "明日の午後に届く予定です。"))),
    ("zh", _dialogue(("user", "快递什么时候到？"), ("chatbot", "预计明天下午送达。"))),
    ("hi", _dialogue(("user", "मेरा ऑर्डर कब आएगा?"), ("chatbot", "आपका ऑर्डर कल दोपहर तक पहुँच जाएगा।"))),
])
async def test_an_ordinary_dialogue_in_those_scripts_passes(language: str, turns: list[Turn]) -> None:
    result = await filter_dialogue(turns, language, judge=None, settings=SETTINGS, usage=Usage(), key="k")
    assert "symbol_soup" not in result.reasons and "echo" not in result.reasons
