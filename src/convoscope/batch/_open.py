"""A model whose cache misses go through a provider's batch API (or batch files) instead of live
calls: :func:`convoscope.models.open_model` with the live model replaced by a :class:`BatchModel`.

Batch submission sits above ``models/`` and ``store/`` (its ledger lives in the verdict store), so
neither of them imports it (DESIGN "Layers that only point down")."""

from __future__ import annotations

import functools
from typing import Any

from convoscope.batch._model import BatchFiles, batch_model
from convoscope.models import Model, ModelError
from convoscope.models import open_model as open_live_model


def open_model(spec: str, *, cache: Any = None, batch: str | BatchFiles | None = None, ledger: Any = None,
               trace: Any = False, batch_max_requests: int | None = None,
               batch_max_bytes: int | None = None, **options: Any) -> Model:
    """:func:`convoscope.models.open_model`, and with ``batch`` (``"openai"``, ``"anthropic"``, or
    :class:`BatchFiles` to write batch files) every request no answer covers goes into a batch at
    the spec's base URL. Needs an ``openai:`` spec and ``ledger`` (the verdict store that keeps the
    batches); ``batch_max_requests`` / ``batch_max_bytes`` replace the provider's limits per batch."""
    if not batch:
        return open_live_model(spec, cache=cache, trace=trace, **options)
    wrap = functools.partial(_batched, cache=cache, batch=batch, ledger=ledger, options=options,
                             limits=(batch_max_requests, batch_max_bytes))
    return open_live_model(spec, cache=cache, trace=trace, wrap_live=wrap, **options)


def _batched(live: Model, *, cache: Any, batch: str | BatchFiles, ledger: Any, options: dict[str, Any],
             limits: tuple[int | None, int | None]) -> Model:
    from convoscope.models._keys import resolve_api_key
    from convoscope.models._openai import OpenAIModel

    if not isinstance(live, OpenAIModel):
        raise ModelError(f"batch mode needs an openai:MODEL@BASE_URL judge, not {live.name}")
    if live.provider == "anthropic" and batch != "anthropic":
        raise ModelError(f"{live.name} speaks Anthropic's Messages API: its batches are --batch anthropic")
    key = resolve_api_key(live.base_url, api_key=options.get("api_key"),
                          api_key_env=options.get("api_key_env"),
                          allow_insecure=bool(options.get("allow_insecure")))
    return batch_model(live, batch, ledger=ledger, api_key=key, cache=cache, max_requests=limits[0],
                       max_bytes=limits[1])
