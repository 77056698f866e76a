"""Issue 38: mashes typed through the input methods that sit on US keys — Korean 2-set, zhuyin
(bopomofo) and pinyin — are caught, and real Korean and Chinese answers are kept. The rows come
from m17n-db through ``scripts/keyboard_rows.py``; the benchmark set from
``benchmarks/data/make_layout_mashes.py``."""

from __future__ import annotations

import pytest

pytest.importorskip("wordfreq")
pytest.importorskip("py3langid")

from convoscope.filters import detect  # noqa: E402
from convoscope.filters._neutral import han_mash_share  # noqa: E402


@pytest.mark.parametrize("text", [
    "ㄆㄊㄍㄐㄔㄗ",  # zhuyin top letter row
    "ㄘㄕㄑㄎㄋㄇ",  # home row backwards
    "ㄈㄌㄏㄒㄖㄙ",
])
def test_a_zhuyin_row_mash_is_caught_and_read_as_chinese(text: str) -> None:
    result = detect(text)
    assert result.gibberish and "keyboard_mash" in result.reasons
    assert result.lang == "zh"
    assert detect(text, lang="zh").gibberish


@pytest.mark.parametrize("text", [
    "啊撒大发噶哈",  # a s d f g h, each initial taking its syllable's first candidate
    "起挖而他呀",  # q w er t y: "er" is one syllable typed along the row
    "杂西擦v把嗯",  # z x c v b n: the method leaves the v as typed
    "啊撒大发起挖而",  # home row then top row
])
def test_a_row_mash_typed_through_a_pinyin_method_is_caught(text: str) -> None:
    assert detect(text).gibberish
    assert detect(text, lang="zh").gibberish


@pytest.mark.parametrize("text", [
    "这家店的菜很好吃，服务也不错", "还行吧", "一般般", "哈哈哈哈哈", "打发时间", "阿斯顿发",
    "一个我们中国他们没有", "可以什么这个国家自己", "ㄏㄏ", "ㄅㄅ",
])
def test_real_chinese_answers_and_zhuyin_chat_forms_are_kept(text: str) -> None:
    assert not detect(text).gibberish
    assert not detect(text, lang="zh").gibberish


def test_strings_of_frequent_chinese_words_rarely_read_as_a_pinyin_mash() -> None:
    import random

    from wordfreq import top_n_list

    words = [word for word in top_n_list("zh", 3000) if all("\u4e00" <= char <= "\u9fff" for char in word)]
    rng = random.Random(38)
    texts = ["".join(rng.sample(words, rng.randint(2, 6))) for _ in range(1000)]
    flagged = [text for text in texts if han_mash_share(text)[1] > 0.5]
    assert len(flagged) <= 3, flagged


@pytest.mark.parametrize("text", [
    "ㅂㅈㄷㄱㅅㅛ", "ㅁㄴㅇㄹㅎㅗ", "ㅋㅌㅊㅍㅠㅜ",  # 2-set rows, bare jamo
    "ㅂㅈㄷㄱ쇼", "ㅁㄴㅇㄹ호",  # the same keys composed by the input method
    "ㅂㅎ조더가시", "뱆더",  # consonant and vowel keys interleaved, composed
])
def test_a_korean_2set_row_mash_is_caught(text: str) -> None:
    assert detect(text).gibberish
    assert detect(text, lang="ko").gibberish


@pytest.mark.parametrize("text", ["맛있어요", "ㅋㅋㅋㅋ", "하루가 또 가네요.", "ㅇㅋ", "괜찮았어요 ㅎㅎ"])
def test_real_korean_answers_are_kept(text: str) -> None:
    assert not detect(text).gibberish
