"""The table-rebuild script on a small corpus written for these tests (tests/filters/sample_corpus)."""

import gzip
import importlib.util
import shutil
from pathlib import Path

import pytest

from convoscope.filters import BigramModel

ROOT = Path(__file__).parents[2]
SAMPLE = Path(__file__).parent / "sample_corpus"


def load_script():
    path = ROOT / "scripts" / "build_gibberish_tables.py"
    spec = importlib.util.spec_from_file_location("build_tables", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rebuild_from_sample_corpus(tmp_path):
    script = load_script()
    assert script.main(["--data", str(SAMPLE), "--out", str(tmp_path)]) == 0
    english = BigramModel.load(tmp_path / "en_char_bigrams.json.gz")
    korean = BigramModel.load(tmp_path / "ko_jamo_bigrams.json.gz")
    words = gzip.decompress((tmp_path / "en_words.txt.gz").read_bytes()).decode().split()
    # "the" occurs in several sample lines; "hiking" once, so it misses the count-2 cut.
    assert "the" in words and "hiking" not in words
    # Speaker prefixes are stripped: "Human 1:" would otherwise give "hu" counts of 6+.
    a, h, u = (english.alphabet.index(c) for c in "ahu")
    assert english.counts[h][u] == 0
    assert english.counts[h][a] > 0
    assert korean.mean_log_likelihood(" \u1100\u1161 ") is not None
    # The repeated Q/A row counts once: 책 (initial ᄎ, vowel ᅢ) occurs only in that row.
    cheu, ae = korean.alphabet.index("\u110e"), korean.alphabet.index("\u1162")
    assert korean.counts[cheu][ae] == 1
    assert "Chatbot" in korean.source and "CC0" in english.source
    again = tmp_path / "again"
    script.main(["--data", str(SAMPLE), "--out", str(again)])
    for name in ("en_char_bigrams.json.gz", "en_words.txt.gz", "ko_jamo_bigrams.json.gz"):
        assert (again / name).read_bytes() == (tmp_path / name).read_bytes()


def test_rebuild_refuses_a_corpus_without_the_expected_licence(tmp_path):
    corpus = tmp_path / "data"
    shutil.copytree(SAMPLE, corpus)
    (corpus / "korean-chatbot-data" / "SOURCE.md").write_text("no licence stated", encoding="utf-8")
    with pytest.raises(SystemExit, match="MIT"):
        load_script().main(["--data", str(corpus), "--out", str(tmp_path / "out")])
