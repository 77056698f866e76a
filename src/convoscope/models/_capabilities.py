"""What an HTTP endpoint accepts, found out once per endpoint: one layer for every HTTP backend.

Before the first chat request, small dedicated requests ask whether the endpoint takes token
log-probabilities and structured output, in the most precise form first (``json_schema``, then
``json_object`` with the schema as llama.cpp reads it; without either the schema stays in the
prompt). Each probe ends one of three ways:

* **accepted**;
* **refused**: the endpoint says it does not take the field — a 4xx (400, 404, 405, 415, 422),
  a 501, a 500 whose body is a validation error, or a failure that comes only with the field
  while the same request without it passes;
* **unknown**: no answer, a timeout, a 429, 502, 503 or 504, or a 500 with and without the field
  (a server still starting). Nothing is decided: the request that asked fails as that item's
  ``model_error`` (a re-run retries it) and the next request probes again, so a slow start
  never switches structured output off for the whole run.

When structured output ends up off, :attr:`CapabilityProbe.note` says so and why, and the run
summary repeats it; every generation records the form its request used
(:attr:`~convoscope.models.Generation.structured_output`), in the response cache too.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from convoscope.models._base import ModelError

PROBE_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
PROBE_MESSAGES = ({"role": "user", "content": 'Reply with the JSON object {"ok": true}.'},)
STRUCTURED_FORMS = ("json_schema", "json_object")
_REFUSING_STATUS = frozenset({400, 404, 405, 415, 422, 501})
_VALIDATION = re.compile(r"validation error|literal_error|unprocessable|extra_forbidden|"
                         r"unsupported (?:param|value|field)|unrecognized request argument", re.IGNORECASE)


class Refused(Exception):
    """The endpoint answered that it does not take what was sent (see :func:`refuses`)."""

    def __init__(self, status: int | None, detail: str) -> None:
        super().__init__(f"HTTP {status}: {detail[:200]}" if status else detail[:200])
        self.status, self.detail = status, detail


class Unavailable(Exception):
    """No usable answer, for a reason that says nothing about the request (``status``: the
    HTTP status when one came, e.g. 500, 503)."""

    def __init__(self, detail: str, *, status: int | None = None) -> None:
        super().__init__(detail)
        self.status = status


# Sends a tiny chat request with these extra body fields; raises Refused, Unavailable, or
# ModelError for what the user must fix (a key the endpoint does not accept).
ProbeSender = Callable[[dict[str, Any]], Awaitable[None]]


def is_validation_error(detail: str) -> bool:
    """Does an error body say the request itself was invalid (not that the server failed)?"""
    return bool(_VALIDATION.search(detail))


def refuses(status: int | None, detail: str, field: str = "") -> bool:
    """Whether an HTTP error means "this request (or ``field``) is not taken", never worth
    retrying: 400/404/405/415/422/501, or a 500 whose body is a validation error or names the
    field (llama-cpp-python answers a field it does not take with a 500)."""
    if status in _REFUSING_STATUS:
        return True
    lowered = detail.lower()
    return status == 500 and (is_validation_error(detail) or bool(field) and field in lowered)


def response_format(form: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The ``response_format`` body of a structured-output form."""
    if form == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": "judgement", "schema": schema, "strict": False}}
    return {"type": "json_object", "schema": schema}


def structured_form(request: Any, body: dict[str, Any]) -> str | None:
    """The structured-output form a sent chat body used, for ``Generation.structured_output``."""
    if request.json_schema is None or request.messages is None:
        return None
    sent = body.get("response_format")
    return str(sent.get("type")) if isinstance(sent, dict) else "none"


@dataclass(frozen=True)
class Capabilities:
    """What the endpoint takes: the structured-output form (``json_schema``, ``json_object`` or
    ``none``), whether it returns log-probabilities, and why anything is off."""

    structured: str
    logprobs: bool
    refusals: tuple[str, ...] = ()


