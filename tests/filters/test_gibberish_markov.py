"""The bigram model against hand-computed values, and its table format."""

import gzip
import math

import pytest

from convoscope.filters import BigramModel


def test_log_likelihood_matches_hand_computed_add_one_smoothing():
    model = BigramModel.train(["abab"], alphabet="ab", smoothing=1.0)
    assert model.counts == ((0, 2), (1, 0))
    # P(b|a) = (2+1)/(2+2), P(a|b) = (1+1)/(1+2)
    assert model.mean_log_likelihood("ab") == pytest.approx(math.log(3 / 4))
    assert model.mean_log_likelihood("aba") == pytest.approx((math.log(3 / 4) + math.log(2 / 3)) / 2)
    assert model.mean_log_likelihood("aa") == pytest.approx(math.log(1 / 4))


def test_too_short_or_unknown_symbols_give_none():
    model = BigramModel.train(["abab"], alphabet="ab")
    assert model.mean_log_likelihood("a") is None
    assert model.mean_log_likelihood("xyz") is None
    assert model.mean_log_likelihood("a-b") == pytest.approx(math.log(3 / 4))  # unknown symbols skipped


def test_save_load_round_trip_is_byte_stable(tmp_path):
    model = BigramModel.train(["hello world"], alphabet=" dehlorw", source="test")
    first, second = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    model.save(first)
    model.save(second)
    assert first.read_bytes() == second.read_bytes()
    assert BigramModel.load(first) == model


def test_bad_tables_are_rejected_with_the_path(tmp_path):
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(gzip.compress(b'{"format": "something-else"}'))
    with pytest.raises(ValueError, match="broken.json.gz"):
        BigramModel.load(broken)
    with pytest.raises(ValueError, match="counts"):
        BigramModel("ab", ((1,),))
    with pytest.raises(ValueError, match="smoothing"):
        BigramModel("ab", ((0, 0), (0, 0)), smoothing=0)


def test_shipped_tables_separate_text_from_mashes():
    from convoscope.filters import markov_log_likelihood

    assert markov_log_likelihood("the food was great", lang="en") > -3.0
    assert markov_log_likelihood("xzqj kvbw", lang="en") < -4.0
    assert markov_log_likelihood("음식이 맛있어요", lang="ko") > -3.0
    assert markov_log_likelihood("ㅁㄴㅇㄹ", lang="ko") < -3.5
