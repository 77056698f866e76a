"""What each verdict costs the client beside its HTTP call (issue 39: CPU per verdict).

Counted here, never timed: how often the writer thread is woken, how often the verdicts' INSERT
is built. The CPU figures themselves are in benchmarks/results/cli_overhead.md.
"""

from __future__ import annotations

import asyncio

from convoscope.judges import Verdict
from convoscope.store import Store, VerdictWriter, _store


def _verdict(number: int, reason: str | None = None) -> Verdict:
    value = None if reason else 1
    return Verdict(item_id=str(number), criterion="c", rater="model:x", value=value, unscored_reason=reason)


async def test_a_burst_of_500_verdicts_wakes_the_writer_twice(tmp_path):
    # Before: a hand-over every 64 tasks or 5 ms (8 for this burst), each waking the writer
    # thread, which then takes the GIL from the event loop.
    store = Store(tmp_path / "s.db")
    writer = VerdictWriter(store, "r")
    for number in range(500):
        writer.put([(f"k{number}", _verdict(number))])
    writer.close()
    assert writer.handovers <= 2
    assert len(store.verdicts_by_key([f"k{n}" for n in range(500)])) == 500


def test_the_verdicts_insert_is_built_once_per_store(tmp_path, monkeypatch):
    # Before: built for every commit, its ON CONFLICT clause and excluded columns included.
    built = []
    real = _store.insert_for
    monkeypatch.setattr(_store, "insert_for", lambda *args: built.append(1) or real(*args))
    store = Store(tmp_path / "s.db")
    for number in range(5):
        store.add_many("", [(f"k{number}", _verdict(number, "model_error"))], supersede=["model_error"])
    store.add_many("", [("k0", _verdict(0))], supersede=["model_error"])  # replaces the failure
    store.add_many("", [("k1", _verdict(1))])  # no supersede: kept as it was
    assert len(built) == 2  # one per kind of statement, not one per write
    found = store.verdicts_by_key(["k0", "k1"])
    assert found["k0"].value == 1 and found["k1"].unscored_reason == "model_error"


def test_the_writer_still_commits_a_lone_verdict_at_close(tmp_path):
    store = Store(tmp_path / "s.db")

    async def one() -> VerdictWriter:
        writer = VerdictWriter(store, "r")
        writer.put([("k", _verdict(1))])
        await asyncio.sleep(0)
        return writer

    writer = asyncio.run(one())
    writer.close()
    assert list(store.verdicts_by_key(["k"])) == ["k"]
