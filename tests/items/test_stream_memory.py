"""The duplicate-id check of a streamed input holds a few bytes per id, not a Python object each.

Observed (benchmarks/results/run_scale.md): peak RSS grew about 90 bytes per item (79 MB at 10k
items, 174 MB at 1M), and tracemalloc put it in the set of 64-bit id markers the stream kept: a
Python set of ints costs a boxed int and a hash slot per id.
"""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from convoscope.items import ItemError, ItemStream
from convoscope.items._stream import SeenIds

ROW = '{"id": "item-%d", "response": "x"}\n'


def test_the_ids_of_a_large_input_cost_under_24_bytes_each(tmp_path, monkeypatch):
    monkeypatch.setattr(SeenIds, "SMALL", 4096)  # the first ids in a set, the rest in arrays
    size = 40_000
    path = tmp_path / "big.jsonl"
    path.write_text("".join(ROW % n for n in range(size)))
    warm = tmp_path / "warm.jsonl"  # a whole smaller input first: imports, caches and the switch
    warm.write_text("".join(ROW % n for n in range(6_000)))  # from set to arrays settle (alone, this
    for chunk in ItemStream(warm, chunk_size=256).chunks():  # test measured them: 173 bytes an id)
        chunk.items()
    import numpy.ma  # noqa: F401  (numpy imports it on the first merge of two runs of ids: once, not per id)

    chunks = ItemStream(path, chunk_size=256).chunks()
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for chunk in chunks:
            chunk.items()
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert held / size < 24, f"{held / size:.1f} bytes held per id"  # before: 71


@pytest.mark.parametrize("small", [1 << 16, 64, 1])
@pytest.mark.parametrize("chunk_size", [1, 3, 256])
def test_a_duplicate_is_still_found_however_far_from_the_first(tmp_path, monkeypatch, chunk_size, small):
    monkeypatch.setattr(SeenIds, "SMALL", small)
    path = tmp_path / "dup.jsonl"
    lines = [ROW % n for n in range(2000)] + [ROW % 7] + [ROW % n for n in range(2000, 2100)]
    path.write_text("".join(lines))
    with pytest.raises(ItemError, match=r"line 2001, field 'id': duplicate id 'item-7' \(first on line 8\)"):
        for chunk in ItemStream(path, chunk_size=chunk_size).chunks():
            chunk.items()


def test_the_first_duplicate_in_a_chunk_is_named_before_a_bad_row_after_it(tmp_path):
    path = tmp_path / "dup.jsonl"
    path.write_text(ROW % 1 + ROW % 2 + ROW % 1 + '{"id": "z"}\n')
    with pytest.raises(ItemError, match=r"line 3, field 'id': duplicate id 'item-1'"):
        ItemStream(path).check_start()


@pytest.mark.parametrize("small", [1 << 16, 2])
def test_parsing_a_chunk_twice_is_not_a_duplicate(tmp_path, monkeypatch, small):
    monkeypatch.setattr(SeenIds, "SMALL", small)
    path = tmp_path / "twice.jsonl"
    path.write_text("".join(ROW % n for n in range(10)))
    chunks = list(ItemStream(path, chunk_size=4).chunks())
    for chunk in chunks + chunks:
        assert len(chunk.items()) == chunk.size


def test_the_set_and_the_arrays_agree_with_a_python_set():
    import random

    rng = random.Random(7)
    seen, reference = SeenIds(), set()
    seen.SMALL = 50  # type: ignore[misc]  # spills often: many runs, merged
    for _ in range(300):
        markers = [rng.randrange(2000) for _ in range(rng.randrange(1, 20))] + [rng.randrange(2**64)]
        expected = []
        for index, marker in enumerate(markers):
            if marker in reference:
                expected.append(index)
            reference.add(marker)
        assert seen.add(markers) == expected
    assert len(seen) == len(reference)
