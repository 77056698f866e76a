"""Short answers in Italian, Polish and Dutch (issue 26, obs. 1 named them with pt/es/de): the
declared language's word list keeps them; keyboard mashes are still flagged. Before, with
``lang`` given, short answers outside English and Korean were flagged ``few_valid_words`` or
``no_letters``."""

from __future__ import annotations

import pytest

from convoscope.filters import detect

KEPT = {"it": ["ottimo", "molto bello", "mi è piaciuto", "pulito"],
        "pl": ["super", "bardzo dobrze", "czysto", "polecam"],
        "nl": ["prima", "heel goed", "schoon", "aanrader"]}


@pytest.mark.parametrize("lang", sorted(KEPT))
def test_short_answers_in_the_declared_language_are_kept_and_mashes_flagged(lang):
    results = {text: detect(text, lang=lang) for text in KEPT[lang]}
    flagged = {text: result.reasons for text, result in results.items() if result.gibberish}
    assert flagged == {}
    assert all(detect(mash, lang=lang).gibberish for mash in ("asdfgh jkl", "qwertyuiop", "sdfsdfsdf"))
