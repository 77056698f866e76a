"""Turn timestamps in item metadata: where they live, how they are written, how they are read.

A log may carry the time of each turn in the item's ``meta`` in one of two forms:

* ``timestamps``: a list with one entry per turn, the context turns in order and then the
  response (``null`` for a turn whose time is unknown). In CSV input the column holds that list
  as JSON text.
* ``request_time`` and ``response_time``: the time of the user's turn and of the response.

Each time is either ISO-8601 text (``2024-05-01T09:30:02.5Z``, ``2024-05-01 09:30:02+02:00``,
or without a zone) or seconds since the Unix epoch (a number, or a number written as text).
Epoch seconds and times with a zone are absolute; a time without a zone can only be compared
with another time without a zone, so mixing the two is an error rather than a silent guess.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from convoscope.errors import LocatedError
from convoscope.items import Item


class TimestampError(LocatedError):
    """A timestamp that cannot be read; ``field`` is its dotted path in the item."""

    def __init__(self, field: str, problem: str):
        super().__init__(None, problem, field=field)


@dataclass(frozen=True)
class Instant:
    """A point in time: seconds, and whether they are absolute (epoch / zoned) or wall-clock."""

    seconds: float
    absolute: bool


def parse_instant(raw: Any, field: str) -> Instant:
    """Read one timestamp (ISO-8601 text or epoch seconds). Raises TimestampError naming ``field``."""
    if isinstance(raw, bool) or raw is None:
        raise TimestampError(field, f"expected ISO-8601 text or epoch seconds, got {raw!r}")
    if isinstance(raw, int | float):
        return _epoch(float(raw), field)
    if not isinstance(raw, str):
        raise TimestampError(field, f"expected ISO-8601 text or epoch seconds, got {type(raw).__name__}")
    text = raw.strip()
    try:
        return _epoch(float(text), field)
    except ValueError as error:
        if isinstance(error, TimestampError):
            raise
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise TimestampError(field, f"{raw!r} is neither ISO-8601 (e.g. 2024-05-01T09:30:02Z) "
                             "nor epoch seconds") from None
    if moment.tzinfo is None:
        return Instant((moment - datetime(1970, 1, 1)).total_seconds(), absolute=False)
    return Instant(moment.timestamp(), absolute=True)


def _epoch(value: float, field: str) -> Instant:
    if not math.isfinite(value) or value < 0:
        raise TimestampError(field, f"epoch seconds must be a finite number >= 0, got {value!r}")
    return Instant(value, absolute=True)


def response_latency(item: Item) -> float | None:
    """Seconds from the turn before the response to the response, or None when the item has no
    timestamps for them. Raises TimestampError for unreadable, mixed or backwards times."""
    pair = _request_and_response(item)
    if pair is None:
        return None
    (request_raw, request_field), (response_raw, response_field) = pair
    request = parse_instant(request_raw, request_field)
    response = parse_instant(response_raw, response_field)
    if request.absolute != response.absolute:
        raise TimestampError(response_field, "one time has a zone (or is epoch seconds) and the "
                             "other has none; give both the same way")
    latency = response.seconds - request.seconds
    if latency < 0:
        raise TimestampError(response_field, f"the response is {-latency:g} s earlier than the turn "
                             "before it")
    return latency


def _request_and_response(item: Item) -> tuple[tuple[Any, str], tuple[Any, str]] | None:
    meta = item.meta
    if "timestamps" in meta and meta["timestamps"] not in (None, ""):
        return _from_list(item, meta["timestamps"])
    has_request = meta.get("request_time") not in (None, "")
    has_response = meta.get("response_time") not in (None, "")
    if has_request and has_response:
        return (meta["request_time"], "meta.request_time"), (meta["response_time"], "meta.response_time")
    if has_request or has_response:
        missing = "meta.response_time" if has_request else "meta.request_time"
        raise TimestampError(missing, "missing: give both request_time and response_time")
    return None


def _from_list(item: Item, raw: Any) -> tuple[tuple[Any, str], tuple[Any, str]] | None:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            raise TimestampError("meta.timestamps", "not a JSON list of times") from None
    if not isinstance(raw, list):
        raise TimestampError("meta.timestamps", f"expected a list of times, got {type(raw).__name__}")
    expected = len(item.context) + (item.response is not None)
    if len(raw) != expected:
        raise TimestampError("meta.timestamps", f"has {len(raw)} entries; the item has {expected} "
                             "turns (context, then the response)")
    if item.response is None or len(raw) < 2:
        return None
    request, response = raw[-2], raw[-1]
    if request is None or response is None:
        return None
    last = len(raw) - 1
    return (request, f"meta.timestamps.{last - 1}"), (response, f"meta.timestamps.{last}")
