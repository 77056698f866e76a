"""HTTP edges of the web app: security headers, bounded form bodies, HTML responses.

Every response carries a Content-Security-Policy without inline scripts (the one script is a
static file) and with ``frame-ancestors 'none'``; a form body larger than the limit is answered
413 (from its Content-Length, or as soon as the stream passes the limit), one that is not UTF-8
400, and one that trickles in slower than the body timeout 408. A client that leaves before its
form has arrived is let go quietly (one debug line, no traceback): there is nobody to answer.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from urllib.parse import parse_qs

from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from convoscope.campaigns import N_
from convoscope.html import render

CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data: https:; "
       "form-action 'self'{extra}; frame-ancestors 'none'; base-uri 'none'")
HEADERS = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


LOG = logging.getLogger("convoscope.web")


class QuietDisconnect:
    """Pure ASGI middleware (outermost): a client gone before its request body arrived is no
    server error. Starlette raises ``ClientDisconnect``; uvicorn would print it as a traceback."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except ClientDisconnect:
            # The path is not logged: it holds the person's private link.
            LOG.debug("a client went away before its %s request had arrived", scope.get("method", ""))


class SecurityHeaders:
    """Pure ASGI middleware: the security headers on every response, errors included."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                if b"content-security-policy" not in present:
                    headers.append((b"content-security-policy", CSP.format(extra="").encode()))
                headers.extend((k.encode(), v.encode()) for k, v in HEADERS.items()
                               if k.encode() not in present)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


async def read_form(request: Request, *, limit: int, timeout: float) -> dict[str, list[str]]:
    """The url-encoded form of a POST, strictly UTF-8, at most ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise HTTPException(400, N_("The request is malformed."))
        if int(declared) > limit:
            raise HTTPException(413, N_("The form is too large."))
    body = bytearray()
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                body += chunk
                if len(body) > limit:
                    raise HTTPException(413, N_("The form is too large."))
    except TimeoutError:
        raise HTTPException(408, N_("The form took too long to arrive; try again.")) from None
    try:
        return parse_qs(body.decode("utf-8"), keep_blank_values=True, errors="strict", max_num_fields=200)
    except (UnicodeDecodeError, ValueError):
        raise HTTPException(400, N_("The form could not be read (it is not UTF-8 text).")) from None


def field(form: dict[str, list[str]], name: str) -> str:
    return form.get(name, [""])[0]


def page(template: str, *, status: int = 200, csp_form: str = "", **context: Any) -> HTMLResponse:
    """A rendered page; ``csp_form`` adds an origin the page's form may post to (MTurk)."""
    html = render(template, **context)
    headers = {"content-security-policy": CSP.format(extra=f" {csp_form}" if csp_form else "")}
    return HTMLResponse(html, status_code=status, headers=headers)


def redirect(location: str) -> Response:
    return Response(status_code=303, headers={"location": location})
