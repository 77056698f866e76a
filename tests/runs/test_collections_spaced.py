"""A judge run spaces young garbage collections out (issue 39: ~0.1 s of CPU per 5,000 verdicts
went to collections walking the run's live objects), and puts the process's setting back."""

from __future__ import annotations

import gc
import threading

import pytest

import convoscope as cs
from convoscope._gc import YOUNG_COLLECTION_EVERY, collections_spaced
from convoscope.judges import python_judge

SEEN: list[int] = []
ITEMS = [cs.Item(id=str(n), response=f"answer {n}") for n in range(3)]
LONG = cs.Criterion(name="long", question="Is it long?", definition="Long.",
                    scale=cs.Scale(kind="binary", labels=("long", "short")))


@python_judge(name="threshold-spy", version="1")
def threshold_spy(item, criterion):
    SEEN.append(gc.get_threshold()[0])
    return 0


@pytest.fixture
def default_thresholds():
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*before)


def test_a_judge_run_collects_young_objects_less_often_and_puts_the_setting_back(tmp_path,
                                                                               default_thresholds):
    SEEN.clear()
    cs.judge(ITEMS, [LONG], threshold_spy, store=tmp_path / "run.db", cache_path=None)
    # Before: every call ran at Python's default of 700.
    assert SEEN and min(SEEN) >= YOUNG_COLLECTION_EVERY
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_setting_of_the_users_own_is_kept(default_thresholds):
    gc.set_threshold(50_000, 7, 3)
    with collections_spaced():
        assert gc.get_threshold() == (50_000, 7, 3)
    assert gc.get_threshold() == (50_000, 7, 3)


def test_overlapping_runs_in_threads_put_the_setting_back_only_when_the_last_one_ends(default_thresholds):
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    during: list[int] = []

    def first() -> None:
        with collections_spaced():
            first_in.set()
            second_in.wait(10)
        first_out.set()

    def second() -> None:
        first_in.wait(10)
        with collections_spaced():
            second_in.set()
            first_out.wait(10)
            during.append(gc.get_threshold()[0])  # the first run has ended: still spaced

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert during == [YOUNG_COLLECTION_EVERY]
    assert gc.get_threshold() == (700, 10, 10)


def test_a_batch_on_a_ray_or_dask_worker_collects_young_objects_less_often_too(tmp_path, default_thresholds):
    import pyarrow as pa

    from convoscope.runs import JudgeBatch, batch_settings

    SEEN.clear()
    settings = batch_settings([LONG], threshold_spy, store=tmp_path / "run.db", cache_path=None)
    judge_batch = JudgeBatch(settings)
    try:
        table = judge_batch(pa.Table.from_pylist([{"id": "b1", "response": "a long answer"}]))
    finally:
        judge_batch.close()
    assert table.num_rows == 1
    # Before: the batch's calls ran at Python's default of 700.
    assert SEEN and min(SEEN) >= YOUNG_COLLECTION_EVERY
    assert gc.get_threshold() == (700, 10, 10)
