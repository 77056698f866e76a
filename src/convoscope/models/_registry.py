"""Model specs as the CLI writes them, and the registry of backends.

* ``embedded`` / ``embedded:smollm2`` / ``embedded:gemma3-270m`` / ``embedded:/path/model.gguf``
* ``openai:MODEL@BASE_URL`` (any OpenAI-compatible server) or ``openai:MODEL`` (api.openai.com,
  or ``OPENAI_BASE_URL`` when set)
* ``anthropic:MODEL[@BASE_URL]``: Anthropic's Messages API, natively (:mod:`._anthropic`)
* ``gemini:MODEL``: Google's Gemini API through its OpenAI-compatible endpoint (``GEMINI_API_KEY``)
* ``litellm:PROVIDER/MODEL[@API_BASE]``: any provider LiteLLM speaks (extra ``providers``)

Other backends register a factory under their prefix with :func:`register_backend`, or, from an
installed package, declare it as an entry point of group ``convoscope.backends`` (read when a spec
with that prefix is first asked for).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import Any

from convoscope.models._base import Model, ModelError

BackendFactory = Callable[..., Model]
GEMINI_OPENAI_URL = "https://generativelanguage.googleapis.com/v1beta/openai"
_BACKENDS: dict[str, BackendFactory] = {}


def register_backend(prefix: str, factory: BackendFactory) -> None:
    """``factory(rest_of_spec, **options)`` builds a model for specs ``prefix:rest``."""
    _BACKENDS[prefix] = factory


# Options that only mean something to one kind of backend: a panel mixing an embedded model
# and endpoints gets one set of options, and each backend takes the ones that are its own.
ENDPOINT_OPTIONS = frozenset({
    "max_concurrency", "rpm", "tpm", "timeout", "deadline", "max_retries", "backoff_s",
    "context_length", "api_key", "api_key_env", "allow_insecure", "price_per_million", "transport"})
EMBEDDED_OPTIONS = frozenset({"n_ctx", "n_threads"})


def _embedded(rest: str, **options: Any) -> Model:
    from convoscope.models._embedded import DEFAULT_EMBEDDED, EmbeddedModel

    own = {key: value for key, value in options.items() if key not in ENDPOINT_OPTIONS}
    return EmbeddedModel(rest or DEFAULT_EMBEDDED, **own)


def _openai(rest: str, **options: Any) -> Model:
    from convoscope.models._openai import OpenAIModel

    model, _, base_url = rest.partition("@")
    if not model:
        raise ModelError("an openai spec needs a model name: openai:MODEL@BASE_URL")
    base_url = base_url or os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
    own = {key: value for key, value in options.items() if key not in EMBEDDED_OPTIONS}
    return OpenAIModel(model, base_url=base_url, **own)


def _anthropic(rest: str, **options: Any) -> Model:
    from convoscope.models._anthropic import ANTHROPIC_URL, AnthropicModel

    model, _, base_url = rest.partition("@")
    if not model:
        raise ModelError("an anthropic spec needs a model name: anthropic:MODEL[@BASE_URL]")
    own = {key: value for key, value in options.items() if key not in EMBEDDED_OPTIONS}
    return AnthropicModel(model, base_url=base_url or ANTHROPIC_URL, **own)


def _gemini(rest: str, **options: Any) -> Model:
    if not rest or "@" in rest:
        raise ModelError("a gemini spec is gemini:MODEL (for another URL use openai:MODEL@URL)")
    return _openai(f"{rest}@{GEMINI_OPENAI_URL}", **options)


def _litellm(rest: str, **options: Any) -> Model:
    from convoscope.models._litellm import LiteLLMModel

    model, _, api_base = rest.partition("@")
    if not model:
        raise ModelError("a litellm spec needs LiteLLM's model name: litellm:PROVIDER/MODEL[@API_BASE]")
    own = {key: value for key, value in options.items() if key not in EMBEDDED_OPTIONS}
    own.pop("price_per_million", None)  # LiteLLM's own price table gives the cost
    return LiteLLMModel(model, api_base=api_base or None, **own)


register_backend("embedded", _embedded)
register_backend("openai", _openai)
register_backend("anthropic", _anthropic)
register_backend("gemini", _gemini)
register_backend("litellm", _litellm)


def open_model(spec: str, *, cache: Any = None, trace: Any = False,
               wrap_live: Callable[[Model], Model] | None = None, **options: Any) -> Model:
    """The one way to build a model: ``spec`` as for :func:`model_from_spec`, wrapped in a
    response cache when ``cache`` is given (a :class:`ResponseCache` or a path to one).

    ``cache=None`` means no cache; an empty cache is still a cache (``is not None``, never truth).
    ``wrap_live`` replaces the live model before the cache wraps it (what answers a cache miss:
    :func:`convoscope.batch.open_model` sends misses through a provider's batch API that way).
    ``trace=True`` puts every call in an OpenTelemetry span (:mod:`._otel`), cache hits included;
    ``trace=<TracerProvider>`` sends them to that provider instead of the global one."""
    from pathlib import Path

    from convoscope.models._cache import CachedModel, ResponseCache

    model = model_from_spec(spec, **options)
    if wrap_live is not None:
        model = wrap_live(model)
    if cache is None:
        return _traced(model, trace) if trace else model
    if isinstance(cache, str | Path):
        cache = ResponseCache(cache)
    cached = CachedModel(model, cache)
    return _traced(cached, trace) if trace else cached


def _traced(model: Model, trace: Any) -> Model:
    from convoscope.models._otel import TracedModel

    return TracedModel(model, tracer_provider=None if trace is True else trace)


def model_from_spec(spec: str, **options: Any) -> Model:
    """Build a model from a spec string (see the module docstring). A prefix no backend here
    registered is looked up among the ``convoscope.backends`` entry points of installed packages."""
    from convoscope._entry_points import BACKENDS, entry_point_names, load_entry_point

    prefix, _, rest = spec.partition(":")
    factory = _BACKENDS.get(prefix)
    if factory is None and prefix:
        factory = load_entry_point(BACKENDS, prefix)
        if factory is not None:
            register_backend(prefix, factory)
    if factory is None:
        known = sorted({*_BACKENDS, *entry_point_names(BACKENDS)})
        raise ModelError(f"unknown model spec {spec!r}: start it with one of {', '.join(known)} "
                         "(e.g. 'openai:MODEL@http://127.0.0.1:8000/v1')")
    return factory(rest, **options)


_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def endpoint_options(*, timeout: float | None = None, deadline: float | None = None,
                     max_retries: int | None = None, rpm: float | None = None, tpm: float | None = None,
                     api_key_env: Sequence[str] = (), allow_insecure_key: bool = False,
                     context_length: int | None = None) -> dict[str, Any]:
    """Model options for HTTP judges from command-line values; unset ones are left out, so each
    backend keeps its defaults. ``api_key_env`` entries are ``VAR`` (any endpoint of the run)
    or ``HOST=VAR`` (only that host)."""
    options: dict[str, Any] = {key: value for key, value in (
        ("timeout", timeout), ("deadline", deadline), ("max_retries", max_retries), ("rpm", rpm),
        ("tpm", tpm), ("context_length", context_length)) if value is not None}
    bindings: dict[str, str] = {}
    for entry in api_key_env:
        host, _, variable = entry.rpartition("=")
        if not _VARIABLE.fullmatch(variable) or (host == "" and "=" in entry):
            raise ModelError(f"api_key_env (--api-key-env) {entry!r}: give VAR or HOST=VAR, where VAR "
                             "is the name of an environment variable (not the key itself)")
        bindings[host.lower() or "*"] = variable
    if bindings:
        options["api_key_env"] = bindings
    if allow_insecure_key:
        options["allow_insecure"] = True
    return options
