"""Runs made of given values, for the comparison tests."""

from __future__ import annotations

from convoscope.judges import Verdict


def run(values, *, criterion="effort", rater="model:a", reasons=None, languages=None, systems=None):
    """One verdict per value, on items i0, i1, …; ``reasons`` maps an item's position to its reason."""
    return [
        Verdict(
            item_id=f"i{n}",
            criterion=criterion,
            rater=rater,
            value=value,
            reason=(reasons or {}).get(n),
            language=(languages[n] if languages else None),
            system=(systems[n] if systems else None),
        )
        for n, value in enumerate(values)
    ]


def stored_run(store, run_id, verdicts, *, keys=None, spec=None):
    """A run written straight into a store's tables (as a judging run leaves them): its verdicts
    under task keys (``keys``, else made up from the run id), in the order given."""
    import sqlalchemy as sa

    from convoscope.store import Store
    from convoscope.store._schema import run_tasks

    opened = Store(store)
    opened.start_run(run_id, spec or {"judge": {"kind": "python", "name": run_id}})
    keys = keys or [f"{run_id}-{n:08d}" for n in range(len(verdicts))]
    rows = list(zip(keys, verdicts, strict=True))
    with opened.engine.begin() as connection:
        opened.write(connection, rows, run_id=run_id)
        connection.execute(sa.insert(run_tasks), [
            {"run_id": run_id, "task_key": key, "chunk": 0, "position": n, "member": False}
            for n, (key, _) in enumerate(rows)])
    opened.close()
    return run_id
