"""Properties every built-in benchmark keeps, the registry, and the JSONL round trip."""

import json
import re

import pytest

from convoscope.datasets import (
    Benchmark,
    _registry,
    list_benchmarks,
    load_benchmark,
    register_benchmark,
    write_benchmark,
)
from convoscope.items import Item, ItemError, read_items
from convoscope.judges._verdict import Verdict

BUILT_IN = list(list_benchmarks())


def test_every_family_is_registered():
    assert set(BUILT_IN) >= {"fed-turn", "fed-dialogue", "usr-topicalchat", "usr-personachat", "grade",
                             "conture-turn", "conture-dialogue", "abc-eval", "maia-dqe-turn",
                             "maia-dqe-sentence", "maia-dqe-dialogue", "ji2022", "ji2022-all"}


@pytest.mark.parametrize("name", BUILT_IN)
def test_a_benchmark_is_consistent(name, samples):
    benchmark = load_benchmark(name, samples)  # from the root, as from a data collection
    ids = [item.id for item in benchmark.items]
    assert benchmark.items and len(ids) == len(set(ids))
    assert benchmark.human, "a benchmark without human verdicts is useless for metaeval"
    items = {item.id: item for item in benchmark.items}
    for verdict in benchmark.human:
        item = items[verdict.item_id]
        assert re.fullmatch(r"human:[\w.-]+", verdict.rater)
        assert verdict.criterion in benchmark.criteria
        assert (verdict.language, verdict.system) == (item.language, item.system)
        # Integers or label text as given; unscored exactly when a reason says why.
        value = verdict.value
        assert value is None or (isinstance(value, int | str) and not isinstance(value, bool))
        assert (verdict.value is None) == (verdict.unscored_reason is not None)
    for criterion, description in benchmark.criteria.items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", criterion)
        assert len(description) > 15
    dialogue = benchmark.granularity == "dialogue"
    assert all((item.response is None) == dialogue for item in benchmark.items)


@pytest.mark.parametrize("name", BUILT_IN)
def test_loading_twice_gives_the_same_ids(name, samples):
    first, second = load_benchmark(name, samples), load_benchmark(name, samples)
    assert [item.id for item in first.items] == [item.id for item in second.items]


def test_unknown_name_lists_the_known_ones(samples):
    with pytest.raises(ValueError, match=r"unknown benchmark 'fedd' \(known: fed-turn, "):
        load_benchmark("fedd", samples)


def test_a_missing_path_is_an_item_error(tmp_path):
    with pytest.raises(ItemError, match="not found"):
        load_benchmark("grade", tmp_path / "nope")


def test_register_a_custom_loader(monkeypatch, samples):
    monkeypatch.setattr(_registry, "_registered", {})
    item = Item(id="x1", response="hello", language="en")

    def load_mine(path):
        """Our own rated logs."""
        verdict = Verdict(item_id="x1", criterion="helpful", rater="human:ann", value=1)
        return Benchmark(name="mine", granularity="turn", items=(item,), human=(verdict,),
                         criteria={"helpful": "Was it helpful? 0 no, 1 yes."}, meta={"path": str(path)})

    register_benchmark("mine", load_mine)
    assert list_benchmarks()["mine"] == "Our own rated logs."
    assert load_benchmark("mine", samples).meta["path"] == str(samples)
    with pytest.raises(ValueError, match="built-in"):
        register_benchmark("grade", load_mine)
    with pytest.raises(ValueError, match="one word"):
        register_benchmark("my set", load_mine)


def test_benchmark_refuses_inconsistent_records():
    item = Item(id="a", response="r")
    good = Verdict(item_id="a", criterion="c", rater="human:1", value=1)
    with pytest.raises(ValueError, match="unique"):
        Benchmark(name="b", granularity="turn", items=(item, item), human=(good,), criteria={"c": "d"})
    with pytest.raises(ValueError, match="unknown item 'z'"):
        Benchmark(name="b", granularity="turn", items=(item,), criteria={"c": "d"},
                  human=(good.model_copy(update={"item_id": "z"}),))
    with pytest.raises(ValueError, match="undescribed criterion"):
        Benchmark(name="b", granularity="turn", items=(item,), human=(good,), criteria={})
    with pytest.raises(ValueError, match="granularity"):
        Benchmark(name="b", granularity="sentence", items=(item,), human=(good,), criteria={"c": "d"})


def test_write_benchmark_round_trip(samples, tmp_path):
    abc = load_benchmark("abc-eval", samples)
    counts = write_benchmark(abc, tmp_path / "items.jsonl", tmp_path / "human.jsonl",
                             published_path=tmp_path / "published.jsonl")
    assert counts == {"items": 4, "human": 72, "published": 60}
    assert tuple(read_items(tmp_path / "items.jsonl")) == abc.items
    lines = (tmp_path / "human.jsonl").read_text().splitlines()
    human = [Verdict.model_validate_json(line) for line in lines]
    assert tuple(human) == abc.human
    first = json.loads((tmp_path / "published.jsonl").read_text().splitlines()[0])
    assert first["rater"].startswith("model:")


def test_write_keeps_unscored_verdicts_and_their_reasons(samples, tmp_path):
    fed = load_benchmark("fed-dialogue", samples)
    write_benchmark(fed, tmp_path / "items.jsonl", tmp_path / "human.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "human.jsonl").read_text().splitlines()]
    unscored = [row for row in rows if row["value"] is None]
    assert len(unscored) == 2 and all(row["reason"].startswith("N/A") for row in unscored)
