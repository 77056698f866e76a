"""Issue 38, observation 2: keyboard mashes outside Latin and kana were never caught, and
declaring a language let more Latin mashes through. The rows come from the XKB data
(``scripts/keyboard_rows.py`` -> ``filters/data/keyboard_rows.json``)."""

from __future__ import annotations

from pathlib import Path

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


def test_gibberish_reads_each_answers_language_from_a_column(tmp_path: Path) -> None:
    # Observation 5: `convoscope gibberish` had no language column.
    import json

    from click.testing import CliRunner

    from convoscope.cli import cli

    answers = tmp_path / "answers.csv"
    answers.write_text("answer,language\n"
                       "डिलीवरी समय पर हुई और पैकिंग भी अच्छी थी,hi\n"
                       "qweasdzxc,es\n"
                       "Доставка пришла вовремя,ru\n", encoding="utf-8")
    out = tmp_path / "flags.jsonl"
    result = CliRunner().invoke(cli, ["gibberish", str(answers), "--column", "answer",
                                      "--lang-col", "language", "--out", str(out)])
    assert result.exit_code == 0, result.output
    flags = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [flag["gibberish"] for flag in flags] == [False, True, False]
    assert [flag["lang"] for flag in flags] == ["hi", "es", "ru"]
    assert all("declared_language" in flag["notes"] for flag in flags)
    missing = CliRunner().invoke(cli, ["gibberish", str(answers), "--column", "answer",
                                       "--lang-col", "lingua"])
    assert missing.exit_code != 0 and "lingua" in missing.output


def _keyboard_rows_generator():  # noqa: ANN202 - a script module
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "scripts" / "keyboard_rows.py"
    spec = importlib.util.spec_from_file_location("keyboard_rows", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generator_reads_unicode_keysyms_written_without_the_leading_zero() -> None:
    # xkb-data writes the Nepali, Bengali and Urdu keys as 0x100091F, not 0x0100091F: the
    # generator dropped those layouts whole.
    generator = _keyboard_rows_generator()
    assert generator.to_char("0x100091F", {}) == "ट"
    assert generator.to_char("0x0100091F", {}) == "ट"
    assert generator.to_char("0x1000985", {}) == "অ"


def test_the_keyboard_data_holds_the_nepali_bengali_and_urdu_layouts() -> None:
    import json

    from convoscope.filters import _neutral

    data = json.loads((Path(_neutral.__file__).parent / "data" / "keyboard_rows.json").read_text("utf-8"))
    layouts = data["layouts"]
    assert layouts["np"][0].startswith("टौेरतय")
    assert layouts["bd"][1].startswith("ৃুিব")
    assert layouts["pk"][1].startswith("اسدفگ")
    assert layouts["hr"][0].startswith("qwertz")  # 'any' keeps the included key


@pytest.mark.parametrize(("lang", "text"), [
    ("ne", "टौेरतयुि"),  # Nepali layout, top row
    ("ne", "ासदउगहजक"),
    ("bn", "ৃুিব্াকত"),  # Bengali (Probhat-like default) home row
    ("ur", "اسدفگحجک"),
])
def test_a_mash_on_the_nepali_bengali_or_urdu_layout_is_caught(lang: str, text: str) -> None:
    assert detect(text, lang=lang).gibberish
    assert detect(text).gibberish


@pytest.mark.parametrize(("lang", "text"), [
    ("hi", "मुझे खाना बहुत अच्छा लगा"), ("hi", "ठीक है"), ("ne", "सेवा राम्रो थियो"),
    ("mr", "जेवण छान होते"), ("bn", "খাবার খুব ভালো ছিল"), ("ur", "کھانا بہت اچھا تھا"),
])
def test_real_answers_typed_on_those_layouts_are_kept(lang: str, text: str) -> None:
    assert not detect(text, lang=lang).gibberish
    assert not detect(text).gibberish
