"""Sampling first (issue 23): a reproducible, stratified random sample drawn in one pass."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.errors import ConfigError
from convoscope.items import Item, ItemStream, sample_items
from convoscope.items._sample import allocate

_register()


def corpus(n=1000):
    languages = ["en"] * 6 + ["ko"] * 3 + ["pt"]
    return [Item(id=f"r{i}", response=f"answer {i}", language=languages[i % 10]) for i in range(n)]


def test_the_same_seed_draws_the_same_items_whatever_the_order():
    items = corpus()
    first = sample_items(items, 50, seed=7)
    again = sample_items(list(reversed(items)), 50, seed=7)
    assert len(first) == 50 and {i.id for i in first} == {i.id for i in again}
    assert [i.id for i in first] == sorted((i.id for i in first), key=lambda x: int(x[1:]))  # input order
    assert {i.id for i in sample_items(items, 50, seed=8)} != {i.id for i in first}


def test_strata_get_their_share_and_every_stratum_some():
    chosen = sample_items(corpus(), 100, stratify_by="language", seed=1)
    assert Counter(item.language for item in chosen) == {"en": 60, "ko": 30, "pt": 10}
    small = sample_items(corpus(), 3, stratify_by="language", seed=1)
    assert Counter(item.language for item in small) == {"en": 1, "ko": 1, "pt": 1}


def test_a_sample_larger_than_the_input_is_the_input():
    assert len(sample_items(corpus(20), 100, stratify_by="language")) == 20


def test_bad_requests_are_refused():
    with pytest.raises(ConfigError, match="cannot stratify by 'colour'"):
        sample_items(corpus(), 5, stratify_by="colour")
    with pytest.raises(ConfigError, match="at least one item"):
        sample_items(corpus(), 0)


@given(st.integers(1, 60), st.lists(st.integers(1, 40), min_size=1, max_size=6))
def test_allocation_sums_to_n_and_never_exceeds_a_stratum(n, sizes):
    counts = Counter({f"s{i}": size for i, size in enumerate(sizes)})
    shares = allocate(n, counts)
    assert sum(shares.values()) == min(n, sum(sizes))
    assert all(0 <= shares[key] <= counts[key] for key in counts)
    if sum(sizes) > n >= len(sizes):
        assert all(share >= 1 for share in shares.values())


def test_the_cli_judges_a_sample(tmp_path):
    path = tmp_path / "logs.jsonl"
    path.write_text("".join(json.dumps({"id": item.id, "response": item.response, "language": item.language})
                            + "\n" for item in corpus(200)))
    out = tmp_path / "v.jsonl"
    args = ["judge", str(path), "--suite", "kpi", "--kpi", "answer-length", "--sample", "20",
            "--stratify-by", "language", "--seed", "3", "--store", str(tmp_path / "s.db"), "--out", str(out)]
    result = CliRunner().invoke(cli, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Sample: 20 items, stratified by language, seed 3." in result.output
    judged = {json.loads(line)["item_id"] for line in out.read_text().splitlines()}
    expected = {item.id for item in sample_items(ItemStream(path), 20, stratify_by="language", seed=3)}
    assert judged == expected
