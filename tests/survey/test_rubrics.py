"""Korean answers are judged with the Korean rubrics, which mirror the English ones exactly."""

from __future__ import annotations

import pytest

from convoscope.criteria import get_criterion, load_suite
from convoscope.filters import detect
from convoscope.items import Item
from convoscope.survey._score import _by_rubric


def test_korean_suite_mirrors_the_english_scales_and_levels() -> None:
    english, korean = load_suite("survey"), load_suite("survey-ko")
    assert korean.translation_of == "survey" and korean.language == "ko"
    assert [c.name for c in korean.criteria] == [c.name for c in english.criteria]
    for en, ko in zip(english.criteria, korean.criteria, strict=True):
        assert ko.scale == en.scale
        assert [level.value for level in ko.levels] == [level.value for level in en.levels]
        assert all(level.definition and level.examples for level in ko.levels)
        assert ko.question != en.question  # written in Korean, not copied


def test_a_translation_never_makes_a_bare_name_ambiguous() -> None:
    assert get_criterion("effort").suite == "survey"
    assert get_criterion("survey-ko:effort").suite == "survey-ko"


@pytest.mark.parametrize(("rubrics", "expected"), [
    ("auto", {"survey": ["en", "tagged-en"], "survey-ko": ["ko", "tagged-ko"]}),
    ("en", {"survey": ["en", "ko", "tagged-en", "tagged-ko"]}),
])
def test_answers_go_to_the_rubrics_of_their_language(rubrics: str, expected: dict) -> None:
    items = [Item(id="en", question="Why?", response="Because the staff were kind."),
             Item(id="ko", question="왜요?", response="직원들이 친절했어요"),
             # an explicit language wins over detection
             Item(id="tagged-en", question="Why?", response="직원들이 친절했어요", language="en"),
             Item(id="tagged-ko", question="왜요?", response="kind staff", language="ko-KR")]
    flags = {item.id: detect(item.response or "") for item in items}
    groups = _by_rubric(items, flags, rubrics)  # type: ignore[arg-type]
    assert {suite: [item.id for item in group] for suite, group in groups.items()} == expected
