"""The annotation web app on Starlette (ASGI), served by uvicorn.

Annotator routes are in ``_annotator``; researcher routes, behind their own secret, are
``GET /r/<secret>`` (dashboard: progress, agreement, time, flags, notes) and
``GET /r/<secret>/report`` (the HTML report). Wrong methods are answered 405, unknown pages 404,
oversized forms 413 and undecodable ones 400, always with an HTML page and the security headers.
"""

from __future__ import annotations

import hmac
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from convoscope.campaigns import N_, Campaign, ledger_rows, render_campaign_report
from convoscope.html import render
from convoscope.web._annotator import AnnotatorPages, csrf_value
from convoscope.web._http import QuietDisconnect, SecurityHeaders
from convoscope.web._limits import BURST, RATE, RateLimit, TokenBuckets

MAX_BODY = 64_000  # bytes of one form; a note is limited further by the spec (max_note_chars)
BODY_TIMEOUT = 15.0  # seconds for a form body to arrive
_STATIC = Path(__file__).resolve().parent.parent / "html" / "templates" / "web"
SLOW_DOWN = N_("Too many requests from this link at once; wait a moment, then reload the page.")
_STATIC_FILES = {"campaign.js": "text/javascript", "campaign.css": "text/css"}

__all__ = ["csrf_value", "make_app"]


def make_app(campaign: Campaign, *, secret: bytes, dashboard: str | None = None, join: str | None = None,
             max_body: int = MAX_BODY, body_timeout: float = BODY_TIMEOUT, rate: float = RATE,
             burst: int = BURST) -> ASGIApp:
    """An ASGI app serving ``campaign``; the dashboard only when ``dashboard`` is set, the
    platform join link (``/join/<join>``) only when ``join`` is set. Each private link (and each
    client address on the study link) may make ``rate`` requests a second, ``burst`` at once."""
    pages = AnnotatorPages(campaign, secret, join, limit=max_body, timeout=body_timeout)

    def researcher(request: Request) -> Response:
        if not dashboard or not hmac.compare_digest(request.path_params["secret"].encode("utf-8",
                                                    "surrogateescape"), dashboard.encode()):
            raise HTTPException(404, N_("This link is not valid."))
        if request.url.path.endswith("/report"):
            return HTMLResponse(render_campaign_report(campaign))
        status = campaign.status()
        flagged = sorted({name for row in status.batches for name in row.flagged})
        return HTMLResponse(render("web/dashboard.html", spec=campaign.spec, status=status, flagged=flagged,
                                   report_url=f"/r/{dashboard}/report", title=f"{campaign.spec.name} status",
                                   ledger=ledger_rows(campaign)))

    def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _STATIC_FILES:
            raise HTTPException(404, N_("No such file."))
        return FileResponse(_STATIC / name, media_type=_STATIC_FILES[name])

    async def error_page(request: Request, error: Exception) -> Response:
        assert isinstance(error, HTTPException)
        html = await run_in_threadpool(pages.message, str(error.status_code), pages._(error.detail),
                                       status=error.status_code)
        for name, value in (error.headers or {}).items():
            html.headers[name] = value
        return html

    routes = [
        Route("/a/{token}", pages.show, methods=["GET"]),
        Route("/a/{token}", pages.answer, methods=["POST"]),
        Route("/a/{token}/consent", pages.consent, methods=["POST"]),
        Route("/a/{token}/decline", pages.decline, methods=["POST"]),
        Route("/a/{token}/start", pages.start, methods=["POST"]),
        Route("/a/{token}/questions/{part}", pages.questions, methods=["POST"]),
        Route("/a/{token}/guidelines", pages.guidelines, methods=["GET"]),
        Route("/a/{token}/media/{name}", pages.media, methods=["GET"]),
        Route("/a/{token}/edit/{index:int}", pages.edit, methods=["GET"]),
        Route("/a/{token}/edit/{index:int}", pages.change, methods=["POST"]),
        Route("/join/{secret}", pages.join, methods=["GET"]),
        Route("/r/{secret}", researcher, methods=["GET"]),
        Route("/r/{secret}/report", researcher, methods=["GET"]),
        Route("/static/{name}", static, methods=["GET"]),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(SecurityHeaders)],
                    exception_handlers={HTTPException: error_page})

    async def too_many(scope: Scope, receive: Receive, send: Send) -> None:
        response = await run_in_threadpool(pages.message, "429", pages._(SLOW_DOWN), status=429)
        response.headers["retry-after"] = scope["retry_after"]
        await SecurityHeaders(response)(scope, receive, send)

    return QuietDisconnect(RateLimit(app, buckets=TokenBuckets(rate=rate, burst=burst), refuse=too_many))
