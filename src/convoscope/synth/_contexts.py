"""Seed contexts: the scene, persona, affective state, gender and language a simulated user gets.

A varied seed keeps simulated dialogues from collapsing onto one cheerful small-talk template
(seed 001, appendix C.1). The built-in scenes and personas are convoscope's own; users bring their
own as JSONL (``{"id": ..., "text": ..., "affect": ...}``, one a line; ``id`` and ``affect`` are
optional). Sampling is driven by one seeded RNG, so the same arguments give the same contexts.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from convoscope.errors import ConfigError
from convoscope.synth._io import read_models

Gender = Literal["female", "male"]


def _id_as_text(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class Scene(BaseModel):
    """An everyday social situation. ``affect`` is set when the scene names a feeling itself."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    affect: str | None = None

    _id = field_validator("id", mode="before")(_id_as_text)


class Persona(BaseModel):
    """Who the simulated user is: role, background, interests."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)

    _id = field_validator("id", mode="before")(_id_as_text)


class LanguageInfo(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    countries: tuple[str, ...]
    gendered: bool = False
    count_characters: bool = False


class SeedContext(BaseModel):
    """Everything the simulated user knows about itself. The chatbots never see it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    language: str = Field(min_length=2, description="ISO 639-1 code, e.g. 'pt'.")
    language_name: str
    country: str
    scene_id: str
    scene: str
    persona_id: str
    persona: str
    affect: str
    affect_source: Literal["scene", "sampled"]
    affect_quadrant: str | None = Field(default=None, description="Circumplex quadrant when sampled.")
    gender: Gender | None = Field(default=None, description="Set when the language marks gender.")


def _data_text(name: str) -> str:
    return resources.files("convoscope.synth").joinpath("data", name).read_text(encoding="utf-8")


@cache
def _affect_table() -> dict[str, Any]:
    return yaml.safe_load(_data_text("affects.yaml"))


def affect_quadrants() -> dict[str, tuple[str, ...]]:
    """Built-in affective states by circumplex quadrant (equal numbers per quadrant)."""
    return {name: tuple(states) for name, states in _affect_table()["quadrants"].items()}


@cache
def languages() -> dict[str, LanguageInfo]:
    """Languages the sampler knows, by ISO 639-1 code."""
    table = yaml.safe_load(_data_text("languages.yaml"))
    return {code: LanguageInfo.model_validate(info) for code, info in table.items()}


def builtin_scenes() -> list[Scene]:
    return _read_builtin("scenes.jsonl", Scene)


def builtin_personas() -> list[Persona]:
    return _read_builtin("personas.jsonl", Persona)


def _read_builtin(name: str, model: type[Scene] | type[Persona]) -> list[Any]:
    path = resources.files("convoscope.synth").joinpath("data", name)
    with resources.as_file(path) as real:
        return read_models(real, model, _default_id(name.removesuffix("s.jsonl")))


def _default_id(prefix: str) -> Callable[[int, dict[str, Any]], dict[str, Any]]:
    def prepare(line: int, row: dict[str, Any]) -> dict[str, Any]:
        return row if "id" in row else {**row, "id": f"{prefix}-line{line}"}
    return prepare


def read_scenes(path: str | Path) -> list[Scene]:
    """Scenes from a JSONL file; a line without ``id`` gets ``scene-lineN``."""
    return read_models(path, Scene, _default_id("scene"))


def read_personas(path: str | Path) -> list[Persona]:
    """Personas from a JSONL file; a line without ``id`` gets ``persona-lineN``."""
    return read_models(path, Persona, _default_id("persona"))


def affect_in_scene(scene: Scene) -> str | None:
    """The scene's own feeling: its ``affect`` field, or a known feeling word in its text."""
    if scene.affect:
        return scene.affect
    words = set(re.findall(r"[a-z]+", scene.text.lower()))
    found = [word for word in _affect_table()["scene_affect_words"] if word in words]
    return found[0] if found else None


def sample_contexts(n: int, language_codes: list[str], *, seed: int = 0,
                    scenes: list[Scene] | None = None,
                    personas: list[Persona] | None = None) -> list[SeedContext]:
    """``n`` scene / persona / affect draws, each crossed with every language.

    The same draw in every language keeps the languages comparable; country and gender are drawn
    per language. Scenes are drawn without replacement while they last (then the pool refills),
    personas likewise, so small runs do not repeat a scene.
    """
    if n < 1:
        raise ConfigError("n must be at least 1")
    known = languages()
    unknown = [code for code in language_codes if code not in known]
    if unknown:
        raise ConfigError(f"unknown language {', '.join(unknown)}: use one of {', '.join(known)}")
    if not language_codes:
        raise ConfigError("name at least one language")
    rng = random.Random(seed)
    scene_pool, persona_pool = list(scenes or builtin_scenes()), list(personas or builtin_personas())
    scene_draws, persona_draws = _draw(rng, scene_pool, n), _draw(rng, persona_pool, n)
    quadrants = affect_quadrants()
    contexts: list[SeedContext] = []
    for index, (scene, persona) in enumerate(zip(scene_draws, persona_draws, strict=True)):
        own = affect_in_scene(scene)
        quadrant = None if own else rng.choice(sorted(quadrants))
        affect = own or rng.choice(quadrants[quadrant or ""])
        for code in language_codes:
            info = known[code]
            gender: Gender | None = rng.choice(("female", "male")) if info.gendered else None
            contexts.append(SeedContext(
                id=f"{code}-{index + 1:04d}", language=code, language_name=info.name,
                country=rng.choice(info.countries), scene_id=scene.id, scene=scene.text,
                persona_id=persona.id, persona=persona.text, affect=affect,
                affect_source="scene" if own else "sampled", affect_quadrant=quadrant, gender=gender))
    return contexts


def _draw(rng: random.Random, pool: list[Any], n: int) -> list[Any]:
    drawn: list[Any] = []
    while len(drawn) < n:
        batch = list(pool)
        rng.shuffle(batch)
        drawn.extend(batch[: n - len(drawn)])
    return drawn


def read_contexts(path: str | Path) -> list[SeedContext]:
    """Seed contexts written by ``convoscope synth contexts`` (ids must be unique)."""
    contexts = read_models(path, SeedContext)
    seen: set[str] = set()
    for context in contexts:
        if context.id in seen:
            from convoscope.items import ItemError

            raise ItemError(path, None, "id", f"duplicate context id {context.id!r}")
        seen.add(context.id)
    return contexts
