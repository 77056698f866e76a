"""The viewer's run pages: the runs, one run, and two runs side by side.

Everything the side-by-side page shows is chosen in its address (``/compare?a=RUN&b=RUN`` with
``criterion``, ``system``, ``language``, ``flipped=1``, ``sort`` and ``page``), so a link
reproduces the view. Comparisons are computed once per pair of runs and kept.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from convoscope.viewer._data import ViewerData
from convoscope.viewer._prompts import prompt_difference, run_book
from convoscope.viewer._side import (
    SIDE_FILTERS,
    SORTS,
    SideBySide,
    criteria_difference,
    side_by_side,
    spec_difference,
)

PAGE_SIZE = 50


def run_routes(data: ViewerData) -> list[Any]:
    """The routes of ``/runs``, ``/runs/ID``, ``/compare`` and ``/cards`` over ``data``."""
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    from convoscope.html import render

    compared: dict[tuple[str, str], SideBySide] = {}
    books: dict[str, Any] = {}  # each run's prompts, by run id
    order = {item_id: index for index, item_id in enumerate(data.items)}

    def run_of(run_id: str) -> Any:
        if run_id not in data.run_info:
            raise HTTPException(404, f"no run {run_id!r}")
        return data.run_info[run_id]

    def book_of(run: Any) -> Any:
        if run.run_id not in books:
            books[run.run_id] = run_book(run, data.items, [*data.wordings, *data.criteria.values()])
        return books[run.run_id]

    async def runs(request: Request) -> HTMLResponse:
        listed = list(data.run_info.values())
        return HTMLResponse(render("viewer/runs.html", title="convoscope runs", data=data, runs=listed,
                                   first=listed[0].run_id if listed else "",
                                   second=listed[1].run_id if len(listed) > 1 else ""))

    async def run(request: Request) -> HTMLResponse:
        found = run_of(request.path_params["run_id"])
        return HTMLResponse(render("viewer/run.html", title=f"run {found.run_id}", data=data, run=found,
                                   figures=_figures(found.finals), spec_text=_json(found.spec),
                                   summary_text=_json(found.summary)))

    async def side(request: Request) -> HTMLResponse:
        params = request.query_params
        if not params.get("a") or not params.get("b"):
            raise HTTPException(400, "choose two runs: /compare?a=RUN&b=RUN (the runs are at /runs)")
        first, second = run_of(params["a"]), run_of(params["b"])
        key = (first.run_id, second.run_id)
        if key not in compared:
            compared[key] = side_by_side(first, second, data.criteria)
        shown = compared[key]
        filters = {name: params.get(name, "") for name in SIDE_FILTERS}
        sort = params.get("sort", "size")
        if sort not in SORTS:
            raise HTTPException(400, f"sort must be one of {', '.join(SORTS)}")
        page = _page(params.get("page", "1"))
        matching = shown.matching(filters, sort, order)
        rows = [{"pair": pair, "item": data.items.get(pair.item_id),
                 "prompt": prompt_difference(pair, first, second, book_of(first), book_of(second))}
                for pair in matching[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]]
        chosen = {"a": first.run_id, "b": second.run_id,
                  **{name: value for name, value in filters.items() if value},
                  **({"sort": sort} if sort != "size" else {})}
        return HTMLResponse(render(
            "viewer/compare.html", title=f"{first.run_id} → {second.run_id}", data=data, side=shown,
            summary=_summary(shown.comparison), filters=filters, sort=sort, sorts=SORTS,
            choices=shown.choices(), rows=rows, total=len(matching), page=page,
            pages=max(1, -(-len(matching) // PAGE_SIZE)), query=urlencode(chosen),
            swapped=urlencode({**chosen, "a": second.run_id, "b": first.run_id}),
            flipped_total=sum(1 for pair in shown.pairs if pair.flipped),
            spec_diff=spec_difference(first, second), criteria_diff=criteria_difference(first, second),
            criterion_link=lambda name: urlencode({"a": first.run_id, "b": second.run_id, "criterion": name,
                                                   "flipped": "1"})))

    async def cards(request: Request) -> HTMLResponse:
        from convoscope.viewer._cards import agreement_rows

        shown = [{"path": path, "data": card,
                  "judges": [{"data": judge, "agreement": agreement_rows(judge)} for judge in card["judges"]]}
                 for path, card in data.cards]
        return HTMLResponse(render("viewer/cards.html", title="judge cards", data=data, cards=shown))

    return [Route("/cards", cards, methods=["GET"]), Route("/runs", runs, methods=["GET"]),
            Route("/runs/{run_id:path}", run, methods=["GET"]),
            Route("/compare", side, methods=["GET"])]


def _page(text: str) -> int:
    from starlette.exceptions import HTTPException

    try:
        return max(1, int(text))
    except ValueError:
        raise HTTPException(400, "page must be a number") from None


def _summary(comparison: Any) -> list[dict[str, str]]:
    """The comparison's figures per criterion, as the page prints them."""
    if comparison is None:
        return []
    rows = []
    for row in comparison.criteria:
        if row.change is None:
            change = f"{row.changed_share:.0%} changed label"
        else:
            change = f"{row.change:+.3f} [{row.change_low:+.3f}, {row.change_high:+.3f}]"
        rows.append({"criterion": row.criterion, "level": row.level, "items": str(row.n_items),
                     "mean_a": _number(row.mean_a), "mean_b": _number(row.mean_b), "change": change,
                     "test": row.test, "note": row.test_note, "p": _p(row.pvalue),
                     "p_adjusted": _p(row.pvalue_adjusted),
                     "agreement": f"{row.agreement_name} {_number(row.agreement)}",
                     "changed": f"{row.changed} ({row.changed_share:.0%})"})
    return rows


def _figures(verdicts: Any) -> list[dict[str, str]]:
    """Per criterion of one run: verdicts, unscored, and the mean of numeric values."""
    grouped: dict[str, list[Any]] = {}
    for verdict in verdicts:
        grouped.setdefault(verdict.criterion, []).append(verdict)
    rows = []
    for name in sorted(grouped):
        found = grouped[name]
        numbers = [float(v.value) for v in found if v.scored and not isinstance(v.value, str)]
        rows.append({"criterion": name, "verdicts": str(len(found)),
                     "unscored": str(sum(1 for v in found if not v.scored)),
                     "mean": _number(sum(numbers) / len(numbers) if numbers else None)})
    return rows


def _json(value: Any) -> str:
    import json

    return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True, default=str) if value else ""


def _number(value: float | None, digits: int = 3) -> str:
    return "–" if value is None or value != value else f"{value:.{digits}f}"


def _p(value: float) -> str:
    if value != value:
        return "–"
    return f"{value:.3g}" if value >= 0.001 else f"{value:.1e}"
