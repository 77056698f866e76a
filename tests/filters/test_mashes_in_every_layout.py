"""Issue 38, observation 2: keyboard mashes outside Latin and kana were never caught, and
declaring a language let more Latin mashes through. The rows come from the XKB data
(``scripts/keyboard_rows.py`` -> ``filters/data/keyboard_rows.json``)."""

from __future__ import annotations

import pytest

pytest.importorskip("wordfreq")
pytest.importorskip("py3langid")

from convoscope.filters import detect  # noqa: E402


@pytest.mark.parametrize(("lang", "text"), [
    ("ru", "фывапролдж"),  # ЙЦУКЕН home row
    ("uk", "йцукенгшщз"),
    ("ar", "ضصثقفغعهخ"),
    ("he", "שדגכעיחלך"),
    ("el", "ασδφγηξκλ"),
    ("hi", "ौैाीूबहगदज"),  # InScript top row
    ("th", "ฟหกดเ้่าสวง"),  # Kedmanee home row
    ("tr", "asdfghjklş"),
    ("sv", "asdfghjklöä"),
])
def test_a_mash_along_a_row_of_the_languages_layout_is_caught(lang: str, text: str) -> None:
    assert detect(text, lang=lang).gibberish
    assert detect(text).gibberish


@pytest.mark.parametrize("lang", ["es", "pt", "de", "fr"])
def test_declaring_a_language_lets_no_more_latin_mashes_through(lang: str) -> None:
    for mash in ("qweasdzxc", "asdzxcqwe"):
        assert detect(mash, lang=lang).gibberish, (lang, mash)


@pytest.mark.parametrize(("lang", "text"), [
    ("ar", "ههههه حلو"), ("hi", "ठीक ठाक"), ("sv", "najs"), ("ru", "Доставка пришла вовремя"),
    ("el", "Πολύ καλή εξυπηρέτηση"), ("he", "שירות מצוין ומהיר"), ("tr", "Çok güzeldi, teşekkürler"),
])
def test_short_real_answers_in_those_languages_are_kept(lang: str, text: str) -> None:
    assert not detect(text, lang=lang).gibberish
