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
