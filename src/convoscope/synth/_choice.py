"""Which embedded model plays each role in each language, and how a model is prompted.

The packaged models write differently well per language: SmolLM2-135M-Instruct was trained
mostly on English, Gemma 3 270M (a base model) on many languages. ``benchmarks/synth_models.py``
measures both per language and role; the choice it supports is the default in
``synth/data/embedded_models.yaml``. ``embedded`` as a role's model means "the default for the
dialogue's language" (:class:`EmbeddedByLanguage`); ``embedded:smollm2`` means that model for
every language; ``choice={"ko": "smollm2"}`` overrides single languages.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import Any, Literal

import yaml

from convoscope.errors import ConfigError
from convoscope.models import EMBEDDED_MODELS, GenerateRequest, Generation, Model

Role = Literal["user", "judge", "chatbot"]
Prompting = Literal["chat", "completion"]


@cache
def _table() -> dict[str, Any]:
    text = resources.files("convoscope.synth").joinpath("data/embedded_models.yaml").read_text("utf-8")
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def embedded_choice(language: str, role: Role) -> str | None:
    """The packaged model (``smollm2``, ``gemma3-270m``) that plays ``role`` in ``language``;
    None for a judge no packaged model can be (none separated a check on that language's
    examples), so the rules alone check the user's turns."""
    table = _table()
    chosen = table["languages"].get(language, table["default"])[role]
    if chosen is None and role != "judge":
        raise ConfigError(f"synth/data/embedded_models.yaml names no {role} model for {language!r}")
    return None if chosen is None else str(chosen)


def model_prompting(model: Model) -> Prompting:
    """How a model is prompted: packaged base models continue a document, the rest chat."""
    kind, _, name = model.name.partition(":")
    if kind == "embedded" and name in _table()["models"]:
        prompting: Prompting = _table()["models"][name]["prompting"]
        return prompting
    return "chat"


def check_choice(choice: Mapping[str, str]) -> dict[str, str]:
    """A per-language override, checked: language -> packaged model name."""
    unknown = sorted(set(choice.values()) - set(EMBEDDED_MODELS))
    if unknown:
        raise ConfigError(f"unknown embedded model {', '.join(map(repr, unknown))}: use one of "
                          f"{', '.join(EMBEDDED_MODELS)}")
    return dict(choice)


class EmbeddedByLanguage:
    """The embedded model of one role, chosen per dialogue language.

    ``build`` opens a packaged model by name (``build("gemma3-270m")``); each model is opened
    once, on first use, so a run in English only never loads Gemma.
    """

    def __init__(self, role: Role, build: Callable[[str], Model], *,
                 choice: Mapping[str, str] | None = None) -> None:
        self.role = role
        self._build = build
        self._choice = check_choice(choice or {})
        self._opened: dict[str, Model] = {}

    @property
    def name(self) -> str:
        return "embedded"

    def model_name(self, language: str) -> str | None:
        return self._choice.get(language) or embedded_choice(language, self.role)

    def for_language(self, language: str) -> Model | None:
        """The model for ``language`` (opened on first use); None: no judge in that language."""
        name = self.model_name(language)
        if name is None:
            return None
        if name not in self._opened:
            self._opened[name] = self._build(name)
        return self._opened[name]

    async def aclose(self) -> None:
        for model in self._opened.values():
            await model.aclose()


RoleModel = Model | EmbeddedByLanguage


def for_language(model: RoleModel, language: str) -> Model | None:
    """The model that plays a role in a dialogue of ``language`` (None: no embedded judge there)."""
    return model.for_language(language) if isinstance(model, EmbeddedByLanguage) else model


class FirstCallsInTurn:
    """Runs each model's first call alone: loading two llama.cpp models in two threads at once
    can leave the process's stdout and stderr redirected (its quiet-loading guard is not
    thread-safe). Later calls pass straight through."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._warm: set[int] = set()

    def wrap(self, model: Model) -> Model:
        return _Gated(model, self)


class _Gated:
    def __init__(self, model: Model, gate: FirstCallsInTurn) -> None:
        self.inner = model
        self._gate = gate

    @property
    def name(self) -> str:
        return self.inner.name

    async def generate(self, request: GenerateRequest) -> Generation:
        if id(self.inner) in self._gate._warm:
            return await self.inner.generate(request)
        async with self._gate._lock:
            generation = await self.inner.generate(request)
            self._gate._warm.add(id(self.inner))
        return generation

    async def aclose(self) -> None:
        """The caller that opened the model closes it."""
