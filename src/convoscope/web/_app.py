"""The annotation web app as a standard-library WSGI application (no JavaScript build).

Annotator routes, reached only through the private token: ``GET /a/<token>`` shows the next task
(``?PROLIFIC_PID=…`` on the link records the platform's id), ``POST /a/<token>`` saves one answer
and redirects (post/redirect/get, so a reload never submits twice), ``GET /a/<token>/guidelines``
shows the full guidelines. Researcher routes, behind their own secret: ``GET /r/<secret>`` is the
dashboard (progress, agreement, time, flags) and ``GET /r/<secret>/report`` the HTML report.
Forms carry a CSRF value derived from the token with the server secret; every answer is validated
again on the server.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs

from convoscope.campaigns import AnswerError, BatchFull, Campaign, Submission, Work, render_report, task_key
from convoscope.web._pages import dashboard_page, guidelines_page, message_page, task_page

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]
_MAX_BODY = 64_000
_PLATFORM_ID_PARAMETERS = ("PROLIFIC_PID", "workerId", "participant")


def csrf_value(secret: bytes, token: str) -> str:
    return hmac.new(secret, f"csrf:{token}".encode(), hashlib.sha256).hexdigest()


def make_app(campaign: Campaign, *, secret: bytes, dashboard: str | None = None) -> WsgiApp:
    """A WSGI callable serving ``campaign``; the dashboard is served only when ``dashboard`` is set."""

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        parts = [part for part in environ.get("PATH_INFO", "/").split("/") if part]
        if len(parts) >= 2 and parts[0] == "r":
            return _researcher(campaign, dashboard, parts, start_response)
        if len(parts) < 2 or parts[0] != "a":
            return _not_found(start_response, "Use your private link.")
        annotator = campaign.annotator(parts[1])
        if annotator is None:
            return _not_found(start_response, "This link is not valid.")
        if parts[2:] == ["guidelines"]:
            return _respond(start_response, "200 OK", guidelines_page(campaign.directory / "guidelines.md"))
        if parts[2:]:
            return _not_found(start_response, "No such page.")
        if environ.get("REQUEST_METHOD", "GET") == "POST":
            return _post(campaign, annotator.id, parts[1], environ, start_response, secret)
        problem = _platform_id(campaign, annotator.id, environ)
        if problem:
            return _respond(start_response, "400 Bad Request", message_page("Bad link", problem))
        return _show(campaign, annotator.id, parts[1], secret, start_response, None)

    return app


def _researcher(campaign: Campaign, dashboard: str | None, parts: list[str],
                start_response: StartResponse) -> Iterable[bytes]:
    if not dashboard or not hmac.compare_digest(parts[1].encode(), dashboard.encode()):
        return _not_found(start_response, "This link is not valid.")
    if parts[2:] == ["report"]:
        return _respond(start_response, "200 OK", render_report(campaign))
    if parts[2:]:
        return _not_found(start_response, "No such page.")
    return _respond(start_response, "200 OK", dashboard_page(campaign.spec, campaign.status(),
                                                             report_url=f"/r/{dashboard}/report"))


def _platform_id(campaign: Campaign, annotator: str, environ: dict[str, Any]) -> str | None:
    """Record a crowdsourcing platform's participant id given on the link; a message if refused."""
    query = parse_qs(environ.get("QUERY_STRING", ""))
    for name in _PLATFORM_ID_PARAMETERS:
        if query.get(name):
            try:
                campaign.record_external_id(annotator, query[name][0])
            except ValueError as error:
                return f"{name}: {error}"
    return None


def _show(campaign: Campaign, annotator: str, token: str, secret: bytes, start_response: StartResponse,
          error: str | None, status: str = "200 OK", shown: float | None = None) -> Iterable[bytes]:
    work = campaign.work(annotator)
    if work.task is None:
        return _respond(start_response, status, _finished(work))
    criterion = campaign.criteria[work.task.criterion]
    html = task_page(work, criterion, summary=campaign.spec.guidelines_summary,
                     guidelines_url=f"/a/{token}/guidelines", csrf=csrf_value(secret, token),
                     shown=shown or time.time(), error=error)
    return _respond(start_response, status, html)


def _post(campaign: Campaign, annotator: str, token: str, environ: dict[str, Any],
          start_response: StartResponse, secret: bytes) -> Iterable[bytes]:
    form = _read_form(environ)
    if not hmac.compare_digest(_field(form, "csrf"), csrf_value(secret, token)):
        return _respond(start_response, "403 Forbidden",
                        message_page("Forbidden", "The form has expired; reload the page."))
    work = campaign.work(annotator)
    if work.task is None or _field(form, "task") != task_key("", work.task):
        return _redirect(start_response, f"/a/{token}")  # stale or repeated form: show the current task
    shown = _shown(_field(form, "shown"))
    limit = 60 * (campaign.spec.max_minutes_per_batch or 60)
    seconds = None if shown is None else min(max(time.time() - shown, 0.0), limit)
    options = tuple(dict.fromkeys(form.get("options", [])))  # a repeated box counts once
    submission = Submission(answer=_field(form, "answer"), options=options, reason=_field(form, "reason"),
                            seconds=seconds)
    try:
        campaign.submit(annotator, work.task, submission)
    except AnswerError as error:
        return _show(campaign, annotator, token, secret, start_response, str(error),
                     "422 Unprocessable Entity", shown)
    except BatchFull:
        pass  # someone else took the last place; the redirect shows this annotator another batch
    return _redirect(start_response, f"/a/{token}")


def _field(form: dict[str, list[str]], name: str) -> str:
    return form.get(name, [""])[0]


def _shown(text: str) -> float | None:
    """When the task page was rendered (a hidden field); only the annotator's own time depends on it."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 < value <= time.time() else None


def _finished(work: Work) -> str:
    result = work.qualification
    if result is not None and not result.qualified and result.kappa is None:
        return message_page("Thank you", "Your qualification answers are saved. They are compared with "
                            "the reference answers once those are in; please come back later.")
    if result is not None and not result.qualified:
        return message_page("Thank you", "You finished the qualification batch. This study has no "
                            "further batches for you; thank you for your time.")
    return message_page("All done", "You have answered everything assigned to you. Thank you!")


def _read_form(environ: dict[str, Any]) -> dict[str, list[str]]:
    try:
        length = min(int(environ.get("CONTENT_LENGTH") or 0), _MAX_BODY)
    except ValueError:
        length = 0
    body = environ["wsgi.input"].read(length).decode("utf-8", errors="replace")
    return parse_qs(body, keep_blank_values=True)


def _respond(start_response: StartResponse, status: str, html: str) -> Iterable[bytes]:
    data = html.encode("utf-8")
    start_response(status, [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(data))),
                            ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; "
                             "script-src 'unsafe-inline'; img-src data:; form-action 'self'"),
                            ("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-store"),
                            ("Referrer-Policy", "no-referrer")])
    return [data]


def _not_found(start_response: StartResponse, text: str) -> Iterable[bytes]:
    return _respond(start_response, "404 Not Found", message_page("Not found", text))


def _redirect(start_response: StartResponse, location: str) -> Iterable[bytes]:
    start_response("303 See Other", [("Location", location), ("Content-Length", "0")])
    return [b""]
