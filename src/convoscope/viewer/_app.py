"""The verdict viewer: a local, read-only web page over a store's verdicts.

Pages: the verdicts (``/``, filtered) and each item (``/items/ID``); the runs (``/runs``), one
run (``/runs/ID``) and two runs side by side (``/compare?a=A&b=B``, in ``_pages``).

The filters live in the URL: the list's query string is carried into every item link and back,
so a filtered view can be bookmarked, shared, reloaded and returned to.

GET only (other methods are answered 405); every page through the shared Jinja2 layer, so
answers, dialogues and reasons are escaped; the campaign app's security headers (a CSP with no
scripts at all here, ``frame-ancestors 'none'``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from convoscope.viewer._data import FILTERS, ViewerData
from convoscope.viewer._pages import run_routes

PAGE_SIZE = 50


def create_app(data: ViewerData) -> Any:
    """A Starlette app serving ``data``."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.requests import Request
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    from convoscope.html import render
    from convoscope.web import SecurityHeaders

    choices = data.choices()
    value_labels = data.value_labels()

    async def index(request: Request) -> HTMLResponse:
        filters = {name: request.query_params.get(name, "") for name in FILTERS}
        matching = data.matching(filters)
        try:
            page = max(1, int(request.query_params.get("page", "1")))
        except ValueError:
            raise HTTPException(400, "page must be a number") from None
        shown = matching[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
        items = [{"id": item_id, "item": data.items.get(item_id),
                  "verdicts": data.verdicts_of(item_id)} for item_id in shown]
        query = urlencode({name: value for name, value in filters.items() if value})
        return HTMLResponse(render("viewer/index.html", title="convoscope verdicts", data=data,
                                   choices=choices, filters=filters, items=items, total=len(matching),
                                   page=page, pages=max(1, -(-len(matching) // PAGE_SIZE)),
                                   query=query, filter_names=FILTERS, value_labels=value_labels))

    async def item(request: Request) -> HTMLResponse:
        item_id = request.path_params["item_id"]
        verdicts = data.verdicts_of(item_id)
        if not verdicts and item_id not in data.items:
            raise HTTPException(404, "no such item")
        return HTMLResponse(render("viewer/item.html", title=f"item {item_id}", item_id=item_id,
                                   item=data.items.get(item_id), verdicts=verdicts, data=data,
                                   query=_kept(request.query_params)))

    routes = [Route("/", index, methods=["GET"]), Route("/items/{item_id:path}", item, methods=["GET"]),
              *run_routes(data)]
    return Starlette(routes=routes, middleware=[Middleware(SecurityHeaders)])


def _kept(params: Any) -> str:
    """The list's filters and page from a query string, to lead back to the same list."""
    return urlencode({name: params[name] for name in (*FILTERS, "page") if params.get(name)})


def serve(data: ViewerData, *, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve until interrupted (uvicorn)."""
    import uvicorn

    uvicorn.run(create_app(data), host=host, port=port, log_level="warning", timeout_keep_alive=5)
