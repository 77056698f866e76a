"""Judge cards in the viewer: the JSON ``convoscope card --out card.json`` writes, read back and
shown beside the runs (each judge's verdict in words, its findings, its agreement with people
per criterion and language against the people's own ceiling and the best cheap baseline).

The JSON is read as data (schema version checked) and every string in it is escaped like any
other text the viewer shows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from convoscope.errors import LocatedError


def read_card(path: str | Path) -> dict[str, Any]:
    """A judge card's JSON, checked: a readable object of the schema version this convoscope writes."""
    from convoscope.card import SCHEMA_VERSION

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LocatedError(path, "no such judge card") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise LocatedError(path, f"not a judge card's JSON ({error})") from None
    if not isinstance(data, dict) or not isinstance(data.get("judges"), list):
        raise LocatedError(path, "not a judge card's JSON (no list of judges)", field="judges")
    if str(data.get("schema_version")) != SCHEMA_VERSION:
        raise LocatedError(path, f"judge card schema version {data.get('schema_version')!r}; this convoscope "
                           f"reads version {SCHEMA_VERSION}", field="schema_version")
    return data


def agreement_rows(judge: dict[str, Any]) -> list[dict[str, str]]:
    """One row per criterion and language: ρ with its interval, κ, the people's ceiling, the best
    baseline's ρ and whether the judge could replace an annotator."""
    rows = []
    for entry in judge.get("agreement") or []:
        row = entry.get("judge") or {}
        humans = row.get("humans") or {}
        baselines = [base.get("spearman") for base in entry.get("baselines") or [] if base.get("spearman")]
        best = max((base["estimate"] for base in baselines if base.get("estimate") is not None), default=None)
        rows.append({"criterion": str(entry.get("criterion", "")), "language": entry.get("language") or "all",
                     "rho": _interval(row.get("spearman")), "kappa": _number(row.get("kappa")),
                     "ceiling": _number(humans.get("loo_spearman")), "baseline": _number(best),
                     "replaces": str(entry.get("replaces_annotator", "–")),
                     "items": str(row.get("n_items", "–"))})
    return rows


def _interval(value: Any) -> str:
    if not isinstance(value, dict) or value.get("estimate") is None:
        return "–"
    return f"{value['estimate']:.2f} [{_number(value.get('low'))}, {_number(value.get('high'))}]"


def _number(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else "–"
