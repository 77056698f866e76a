"""Baselines: length (exact counts), TF-IDF cosine (pinned to scikit-learn), the pairs each
item compares, ratings that line up with the judges, and the real embedding model (slow)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from convoscope.baselines import (
    RATERS,
    LlamaEmbedder,
    TfidfSpace,
    baseline_ratings,
    baseline_scores,
    cosine,
    item_length,
    item_pairs,
    length,
    tfidf_tokens,
)
from convoscope.items import Item, Turn

DOCUMENTS = [
    "Do you like jazz music?",
    "I love jazz, especially Miles Davis and his trumpet.",
    "The weather is nice today.",
    "Jazz jazz jazz! Music is my life, and jazz is the best music.",
    "What's your favourite food?",
]


def _item(item_id: str, response: str | None, *turns: str, question: str | None = None,
          language: str = "en") -> Item:
    context = tuple(Turn(speaker="AB"[index % 2], text=text) for index, text in enumerate(turns))
    return Item(id=item_id, question=question, context=context, response=response, language=language,
                system="bot-1")


class LetterCountFakeEmbedder:
    """A fake embedder (no model): a text's vector counts its letters a-z. Deterministic and
    cheap, so the plumbing around embeddings is tested here and the real model in the slow tests."""

    name = "fake:letters"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def embed(self, texts):
        self.calls.extend(texts)
        return np.array([[text.lower().count(chr(code)) for code in range(97, 123)] for text in texts],
                        dtype=float)


@pytest.mark.parametrize(("text", "expected"), [
    ("Hello, world!", 2),
    ("I don't know.", 3),
    ("  ", 0),
    ("state-of-the-art 3.5 times", 7),  # hyphens and the decimal point separate words
    ("안녕하세요", 1),  # Korean is written with spaces: Hangul runs are words
    ("직원들이 친절했어요", 2),
    ("今日は good day", 5),  # Han and kana: one per character; Latin words as words
    ("ok ㅋㅋ", 2),  # a run of jamo is one word too
])
def test_length_counts_words_and_chinese_japanese_characters(text, expected):
    assert length(text) == expected


def test_tokens_are_lower_case_and_keep_inner_apostrophes():
    assert tfidf_tokens("It's Miles DAVIS's") == ["it's", "miles", "davis's"]


def test_item_length_counts_the_response_or_the_whole_dialogue():
    assert item_length(_item("a", "Sure, I can help.", "Hi there", "Hello")) == 4
    assert item_length(_item("d", None, "Hi there", "Hello, how are you?", "Fine.")) == 2 + 4 + 1


def test_tfidf_cosine_matches_scikit_learn():
    space = TfidfSpace(DOCUMENTS)
    vectorizer = TfidfVectorizer(tokenizer=tfidf_tokens, lowercase=False, token_pattern=None)
    matrix = vectorizer.fit_transform(DOCUMENTS)
    expected = cosine_similarity(matrix)
    for first in range(len(DOCUMENTS)):
        for second in range(len(DOCUMENTS)):
            assert space.cosine(DOCUMENTS[first], DOCUMENTS[second]) == pytest.approx(
                expected[first, second], abs=1e-12)


def test_tfidf_properties():
    space = TfidfSpace(DOCUMENTS)
    assert space.cosine(DOCUMENTS[1], DOCUMENTS[1]) == pytest.approx(1.0)
    assert space.cosine(DOCUMENTS[1], DOCUMENTS[2]) == 0.0  # no shared word
    assert space.cosine(DOCUMENTS[0], DOCUMENTS[3]) == space.cosine(DOCUMENTS[3], DOCUMENTS[0])
    assert space.cosine("entirely unseen words", DOCUMENTS[0]) == 0.0
    with pytest.raises(ValueError, match="at least one document"):
        TfidfSpace([])


def test_cosine_of_vectors_and_its_error():
    assert cosine(np.array([1.0, 0.0]), np.array([2.0, 0.0])) == pytest.approx(1.0)
    assert cosine(np.array([1.0, 0.0]), np.array([0.0, 3.0])) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="zero vector"):
        cosine(np.zeros(2), np.ones(2))


def test_pairs_use_the_question_and_the_last_context_turns():
    item = _item("a", "Blue.", "one", "two", "three", "four", question="Favourite colour?")
    assert item_pairs(item, context_turns=2) == [("Favourite colour?\nthree\nfour", "Blue.")]
    assert item_pairs(_item("s", "An answer", question="A question?")) == [("A question?", "An answer")]
    assert item_pairs(_item("n", "A response with no context")) == []
    dialogue = _item("d", None, "Hi", "Hello!", "How are you?")
    assert item_pairs(dialogue) == [("Hi", "Hello!"), ("Hello!", "How are you?")]
    with pytest.raises(ValueError, match="context_turns"):
        item_pairs(item, context_turns=0)


def test_tfidf_scores_use_the_items_own_texts_as_the_collection():
    items = [_item("a", DOCUMENTS[3], DOCUMENTS[0]), _item("b", DOCUMENTS[2], DOCUMENTS[1]),
             _item("c", DOCUMENTS[4])]
    scores = baseline_scores(items, "tfidf")
    space = TfidfSpace([DOCUMENTS[0], DOCUMENTS[3], DOCUMENTS[1], DOCUMENTS[2]])  # each text once
    assert scores["a"] == pytest.approx(space.cosine(DOCUMENTS[0], DOCUMENTS[3]))
    assert scores["a"] != pytest.approx(TfidfSpace(DOCUMENTS).cosine(DOCUMENTS[0], DOCUMENTS[3]))
    assert scores["a"] > 0.0 and scores["b"] == 0.0  # b's texts share no word
    assert scores["c"] is None  # no context: undefined, not zero


def test_embedding_scores_average_adjacent_turns_of_a_dialogue():
    fake = LetterCountFakeEmbedder()
    dialogue = _item("d", None, "abc", "abd", "xyz")
    turn = _item("t", "cab", "abc")
    scores = baseline_scores([dialogue, turn], "embedding", embedder=fake)
    vectors = fake.embed(["abc", "abd", "xyz"])
    expected = np.mean([cosine(vectors[0], vectors[1]), cosine(vectors[1], vectors[2])])
    assert scores["d"] == pytest.approx(expected)
    assert scores["t"] == pytest.approx(1.0)  # same letters


def test_unknown_baseline_is_named():
    with pytest.raises(ValueError, match="unknown baseline 'bleu'.*length, embedding, tfidf"):
        baseline_scores([_item("a", "x")], "bleu")


def test_ratings_line_up_with_every_criterion():
    items = [_item("a", "Short one.", "Hi"), _item("b", "A much longer response here.", "Hi", language="ko"),
             _item("c", "No context at all")]
    ratings = baseline_ratings(items, ["length", "tfidf", "length"], ["overall", "relevance"])
    assert len(ratings) == 2 * 2 * 3  # repeated baseline names count once
    assert {r.rater for r in ratings} == {RATERS["length"], RATERS["tfidf"]}
    lengths = {(r.item_id, r.criterion): r.value for r in ratings if r.rater == "baseline:length"}
    assert lengths == {("a", "overall"): 2, ("b", "overall"): 5, ("c", "overall"): 4,
                       ("a", "relevance"): 2, ("b", "relevance"): 5, ("c", "relevance"): 4}
    by_item = {r.item_id: r for r in ratings}
    assert by_item["b"].language == "ko" and by_item["b"].system == "bot-1"
    assert next(r.value for r in ratings if r.rater == "baseline:tfidf-sim" and r.item_id == "c") is None
    with pytest.raises(ValueError, match="at least one criterion"):
        baseline_ratings(items, ["length"], [])


@pytest.fixture(scope="module")
def embedder():
    pytest.importorskip("llama_cpp")
    model = LlamaEmbedder()
    yield model
    model.close()


@pytest.mark.slow
def test_real_embeddings_identical_texts_shape_and_determinism(embedder):
    texts = ["Do you like jazz?", "I love jazz, especially Miles Davis.", "Do you like jazz?"]
    vectors = embedder.embed(texts)
    assert vectors.shape[0] == 3 and vectors.shape[1] > 100 and np.all(np.isfinite(vectors))
    assert cosine(vectors[0], vectors[2]) == pytest.approx(1.0, abs=1e-6)
    assert cosine(vectors[0], vectors[1]) < 0.999
    fresh = LlamaEmbedder()
    try:
        again = fresh.embed(texts[:2])
    finally:
        fresh.close()
    np.testing.assert_allclose(again, vectors[:2], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="empty text"):
        embedder.embed(["  "])


@pytest.mark.slow
def test_real_embedding_baseline_scores_items(embedder):
    items = [_item("same", "Do you like jazz?", "Do you like jazz?"),
             _item("other", "My tax return is due on Monday.", "Do you like jazz?")]
    scores = baseline_scores(items, "embedding", embedder=embedder)
    assert scores["same"] == pytest.approx(1.0, abs=1e-6)
    assert -1.0 <= scores["other"] < scores["same"]