class CapabilityProbe:
    """Finds out once what an endpoint takes (see the module docstring); safe to share between
    concurrent requests. ``forms``: the structured-output forms to try, best first (a backend
    whose provider cannot take any passes none and says why in ``skipped``)."""

    def __init__(self, endpoint: str, send: ProbeSender, *, forms: Sequence[str] = STRUCTURED_FORMS,
                 logprobs: bool = True, skipped: Sequence[str] = ()) -> None:
        self.endpoint, self._send = endpoint, send
        self._forms, self._ask_logprobs, self._skipped = tuple(forms), logprobs, tuple(skipped)
        self._known: Capabilities | None = None
        self._lock = asyncio.Lock()
        self._failures = 0
        self._last_failure = ""

    @property
    def known(self) -> Capabilities | None:
        return self._known

    @property
    def note(self) -> str | None:
        """One line for the run summary when structured output is off, saying why."""
        if self._known is None or self._known.structured != "none":
            return None
        why = "; ".join((*self._skipped, *self._known.refusals)) or "no form was accepted"
        return (f"{self.endpoint}: structured output off (the schema stayed in the prompt): {why}")

    async def get(self) -> Capabilities:
        """The endpoint's capabilities; raises ModelError while they cannot be found out."""
        if self._known is not None:
            return self._known
        failures_seen = self._failures
        async with self._lock:
            if self._known is not None:
                return self._known
            if self._failures != failures_seen:  # a probe failed while this request waited:
                raise ModelError(self._last_failure)  # fail with it rather than probe again at once
            try:
                self._known = await self._probe()
            except Unavailable as error:
                self._failures += 1
                self._last_failure = (f"{self.endpoint}: could not find out what the endpoint accepts "
                                      f"({error}); the next request asks again")
                raise ModelError(self._last_failure) from None
            return self._known

    async def _probe(self) -> Capabilities:
        refusals: list[str] = []
        logprobs = self._ask_logprobs and await self._accepts(
            {"logprobs": True, "top_logprobs": 10}, "logprob", refusals)
        for form in self._forms:
            if await self._accepts({"response_format": response_format(form, PROBE_SCHEMA)},
                                   "response_format", refusals, label=form):
                return Capabilities(form, logprobs, tuple(refusals))
        return Capabilities("none", logprobs, tuple(refusals))

    async def _accepts(self, extra: dict[str, Any], field: str, refusals: list[str], *,
                       label: str = "") -> bool:
        name = label or field
        try:
            await self._send(extra)
            return True
        except Refused as refused:
            refusals.append(f"{name} refused ({refused})")
            return False
        except Unavailable as error:
            if error.status != 500:
                raise  # no answer, throttled, a gateway or a server busy: nothing is known
            try:
                await self._send({})  # the same request without the field: Unavailable propagates
            except Refused as refused:  # refused without the field too: it is not about the field
                raise Unavailable(f"{error}; without {field}: {refused}", status=refused.status) from None
            refusals.append(f"{name}: HTTP {error.status} only when {field} is sent")
            return False


def route_notes(models: Sequence[Any]) -> list[str]:
    """Which route each model's calls took (``native openai (core)``, ``litellm (openai, own
    client)``), one line per model, for the run summary; wrappers are looked through."""
    notes: list[str] = []
    for model in models:
        while not hasattr(model, "route") and hasattr(model, "inner"):
            model = model.inner
        route = getattr(model, "route", None)
        line = f"{getattr(model, 'name', '?')}: {route}" if route else None
        if line and line not in notes:
            notes.append(line)
    return notes


def capability_notes(models: Sequence[Any]) -> list[str]:
    """What went without structured output among ``models`` and why (wrappers such as the
    response cache and tracing are looked through), one line per endpoint."""
    notes: list[str] = []
    for model in models:
        while not hasattr(model, "capability_note") and hasattr(model, "inner"):
            model = model.inner
        note = getattr(model, "capability_note", None)
        if note and note not in notes:
            notes.append(note)
    return notes
