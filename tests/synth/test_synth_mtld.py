"""MTLD against a hand-worked value and the lexicalrichness package; tokenising per language."""

from __future__ import annotations

import math
import random

import pytest

from convoscope.synth import mtld, tokens, utterance_length


def test_hand_worked_value():
    # Forward: a b a b -> TTR 1, 1, .67 (<= .72: factor 1 after 3 tokens), then "b" left over
    # with TTR 1 -> partial factor 0. Tokens 4 / factors 1 = 4. Backward: b a b a is the mirror,
    # also 4. MTLD = 4.
    assert mtld(["a", "b", "a", "b"]) == pytest.approx(4.0)
    # a a a a: each factor ends after 2 tokens (TTR .5): 4 / 2 = 2 both ways.
    assert mtld(["a"] * 4) == pytest.approx(2.0)
    # All distinct: no factor ever completes and the remainder has TTR 1: one factor of length n.
    assert mtld(list("abcdef")) == pytest.approx(6.0)


def test_matches_lexicalrichness_on_random_texts():
    lexicalrichness = pytest.importorskip("lexicalrichness")
    rng = random.Random(0)
    for length, vocabulary in [(20, 8), (150, 40), (400, 120), (57, 57)]:
        words = [f"w{rng.randrange(vocabulary)}" for _ in range(length)]
        reference = lexicalrichness.LexicalRichness(words, preprocessor=None, tokenizer=None)
        for threshold in (0.72, 0.66):
            assert mtld(words, threshold=threshold) == pytest.approx(reference.mtld(threshold=threshold))


def test_more_varied_text_scores_higher_and_errors():
    dull = "I like it and I like it and I like it a lot".split()
    varied = "Morning fog drifted over quiet harbours while gulls circled fishing boats".split()
    assert mtld(varied) > mtld(dull)
    assert math.isnan(mtld([]))
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        mtld(["a"], threshold=1.0)


def test_tokens_and_lengths_per_language():
    assert tokens("Olá, tudo bem? Tudo!", "pt") == ["olá", "tudo", "bem", "tudo"]
    assert tokens("我今天很累", "zh") == ["我", "今", "天", "很", "累"]
    assert utterance_length("我今天很累，有建议吗？", "zh") == 9
    assert utterance_length("It's a well-known fact.", "en") == 4
    assert utterance_length("요즘 회사 일이 많아요", "ko") == 4
